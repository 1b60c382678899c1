// gatehouse-http/hono: Gatehouse as Hono middleware on @hono/node-server, `app.use(gatehouse(config))`.
// Gatehouse answers on Node's response (c.env.outgoing) and the middleware returns node-server's
// "already sent" response, so Hono writes nothing; what it passes on goes to `next()` untouched.
// `mountPath` in the second argument serves it below a path, requests and handshakes alike, and
// puts the mount back on the path-only Locations it sends.
import type { IncomingMessage, ServerResponse } from 'node:http';
// node-server's marker of a response already written on `outgoing`. Made when that module loads, before
// serve() swaps in node-server's own Response class (which would make node-server write a head).
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
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

/** What the middleware uses of Hono's context (structural: hono is an optional peer). */
interface HonoContext {
  readonly env?: { incoming?: IncomingMessage; outgoing?: ServerResponse } | undefined;
}

export interface GatehouseHonoMiddleware extends HandlerMembers {
  // biome-ignore lint/suspicious/noExplicitAny: Hono's Context type, without depending on it here
  (c: any, next: () => Promise<void>): Promise<Response | undefined>;
}

/** The second argument: Gatehouse's deps, and the path Gatehouse is served at. */
export interface GatehouseHonoDeps extends GatehouseDeps {
  /**
   * Hono's `app.route()` and `basePath()` do not strip a mount from the request Gatehouse reads, so the
   * adapter does: with '/static', only requests and WebSocket handshakes at or below /static enter
   * Gatehouse, which serves them as if /static were its root and puts /static back on the path-only
   * Locations it sends; the others go to `next()` (and to the server's other 'upgrade' listeners)
   * untouched. Default: the root (every path).
   */
  readonly mountPath?: string;
}

export function gatehouse(
  config: GatehouseConfigInput = {},
  deps: GatehouseHonoDeps = {},
): GatehouseHonoMiddleware {
  const { mountPath, ...handlerDeps } = deps;
  const mount = normalMount(mountPath, 'gatehouse-http/hono: mountPath');
  const h = createHandler(config, handlerDeps);
  const middleware = async (c: HonoContext, next: () => Promise<void>): Promise<Response | undefined> => {
    const req = c.env?.incoming;
    const res = c.env?.outgoing;
    if (req === undefined || res === undefined)
      throw new Error('gatehouse-http/hono runs on @hono/node-server (c.env.incoming and outgoing)');
    const url = req.url ?? '/';
    const inner = belowMount(url, mount);
    if (inner === undefined) {
      await next();
      return undefined;
    }
    req.url = inner;
    const at = answerAtMount(res, mount, mount !== '' && isMountWithoutSlash(url, mount));
    const passed = await handleOrPass(
      h,
      req,
      res,
      async () => {
        // What is passed on gets its whole path back.
        at.undo();
        req.url = url;
        await next();
        return true;
      },
      at.mount,
    );
    if (passed === true) return undefined;
    req.url = url;
    return RESPONSE_ALREADY_SENT;
  };
  return withMembers(middleware, h, mount);
}

export default gatehouse;
