// gatehouse-http/express (issue 28): Gatehouse as Connect-style middleware, for Express 4 and 5, Connect
// and Polka: `app.use(gatehouse(config))`. What no step, route, proxy or file claims goes to `next()`
// untouched; `attach(server, { mountPath })` hands the server's WebSocket handshakes at the mount path
// to Gatehouse and leaves the others to the app.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatehouseConfigInput } from '../config/schema.js';
import { createHandler, type GatehouseDeps } from '../node.js';
import { normalMount } from '../server/core/entry.js';
import { type HandlerMembers, withMembers } from './shared.js';

export type { GatehouseConfigInput, GatehouseDeps, GatehouseHandler } from '../node.js';
export type { AttachOptions } from './shared.js';

/** The middleware, with the handler's other members. */
export interface GatehouseMiddleware extends HandlerMembers {
  (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void): void;
}

export function gatehouse(config: GatehouseConfigInput = {}, deps: GatehouseDeps = {}): GatehouseMiddleware {
  const h = createHandler(config, deps);
  /** The mount path attach() was given; checked once against the one Express routes requests at. */
  let attachedAt: string | undefined;
  const middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => {
    if (attachedAt !== undefined) {
      // Express's req.baseUrl: the path the app mounted this middleware at (nested routers included).
      const base = (req as { baseUrl?: unknown }).baseUrl;
      if (typeof base === 'string' && base !== attachedAt)
        h.logger.warn(
          { mountPath: attachedAt, baseUrl: base },
          `gatehouse-http/express is mounted at "${base}" but attach() was given mountPath "${attachedAt}": WebSocket handshakes are taken at "${attachedAt || '/'}"; pass attach(server, { mountPath: "${base}" })`,
        );
      attachedAt = undefined;
    }
    h.handle(req, res, next);
  };
  const m = withMembers(middleware, h);
  const attach = m.attach;
  m.attach = (server, options = {}) => {
    attachedAt = normalMount(options.mountPath);
    return attach(server, options);
  };
  return m;
}

export default gatehouse;
