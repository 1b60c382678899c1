// The server: node:http (or, with tls, node:http2's secure server with HTTP/1.1 beside it) plus the
// handlers, listening and graceful drain. The steps and their order are app/steps.ts; listen and the
// drain are app/lifecycle.ts; the TLS listener is tls/listener.ts.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { close, connectionsOf, listen, type ServerParts } from './app/lifecycle.js';
import { buildSteps, buildTunnels, internalErrorHandler, websocketOriginPolicy } from './app/steps.js';
import { createClientAddress, createTrustedPeer } from './client-address.js';
import { handleClientError } from './client-error.js';
import type { StepContext } from './context.js';
import { createEntry } from './entry.js';
import { namesInRules } from './headers.js';
import { createHealth } from './health.js';
import { http1ServerOptions } from './limits.js';
import { accessLogger, createLogger, type Logger } from './log.js';
import { createMetrics } from './metrics.js';
import type { ServerOptions } from './options.js';
import { limitPipelining } from './pipelining.js';
import { createProxy } from './proxy/handler.js';
import { createRedisPool } from './redis/pool.js';
import { refuseBadHead } from './request-head.js';
import type { Route } from './routes.js';
import { createStaticHandler, type StaticHandler } from './static/handler.js';
import { createCertificateStore } from './tls/certificates.js';
import { createTlsListener, type TlsListener, type TlsServer } from './tls/listener.js';
import { createRedirectListener } from './tls/redirect-listener.js';
import { createWebSocketEndpoints, type WebSocketHandler } from './websocket.js';

export interface Gatehouse {
  /** node:http's server; with tls, node:http2's secure server (HTTP/1.1 too) or node:https's. */
  readonly server: Server | TlsServer;
  /** With tls: certificate reloads (SIGHUP) and in-memory certificates. */
  readonly tls: TlsListener | undefined;
  readonly options: ServerOptions;
  readonly logger: Logger;
  readonly static: StaticHandler;
  /** Starts listening; resolves with the URL it listens on (and the plain-HTTP one with httpPort). */
  listen(): Promise<{ url: string; host: string; port: number; httpUrl?: string | undefined }>;
  /** Stops accepting, lets in-flight requests finish (up to shutdownTimeoutMs), then closes. */
  close(): Promise<void>;
}

export interface GatehouseDeps {
  logger?: Logger;
  /** Library routes: a handler returns a JSON value (JSONP-wrapped on jsonp paths). */
  routes?: readonly Route[];
  /** Connection handlers of `custom` WebSocket endpoints, by path. */
  websocketHandlers?: Record<string, WebSocketHandler>;
}

export function createGatehouse(options: ServerOptions, deps: GatehouseDeps = {}): Gatehouse {
  const logger = deps.logger ?? createLogger(options.log);
  const limits = options.limits;
  const staticHandler = createStaticHandler({
    root: options.root,
    // The HTML security defaults yield to header rules that name the same fields (files.ts).
    static: { ...options.static, htmlHeadersRuled: namesInRules(options.headers) },
    cachePolicy: options.cachePolicy,
    onError: (err, req: IncomingMessage) =>
      logger.error({ err, method: req.method, url: req.url }, 'request failed'),
    onWarning: (message) => logger.warn(message),
  });
  const redis = createRedisPool(options.redis, logger);
  const ctx: StepContext = { logger, clientAddress: createClientAddress(options.trustProxy), redis };
  const proxy = createProxy(options.proxy, {
    ctx,
    cachePolicy: options.cachePolicy,
    isTrustedPeer: createTrustedPeer(options.trustProxy),
    sendTimeoutMs: limits.sendTimeoutMs,
  });
  const originAllowed = websocketOriginPolicy(options);
  const websocket = createWebSocketEndpoints(options.websocket, {
    originAllowed,
    handlers: deps.websocketHandlers,
    redis,
    logger,
  });
  // Off unless configured: then no step, no hook, no timer (health.ts, metrics.ts).
  const health = createHealth(options.health, ctx);
  const metrics = createMetrics(options.metrics, ctx, {
    cacheRoutes: options.proxy.flatMap((r) =>
      r.cache?.enabled ? [{ prefix: r.prefix, store: r.cache.store ?? 'memory' }] : [],
    ),
    openWebSockets: () => options.websocket.reduce((n, e) => n + websocket.clients(e.path), 0),
    proxyStats: () => proxy.stats(),
    // The TLS listener is made below; the metrics read it only when scraped.
    http2Stats: () => tls?.http2Stats(),
  });
  const { gate, handlers } = buildSteps(options, ctx, {
    routes: deps.routes ?? [],
    staticHandler,
    proxy,
    websocket,
    health,
    metrics,
  });
  const logAccess = accessLogger(logger);

  const tls = options.tls
    ? createTlsListener({
        tls: options.tls,
        store: createCertificateStore(options.tls),
        limits,
        logger,
        redis,
      })
    : undefined;
  const server = tls?.server ?? createServer(http1ServerOptions(limits));
  // The one way in: both events go through the same entry and the same steps (src/server/entry.ts).
  const entry = createEntry(server, {
    maxUrlBytes: limits.maxUrlBytes,
    gate,
    handlers,
    final: metrics ? metrics.tagFinal('static', staticHandler) : staticHandler,
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
    tunnels: buildTunnels(websocket, proxy, originAllowed, metrics),
  });
  // At most limits.maxPipelinedRequests handled and unanswered requests per connection; the rest wait
  // without a handler and the socket is not read beyond them (pipelining.ts).
  const pipelined = limitPipelining(
    server,
    limits.maxPipelinedRequests,
    entry.onRequest,
    limits.strictPipelining === true,
    tls ? 'secureConnection' : 'connection',
  );
  // HTTP/2 streams arrive as Node's compatibility request/response, which the handlers use through
  // the members HTTP/1.1's have (tls/listener.ts adapts the ones that differ).
  server.on('request', pipelined.onRequest as (req: unknown, res: unknown) => void);
  server.on('upgrade', entry.onUpgrade);
  // 400/408/413/431 from Node's parser and timers, as problem+json (RFC 9457).
  server.on('clientError', handleClientError);
  // Upgraded sockets stay counted until they close: handshakes count against the limit too.
  if (limits.maxConnections > 0) server.maxConnections = limits.maxConnections;

  const parts: ServerParts = {
    server,
    options,
    logger,
    entry,
    proxy,
    websocket,
    pipelined,
    tls,
    redis,
    health,
    connections: connectionsOf(server),
    redirectListener: (httpsPort, before) =>
      createRedirectListener(options, { logger, httpsPort, before, onError: internalErrorHandler(logger) }),
    started: {},
  };
  return {
    server,
    tls,
    options,
    logger,
    static: staticHandler,
    listen: () => listen(parts),
    close: () => {
      staticHandler.files.close();
      return close(parts);
    },
  };
}
