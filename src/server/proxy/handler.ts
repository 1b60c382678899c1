// Reverse proxy for path prefixes on undici pools: routing, header policy, TRACE, admission to
// the upstream; one exchange (forward.ts) streams both ways with bounded buffers and timeouts.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  appendVia,
  type ResponseRewrite,
  rewriteLocation,
  rewriteSetCookie,
  stripHopByHop,
  upstreamRequestHeaders,
} from '../../http/proxy-headers.js';
import type { Step, StepContext, Tunnel } from '../context.js';
import { ERRORS, sendError } from '../errors.js';
import type { CacheRule } from '../static/policy.js';
import { compileRuleList } from '../static/policy.js';
import { mergeVary } from '../vary.js';
import {
  createRouteCache,
  type ForwardHooks,
  type ProxyCacheOptions,
  type RouteCache,
  setFields,
} from './cache.js';
import { classifyUpstreamError, Exchange, type ExchangeEnv } from './forward.js';
import { proxyUpgrade } from './upgrade.js';
import { type Upstream, UpstreamSet } from './upstreams.js';

export interface ProxyRouteOptions {
  prefix: string;
  upstream: string | string[];
  stripPrefix: boolean;
  rewrite?: { from: string; to: string } | undefined;
  changeOrigin: boolean;
  xForwarded: boolean;
  forwarded: boolean;
  via: boolean;
  rewriteLocation: boolean;
  rewriteCookies: boolean;
  websocket: boolean;
  /** Upgraded (tunnelled) connections open to one upstream at most; more handshakes get 503. */
  maxUpgrades: number;
  balance: 'round-robin' | 'least-busy';
  timeouts: { connectMs: number; headersMs: number; idleMs: number; queueMs: number };
  retry: boolean;
  health: { failures: number; cooldownMs: number; path?: string | undefined; intervalMs: number };
  /** For responses without Cache-Control; null leaves them as the upstream sent them. */
  cacheControl: string | null;
  /** Idle keep-alive connections kept per upstream (not a concurrency limit). */
  connections: number;
  /** Concurrent connections per upstream at most; requests beyond wait up to queueMs, then 503. */
  maxConnections?: number | undefined;
  /** Response bytes buffered for a slow client before the upstream is paused. */
  bufferBytes: number;
  /** Request bodies over this get 413; undefined: no limit. */
  maxBodyBytes?: number | undefined;
  /** Forward TRACE (otherwise 405). */
  allowTrace: boolean;
  /** Shared cache (RFC 9111) of upstream responses; off unless `enabled`. */
  cache?: ProxyCacheOptions | undefined;
}

export interface ProxyDeps {
  readonly ctx: StepContext;
  /** Whether the socket peer is a trusted proxy (its X-Forwarded-* are kept and extended). */
  readonly isTrustedPeer: (req: IncomingMessage) => boolean;
  /** User cache rules, tried on proxied responses without Cache-Control (or with, when `override`). */
  readonly cachePolicy: readonly CacheRule[];
  /** limits.sendTimeoutMs: a client that takes no response byte for this long is dropped. */
  readonly sendTimeoutMs?: number | undefined;
}

export interface Proxy {
  readonly step: Step | undefined;
  /** Whether a WebSocket handshake for this request goes to a pass-through route. */
  ownsUpgrade(req: IncomingMessage): boolean;
  /** Passes a WebSocket handshake that cleared every request step through to its route's upstream;
   *  false when no pass-through route matches. */
  upgrade(req: IncomingMessage, res: ServerResponse, tunnel: Tunnel): boolean;
  /** Destroys tunnelled (upgraded) connections: they are invisible to server.close(). */
  closeTunnels(): void;
  /** Opens the routes' cache stores; rejects when one cannot be opened (see RouteCache.open). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export const VIA_NAME = 'gatehouse';
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS']);
/** What a proxy can say it allows without knowing the upstream (RFC 9110 §10.2.1). */
const ALLOW_WITHOUT_TRACE = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';

export { classifyUpstreamError };

interface Route {
  readonly o: ProxyRouteOptions;
  /** Prefix without a trailing slash ('' for the root). */
  readonly prefix: string;
  readonly upstreams: UpstreamSet;
  readonly rewrite: { re: RegExp; to: string } | undefined;
  /** The shared cache, when `cache.enabled`. */
  readonly cache: RouteCache | undefined;
}

function matches(prefix: string, path: string): boolean {
  // /api matches /api, /api/..., /api?x — never /apiary.
  if (prefix === '') return true;
  if (!path.startsWith(prefix)) return false;
  const c = path.charCodeAt(prefix.length);
  return Number.isNaN(c) || c === 47 /* / */ || c === 63 /* ? */;
}

/** Upstream request target for a public one (raw, still percent-encoded). */
export function upstreamTarget(
  url: string,
  prefix: string,
  o: { stripPrefix: boolean; basePath: string; rewrite?: { re: RegExp; to: string } | undefined },
): string {
  const q = url.indexOf('?');
  let path = q === -1 ? url : url.slice(0, q);
  const query = q === -1 ? '' : url.slice(q);
  if (o.stripPrefix && prefix) path = path.slice(prefix.length);
  if (!path.startsWith('/')) path = `/${path}`;
  if (o.rewrite) path = path.replace(o.rewrite.re, o.rewrite.to);
  return o.basePath + path + query;
}

export function createProxy(routes: readonly ProxyRouteOptions[], deps: ProxyDeps): Proxy {
  if (routes.length === 0) {
    return {
      step: undefined,
      ownsUpgrade: () => false,
      upgrade: () => false,
      closeTunnels: () => {},
      ready: async () => {},
      close: async () => {},
    };
  }
  // Longest prefix first.
  const compiled: Route[] = routes
    .map((o) => ({
      o,
      prefix: o.prefix.replace(/\/+$/, ''),
      upstreams: new UpstreamSet({
        urls: Array.isArray(o.upstream) ? o.upstream : [o.upstream],
        balance: o.balance,
        connectTimeoutMs: o.timeouts.connectMs,
        connections: o.connections,
        maxConnections: o.maxConnections,
        queueMs: o.timeouts.queueMs,
        failures: o.health.failures,
        cooldownMs: o.health.cooldownMs,
        healthPath: o.health.path,
        healthIntervalMs: o.health.intervalMs,
      }),
      rewrite: o.rewrite ? { re: new RegExp(o.rewrite.from), to: o.rewrite.to } : undefined,
      cache: o.cache?.enabled ? createRouteCache(o.cache, deps.ctx.logger) : undefined,
    }))
    .sort((a, b) => b.prefix.length - a.prefix.length);
  const policy = compileRuleList(deps.cachePolicy);
  const tunnels = new Set<Duplex>();
  /** Upgraded connections open per upstream (bounded by the route's maxUpgrades). */
  const upgrades = new Map<Upstream, number>();
  const logger = deps.ctx.logger;

  const find = (url: string): Route | undefined => {
    for (const r of compiled) if (matches(r.prefix, url)) return r;
    return undefined;
  };

  /**
   * The Cache-Control the proxy sends with an upstream response: the upstream's own unless a rule
   * overrides it; when it sends none, the first matching cachePolicy rule, else the route's default.
   * The route's shared cache decides on this value too, so what clients are told is what it does.
   */
  const policyCacheControl = (
    req: IncomingMessage,
    route: Route,
    headers: IncomingHttpHeaders,
  ): string | undefined => {
    const given = headers['cache-control'];
    const path = req.url!.split('?', 1)[0]!;
    const type = headers['content-type'];
    const mediaType = typeof type === 'string' ? type.split(';', 1)[0]!.trim().toLowerCase() : '';
    const rule = policy({ path, mediaType });
    if (rule !== undefined && (rule.override || given === undefined)) return rule.cacheControl;
    if (given === undefined && route.o.cacheControl !== null) return route.o.cacheControl;
    return given;
  };

  const responseHeaders = (
    req: IncomingMessage,
    res: ServerResponse,
    route: Route,
    u: Upstream,
    headers: IncomingHttpHeaders,
  ): Record<string, string | string[]> => {
    const out = stripHopByHop(headers);
    const o = route.o;
    if (o.via) out.via = appendVia(headers.via, VIA_NAME);
    if ((o.rewriteLocation || o.rewriteCookies) && req.headers.host) {
      const proto = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
      const rw: ResponseRewrite = {
        upstreamOrigin: u.origin,
        publicOrigin: `${proto}://${req.headers.host}`,
        publicPrefix: o.stripPrefix ? route.prefix : '',
        upstreamPrefix: u.basePath,
      };
      if (o.rewriteLocation && typeof out.location === 'string')
        out.location = rewriteLocation(out.location, rw);
      if (o.rewriteCookies && out['set-cookie'] !== undefined) {
        const host = req.headers.host.replace(/:\d+$/, '');
        const list = Array.isArray(out['set-cookie']) ? out['set-cookie'] : [out['set-cookie']];
        out['set-cookie'] = list.map((c) => rewriteSetCookie(c, u.url.hostname, host, rw.publicPrefix));
      }
    }
    const cc = policyCacheControl(req, route, headers);
    if (cc === undefined) delete out['cache-control'];
    else out['cache-control'] = cc;
    // Headers our own steps set (CORS, header rules) win; Vary is merged (RFC 9110 §12.5.5).
    for (const name of Object.keys(out)) {
      if (name === 'vary') {
        const before = res.getHeader('vary');
        if (before !== undefined) out.vary = mergeVary(before, String(out.vary));
      } else if (res.hasHeader(name)) delete out[name];
    }
    return out;
  };

  const env: ExchangeEnv = {
    logger,
    sendTimeoutMs: deps.sendTimeoutMs ?? 60_000,
    responseHeaders: (x, headers) => responseHeaders(x.req, x.res, x.route as Route, x.u, headers),
    retry: (x) => {
      const { req, res, route, u, attempt, hooks, hasBody } = x;
      if (!(route as Route).o.retry || attempt > 0 || hasBody || !IDEMPOTENT.has(req.method!)) return false;
      // Once more on a fresh connection (another upstream when there is one).
      forward(req, res, route as Route, 1, route.upstreams.all.length > 1 ? u : undefined, hooks);
      return true;
    },
  };

  const forward = (
    req: IncomingMessage,
    res: ServerResponse,
    route: Route,
    attempt: number,
    exclude?: Upstream,
    hooks?: ForwardHooks,
  ) => {
    const u = route.upstreams.pick(exclude);
    if (u === undefined) {
      sendError(req, res, ERRORS.badGateway, 'No upstream is available.');
      return;
    }
    const o = route.o;
    const te = req.headers['transfer-encoding'];
    const cl = req.headers['content-length'];
    const hasBody = te !== undefined || (cl !== undefined && cl !== '0');
    if (o.maxBodyBytes !== undefined && cl !== undefined && Number(cl) > o.maxBodyBytes) {
      // Refused before the upstream is contacted; the unread body makes the connection unusable.
      sendError(req, res, ERRORS.contentTooLarge, 'The request body is larger than this route accepts.', {
        Connection: 'close',
      });
      return;
    }
    if (u.tryEnter()) {
      startExchange(req, res, route, u, attempt, hooks, hasBody);
      return;
    }
    const cancel = u.enqueue(
      () => startExchange(req, res, route, u, attempt, hooks, hasBody),
      () => {
        const err = Object.assign(new Error('no upstream connection within queueMs'), {
          code: 'QUEUE_TIMEOUT',
        });
        if (hooks?.onFailure?.(err) === true || hooks?.detached || res.headersSent) return;
        sendError(req, res, ERRORS.serviceUnavailable, 'The upstream is busy; try again later.', {
          'Retry-After': '1',
        });
      },
    );
    if (hooks?.detached !== true) res.once('close', cancel);
  };

  /** Sends the request upstream on a slot already taken. */
  const startExchange = (
    req: IncomingMessage,
    res: ServerResponse,
    route: Route,
    u: Upstream,
    attempt: number,
    hooks: ForwardHooks | undefined,
    hasBody: boolean,
  ) => {
    const o = route.o;
    const headers = upstreamRequestHeaders({
      headers: req.headers,
      peer: req.socket.remoteAddress,
      peerTrusted: deps.isTrustedPeer(req),
      proto: (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http',
      upstreamHost: u.url.host,
      changeOrigin: o.changeOrigin,
      xForwarded: o.xForwarded,
      forwarded: o.forwarded,
      via: o.via ? VIA_NAME : undefined,
    });
    if (hooks?.requestHeaders) setFields(headers, hooks.requestHeaders);
    const path = upstreamTarget(req.url!, route.prefix, {
      stripPrefix: o.stripPrefix,
      basePath: u.basePath,
      rewrite: route.rewrite,
    });
    new Exchange(env, route, u, req, res, attempt, hooks, hasBody).dispatch(req.method!, path, headers);
  };

  const step: Step = (req, res) => {
    const route = find(req.url!);
    if (route === undefined) return false;
    if (req.method === 'TRACE' && !route.o.allowTrace) {
      // TRACE would echo the request, cookies included, from the upstream (RFC 9110 §9.3.8): refused.
      sendError(req, res, ERRORS.methodNotAllowed, 'TRACE is not forwarded.', { Allow: ALLOW_WITHOUT_TRACE });
      return true;
    }
    if (route.cache !== undefined) {
      if (route.cache.tryHit(req, res)) return true;
      return route.cache
        .handle(req, res, {
          forward: (hooks) => forward(req, res, route, 0, undefined, hooks),
          responseHeaders: (h) => responseHeaders(req, res, route, route.upstreams.all[0]!, h),
          cacheControl: (h) => policyCacheControl(req, route, h),
          clientAddress: () => deps.ctx.clientAddress(req),
        })
        .then(() => true);
    }
    forward(req, res, route, 0);
    return true;
  };

  return {
    step,
    ownsUpgrade: (req) => find(req.url!)?.o.websocket === true,
    upgrade(req, res, tunnel) {
      const route = find(req.url!);
      if (route === undefined || !route.o.websocket) return false;
      // RFC 6455 §4.1: the opening handshake is a GET.
      if (req.method !== 'GET') {
        sendError(req, res, ERRORS.badRequest, 'A WebSocket handshake must be a GET request.');
        return true;
      }
      const u = route.upstreams.pick();
      if (u === undefined) {
        sendError(req, res, ERRORS.badGateway, 'No upstream is available.');
        return true;
      }
      const open = upgrades.get(u) ?? 0;
      if (open >= route.o.maxUpgrades) {
        sendError(req, res, ERRORS.serviceUnavailable, 'Too many WebSocket connections to this upstream.');
        return true;
      }
      upgrades.set(u, open + 1);
      const headers = upstreamRequestHeaders({
        headers: req.headers,
        peer: req.socket.remoteAddress,
        peerTrusted: deps.isTrustedPeer(req),
        proto: (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http',
        upstreamHost: u.url.host,
        changeOrigin: route.o.changeOrigin,
        xForwarded: route.o.xForwarded,
        forwarded: route.o.forwarded,
        via: route.o.via ? VIA_NAME : undefined,
        upgrade: true,
      });
      // Only the WebSocket protocol is tunnelled: the upstream is offered exactly that (RFC 9110 §7.8),
      // never another protocol the client listed beside it.
      headers.upgrade = 'websocket';
      headers.connection = 'Upgrade';
      const { socket } = tunnel;
      tunnels.add(socket);
      socket.once('close', () => tunnels.delete(socket));
      proxyUpgrade(req, res, tunnel, {
        upstream: u,
        target: upstreamTarget(req.url!, route.prefix, {
          stripPrefix: route.o.stripPrefix,
          basePath: u.basePath,
          rewrite: route.rewrite,
        }),
        headers,
        timeoutMs: route.o.timeouts.connectMs + route.o.timeouts.headersMs,
        logger,
        onFailure: () => route.upstreams.failed(u),
        onDone: () => {
          const n = (upgrades.get(u) ?? 1) - 1;
          if (n <= 0) upgrades.delete(u);
          else upgrades.set(u, n);
        },
      });
      return true;
    },
    closeTunnels: () => {
      for (const t of tunnels) t.destroy();
    },
    ready: async () => {
      await Promise.all(compiled.map((r) => r.cache?.open()));
    },
    close: async () => {
      for (const t of tunnels) t.destroy();
      await Promise.all(compiled.map((r) => r.upstreams.close()));
      await Promise.all(compiled.map((r) => r.cache?.close()));
    },
  };
}
