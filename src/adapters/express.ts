// gatehouse-http/express: Gatehouse as Connect-style middleware, for Express 4 and 5, Connect
// and Polka: `app.use(gatehouse(config))`. What no step, route, proxy or file claims goes to `next()`
// untouched; `attach(server, { mountPath })` hands the server's WebSocket handshakes at the mount path
// to Gatehouse and leaves the others to the app. Under a mount path (`app.use('/app', gh)`), a path-only
// Location it sends gets the mount back.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { GatehouseConfigInput } from '../config/schema.js';
import { createHandler, type GatehouseDeps } from '../node.js';
import { normalMount } from '../server/index.js';
import { answerAtMount, type HandlerMembers, isMountRoot, withMembers } from './shared.js';

export type { GatehouseConfigInput, GatehouseDeps, GatehouseHandler } from '../node.js';
export type { AttachOptions } from './shared.js';

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
  /**
   * The mount path handshakes are taken at, checked once against the one Express routes requests at:
   * what attach() was given, or what it finds in the app's router (undefined: nothing to check).
   */
  let handshakesAt: (() => string | undefined) | undefined;
  const middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => {
    if (handshakesAt !== undefined) {
      const at = handshakesAt();
      handshakesAt = undefined;
      // Express's req.baseUrl: the path the app mounted this middleware at (nested routers included).
      const base = (req as { baseUrl?: unknown }).baseUrl;
      if (typeof base === 'string' && base !== (at ?? ''))
        h.logger.warn(
          { mountPath: at ?? '', baseUrl: base },
          `gatehouse-http/express is mounted at "${base}" but WebSocket handshakes are taken at "${at || '/'}"; pass attach(server, { mountPath: "${base}" })`,
        );
    }
    // Express's mount path, stripped from req.url ('' at the root); Locations get it back (shared.ts).
    const mount = (req as { baseUrl?: unknown }).baseUrl;
    if (typeof mount !== 'string' || mount === '') {
      h.handle(req, res, next);
      return;
    }
    const at = answerAtMount(res, mount, isMountRoot(req.url!) && !pathEndsWithSlash(req));
    h.handle(
      req,
      res,
      (err) => {
        at.undo();
        next(err);
      },
      at.mount,
    );
  };
  const m = withMembers(middleware, h);
  const attach = m.attach;
  m.attach = (server, options = {}) => {
    if (options.mountPath !== undefined) {
      const at = normalMount(options.mountPath);
      handshakesAt = () => at;
      return attach(server, options);
    }
    // No mountPath given: the path the app mounted this middleware at, read from the app's router
    // (Express 5) at the first handshake, when app.use has run.
    const find = () => {
      const apps = (server as Partial<Pick<Server, 'listeners'>>).listeners?.('request') ?? [];
      const found = findExpressMount(apps, middleware);
      return found === undefined ? undefined : normalMount(found);
    };
    handshakesAt = find;
    server.on('upgrade', h.upgradeAt(find));
    return server;
  };
  return m;
}

/**
 * Where `fn` is mounted in one of `apps` (the server's request listeners): the joined `app.use(path)` and
 * `router.use(path)` paths of Express 5's router (a Layer keeps its `rawPath`), through nested routers.
 * Undefined when not found there (Express 4, a sub-app, a pattern path): then `attach(server, { mountPath })`.
 */
export function findExpressMount(apps: readonly unknown[], fn: unknown): string | undefined {
  for (const app of apps) {
    const found = mountIn((app as { router?: unknown }).router, fn, 0);
    if (found !== undefined) return found === '' ? '/' : found;
  }
  return undefined;
}

interface LayerLike {
  rawPath?: unknown;
  handle?: unknown;
  route?: unknown;
}

function mountIn(router: unknown, fn: unknown, depth: number): string | undefined {
  const stack = (router as { stack?: unknown } | undefined)?.stack;
  if (!Array.isArray(stack) || depth > 8) return undefined;
  for (const layer of stack as LayerLike[]) {
    if (typeof layer.rawPath !== 'string' || layer.route !== undefined) continue;
    const here = layer.rawPath.replace(/\/+$/, '');
    if (layer.handle === fn) return here;
    const inner = mountIn(layer.handle, fn, depth + 1);
    if (inner !== undefined) return here + inner;
  }
  return undefined;
}

export default gatehouse;
