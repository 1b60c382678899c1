// The composition root's table: every feature, in the order a request meets it. Each row makes one
// feature in the plug-in shape (core/feature.ts) from the options and the kernel; compose() puts the
// gate steps, the answering steps, the final handler and the tunnels in that order. Adding a feature is
// one file and one row.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { compileCorsPolicy, isOriginAllowed } from '../../http/cors.js';
import type { TunnelRoute } from '../core/entry.js';
import { ERRORS, sendError } from '../core/errors.js';
import type { FileAccess } from '../files/access.js';
import type { Feature, Final, Step, StepContext, Tunnel } from '../node/types.js';
import { createHealth, type Health } from '../ops/health.js';
import type { Logger } from '../ops/log.js';
import { createMetrics, type Metrics, type RouteKind } from '../ops/metrics.js';
import { createProxy, type Proxy as ReverseProxy } from '../proxy/handler.js';
import { createRoutes, type Route } from '../routes/routes.js';
import { createStaticHandler, type StaticHandler } from '../static/handler.js';
import { createAuth } from '../steps/auth.js';
import { createIsSecure, createTrustedPeer } from '../steps/client-address.js';
import { createCors } from '../steps/cors.js';
import { createHeaderRules, namesInRules } from '../steps/headers.js';
import { createJsonp } from '../steps/jsonp.js';
import { createRateLimit } from '../steps/limits.js';
import { createCanonical, createHttpsRedirect, createRedirects } from '../steps/redirects.js';
import type { H2Stats } from '../tls/h2-sessions.js';
import {
  createWebSocketEndpoints,
  isSameOrigin,
  type WebSocketEndpoints,
  type WebSocketHandler,
} from '../websocket/index.js';
import type { ServerOptions } from './options.js';

/** What an app brings besides the options (createServer's and createHandler's second argument). */
export interface FeatureDeps {
  /** Library routes: a handler returns a JSON value (JSONP-wrapped on jsonp paths). */
  readonly routes?: readonly Route[] | undefined;
  /** Connection handlers of `custom` WebSocket endpoints, by path. */
  readonly websocketHandlers?: Record<string, WebSocketHandler> | undefined;
  /**
   * Mounted handlers: what a method other than GET/HEAD gets on a path where a file or folder is.
   * 'pass-on' (the default) hands it to the app's `next`, as serve-static does; '405' answers 405 with
   * Allow, for an app whose next middleware serves the same folder to any method (Vite's preview).
   * A path the files refuse (a dotfile, a symlink out of the root) is never passed on.
   */
  readonly otherMethodsOnFiles?: 'pass-on' | '405' | undefined;
  /** What the static handler reads files through (server/files/access.ts); node:fs when absent. */
  readonly files?: FileAccess | undefined;
  /** HTTP/2 session figures for the metrics (the TLS listener's, read at scrape time). */
  readonly http2Stats?: (() => H2Stats | undefined) | undefined;
}

/** The features the table made, by name, for rows that use another's (and for the lifecycle). */
export interface Made {
  static?: StaticHandler;
  proxy?: ReverseProxy;
  websocket?: WebSocketEndpoints;
  health?: Health | undefined;
  metrics?: Metrics | undefined;
}

interface Row {
  readonly name: string;
  /** The route kind the metrics count its answers under. */
  readonly kind?: RouteKind;
  /** The metrics count its tunnel's handshakes under `kind` too. */
  readonly countsTunnel?: true;
  readonly create: (
    o: ServerOptions,
    kernel: StepContext,
    deps: FeatureDeps,
    made: Made,
  ) => Feature | undefined;
}

/** Cross-origin handshakes need the CORS allow-list, never `*`: a handshake carries cookies. */
function websocketOriginPolicy(options: ServerOptions): (origin: string) => boolean {
  const wsCors = options.cors ? compileCorsPolicy(options.cors) : undefined;
  return (origin) => wsCors !== undefined && !wsCors.wildcard && isOriginAllowed(wsCors, origin);
}

/**
 * The table. Rows are made top to bottom: the static files first (the canonical redirects, routes and
 * JSONP read its file view), though their final handler runs last. Gate steps run in row order, then
 * answering steps in row order, then the final handler. Order matters: health and metrics before auth
 * and rate limits (probes do not authenticate); header rules before refusals, so refusals carry them;
 * CORS before the rate limit (429s carry CORS fields, preflights are not counted) and before auth
 * (a preflight carries no credentials, Fetch §3.2.2).
 */
export const FEATURES: readonly Row[] = [
  {
    name: 'static',
    kind: 'static',
    create: (o, k, deps, made) => {
      made.static = createStaticHandler({
        root: o.root,
        // The HTML security defaults yield to header rules that name the same fields (files.ts).
        static: { ...o.static, htmlHeadersRuled: namesInRules(o.headers) },
        cachePolicy: o.cachePolicy,
        onError: (err, req: IncomingMessage) =>
          k.logger.error({ err, method: req.method, url: req.url }, 'request failed'),
        onWarning: (message) => k.logger.warn(message),
        otherMethodsOnFiles: deps.otherMethodsOnFiles,
        files: deps.files,
      });
      const files = made.static.files;
      return { final: made.static, close: () => files.close() };
    },
  },
  {
    name: 'health',
    // Off unless configured: then no step, no hook, no timer.
    create: (o, k, _deps, made) => {
      made.health = createHealth(o.health, k, o.redis !== undefined);
      const h = made.health;
      return h && { gate: h.step };
    },
  },
  {
    name: 'metrics',
    create: (o, k, deps, made) => {
      made.metrics = createMetrics(o.metrics, k, {
        cacheRoutes: o.proxy.flatMap((r) =>
          r.cache?.enabled ? [{ prefix: r.prefix, store: r.cache.store ?? 'memory' }] : [],
        ),
        openWebSockets: () => o.websocket.reduce((n, e) => n + (made.websocket?.clients(e.path) ?? 0), 0),
        proxyStats: () => made.proxy!.stats(),
        http2Stats: () => deps.http2Stats?.(),
      });
      return made.metrics && { gate: made.metrics.step };
    },
  },
  {
    name: 'https-redirect',
    // A plain-HTTP listener that only points browsers at HTTPS (header rules still apply, e.g. HSTS off).
    create: (o) => {
      const r = o.listen.redirectToHttps;
      return r && { gate: createHttpsRedirect({ httpsPort: r.port, hosts: r.hosts }) };
    },
  },
  {
    name: 'headers',
    create: (o, k) => ({ gate: createHeaderRules(o.headers, k, { isSecure: createIsSecure(o.trustProxy) }) }),
  },
  { name: 'cors', create: (o, k) => ({ gate: createCors(o.cors, k) }) },
  { name: 'limits', create: (o, k) => ({ gate: createRateLimit(o.limits, k) }) },
  { name: 'auth', create: (o, k) => ({ gate: createAuth(o.auth, k, { cors: o.cors }) }) },
  { name: 'redirects', create: (o, k) => ({ gate: createRedirects(o.redirects, k) }) },
  {
    name: 'websocket',
    kind: 'ws',
    countsTunnel: true,
    create: (o, k, deps, made) => {
      const ws = createWebSocketEndpoints(o.websocket, {
        originAllowed: websocketOriginPolicy(o),
        handlers: deps.websocketHandlers,
        redis: k.redis!,
        logger: k.logger,
      });
      made.websocket = ws;
      return {
        answer: websocketOverHttp2(ws),
        tunnel: { owns: ws.owns, handle: ws.handleUpgrade },
        close: () => ws.close(),
        stats: () => ws.size,
      };
    },
  },
  {
    name: 'canonical',
    kind: 'other',
    create: (o, _k, _deps, made) => ({
      answer: createCanonical(
        {
          trailingSlash: o.static.trailingSlash,
          indexHtml: o.static.indexRedirect,
          indexNames: o.static.index,
        },
        made.static!.files,
      ),
    }),
  },
  {
    name: 'routes',
    kind: 'route',
    create: (o, k, deps, made) => ({
      answer: createRoutes(deps.routes ?? [], o.jsonp, o.limits, k, made.static!.serveFileAt),
    }),
  },
  {
    name: 'jsonp',
    kind: 'jsonp',
    create: (o, k, _deps, made) => ({ answer: createJsonp(o.jsonp, made.static!.files, k) }),
  },
  {
    name: 'proxy',
    kind: 'proxy',
    create: (o, k, _deps, made) => {
      const proxy = createProxy(o.proxy, {
        ctx: k,
        cachePolicy: o.cachePolicy,
        isTrustedPeer: createTrustedPeer(o.trustProxy),
        sendTimeoutMs: o.limits.sendTimeoutMs,
      });
      made.proxy = proxy;
      const originAllowed = websocketOriginPolicy(o);
      return {
        answer: proxy.step,
        tunnel: {
          owns: proxy.ownsUpgrade,
          // Cross-site WebSocket hijacking (RFC 6455 §10.2): a proxied handshake's Origin passes the
          // same check as an endpoint's.
          handle: (req, res, tunnel) => {
            const origin = req.headers.origin;
            if (origin !== undefined && !isSameOrigin(origin, req.headers.host) && !originAllowed(origin)) {
              sendError(req, res, ERRORS.forbidden, 'The Origin of this WebSocket handshake is not allowed.');
              return true;
            }
            return proxy.upgrade(req, res, tunnel);
          },
        },
        ready: () => proxy.ready(),
        stats: () => proxy.stats(),
      };
    },
  },
];

/** The pipeline's parts in order, from the table. */
export interface Composed {
  readonly gate: Step[];
  readonly answers: Step[];
  readonly final: Final;
  readonly tunnels: TunnelRoute<IncomingMessage, ServerResponse, Tunnel>[];
  readonly features: readonly Feature[];
  readonly made: Made;
}

/** Makes every row and orders what they return; with metrics on, answers are counted by kind. */
export function compose(options: ServerOptions, kernel: StepContext, deps: FeatureDeps): Composed {
  const made: Made = {};
  const gate: Step[] = [];
  const answers: Step[] = [];
  const tunnels: TunnelRoute<IncomingMessage, ServerResponse, Tunnel>[] = [];
  const features: Feature[] = [];
  const rows: Row[] = [];
  let final: Final | undefined;
  for (const row of FEATURES) {
    const f = row.create(options, kernel, deps, made);
    if (f === undefined) continue;
    features.push(f);
    rows.push(row);
  }
  // Tagged once every row is made: the metrics row comes before the rows it counts.
  const m = made.metrics;
  for (const [i, f] of features.entries()) {
    const { kind, countsTunnel } = rows[i]!;
    if (f.gate) gate.push(f.gate);
    if (f.answer) answers.push(m && kind ? m.tag(kind, f.answer) : f.answer);
    if (f.final) final = m && kind ? m.tagFinal(kind, f.final) : f.final;
    if (f.tunnel)
      tunnels.push(
        m && kind && countsTunnel
          ? { owns: f.tunnel.owns, handle: m.tagTunnel(kind, f.tunnel.handle) }
          : f.tunnel,
      );
  }
  if (final === undefined) throw new Error('the feature table has no final handler');
  return { gate, answers, final, tunnels, features, made };
}

/**
 * A request over HTTP/2 for a WebSocket endpoint: 426 with a reason. The handshake is an HTTP/1.1
 * Upgrade (RFC 6455 §4.1); RFC 8441's extended CONNECT is not offered (SETTINGS_ENABLE_CONNECT_PROTOCOL
 * is never sent), so browsers open their WebSockets on an HTTP/1.1 connection of their own.
 */
function websocketOverHttp2(websocket: WebSocketEndpoints): Step | undefined {
  if (websocket.size === 0) return undefined;
  return (req, res) => {
    if (req.httpVersionMajor !== 2 || !websocket.owns(req)) return false;
    sendError(
      req,
      res,
      ERRORS.upgradeRequired,
      'This WebSocket endpoint is reached with an HTTP/1.1 Upgrade; WebSocket over HTTP/2 (RFC 8441) is not offered.',
    );
    return true;
  };
}

/** A thrown handler error: 500 with a request id in the body and the log, never a stack trace. */
export function internalErrorHandler(
  logger: Logger,
): (err: unknown, req: IncomingMessage, res: ServerResponse) => void {
  return (err, req, res) => {
    const requestId = randomUUID();
    logger.error({ err, requestId, method: req.method, url: req.url }, 'request failed');
    sendError(
      req,
      res,
      ERRORS.internal,
      'The server failed to answer this request.',
      { 'X-Request-Id': requestId },
      {
        requestId,
      },
    );
  };
}
