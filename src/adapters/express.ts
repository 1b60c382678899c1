// gatehouse-http/express (issue 28): Gatehouse as Connect-style middleware, for Express 4 and 5, Connect
// and Polka: `app.use(gatehouse(config))`. What no step, route, proxy or file claims goes to `next()`
// untouched; `attach(server)` hands the server's WebSocket and other Upgrade handshakes to Gatehouse.
// Under a mount path (`app.use('/app', gh)`), a path-only Location it sends gets the mount back.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatehouseConfigInput } from '../config/schema.js';
import { createHandler, type GatehouseDeps } from '../node.js';
import { answerAtMount, type HandlerMembers, isMountRoot, withMembers } from './shared.js';

export type { GatehouseConfigInput, GatehouseDeps, GatehouseHandler } from '../node.js';

/** The middleware, with the handler's other members. */
export interface GatehouseMiddleware extends HandlerMembers {
  (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void): void;
}

/** True when the path the client asked for (Express's req.originalUrl) ends with a slash. */
function pathEndsWithSlash(req: IncomingMessage): boolean {
  const url = (req as { originalUrl?: unknown }).originalUrl;
  if (typeof url !== 'string') return true;
  const q = url.indexOf('?');
  return (q === -1 ? url : url.slice(0, q)).endsWith('/');
}

export function gatehouse(config: GatehouseConfigInput = {}, deps: GatehouseDeps = {}): GatehouseMiddleware {
  const h = createHandler(config, deps);
  const middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => {
    // Express's mount path, stripped from req.url ('' at the root); Locations get it back (shared.ts).
    const mount = (req as { baseUrl?: unknown }).baseUrl;
    if (typeof mount !== 'string' || mount === '') {
      h.handle(req, res, next);
      return;
    }
    const undo = answerAtMount(req, res, mount, isMountRoot(req.url!) && !pathEndsWithSlash(req));
    h.handle(req, res, (err) => {
      undo();
      next(err);
    });
  };
  return withMembers(middleware, h);
}

export default gatehouse;
