// gatehouse-http/hono: Gatehouse as Hono middleware, `app.use(gatehouse(config))`, on every runtime.
// - On Node with @hono/node-server, Gatehouse answers on Node's response (c.env.outgoing) and the
//   middleware returns node-server's "already sent" response, so Hono writes nothing.
// - Elsewhere (Bun, Deno, workers, or `face: 'fetch'`) it hands Hono's Request to the fetch face
//   (gatehouse-http/fetch) and returns its Response.
// What it passes on goes to `next()` untouched. `mountPath` in the second argument serves it below a
// path, requests and handshakes alike, and puts the mount back on the path-only Locations it sends.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatehouseConfigInput } from '../config/schema.js';
import { createFetchHandler } from '../fetch.js';
import { createHandler, type GatehouseDeps } from '../node.js';
import {
  belowMount,
  type FetchHandler,
  type MountFacts,
  nativeRuntime,
  normalMount,
} from '../server/index.js';
import {
  answerAtMount,
  type HandlerMembers,
  handleOrPass,
  isMountWithoutSlash,
  withMembers,
} from './shared.js';

// node-server's marker of a response already written on `outgoing`. Made when that module loads, before
// serve() swaps in node-server's own Response class (which would make node-server write a head). Absent
// where @hono/node-server is not installed (Bun, Deno): the fetch face needs none.
const RESPONSE_ALREADY_SENT: Response | undefined = await import('@hono/node-server/utils/response').then(
  (m) => m.RESPONSE_ALREADY_SENT,
  () => undefined,
);

export type { GatehouseConfigInput, GatehouseDeps, GatehouseHandler } from '../node.js';
export type { AttachOptions } from './shared.js';

/** What the middleware uses of Hono's context (structural: hono is an optional peer). */
interface HonoContext {
  /** node-server: the Node pair; Bun: the server (requestIP); Deno: the connection info (remoteAddr). */
  readonly env?:
    | {
        incoming?: IncomingMessage;
        outgoing?: ServerResponse;
        requestIP?: (r: Request) => { address: string } | null;
        remoteAddr?: { hostname?: string };
      }
    | undefined;
  readonly req: { readonly raw: Request };
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
  /**
   * 'node': Node's request and response, on @hono/node-server (the default on Node); 'fetch': Hono's
   * Request through the fetch face, answered with a Response (the default on Bun and Deno; on Node for an
   * app served by another host than node-server, or called with `app.request()`).
   */
  readonly face?: 'node' | 'fetch';
}

export function gatehouse(
  config: GatehouseConfigInput = {},
  deps: GatehouseHonoDeps = {},
): GatehouseHonoMiddleware {
  const { mountPath, face, ...handlerDeps } = deps;
  const mount = normalMount(mountPath, 'gatehouse-http/hono: mountPath');
  if ((face ?? (nativeRuntime() === undefined ? 'node' : 'fetch')) === 'fetch')
    return fetchMiddleware(createFetchHandler(config, handlerDeps), mount);
  const h = createHandler(config, handlerDeps);
  const middleware = async (c: HonoContext, next: () => Promise<void>): Promise<Response | undefined> => {
    const req = c.env?.incoming;
    const res = c.env?.outgoing;
    if (req === undefined || res === undefined)
      throw new Error(
        "gatehouse-http/hono: no Node request here (c.env.incoming): on a host other than @hono/node-server, use { face: 'fetch' }",
      );
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
    return RESPONSE_ALREADY_SENT!;
  };
  return withMembers(middleware, h, mount);
}

/** The peer's address as the host hands it to Hono (Bun's server, Deno's connection info). */
function remoteOf(c: HonoContext): string | undefined {
  return c.env?.requestIP?.(c.req.raw)?.address ?? c.env?.remoteAddr?.hostname;
}

/** Upgrades are a Node server's events: on the fetch face there are none to listen to. */
const noUpgrades = (): never => {
  throw new Error('gatehouse-http/hono: WebSocket upgrades need @hono/node-server (the fetch face has none)');
};

/** The middleware on the fetch face: Hono's Request in, Gatehouse's Response out, or next(). */
function fetchMiddleware(h: FetchHandler, mount: string): GatehouseHonoMiddleware {
  const middleware = async (c: HonoContext, next: () => Promise<void>): Promise<Response | undefined> => {
    const raw = c.req.raw;
    let request = raw;
    let at: MountFacts | undefined;
    if (mount !== '') {
      const url = new URL(raw.url);
      const target = url.pathname + url.search;
      const inner = belowMount(target, mount);
      if (inner === undefined) {
        await next();
        return undefined;
      }
      request = new Request(url.origin + inner, raw);
      at = { path: mount, withoutSlash: isMountWithoutSlash(target, mount) };
    }
    const r = await h.handle(request, { remoteAddress: remoteOf(c) }, at);
    if (r !== undefined) return r;
    await next();
    return undefined;
  };
  return Object.assign(middleware, {
    upgrade: noUpgrades,
    upgradeAt: noUpgrades,
    attach: noUpgrades,
    ready: h.ready,
    close: h.close,
    options: h.options,
    logger: h.logger,
    static: h.static,
  });
}

export default gatehouse;
