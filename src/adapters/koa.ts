// gatehouse-http/koa (issue 28): Gatehouse as Koa 2/3 middleware, `app.use(gatehouse(config))`. Gatehouse
// answers on ctx.res (ctx.respond is false then, so Koa writes nothing); what it passes on (a path with no
// file, a method the static files do not answer) goes to the next middleware untouched, body unread.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { GatehouseConfigInput } from '../config/schema.js';
import { createHandler, type GatehouseDeps, type GatehouseHandler } from '../node.js';

export type { GatehouseConfigInput, GatehouseDeps, GatehouseHandler } from '../node.js';

/** What the middleware uses of Koa's context (structural: koa is an optional peer). */
interface KoaContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  respond?: boolean;
}

export interface GatehouseKoaMiddleware extends Omit<GatehouseHandler, 'handle'> {
  (ctx: KoaContext, next: () => Promise<unknown>): Promise<void>;
  /** Listens to `server`'s 'upgrade' events (WebSocket endpoints, proxied handshakes); returns it. */
  attach<S extends Pick<Server, 'on'>>(server: S): S;
}

/**
 * Runs `handle` and settles when Gatehouse has answered (the response finished or the client left), or
 * with `passOn()` when it passed the request on. Shared by the Koa and Hono adapters.
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

export function gatehouse(
  config: GatehouseConfigInput = {},
  deps: GatehouseDeps = {},
): GatehouseKoaMiddleware {
  const h = createHandler(config, deps);
  const middleware = async (ctx: KoaContext, next: () => Promise<unknown>): Promise<void> => {
    ctx.respond = false;
    await handleOrPass(h, ctx.req, ctx.res, () => {
      // Passed on: Koa answers as usual from here.
      ctx.respond = true;
      return next();
    });
  };
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
