// gatehouse-http/koa (issue 28): Gatehouse as Koa 2/3 middleware, `app.use(gatehouse(config))`. Gatehouse
// answers on ctx.res (ctx.respond is false then, so Koa writes nothing); what it passes on (a path with no
// file, a method the static files do not answer) goes to the next middleware untouched, body unread.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatehouseConfigInput } from '../config/schema.js';
import { createHandler, type GatehouseDeps } from '../node.js';
import { type HandlerMembers, handleOrPass, withMembers } from './shared.js';

export type { GatehouseConfigInput, GatehouseDeps, GatehouseHandler } from '../node.js';
export type { AttachOptions } from './shared.js';

/** What the middleware uses of Koa's context (structural: koa is an optional peer). */
interface KoaContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  respond?: boolean;
}

export interface GatehouseKoaMiddleware extends HandlerMembers {
  (ctx: KoaContext, next: () => Promise<unknown>): Promise<void>;
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
  return withMembers(middleware, h);
}

export default gatehouse;
