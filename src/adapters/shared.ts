// What the Connect-style adapters (Express, Koa, Hono) share: the handler's members on the middleware,
// attach(server) for handshakes, and settling a middleware's promise when Gatehouse answered or passed on.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { GatehouseHandler } from '../node.js';

/** Where the middleware is mounted, for the handshakes `attach` hands to Gatehouse. */
export interface AttachOptions {
  /**
   * The path the app mounts the middleware at (`app.use('/static', gh)`: '/static'; an Express sub-app's
   * `app.mountpath`). Only handshakes at or below it reach Gatehouse, with it stripped, as the app's
   * router strips it from requests. Default: the root (every path).
   */
  readonly mountPath?: string;
}

/** The handler's members an adapter's middleware carries, and `attach`. */
export interface HandlerMembers extends Omit<GatehouseHandler, 'handle'> {
  /**
   * Listens to `server`'s 'upgrade' events (WebSocket endpoints, proxied handshakes) at the mount path;
   * returns `server`. Handshakes outside the mount, and those Gatehouse has no endpoint or proxy route
   * for, are left to the server's other 'upgrade' listeners, untouched.
   */
  attach<S extends Pick<Server, 'on'>>(server: S, options?: AttachOptions): S;
}

/** `middleware` with the handler's members; `defaultMount`: attach's mountPath when none is given. */
export function withMembers<F extends object>(
  middleware: F,
  h: GatehouseHandler,
  defaultMount?: string,
): F & HandlerMembers {
  return Object.assign(middleware, {
    upgrade: h.upgrade,
    upgradeAt: h.upgradeAt,
    ready: h.ready,
    close: h.close,
    options: h.options,
    logger: h.logger,
    static: h.static,
    attach<S extends Pick<Server, 'on'>>(server: S, options: AttachOptions = {}): S {
      const mountPath = options.mountPath ?? defaultMount;
      server.on('upgrade', mountPath === undefined ? h.upgrade : h.upgradeAt(mountPath));
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
