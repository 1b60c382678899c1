// The request steps in their order, the error answer of a thrown handler, and the tunnels
// (WebSocket endpoints, then proxied handshakes) the entry hands upgrades to.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { compileCorsPolicy, isOriginAllowed } from '../../http/cors.js';
import type { TunnelRoute } from '../core/entry.js';
import { ERRORS, sendError } from '../core/errors.js';
import type { Step, StepContext, Tunnel } from '../node/types.js';
import type { Health } from '../ops/health.js';
import type { Logger } from '../ops/log.js';
import type { Metrics, RouteKind } from '../ops/metrics.js';
import type { Proxy as ReverseProxy } from '../proxy/handler.js';
import { createRoutes, type Route } from '../routes/routes.js';
import type { StaticHandler } from '../static/handler.js';
import { createAuth } from '../steps/auth.js';
import { createIsSecure } from '../steps/client-address.js';
import { createCors } from '../steps/cors.js';
import { createHeaderRules } from '../steps/headers.js';
import { createJsonp } from '../steps/jsonp.js';
import { createRateLimit } from '../steps/limits.js';
import { createCanonical, createHttpsRedirect, createRedirects } from '../steps/redirects.js';
import { isSameOrigin, type WebSocketEndpoints } from '../websocket/index.js';
import type { ServerOptions } from './options.js';

/** Whether a cross-origin WebSocket handshake's Origin is allowed (see websocketOriginPolicy). */
export type OriginAllowed = (origin: string) => boolean;

/** Cross-origin handshakes need the CORS allow-list, never `*`: a handshake carries cookies. */
export function websocketOriginPolicy(options: ServerOptions): OriginAllowed {
  const wsCors = options.cors ? compileCorsPolicy(options.cors) : undefined;
  return (origin) => wsCors !== undefined && !wsCors.wildcard && isOriginAllowed(wsCors, origin);
}

/**
 * Order matters: headers that must survive errors first, then refusals, then CORS preflights
 * (before auth, RFC: a preflight carries no credentials), then the answering handlers.
 * `gate` is what every request passes, WebSocket handshakes included; `handlers` answer the rest.
 */
export function buildSteps(
  options: ServerOptions,
  ctx: StepContext,
  parts: {
    routes: readonly Route[];
    staticHandler: StaticHandler;
    proxy: ReverseProxy;
    websocket: WebSocketEndpoints;
    health?: Health | undefined;
    metrics?: Metrics | undefined;
  },
): { gate: Step[]; handlers: Step[] } {
  const httpsOnly = options.listen.redirectToHttps;
  // With metrics on, each answering step records its route kind; off, the steps are not wrapped.
  const m = parts.metrics;
  const tag = (kind: RouteKind, s: Step | undefined) =>
    s === undefined || m === undefined ? s : m.tag(kind, s);
  const gate = [
    // Load balancers' probes and the scraper: before auth and rate limits (they do not authenticate).
    parts.health?.step,
    m?.step,
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
    tag('ws', websocketOverHttp2(parts.websocket)),
    tag(
      'other',
      createCanonical(
        {
          trailingSlash: options.static.trailingSlash,
          indexHtml: options.static.indexRedirect,
          indexNames: options.static.index,
        },
        parts.staticHandler.files,
      ),
    ),
    tag(
      'route',
      createRoutes(parts.routes, options.jsonp, options.limits, ctx, parts.staticHandler.serveFileAt),
    ),
    tag('jsonp', createJsonp(options.jsonp, parts.staticHandler.files, ctx)),
    tag('proxy', parts.proxy.step),
  ].filter((s): s is Step => s !== undefined);
  return { gate, handlers };
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

/** The entry's tunnels: our WebSocket endpoints first, then the proxy's pass-through routes. */
export function buildTunnels(
  websocket: WebSocketEndpoints,
  proxy: ReverseProxy,
  originAllowed: OriginAllowed,
  metrics?: Metrics | undefined,
): TunnelRoute<IncomingMessage, ServerResponse, Tunnel>[] {
  const handshakeOriginAllowed = (origin: string, req: IncomingMessage): boolean =>
    isSameOrigin(origin, req.headers.host) || originAllowed(origin);
  return [
    {
      owns: websocket.owns,
      handle: metrics ? metrics.tagTunnel('ws', websocket.handleUpgrade) : websocket.handleUpgrade,
    },
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
  ];
}
