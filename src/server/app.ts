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
import { accessLogger, createLogger, type Logger } from './log.js';
import type { ServerOptions } from './options.js';
import { limitPipelining } from './pipelining.js';
import { createProxy } from './proxy/handler.js';
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

/**
 * How often Node walks the connections that are mid-request for headersTimeout / requestTimeout: the
 * 408 comes at most this much after the limit (at 1000 ms, a 300 ms headersTimeoutMs answered after
 * ~1000 ms). Node's walk visits only connections with a request in progress, not idle keep-alive
 * ones. Measured (Node 20, shared 2-core machine, CPU of an idle server over 10-20 s, two runs;
 * noise ~0.3 %): 10k idle keep-alive connections 0.03-0.25 % at 1000 ms, 0.4-0.6 % at 25 ms; 10k
 * half-sent request heads (slowloris) 0.2-0.4 % at 1000 ms, 3.6-5.0 % at 50 ms, 6.9-9.0 % at 25 ms;
 * 1k half-sent heads 0.5 % at 1000 ms, 1.2-1.5 % at 25 ms. 25 ms keeps the 408 within 50 ms of its
 * value (event-loop delay included) at no measurable cost on the proxy and static benches.
 */
export const CONNECTIONS_CHECK_INTERVAL_MS = 25;

export function createGatehouse(options: ServerOptions, deps: GatehouseDeps = {}): Gatehouse {
  const logger = deps.logger ?? createLogger(options.log);
  const limits = options.limits;
  const staticHandler = createStaticHandler({
    root: options.root,
    static: options.static,
    cachePolicy: options.cachePolicy,
    onError: (err, req: IncomingMessage) =>
      logger.error({ err, method: req.method, url: req.url }, 'request failed'),
  });
  const ctx: StepContext = { logger, clientAddress: createClientAddress(options.trustProxy) };
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
    logger,
  });
  const { gate, handlers } = buildSteps(options, ctx, {
    routes: deps.routes ?? [],
    staticHandler,
    proxy,
    websocket,
  });

  const tls = options.tls
    ? createTlsListener({
        tls: options.tls,
        store: createCertificateStore(options.tls),
        limits,
        logger,
        connectionsCheckingIntervalMs: CONNECTIONS_CHECK_INTERVAL_MS,
      })
    : undefined;
  const server =
    tls?.server ??
    createServer({
      maxHeaderSize: limits.maxHeaderBytes,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: CONNECTIONS_CHECK_INTERVAL_MS,
      // A missing Host gets its 400 from request-head.ts (problem+json), not Node's bare one.
      requireHostHeader: false,
    });
  // The one way in: both events go through the same entry and the same steps (src/server/entry.ts).
  const entry = createEntry(server, {
    logger,
    maxUrlBytes: limits.maxUrlBytes,
    gate,
    handlers,
    final: staticHandler,
    onError: internalErrorHandler(logger),
    logAccess: accessLogger(logger),
    // RFC 9112 §3.2: Host and target validated first; req.url and Host rewritten to the canonical values.
    checkTarget: refuseBadHead,
    tunnels: buildTunnels(websocket, proxy, originAllowed),
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
    connections: connectionsOf(server),
    redirectListener: (httpsPort, before) =>
      createRedirectListener(options, { logger, httpsPort, before, onError: internalErrorHandler(logger) }),
    acme: { current: undefined },
  };
  return {
    server,
    tls,
    options,
    logger,
    static: staticHandler,
    listen: () => listen(parts),
    close: () => close(parts),
  };
}
