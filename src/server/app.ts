// The server: node:http plus the handlers, listening and graceful drain.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { compileCorsPolicy, isOriginAllowed } from '../http/cors.js';
import { createAuth } from './auth.js';
import { createClientAddress, createIsSecure, createTrustedPeer } from './client-address.js';
import { CLIENT_ERROR_LINGER_MS, handleClientError } from './client-error.js';
import type { Step, StepContext } from './context.js';
import { createCors } from './cors.js';
import { createEntry } from './entry.js';
import { ERRORS, sendError } from './errors.js';
import { createHeaderRules } from './headers.js';
import { createJsonp } from './jsonp.js';
import { createRateLimit } from './limits.js';
import { accessLogger, createLogger, type Logger } from './log.js';
import type { ServerOptions } from './options.js';
import { limitPipelining } from './pipelining.js';
import { createProxy } from './proxy/handler.js';
import { createCanonical, createHttpsRedirect, createRedirects } from './redirects.js';
import { checkRequestHead } from './request-head.js';
import { createRoutes, type Route } from './routes.js';
import { createStaticHandler, type StaticHandler } from './static/handler.js';
import { createWebSocketEndpoints, isSameOrigin, type WebSocketHandler } from './websocket.js';

/** The answer to requests still waiting when the shutdown deadline hits. */
const SHUTDOWN_HEADERS = { 'Retry-After': '5', Connection: 'close' } as const;

export interface Gatehouse {
  readonly server: Server;
  readonly options: ServerOptions;
  readonly logger: Logger;
  readonly static: StaticHandler;
  /** Starts listening; resolves with the URL it listens on. */
  listen(): Promise<{ url: string; host: string; port: number }>;
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
    static: options.static,
    cachePolicy: options.cachePolicy,
    onError: (err, req) => logger.error({ err, method: req.method, url: req.url }, 'request failed'),
  });
  const ctx: StepContext = { logger, clientAddress: createClientAddress(options.trustProxy) };
  const proxy = createProxy(options.proxy, {
    ctx,
    cachePolicy: options.cachePolicy,
    isTrustedPeer: createTrustedPeer(options.trustProxy),
    sendTimeoutMs: limits.sendTimeoutMs,
  });
  const wsCors = options.cors ? compileCorsPolicy(options.cors) : undefined;
  // Cross-origin handshakes need the CORS allow-list, never `*`: a handshake carries cookies.
  const originAllowed = (origin: string): boolean =>
    wsCors !== undefined && !wsCors.wildcard && isOriginAllowed(wsCors, origin);
  const handshakeOriginAllowed = (origin: string, req: IncomingMessage): boolean =>
    isSameOrigin(origin, req.headers.host) || originAllowed(origin);
  const websocket = createWebSocketEndpoints(options.websocket, {
    originAllowed,
    handlers: deps.websocketHandlers,
    logger,
  });
  // Order matters: headers that must survive errors first, then refusals, then CORS preflights
  // (before auth, RFC: a preflight carries no credentials), then the answering handlers.
  // `gate` is what every request passes, WebSocket handshakes included; `handlers` answer the rest.
  const httpsOnly = options.listen.redirectToHttps;
  const gate = [
    // A plain-HTTP listener that only points browsers at HTTPS (header rules still apply, e.g. HSTS off).
    httpsOnly ? createHttpsRedirect({ httpsPort: httpsOnly.port, hosts: httpsOnly.hosts }) : undefined,
    createHeaderRules(options.headers, ctx, { isSecure: createIsSecure(options.trustProxy) }),
    // CORS before the rate limit, so 429s carry CORS headers and preflights are not counted.
    createCors(options.cors, ctx),
    createRateLimit(options.limits, ctx),
    createAuth(options.auth, ctx, { cors: options.cors }),
    createRedirects(options.redirects, ctx),
  ].filter((s): s is Step => s !== undefined);
  const handlers = [
    createCanonical(
      {
        trailingSlash: options.static.trailingSlash,
        indexHtml: options.static.indexRedirect,
        indexNames: options.static.index,
      },
      staticHandler.files,
    ),
    createRoutes(deps.routes ?? [], options.jsonp, options.limits, ctx),
    createJsonp(options.jsonp, staticHandler.files, ctx),
    proxy.step,
  ].filter((s): s is Step => s !== undefined);

  const onError = (err: unknown, req: IncomingMessage, res: ServerResponse) => {
    // A thrown handler error: 500 with a request id in the body and the log, never a stack trace.
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

  const server = createServer({
    maxHeaderSize: limits.maxHeaderBytes,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // Header and request timeouts are checked every second (408 within ~1 s of the limit).
    connectionsCheckingInterval: 1000,
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
    onError,
    logAccess: accessLogger(logger),
    // RFC 9112 §3.2: Host and target validated first; req.url and Host rewritten to the canonical values.
    checkTarget: (req) => {
      const head = checkRequestHead(req);
      if (head.kind === 'ok') return undefined;
      return { entry: ERRORS.badRequest, detail: head.detail, headers: { Connection: 'close' } };
    },
    tunnels: [
      { owns: websocket.owns, handle: websocket.handleUpgrade },
      {
        owns: proxy.ownsUpgrade,
        // Cross-site WebSocket hijacking (RFC 6455 §10.2): a proxied handshake's Origin passes the
        // same check as an endpoint's.
        handle: (req, res, tunnel) => {
          const origin = req.headers.origin;
          if (origin !== undefined && !handshakeOriginAllowed(origin, req)) {
            sendError(req, res, ERRORS.forbidden, 'The Origin of this WebSocket handshake is not allowed.');
            return true;
          }
          return proxy.upgrade(req, res, tunnel);
        },
      },
    ],
  });
  server.on('request', entry.onRequest);
  server.on('upgrade', entry.onUpgrade);
  // 400/408/413/431 from Node's parser and timers, as problem+json (RFC 9457).
  server.on('clientError', handleClientError);
  // At most limits.maxPipelinedRequests outstanding requests per connection; the socket waits beyond.
  const pipelined = limitPipelining(server, limits.maxPipelinedRequests);
  // Upgraded sockets stay counted until they close: handshakes count against the limit too.
  if (limits.maxConnections > 0) server.maxConnections = limits.maxConnections;

  return {
    server,
    options,
    logger,
    static: staticHandler,
    // A cache store that cannot be opened stops the start (like nginx with a bad proxy_cache_path).
    listen: () =>
      proxy.ready().then(
        () =>
          new Promise((resolve, reject) => {
            server.once('error', reject);
            server.listen(options.listen.port, options.listen.host, () => {
              server.off('error', reject);
              const a = server.address() as AddressInfo;
              const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
              resolve({ url: `http://${host}:${a.port}`, host: a.address, port: a.port });
            });
          }),
      ),
    close: () =>
      new Promise<void>((resolve) => {
        entry.setClosing();
        // WebSockets first: upgraded sockets would keep server.close() waiting (1001 Going Away).
        const wsClosed = websocket.close();
        if (!server.listening) {
          wsClosed.then(() => proxy.close()).then(() => resolve());
          return;
        }
        const timer = setTimeout(() => {
          // Requests not started by the deadline: 503 + Retry-After + Connection: close (RFC 9110
          // §15.6.4) instead of a reset; started ones are cut. Sockets close after a short linger.
          for (const res of pipelined.outstanding()) {
            if (res.headersSent) res.destroy();
            else
              sendError(
                res.req,
                res,
                ERRORS.serviceUnavailable,
                'The server is shutting down.',
                SHUTDOWN_HEADERS,
              );
          }
          setTimeout(() => {
            server.closeAllConnections();
            proxy.closeTunnels();
          }, CLIENT_ERROR_LINGER_MS).unref();
        }, limits.shutdownTimeoutMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          logger.flush?.();
          Promise.all([wsClosed, proxy.close()]).then(() => resolve());
        });
        server.closeIdleConnections();
        // Connections that finish a response while draining close instead of idling.
        server.on('request', (_req, res: ServerResponse) =>
          res.on('finish', () => server.closeIdleConnections()),
        );
      }),
  };
}
