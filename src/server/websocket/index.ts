// WebSocket endpoints (RFC 6455) on the `ws` package: our own handshake guards, heartbeat, echo /
// broadcast (with rooms) / custom modes, slow-consumer protection and a graceful close.
//
// The entry (src/server/core/entry.ts) calls handleUpgrade() only after every request step let the
// handshake through; refusals are ordinary responses on the step's response (sendError). On Node, ws
// completes the handshake on the upgraded socket (ws-peer.ts); on Bun.serve and Deno.serve the host
// does (a HostTunnel, fetch/entry.ts). Either way the connection is a PeerSocket for connection.ts.
// Everything that does not depend on the request (the path table, the message rate policy) is built
// in the factory (websocket/endpoints.ts). The parts under websocket/ share one WsState: handshake.ts
// (pure decision), envelope.ts (message convention), connection.ts (one connection, its mode),
// broadcast.ts (rooms), deliver.ts (slow consumers).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocketServer } from 'ws';
import { type CorsPolicyInput, compileCorsPolicy, isOriginAllowed } from '../../http/cors.js';
import { switchFields } from '../../http/switch-fields.js';
import { ERRORS, sendError } from '../core/errors.js';
import { responseFields } from '../core/response-headers.js';
import type { Feature, Step, StepContext, Tunnel } from '../node/types.js';
import { deliverLocal } from './broadcast.js';
import { openConnection } from './connection.js';
import { buildEndpoints, closeEndpoints } from './endpoints.js';
import { createRedisFanout } from './fanout-redis.js';
import { checkHandshake, chooseSubprotocol, isSameOrigin } from './handshake.js';
import {
  type Endpoint,
  type Fanout,
  type HostTunnel,
  WebSocketConfigError,
  type WebSocketDeps,
  type WebSocketEndpoint,
  type WsState,
} from './types.js';
import { onWsConnection, wsServerOf } from './ws-peer.js';

export type { Envelope } from './envelope.js';
export { isAppPing, parseEnvelope } from './envelope.js';
export type { HandshakeDecision } from './handshake.js';
export { checkHandshake, chooseSubprotocol, isSameOrigin } from './handshake.js';
export type {
  HostTunnel,
  HostUpgrade,
  PeerEvents,
  PeerSocket,
  WebSocketDeps,
  WebSocketEndpoint,
  WebSocketHandler,
} from './types.js';
export { CLOSE_CODES, WebSocketConfigError } from './types.js';

export interface WebSocketEndpoints {
  /** Whether the request's path is one of ours (decides which handshakes become tunnels). */
  owns(req: IncomingMessage): boolean;
  /** How many endpoints there are. */
  readonly size: number;
  /** Takes a handshake whose path is ours (then returns true): refuses it on `res`, or accepts the
   *  tunnel and switches protocols. Returns false and touches nothing otherwise. */
  handleUpgrade(req: IncomingMessage, res: ServerResponse, tunnel: Tunnel | HostTunnel): boolean;
  /** Closes every connection with 1001, terminates stragglers after the grace, stops the heartbeats. */
  close(): Promise<void>;
  /** Connections on `path` that are not fully closed yet (0 for a path that is not ours). */
  clients(path: string): number;
}

const DEFAULT_CLOSE_GRACE_MS = 1000;

export function createWebSocketEndpoints(
  endpoints: readonly WebSocketEndpoint[],
  deps: WebSocketDeps,
): WebSocketEndpoints {
  const ws: WsState = {
    deps,
    logger: deps.logger,
    nowMs: deps.nowMs ?? Date.now,
    closeGraceMs: deps.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS,
    byPath: buildEndpoints(endpoints, deps),
    closing: undefined,
  };
  for (const ep of ws.byPath.values()) {
    if (ep.config.fanout === 'redis') ep.fanout = redisFanout(ws, ep, deps);
  }
  return {
    owns: (req) => ws.byPath.has(pathOf(req.url ?? '/')),
    size: ws.byPath.size,
    handleUpgrade: (req, res, tunnel) => handleUpgrade(ws, req, res, tunnel),
    close: () => closeEndpoints(ws),
    clients: (path) => ws.byPath.get(path)?.clients.size ?? 0,
  };
}

/** The fan-out of a broadcast endpoint with fanout "redis" (the connection opens with the server). */
function redisFanout(ws: WsState, ep: Endpoint, deps: WebSocketDeps): Fanout {
  const { path, mode } = ep.config;
  if (mode !== 'broadcast') {
    throw new WebSocketConfigError(`websocket ${path}: fanout "redis" applies to mode "broadcast" only`);
  }
  if (deps.redis === undefined) {
    throw new WebSocketConfigError(`websocket ${path}: fanout "redis" needs the top-level redis.url`);
  }
  return createRedisFanout({
    conn: deps.redis.get(ep.config.redis),
    path,
    deliverLocal: (room, data, isBinary) => deliverLocal(ws, ep, room, data, isBinary),
    logger: ws.logger,
  });
}

function handleUpgrade(
  ws: WsState,
  req: IncomingMessage,
  res: ServerResponse,
  tunnel: Tunnel | HostTunnel,
): boolean {
  const ep = ws.byPath.get(pathOf(req.url ?? '/'));
  if (ep === undefined) return false;
  if (ws.closing) {
    sendError(req, res, ERRORS.serviceUnavailable, 'The server is shutting down.');
    return true;
  }
  const decision = checkHandshake({
    method: req.method,
    header: (name) => {
      const v = req.headers[name];
      return Array.isArray(v) ? v.join(', ') : v;
    },
    requireOrigin: ep.config.requireOrigin,
    originAllowed: (origin) => isSameOrigin(origin, req.headers.host) || ws.deps.originAllowed(origin, req),
  });
  if (decision.kind === 'refuse') {
    sendError(req, res, decision.entry, decision.detail, decision.headers);
    return true;
  }
  if ('upgradeWebSocket' in tunnel) {
    hostUpgrade(ws, ep, req, res, tunnel);
    return true;
  }
  // ws decides the rest synchronously: its 'headers' event (the 101 is about to be written) or its
  // 'wsClientError' (a refusal) finds the step's response here (watchHandshakes).
  switching.set(req, { res, tunnel });
  wsServerOf(ep, watchHandshakes).handleUpgrade(req, tunnel.socket, tunnel.head, (socket) =>
    onWsConnection(ws, ep, socket, req),
  );
  // Neither came only when ws dropped a socket the client had half-closed: nothing was sent, and the
  // access log records 499 when it closes.
  switching.delete(req);
  return true;
}

/**
 * A handshake the host completes (Bun.serve, Deno.serve): the subprotocol is chosen here (ws chooses
 * it on Node), the steps' fields go on the host's 101, and the host feeds the connection's events.
 */
function hostUpgrade(
  ws: WsState,
  ep: Endpoint,
  req: IncomingMessage,
  res: ServerResponse,
  tunnel: HostTunnel,
): void {
  const offered = req.headers['sec-websocket-protocol'];
  const choice = chooseSubprotocol(
    Array.isArray(offered) ? offered.join(', ') : offered,
    ep.config.subprotocols,
  );
  if (choice.kind === 'refuse') {
    sendError(req, res, choice.entry, choice.detail);
    return;
  }
  const switching = tunnel.upgradeWebSocket({
    protocol: choice.protocol,
    fields: switchFields(responseFields(res)),
    heartbeatIntervalMs: ep.config.heartbeatIntervalMs,
    open: (peer) => openConnection(ws, ep, peer).events,
  });
  // RFC 6455 §4.2.2: a handshake the server does not accept gets an HTTP error.
  if (switching) tunnel.accept();
  else sendError(req, res, ERRORS.badRequest, 'The WebSocket handshake could not be completed.');
}

/** Handshakes inside ws's handleUpgrade, by request. */
const switching = new WeakMap<IncomingMessage, { res: ServerResponse; tunnel: Tunnel }>();

/**
 * ws writes the 101 itself; the steps' fields (header rules, CORS, rate limit) go on it, and the
 * tunnel is accepted (the switch logged) only then. A handshake ws refuses after our checks (a
 * malformed Sec-WebSocket-Protocol or Sec-WebSocket-Extensions) is answered like any refusal, on the
 * step's response (problem+json, step fields, access log with the status sent), not by ws.
 */
function watchHandshakes(wss: WebSocketServer): void {
  wss.on('headers', (lines: string[], req: IncomingMessage) => {
    const p = switching.get(req);
    if (p === undefined) return;
    switching.delete(req);
    for (const [name, value] of switchFields(responseFields(p.res))) lines.push(`${name}: ${value}`);
    p.tunnel.accept();
  });
  wss.on('wsClientError', (err: Error, socket: Duplex, req: IncomingMessage) => {
    const p = switching.get(req);
    switching.delete(req);
    if (p === undefined) socket.destroy();
    // RFC 6455 §4.2.2: a handshake the server does not accept gets an HTTP error, e.g. 400.
    else sendError(req, p.res, ERRORS.badRequest, `${err.message}.`);
  });
}

/** The path of a request target: origin-form up to `?`, or the path of an absolute-form target. */
function pathOf(target: string): string {
  if (target.charCodeAt(0) !== 0x2f) {
    try {
      return new URL(target).pathname;
    } catch {
      return target;
    }
  }
  const q = target.indexOf('?');
  return q === -1 ? target : target.slice(0, q);
}

/**
 * Whether a WebSocket handshake's Origin may pass: none (not a browser), the same origin, or one the
 * CORS allow-list names. Cross-origin handshakes need that list, never `*`: a handshake carries cookies
 * (RFC 6455 §10.2, cross-site WebSocket hijacking).
 */
export function handshakeOriginPolicy(
  cors: CorsPolicyInput | undefined,
): (origin: string | undefined, host: string | undefined) => boolean {
  const policy = cors ? compileCorsPolicy(cors) : undefined;
  return (origin, host) =>
    origin === undefined ||
    isSameOrigin(origin, host) ||
    (policy !== undefined && !policy.wildcard && isOriginAllowed(policy, origin));
}

/** What the WebSocket feature is made from. */
export interface WebSocketFeatureOptions {
  readonly endpoints: readonly WebSocketEndpoint[];
  /** The `cors` section: the cross-origin handshakes it allows (handshakeOriginPolicy). */
  readonly cors: CorsPolicyInput | undefined;
  /** Connection handlers of `custom` endpoints, by path. */
  readonly handlers?: WebSocketDeps['handlers'];
}

/** The WebSocket feature, and the endpoints themselves (their client counts, for the metrics). */
export interface WebSocketFeature extends Feature {
  readonly endpoints: WebSocketEndpoints;
}

/**
 * WebSocket endpoints as a feature (core/feature.ts): the handshakes it owns become tunnels; over HTTP/2
 * its paths answer 426; at shutdown every connection gets 1001 Going Away (drain).
 */
export function create(options: WebSocketFeatureOptions, kernel: StepContext): WebSocketFeature {
  const originAllowed = handshakeOriginPolicy(options.cors);
  const endpoints = createWebSocketEndpoints(options.endpoints, {
    originAllowed: (origin, req) => {
      const host = req.headers.host;
      return originAllowed(origin, typeof host === 'string' ? host : undefined);
    },
    handlers: options.handlers,
    redis: kernel.redis!,
    logger: kernel.logger,
  });
  return {
    endpoints,
    answer: overHttp2(endpoints),
    tunnel: { owns: endpoints.owns, handle: endpoints.handleUpgrade },
    drain: () => endpoints.close(),
    stats: () => endpoints.size,
  };
}

/**
 * A request over HTTP/2 for a WebSocket endpoint: 426 with a reason. The handshake is an HTTP/1.1
 * Upgrade (RFC 6455 §4.1); RFC 8441's extended CONNECT is not offered (SETTINGS_ENABLE_CONNECT_PROTOCOL
 * is never sent), so browsers open their WebSockets on an HTTP/1.1 connection of their own.
 */
function overHttp2(websocket: WebSocketEndpoints): Step | undefined {
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
