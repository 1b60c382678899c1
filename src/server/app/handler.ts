// The request pipeline without a listener: the parts (static, proxy and its cache, WebSocket
// endpoints, health, metrics), the ordered steps and the one entry every request and handshake goes
// through. createGatehouse (app/gatehouse.ts) puts a listener around it; createHandler hands it to an app that
// owns its server (Express, Fastify, Koa, Hono, Vite's preview server), with `next` for what nothing
// here claims.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Mounted, MountFacts, PassOn } from '../core/context.js';
import { createEntry, type Entry as KernelEntry } from '../core/entry.js';
import { ERRORS, sendError } from '../core/errors.js';
import { normalMount } from '../core/mount.js';
import { refuseBadHead } from '../core/request-head.js';
import { type Entry, nodeEntry, type UpgradeListener } from '../node/entry.js';
import type { StepContext, Tunnel } from '../node/types.js';
import { accessLogger, createLogger, type Logger } from '../ops/log.js';
import type { Metrics } from '../ops/metrics.js';
import { createPressureWatch, heapLimitBytes } from '../ops/pressure.js';
import type { Proxy as ReverseProxy } from '../proxy/handler.js';
import { createRedisPool, type RedisPool } from '../redis/pool.js';
import type { StaticHandler } from '../static/handler.js';
import { createClientAddress } from '../steps/client-address.js';
import type { H2Stats } from '../tls/h2-sessions.js';
import type { WebSocketEndpoints } from '../websocket/index.js';
import {
  closeFeatures,
  compose,
  drainFeatures,
  type FeatureDeps,
  internalErrorHandler,
  type NamedFeature,
  startFeatures,
} from './features.js';
import type { ServerOptions } from './options.js';

export interface GatehouseDeps extends Omit<FeatureDeps, 'http2Stats'> {
  logger?: Logger;
  /**
   * Mounted handlers (createHandler, the adapters): true (the default) passes what nothing here claims to
   * the app's `next`; false answers it with Gatehouse's own 404/405, as serve-static's option of that name.
   */
  fallthrough?: boolean;
}

/** The pipeline and the parts behind it (one per createGatehouse / createHandler call). */
export interface Core {
  readonly options: ServerOptions;
  readonly logger: Logger;
  readonly static: StaticHandler;
  readonly proxy: ReverseProxy;
  readonly websocket: WebSocketEndpoints;
  readonly redis: RedisPool;
  readonly metrics: Metrics | undefined;
  /** The Node transport's entry (node/entry.ts) over the kernel's. */
  readonly entry: Entry;
  /** The kernel's own entry, for another transport (fetch/entry.ts). */
  readonly kernel: KernelEntry<IncomingMessage, ServerResponse, Tunnel>;
  /** Every feature the table made, in table order. */
  readonly features: readonly NamedFeature[];
}

/** What the listener around the core lends it (nothing, for a mounted handler). */
export interface CoreHost {
  /** HTTP/2 session figures for the metrics (the TLS listener's, read at scrape time). */
  readonly http2Stats?: () => H2Stats | undefined;
}

/** Builds the features from the table (features.ts), the kernel's entry and its Node transport. */
export function buildCore(options: ServerOptions, deps: GatehouseDeps = {}, host: CoreHost = {}): Core {
  const logger = deps.logger ?? createLogger(options.log);
  const redis = createRedisPool(options.redis, logger);
  // A configured Redis is connected at start, whatever uses it and whenever: one that cannot be
  // reached is reported now, not at the first request that needs it.
  if (options.redis !== undefined) redis.get();
  // Near the memory budget every feature sheds (ops/pressure.ts); the features exist once composed.
  let features: readonly NamedFeature[] = [];
  const watch = createPressureWatch({
    budgetBytes: options.limits.memoryBytes,
    heapLimitBytes: heapLimitBytes(),
    logger,
    shed: (fraction) => features.reduce((n, { feature }) => n + (feature.shed?.(fraction) ?? 0), 0),
  });
  const kernel: StepContext = {
    logger,
    clientAddress: createClientAddress(options.trustProxy),
    redis,
    memory: watch.state,
  };
  const c = compose(options, kernel, { ...deps, http2Stats: host.http2Stats });
  features = [...c.features, { name: 'memory', feature: { close: watch.close } }];
  const { metrics } = c.made;
  const logAccess = accessLogger(logger);
  const pipeline = createEntry<IncomingMessage, ServerResponse, Tunnel>({
    maxUrlBytes: options.limits.maxUrlBytes,
    gate: c.gate,
    handlers: c.answers,
    final: c.final,
    onError: internalErrorHandler(logger),
    logAccess:
      metrics === undefined || logAccess === undefined
        ? (logAccess ?? metrics?.observe)
        : (req, res) => {
            logAccess(req, res);
            metrics.observe(req, res);
          },
    // RFC 9112 §3.2: Host and target validated first; req.url and Host rewritten to the canonical values.
    checkTarget: refuseBadHead,
    tunnels: c.tunnels,
  });
  const entry = nodeEntry(pipeline);
  return {
    options,
    logger,
    static: c.made.static!,
    proxy: c.made.proxy!,
    websocket: c.made.websocket!,
    redis,
    metrics,
    entry,
    kernel: pipeline,
    features,
  };
}

/** Gatehouse mounted in an app that owns its server. */
export interface GatehouseHandler {
  /**
   * The one way in for a request: the ordered steps, then routes, proxy and static files. `next`
   * (Connect's, Express's) gets what nothing here claims: a path with no file, or a method the static
   * files do not answer (POST to the app's own routes). Without `next` those get the 404/405.
   * `mount`: where the app mounted the handler, for an adapter that stripped it from req.url.
   */
  handle(req: IncomingMessage, res: ServerResponse, next?: PassOn, mount?: MountFacts): void;
  /**
   * The server's 'upgrade' listener: WebSocket endpoints and proxied handshakes, after the steps.
   * Any other Upgrade is left to the server's other 'upgrade' listeners, untouched; with none, it is read
   * again as an ordinary request (RFC 9110 §7.8), as Node reads it when nothing listens.
   */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /**
   * The same listener for a handler mounted at `mountPath` ('/static'): it takes only handshakes below
   * the mount, and sees them with the mount stripped, as the app's router strips it from requests.
   * A function is asked at each handshake until it names the mount (an adapter finding it in the app).
   */
  upgradeAt(mountPath: string | (() => string | undefined)): UpgradeListener;
  /** Opens the proxy's cache stores (a store that cannot open rejects, as at `serve`). */
  ready(): Promise<void>;
  /** Answers with Connection: close from now on, then closes the endpoints, the proxy and Redis. */
  close(): Promise<void>;
  readonly options: ServerOptions;
  readonly logger: Logger;
  readonly static: StaticHandler;
}

export function createHandler(options: ServerOptions, deps: GatehouseDeps = {}): GatehouseHandler {
  const core = buildCore(options, deps);
  const { entry, logger } = core;
  const fallthrough = deps.fallthrough !== false;
  // The proxy's cache stores open now; requests that arrive before wait for them (serve waits too,
  // before it listens). A store that cannot open answers 503 and is logged.
  const started = startFeatures(core.features, logger);
  const enter = (req: IncomingMessage, res: ServerResponse, mounted: Mounted | undefined) => {
    if (started.failed === undefined) entry.onRequest(req, res, mounted);
    else sendError(req, res, ERRORS.serviceUnavailable, 'A cache store of this server could not be opened.');
  };
  return {
    handle(req, res, next, mount) {
      let passOn: PassOn | undefined;
      if (next !== undefined && fallthrough) {
        // What is passed on reaches the app as it came (the entry canonicalises req.url and Host).
        const { url } = req;
        const { host } = req.headers;
        passOn = (err) => {
          req.url = url;
          if (host === undefined) delete req.headers.host;
          else req.headers.host = host;
          next(err);
        };
      }
      const mounted = passOn === undefined && mount === undefined ? undefined : { passOn, mount };
      if (started.open) entry.onRequest(req, res, mounted);
      else void started.settled.then(() => enter(req, res, mounted));
    },
    upgrade: entry.upgradeAt(''),
    upgradeAt: (mountPath) =>
      entry.upgradeAt(typeof mountPath === 'string' ? normalMount(mountPath) : mountPath),
    ready: () => started.ready(),
    async close() {
      entry.setClosing();
      // The app's server drains its own requests; what outlives them closes here (app/lifecycle.ts).
      const draining = drainFeatures(core.features);
      await closeFeatures(draining, core, performance.now() + options.limits.shutdownTimeoutMs);
    },
    options,
    logger,
    static: core.static,
  };
}
