// Reverse proxy for path prefixes on undici pools: streamed both ways with backpressure,
// hop-by-hop stripped both ways, 502/504 on upstream failure, client aborts propagated.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Dispatcher } from 'undici';
import {
  appendVia,
  type ResponseRewrite,
  rewriteLocation,
  rewriteSetCookie,
  stripHopByHop,
  upstreamRequestHeaders,
} from '../../http/proxy-headers.js';
import type { Step, StepContext, Tunnel } from '../context.js';
import { ERRORS, type ErrorEntry, sendError } from '../errors.js';
import { logCacheStatus } from '../log.js';
import type { CacheRule } from '../static/policy.js';
import { compileRuleList } from '../static/policy.js';
import { mergeVary } from '../vary.js';
import {
  createRouteCache,
  type ForwardHooks,
  type HeadAction,
  type ProxyCacheOptions,
  type RouteCache,
  setFields,
} from './cache.js';
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
  timeouts: { connectMs: number; headersMs: number; idleMs: number };
  retry: boolean;
  health: { failures: number; cooldownMs: number; path?: string | undefined; intervalMs: number };
  /** For responses without Cache-Control; null leaves them as the upstream sent them. */
  cacheControl: string | null;
  connections: number;
  /** Shared cache (RFC 9111) of upstream responses; off unless `enabled`. */
  cache?: ProxyCacheOptions | undefined;
}

export interface ProxyDeps {
  readonly ctx: StepContext;
  /** Whether the socket peer is a trusted proxy (its X-Forwarded-* are kept and extended). */
  readonly isTrustedPeer: (req: IncomingMessage) => boolean;
  /** User cache rules, tried on proxied responses without Cache-Control (or with, when `override`). */
  readonly cachePolicy: readonly CacheRule[];
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
const CONNECT_ERRORS = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);
const TIMEOUT_ERRORS = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** Why an upstream exchange failed before a response head: 502 or 504 (DESIGN: errors). */
export function classifyUpstreamError(err: unknown): {
  entry: ErrorEntry;
  retryable: boolean;
  detail: string;
} {
  const code = (err as { code?: string }).code ?? '';
  if (TIMEOUT_ERRORS.has(code)) {
    const what =
      code === 'UND_ERR_CONNECT_TIMEOUT'
        ? 'connect'
        : code === 'UND_ERR_HEADERS_TIMEOUT'
          ? 'response'
          : 'idle';
    return {
      entry: ERRORS.gatewayTimeout,
      retryable: false,
      detail: `The upstream did not answer in time (${what} timeout).`,
    };
  }
  return {
    entry: ERRORS.badGateway,
    retryable: CONNECT_ERRORS.has(code),
    detail: 'The upstream could not be reached or failed before answering.',
  };
}

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
    const peer = req.socket.remoteAddress;
    const headers = upstreamRequestHeaders({
      headers: req.headers,
      peer,
      peerTrusted: deps.isTrustedPeer(req),
      proto: (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http',
      upstreamHost: u.url.host,
      changeOrigin: o.changeOrigin,
      xForwarded: o.xForwarded,
      forwarded: o.forwarded,
      via: o.via ? VIA_NAME : undefined,
    });
    if (hooks?.requestHeaders) {
      setFields(headers, hooks.requestHeaders);
    }
    const hasBody =
      req.headers['transfer-encoding'] !== undefined ||
      (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
    let controller: Dispatcher.DispatchController | undefined;
    let started = false;
    let done = false;
    let action: HeadAction | undefined;
    /** Status of the final response head, once it arrived. */
    let headStatus = 0;
    u.inFlight++;
    const finish = () => {
      if (!done) {
        done = true;
        u.inFlight--;
      }
    };
    const detached = hooks?.detached === true;
    const onClientClose = () => {
      // RFC 9110 §9.5-ish hygiene: a client that went away aborts the upstream exchange at once.
      if (!detached && !res.writableFinished && !done)
        controller?.abort(Object.assign(new Error('client closed'), { code: 'CLIENT_CLOSED' }));
    };
    res.once('close', onClientClose);

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (!detached && res.destroyed)
          c.abort(Object.assign(new Error('client closed'), { code: 'CLIENT_CLOSED' }));
      },
      onResponseStart(c, statusCode, upHeaders, statusMessage) {
        if (statusCode < 200) {
          // 103 Early Hints pass through (RFC 8297); 100 was answered to the client by Node.
          if (statusCode === 103 && !detached && upHeaders.link !== undefined)
            res.writeEarlyHints({ link: upHeaders.link });
          return;
        }
        started = true;
        headStatus = statusCode;
        route.upstreams.succeeded(u);
        action = hooks?.onHead?.(statusCode, upHeaders);
        controller = c;
        if (action?.kind === 'swallow') return;
        const out = responseHeaders(req, res, route, u, upHeaders);
        if (action?.headers) {
          setFields(out, action.headers);
          const cacheStatus = action.headers['cache-status'];
          if (cacheStatus !== undefined) logCacheStatus(res, cacheStatus);
        }
        if (statusMessage) res.writeHead(statusCode, statusMessage, out);
        else res.writeHead(statusCode, out);
        if (req.method === 'HEAD') res.flushHeaders();
      },
      onResponseData(c, chunk) {
        if (action?.kind === 'swallow') {
          action.onData?.(chunk);
          return;
        }
        action?.onData?.(chunk);
        // Backpressure: pause the upstream while the client's socket is full.
        if (!res.write(chunk)) {
          c.pause();
          res.once('drain', () => c.resume());
        }
      },
      onResponseEnd(_c, trailers) {
        finish();
        res.off('close', onClientClose);
        if (action?.kind === 'swallow') {
          action.onEnd();
          return;
        }
        const t = trailers ? stripHopByHop(trailers) : {};
        if (Object.keys(t).length > 0) res.addTrailers(t as Record<string, string>);
        res.end();
        action?.onEnd?.();
      },
      onResponseError(ctl, err) {
        const code = (err as { code?: string }).code;
        if (
          code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH' &&
          (headStatus === 304 || headStatus === 204 || (started && req.method === 'HEAD'))
        ) {
          // A 304/204 (or an answer to HEAD) has no body whatever its Content-Length says
          // (RFC 9110 §8.6); undici still counts the missing bytes. The response is complete.
          handler.onResponseEnd?.(ctl, {});
          return;
        }
        finish();
        res.off('close', onClientClose);
        if (detached) {
          // Nobody waits on this exchange (a background revalidation): only the cache hears of it.
          hooks?.onFailure?.(err);
          return;
        }
        if (code === 'CLIENT_CLOSED' || res.destroyed) return;
        if (action?.kind === 'swallow') {
          // The cache was reading this response to answer from the store: the store cannot help now.
          if (hooks?.onFailure?.(err) !== true && !res.headersSent)
            sendError(req, res, ERRORS.badGateway, 'The upstream failed mid-response.');
          return;
        }
        if (started || res.headersSent) {
          // Mid-body failure: end the client response as broken, never as a silent truncation.
          logger.warn({ err, url: req.url, upstream: u.origin }, 'upstream failed mid-response');
          res.destroy(err);
          return;
        }
        const c = classifyUpstreamError(err);
        route.upstreams.failed(u);
        if (c.retryable && o.retry && attempt === 0 && !hasBody && IDEMPOTENT.has(req.method!)) {
          // Retry once on a fresh connection (another upstream when there is one).
          forward(req, res, route, 1, route.upstreams.all.length > 1 ? u : undefined, hooks);
          return;
        }
        if (hooks?.onFailure?.(err) === true) return;
        logger.warn({ err, url: req.url, upstream: u.origin }, 'upstream request failed');
        sendError(req, res, c.entry, c.detail);
      },
    };
    u.pool.dispatch(
      {
        method: req.method as Dispatcher.HttpMethod,
        path: upstreamTarget(req.url!, route.prefix, {
          stripPrefix: o.stripPrefix,
          basePath: u.basePath,
          rewrite: route.rewrite,
        }),
        headers,
        body: hasBody ? req : null,
        headersTimeout: o.timeouts.headersMs,
        bodyTimeout: o.timeouts.idleMs,
        reset: attempt > 0,
      },
      handler,
    );
  };

  const step: Step = (req, res) => {
    const route = find(req.url!);
    if (route === undefined) return false;
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
