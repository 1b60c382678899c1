// The composition root's table: every feature, in the order a request meets it. Each row makes one
// feature in the plug-in shape (core/feature.ts) from the options and the kernel; compose() puts the
// gate steps, the answering steps, the final handler and the tunnels in that order. Adding a feature is
// one file and one row.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TunnelRoute } from '../core/entry.js';
import { ERRORS, sendError } from '../core/errors.js';
import type { FileAccess } from '../files/access.js';
import type { Feature, Final, Step, StepContext, Tunnel } from '../node/types.js';
import * as health from '../ops/health.js';
import type { Logger } from '../ops/log.js';
import type { Metrics, RouteKind } from '../ops/metrics.js';
import * as metrics from '../ops/metrics.js';
import type { Proxy as ReverseProxy } from '../proxy/handler.js';
import * as proxy from '../proxy/handler.js';
import type { RedisPool } from '../redis/pool.js';
import type { Route } from '../routes/routes.js';
import * as routes from '../routes/routes.js';
import type { StaticHandler } from '../static/handler.js';
import * as statics from '../static/handler.js';
import * as auth from '../steps/auth.js';
import { createTrustedPeer } from '../steps/client-address.js';
import * as cors from '../steps/cors.js';
import * as headers from '../steps/headers.js';
import { namesInRules } from '../steps/headers.js';
import * as httpsRedirect from '../steps/https-redirect.js';
import * as jsonp from '../steps/jsonp.js';
import * as limits from '../steps/limits.js';
import * as redirects from '../steps/redirects.js';
import type { H2Stats } from '../tls/h2-sessions.js';
import * as websocket from '../websocket/index.js';
import { handshakeOriginPolicy, type WebSocketEndpoints, type WebSocketHandler } from '../websocket/index.js';
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

/** The features the table made that later rows (and the lifecycle) use, by name. */
export interface Made {
  static?: StaticHandler;
  proxy?: ReverseProxy;
  websocket?: WebSocketEndpoints;
  metrics?: Metrics | undefined;
}

interface Row {
  readonly name: string;
  /** The route kind the metrics count its answers under. */
  readonly kind?: RouteKind;
  /** The metrics count its tunnel's handshakes under `kind` too. */
  readonly countsTunnel?: true;
  /** Calls the feature's own create(options, kernel) with its options (one line). */
  readonly create: (
    o: ServerOptions,
    kernel: StepContext,
    deps: FeatureDeps,
    made: Made,
  ) => Feature | undefined;
}

/** Keeps what a feature made for the rows after it, and returns the feature. */
function keep<F extends Feature, K extends keyof Made>(made: Made, key: K, f: F, part: Made[K]): F {
  made[key] = part;
  return f;
}

/**
 * The table. Rows are made top to bottom: the static files first (the redirects, routes and JSONP read
 * its file view), though their final handler runs last. Gate steps run in row order, then answering
 * steps in row order, then the final handler. Order matters: health and metrics before auth and rate
 * limits (probes do not authenticate); header rules before refusals, so refusals carry them; CORS
 * before the rate limit (429s carry CORS fields, preflights are not counted) and before auth (a
 * preflight carries no credentials, Fetch §3.2.2); the WebSocket endpoints' answer (426 over HTTP/2)
 * before the canonical redirects.
 */
export const FEATURES: readonly Row[] = [
  {
    name: 'static',
    kind: 'static',
    create: (o, k, deps, made) => {
      // The HTML security defaults yield to header rules that name the same fields (files.ts).
      const ruled = { ...o.static, htmlHeadersRuled: namesInRules(o.headers) };
      const { otherMethodsOnFiles, files } = deps;
      const f = statics.create(
        { root: o.root, static: ruled, cachePolicy: o.cachePolicy, otherMethodsOnFiles, files },
        k,
      );
      return keep(made, 'static', f, f.final);
    },
  },
  { name: 'health', create: (o, k) => health.create(o.health, k) },
  {
    name: 'metrics',
    create: (o, k, deps, made) => {
      const f = metrics.create({ metrics: o.metrics, sources: metricsSources(o, deps, made) }, k);
      return f && keep(made, 'metrics', f, f.metrics);
    },
  },
  // A plain-HTTP listener that only points browsers at HTTPS.
  {
    name: 'https-redirect',
    create: (o, k) => {
      const r = o.listen.redirectToHttps;
      return httpsRedirect.create(r && { httpsPort: r.port, hosts: r.hosts }, k);
    },
  },
  { name: 'headers', create: (o, k) => headers.create({ rules: o.headers, trustProxy: o.trustProxy }, k) },
  { name: 'cors', create: (o, k) => cors.create(o.cors, k) },
  { name: 'limits', create: (o, k) => limits.create(o.limits, k) },
  { name: 'auth', create: (o, k) => auth.create({ rules: o.auth, cors: o.cors }, k) },
  {
    name: 'websocket',
    kind: 'ws',
    countsTunnel: true,
    create: (o, k, deps, made) => {
      const f = websocket.create(
        { endpoints: o.websocket, cors: o.cors, handlers: deps.websocketHandlers },
        k,
      );
      return keep(made, 'websocket', f, f.endpoints);
    },
  },
  {
    name: 'redirects',
    kind: 'other',
    create: (o, k, _deps, made) =>
      redirects.create({ rules: o.redirects, canonical: canonicalOptions(o), files: made.static!.files }, k),
  },
  {
    name: 'routes',
    kind: 'route',
    create: (o, k, deps, made) =>
      routes.create(
        {
          routes: deps.routes ?? [],
          jsonp: o.jsonp,
          limits: o.limits,
          serveFileAt: made.static!.serveFileAt,
        },
        k,
      ),
  },
  {
    name: 'jsonp',
    kind: 'jsonp',
    create: (o, k, _deps, made) => jsonp.create({ jsonp: o.jsonp, files: made.static!.files }, k),
  },
  {
    name: 'proxy',
    kind: 'proxy',
    create: (o, k, _deps, made) => {
      const f = proxy.create(
        {
          routes: o.proxy,
          cachePolicy: o.cachePolicy,
          isTrustedPeer: createTrustedPeer(o.trustProxy),
          sendTimeoutMs: o.limits.sendTimeoutMs,
          handshakeOriginAllowed: handshakeOriginPolicy(o.cors),
        },
        k,
      );
      return keep(made, 'proxy', f, f.proxy);
    },
  },
];

/** The canonical redirects of the static section (trailing slash, index.html). */
function canonicalOptions(o: ServerOptions) {
  return {
    trailingSlash: o.static.trailingSlash,
    indexHtml: o.static.indexRedirect,
    indexNames: o.static.index,
  };
}

/** Where the metrics' figures come from: rows made after the metrics row, read at scrape time. */
function metricsSources(o: ServerOptions, deps: FeatureDeps, made: Made) {
  return {
    cacheRoutes: o.proxy.flatMap((r) =>
      r.cache?.enabled ? [{ prefix: r.prefix, store: r.cache.store ?? 'memory' }] : [],
    ),
    openWebSockets: () => o.websocket.reduce((n, e) => n + (made.websocket?.clients(e.path) ?? 0), 0),
    proxyStats: () => made.proxy!.stats(),
    http2Stats: () => deps.http2Stats?.(),
  };
}

/** A feature the table made, under its row's name (the shutdown's log names it). */
export interface NamedFeature {
  readonly name: string;
  readonly feature: Feature;
}

/** The pipeline's parts in order, from the table. */
export interface Composed {
  readonly gate: Step[];
  readonly answers: Step[];
  readonly final: Final;
  readonly tunnels: TunnelRoute<IncomingMessage, ServerResponse, Tunnel>[];
  readonly features: readonly NamedFeature[];
  readonly made: Made;
}

/** Makes every row and orders what they return; with metrics on, answers are counted by kind. */
export function compose(options: ServerOptions, kernel: StepContext, deps: FeatureDeps): Composed {
  const made: Made = {};
  const gate: Step[] = [];
  const answers: Step[] = [];
  const tunnels: TunnelRoute<IncomingMessage, ServerResponse, Tunnel>[] = [];
  const features: NamedFeature[] = [];
  const rows: Row[] = [];
  let final: Final | undefined;
  for (const row of FEATURES) {
    const feature = row.create(options, kernel, deps, made);
    if (feature === undefined) continue;
    features.push({ name: row.name, feature });
    rows.push(row);
  }
  // Tagged once every row is made: the metrics row comes before the rows it counts.
  const m = made.metrics;
  for (const [i, { feature: f }] of features.entries()) {
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

/** Resolves once every feature is ready to answer; the first that cannot rejects (the start stops). */
export async function readyFeatures(features: readonly NamedFeature[]): Promise<void> {
  await Promise.all(features.map(({ feature }) => feature.ready?.()));
}

/** The start of a mounted pipeline's features: requests that arrive before wait for it. */
export interface Startup {
  /** Every feature is ready (requests go straight in). */
  readonly open: boolean;
  /** Why a feature could not start (logged once); undefined while all is well. */
  readonly failed: unknown;
  /** Settles (never rejects) once the start is over, either way. */
  readonly settled: Promise<void>;
  /** Resolves when every feature started; rejects with the failure otherwise. */
  ready(): Promise<void>;
}

/** Starts the features now (the proxy's cache stores open); a failure is logged, not thrown. */
export function startFeatures(features: readonly NamedFeature[], logger: Logger): Startup {
  const st = {
    open: false,
    failed: undefined as unknown,
    settled: Promise.resolve(),
    ready: async () => {
      await st.settled;
      if (st.failed !== undefined) throw st.failed;
    },
  };
  st.settled = readyFeatures(features).then(
    () => {
      st.open = true;
    },
    (err: unknown) => {
      st.failed = err;
      logger.error({ err }, 'a proxy cache store could not be opened');
    },
  );
  return st;
}

/** What the parts get to close when the drain used the whole shutdownTimeoutMs (requests hung). */
export const PARTS_GRACE_MS = 1000;

/** A feature whose shutdown began (drain() called): what its drain returned, settled or not. */
export interface Draining {
  readonly features: readonly NamedFeature[];
  readonly drained: readonly Promise<unknown>[];
}

/**
 * The shutdown begins: every feature's drain() now (readiness turns 503, WebSockets get 1001, before
 * the listener waits for its connections). A drain that throws or rejects is reported by closeFeatures.
 */
export function drainFeatures(features: readonly NamedFeature[]): Draining {
  const drained = features.map(({ feature }) => {
    const p = (async () => feature.drain?.())();
    p.catch(() => {}); // reported by closeFeatures; not unhandled while the server drains
    return p;
  });
  return { features, drained };
}

/**
 * Closes what outlives the requests, once they are done: each feature's close() (the proxy's pools and
 * cache stores, the file watchers) after its drain settled, then Redis, which they may still use while
 * they close. A part whose close rejects is logged and does not stop the others: this always resolves.
 * The parts get until `deadlineMs` (performance.now(): the start of the shutdown plus
 * shutdownTimeoutMs), at least PARTS_GRACE_MS; a part still closing then (a hung Redis that answers
 * nothing) is logged, Redis is dropped without QUIT, and the promise resolves.
 */
export async function closeFeatures(
  d: Draining,
  kernel: { readonly redis: RedisPool; readonly logger: Logger },
  deadlineMs: number,
): Promise<void> {
  const { redis, logger } = kernel;
  const names = [...d.features.map((f) => f.name), 'redis'];
  const open = new Set<string>(names);
  const settle = (name: string, promise: Promise<unknown>) => promise.finally(() => open.delete(name));
  const all = (async () => {
    const results = await Promise.allSettled(
      d.features.map(({ name, feature }, i) =>
        // Closed even when its drain failed (that failure is what gets reported).
        settle(
          name,
          d.drained[i]!.finally(() => feature.close?.()),
        ),
      ),
    );
    results.push(...(await Promise.allSettled([settle('redis', redis.close())])));
    return results;
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), Math.max(deadlineMs - performance.now(), PARTS_GRACE_MS));
  });
  const results = await Promise.race([all, late]);
  clearTimeout(timer);
  if (results === undefined) {
    logger.error(
      { parts: [...open] },
      'shutdown: still closing at the deadline (shutdownTimeoutMs); dropped',
    );
    redis.disconnect();
  } else {
    for (const [i, r] of results.entries()) {
      if (r.status === 'rejected') logger.error({ err: r.reason, part: names[i] }, 'shutdown: close failed');
    }
  }
  logger.flush?.();
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
