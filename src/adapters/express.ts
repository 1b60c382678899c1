// gatehouse-http/express (issue 28): Gatehouse as Connect-style middleware, for Express 4 and 5, Connect
// and Polka: `app.use(gatehouse(config))`. What no step, route, proxy or file claims goes to `next()`
// untouched; `attach(server)` hands the server's WebSocket and other Upgrade handshakes to Gatehouse.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatehouseConfigInput } from '../config/schema.js';
import { createHandler, type GatehouseDeps } from '../node.js';
import { type HandlerMembers, withMembers } from './shared.js';

export type { GatehouseConfigInput, GatehouseDeps, GatehouseHandler } from '../node.js';

/** The middleware, with the handler's other members. */
export interface GatehouseMiddleware extends HandlerMembers {
  (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void): void;
}

export function gatehouse(config: GatehouseConfigInput = {}, deps: GatehouseDeps = {}): GatehouseMiddleware {
  const h = createHandler(config, deps);
  const middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) =>
    h.handle(req, res, next);
  return withMembers(middleware, h);
}

export default gatehouse;
