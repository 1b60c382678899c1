// gatehouse-http/express (issue 28): Gatehouse as Connect-style middleware, for Express 4 and 5, Connect
// and Polka: `app.use(gatehouse(config))`. What no step, route, proxy or file claims goes to `next()`
// untouched; `attach(server)` hands the server's WebSocket and other Upgrade handshakes to Gatehouse.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { GatehouseConfigInput } from '../config/schema.js';
import { createHandler, type GatehouseDeps, type GatehouseHandler } from '../node.js';

export type { GatehouseConfigInput, GatehouseDeps, GatehouseHandler } from '../node.js';

/** The middleware, with the handler's other members. */
export interface GatehouseMiddleware extends Omit<GatehouseHandler, 'handle'> {
  (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void): void;
  /** Listens to `server`'s 'upgrade' events (WebSocket endpoints, proxied handshakes); returns it. */
  attach<S extends Pick<Server, 'on'>>(server: S): S;
}

export function gatehouse(config: GatehouseConfigInput = {}, deps: GatehouseDeps = {}): GatehouseMiddleware {
  const h = createHandler(config, deps);
  const middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) =>
    h.handle(req, res, next);
  return Object.assign(middleware, {
    upgrade: h.upgrade,
    ready: h.ready,
    close: h.close,
    options: h.options,
    logger: h.logger,
    static: h.static,
    attach<S extends Pick<Server, 'on'>>(server: S): S {
      server.on('upgrade', h.upgrade);
      return server;
    },
  });
}

export default gatehouse;
