// gatehouse-http/koa: Gatehouse as Koa 2/3 middleware, `app.use(gatehouse(config))`. Gatehouse
// answers on ctx.res (ctx.respond is false then, so Koa writes nothing); what it passes on (a path with no
// file, a method the static files do not answer) goes to the next middleware untouched, body unread.
// `mountPath` in the second argument serves it below a path, requests and handshakes alike.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatehouseConfigInput } from '../config/schema.js';
import { createHandler, type GatehouseDeps } from '../node.js';
import { belowMount, normalMount } from '../server/index.js';
import {
  answerAtMount,
  type HandlerMembers,
  handleOrPass,
  isMountWithoutSlash,
  withMembers,
} from './shared.js';

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

/** The second argument: Gatehouse's deps, and the path Gatehouse is served at. */
export interface GatehouseKoaDeps extends GatehouseDeps {
  /**
   * Koa has no mount path of its own: with '/app', only requests at or below /app enter Gatehouse, which
   * serves them as if /app were its root (`/app/main.js` is `main.js` in the folder) and puts /app back
   * on the path-only Locations it sends; the others go to `next()` untouched. Default: the root.
   */
  readonly mountPath?: string;
}

export function gatehouse(
  config: GatehouseConfigInput = {},
  deps: GatehouseKoaDeps = {},
): GatehouseKoaMiddleware {
  const { mountPath, ...handlerDeps } = deps;
  const mount = normalMount(mountPath, 'gatehouse-http/koa: mountPath');
  const h = createHandler(config, handlerDeps);
  const middleware = async (ctx: KoaContext, next: () => Promise<unknown>): Promise<void> => {
    const url = ctx.req.url ?? '/';
    const inner = belowMount(url, mount);
    if (inner === undefined) {
      await next();
      return;
    }
    ctx.req.url = inner;
    const at = answerAtMount(ctx.res, mount, mount !== '' && isMountWithoutSlash(url, mount));
    ctx.respond = false;
    const passed = await handleOrPass(
      h,
      ctx.req,
      ctx.res,
      async () => {
        // Passed on: Koa answers as usual from here, on the whole path.
        at.undo();
        ctx.req.url = url;
        ctx.respond = true;
        await next();
        return true;
      },
      at.mount,
    );
    if (passed !== true) ctx.req.url = url;
  };
  return withMembers(middleware, h, mount);
}

export default gatehouse;
