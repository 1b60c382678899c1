// What the Connect-style adapters (Express, Koa, Hono) share: the handler's members on the middleware,
// attach(server) for handshakes, and settling a middleware's promise when Gatehouse answered or passed on.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { GatehouseHandler } from '../node.js';

/** The handler's members an adapter's middleware carries, and `attach`. */
export interface HandlerMembers extends Omit<GatehouseHandler, 'handle'> {
  /** Listens to `server`'s 'upgrade' events (WebSocket endpoints, proxied handshakes); returns it. */
  attach<S extends Pick<Server, 'on'>>(server: S): S;
}

/** `middleware` with the handler's members. */
export function withMembers<F extends object>(middleware: F, h: GatehouseHandler): F & HandlerMembers {
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

/**
 * Runs `handle` and settles when Gatehouse has answered (the response finished or the client left), or
 * with `passOn()` when it passed the request on.
 */
export function handleOrPass<T>(
  h: GatehouseHandler,
  req: IncomingMessage,
  res: ServerResponse,
  passOn: () => Promise<T>,
): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    const answered = () => {
      res.off('finish', answered);
      res.off('close', answered);
      resolve(undefined);
    };
    res.once('finish', answered);
    res.once('close', answered);
    h.handle(req, res, (err) => {
      res.off('finish', answered);
      res.off('close', answered);
      if (err !== undefined) reject(err);
      else passOn().then(resolve, reject);
    });
  });
}
