// Reverse proxy for path prefixes on undici pools: the request step (TRACE, shared cache, admission)
// and the proxy's lifecycle. Its parts share one ProxyState (state.ts): routes.ts compiles and finds
// routes, response-headers.ts is the header policy, admission.ts takes a request to an upstream,
// forward.ts streams one exchange, upgrade-route.ts passes WebSocket handshakes through.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { compileRuleList } from '../../http/cache-policy.js';
import { passOn, type RequestContext } from '../core/context.js';
import { ERRORS, sendError } from '../core/errors.js';
import type { HostTunnel } from '../core/host-tunnel.js';
import type { Feature, Step, StepContext, Tunnel } from '../node/types.js';
import { forward, retryExchange } from './admission.js';
import type { CacheRequestContext } from './cache/index.js';
import { classifyUpstreamError } from './forward.js';
import { policyCacheControl, responseHeaders } from './response-headers.js';
import { compileRoutes, findRoute, type ProxyRouteOptions, type Route } from './routes.js';
import type { ProxyDeps, ProxyState } from './state.js';
import { closeRelays, closeTunnels, ownsUpgrade, upgradeRoute } from './upgrade-route.js';

export type { ProxyRouteOptions } from './routes.js';
export { upstreamTarget } from './routes.js';
export type { ProxyDeps } from './state.js';
export { VIA_NAME } from './state.js';
export { classifyUpstreamError };

export interface Proxy {
  readonly step: Step | undefined;
  /** Whether a WebSocket handshake for this request goes to a pass-through route. */
  ownsUpgrade(req: IncomingMessage): boolean;
  /** Passes a WebSocket handshake that cleared every request step through to its route's upstream;
   *  false when no pass-through route matches. */
  upgrade(req: IncomingMessage, res: ServerResponse, tunnel: Tunnel | HostTunnel): boolean;
  /** Destroys tunnelled (upgraded) connections: they are invisible to server.close(). */
  closeTunnels(): void;
  /** Opens the routes' cache stores; rejects when one cannot be opened (see RouteCache.open). */
  ready(): Promise<void>;
  /** The stores' sizes and the upstreams' health now (for the metrics). */
  stats(): Promise<ProxyStats>;
  /** Memory pressure: every route's cache drops `fraction` of what it holds in memory (Feature.shed). */
  shed(fraction: number): number;
  close(): Promise<void>;
}

/** What the proxy reports at scrape time (the metrics). */
export interface ProxyStats {
  /** Per cached route: bytes its store accounts to entries. */
  readonly caches: readonly { route: string; store: string; bytes: number; invalid: number }[];
  /** Per upstream of each route: balanced to (not cooling down), requests in flight, failures so far. */
  readonly upstreams: readonly {
    route: string;
    upstream: string;
    up: boolean;
    inFlight: number;
    errors: number;
  }[];
}

/** What a proxy can say it allows without knowing the upstream (RFC 9110 §10.2.1). */
const ALLOW_WITHOUT_TRACE = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';

const NO_PROXY: Proxy = {
  step: undefined,
  ownsUpgrade: () => false,
  upgrade: () => false,
  closeTunnels: () => {},
  ready: async () => {},
  stats: async () => ({ caches: [], upstreams: [] }),
  shed: () => 0,
  close: async () => {},
};

function createProxyState(routes: readonly ProxyRouteOptions[], deps: ProxyDeps): ProxyState {
  const logger = deps.ctx.logger;
  const state: ProxyState = {
    deps,
    logger,
    routes: compileRoutes(routes, logger, deps.ctx.redis),
    policy: compileRuleList(deps.cachePolicy),
    hasPolicy: deps.cachePolicy.length > 0,
    tunnels: new Set(),
    relays: new Set(),
    closing: false,
    upgrades: new Map(),
    env: {
      logger,
      sendTimeoutMs: deps.sendTimeoutMs ?? 60_000,
      responseHeaders: (x, headers) =>
        responseHeaders(state, x.req, x.res, x.mount, x.route as Route, x.u, headers),
      retry: (x) => retryExchange(state, x),
    },
  };
  return state;
}

const handled = (): true => true;

/** How long the shutdown waits for relays' closing handshakes (1001) before dropping them. */
const RELAY_CLOSE_GRACE_MS = 1000;

/** What a route's cache asks of the proxy, made once per route (the request comes with each call). */
function cacheContext(state: ProxyState, route: Route): CacheRequestContext {
  const { deps } = state;
  return {
    forward: (req, res, mount, hooks) => forward(state, req, res, mount, route, 0, undefined, hooks),
    responseHeaders: (req, res, mount, h) =>
      responseHeaders(state, req, res, mount, route, route.upstreams.all[0]!, h),
    cacheControl: (req, h) => policyCacheControl(state, req, route, h),
    clientAddress: (req) => deps.ctx.clientAddress(req),
  };
}

/** The request step: a route's TRACE refusal, its shared cache, else admission to its upstream. */
function proxyStep(state: ProxyState): Step {
  const { deps } = state;
  const cached = state.routes.filter((r) => r.cache !== undefined);
  const contexts = new Map(cached.map((r) => [r, cacheContext(state, r)]));
  const step: Step = (req, res, cx) => {
    const route = findRoute(state.routes, req.url!);
    if (route === undefined) {
      if (req.method !== 'PURGE' || cached.length === 0) return false;
      return purgeElsewhere(cached, req, res, cx, deps.ctx.clientAddress(req));
    }
    if (req.method === 'TRACE' && !route.o.allowTrace) {
      // TRACE would echo the request, cookies included, from the upstream (RFC 9110 §9.3.8): refused.
      sendError(req, res, ERRORS.methodNotAllowed, 'TRACE is not forwarded.', { Allow: ALLOW_WITHOUT_TRACE });
      return true;
    }
    if (route.cache !== undefined) {
      const hit = route.cache.tryHit(req, res, cx.facts);
      if (hit === true) return true;
      return route.cache.handle(req, res, contexts.get(route)!, cx, hit).then(handled);
    }
    forward(state, req, res, cx.mount?.path ?? '', route, 0);
    return true;
  };
  return step;
}

/**
 * PURGE outside every proxied prefix: a 405 (RFC 9110 §15.5.6) whose detail says under which cached
 * prefixes PURGE is accepted, named only to an address those routes let purge; an app that mounts
 * Gatehouse may answer PURGE itself.
 */
function purgeElsewhere(
  cached: readonly Route[],
  req: IncomingMessage,
  res: ServerResponse,
  cx: RequestContext,
  clientAddress: string,
): true {
  if (passOn(cx)) return true;
  const where = cached.filter((r) => r.cache!.mayPurge(clientAddress)).map((r) => `${r.prefix}/`);
  const detail =
    where.length === 0
      ? 'PURGE is not allowed here.'
      : `PURGE is accepted under a cached proxy prefix: ${where.join(', ')}`;
  sendError(req, res, ERRORS.methodNotAllowed, detail, { Allow: 'GET, HEAD, OPTIONS' });
  return true;
}

export function createProxy(routes: readonly ProxyRouteOptions[], deps: ProxyDeps): Proxy {
  if (routes.length === 0) return NO_PROXY;
  const state = createProxyState(routes, deps);
  return {
    step: proxyStep(state),
    ownsUpgrade: (req) => ownsUpgrade(state, req),
    upgrade: (req, res, tunnel) => upgradeRoute(state, req, res, tunnel),
    closeTunnels: () => closeTunnels(state),
    ready: async () => {
      await Promise.all(state.routes.map((r) => r.cache?.open()));
    },
    stats: () => proxyStats(state.routes),
    shed: (fraction) => state.routes.reduce((n, r) => n + (r.cache?.shed(fraction) ?? 0), 0),
    close: async () => {
      closeTunnels(state);
      await closeRelays(state, RELAY_CLOSE_GRACE_MS);
      // Every pool and every cache is closed, whichever fails; the failures are thrown together.
      const results = await Promise.allSettled(state.routes.map((r) => r.upstreams.close()));
      results.push(...(await Promise.allSettled(state.routes.map((r) => r.cache?.close()))));
      const errors = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
      if (errors.length > 0) throw new AggregateError(errors, 'the proxy did not close cleanly');
    },
  };
}

/** Routes by prefix ('/' for the root); upstreams by origin and base path (no userinfo). */
async function proxyStats(routes: readonly Route[]): Promise<ProxyStats> {
  return {
    caches: await Promise.all(
      routes.flatMap((r) =>
        r.cache
          ? [
              r.cache.storedBytes().then((bytes) => ({
                route: r.prefix || '/',
                store: r.o.cache?.store ?? 'memory',
                bytes,
                invalid: r.cache!.invalidEntries(),
              })),
            ]
          : [],
      ),
    ),
    upstreams: routes.flatMap((r) =>
      r.upstreams.all.map((u) => ({
        route: r.prefix || '/',
        upstream: u.origin + u.basePath,
        up: r.upstreams.isUp(u),
        inFlight: u.inFlight,
        errors: u.errors,
      })),
    ),
  };
}

/** What the proxy feature is made from (the kernel gives the log, client addresses and Redis). */
export interface ProxyFeatureOptions extends Omit<ProxyDeps, 'ctx'> {
  readonly routes: readonly ProxyRouteOptions[];
  /**
   * Whether a WebSocket handshake's Origin may pass (RFC 6455 §10.2: cross-site WebSocket hijacking): the
   * same check as the WebSocket endpoints', so a proxied handshake is held to it too.
   */
  readonly handshakeOriginAllowed: (origin: string | undefined, host: string | undefined) => boolean;
}

/** The proxy feature, and the proxy itself (its stats and tunnels, for the metrics and the drain). */
export interface ProxyFeature extends Feature {
  readonly proxy: Proxy;
}

/**
 * The reverse proxy as a feature (core/feature.ts): an answering step for its prefixes (with their
 * shared caches), a tunnel for proxied WebSocket handshakes, ready once the cache stores opened.
 */
export function create(options: ProxyFeatureOptions, kernel: StepContext): ProxyFeature {
  const { routes, handshakeOriginAllowed, ...deps } = options;
  const proxy = createProxy(routes, { ...deps, ctx: kernel });
  return {
    proxy,
    answer: proxy.step,
    tunnel: {
      owns: proxy.ownsUpgrade,
      handle: (req, res, tunnel) => {
        if (!handshakeOriginAllowed(req.headers.origin, req.headers.host)) {
          sendError(req, res, ERRORS.forbidden, 'The Origin of this WebSocket handshake is not allowed.');
          return true;
        }
        return proxy.upgrade(req, res, tunnel);
      },
    },
    ready: () => proxy.ready(),
    shed: (fraction) => proxy.shed(fraction),
    close: () => proxy.close(),
    stats: () => proxy.stats(),
  };
}
