// WebSocket endpoints (RFC 6455) on the `ws` package: our own handshake guards, heartbeat, echo /
// broadcast (with rooms) / custom modes, slow-consumer protection and a graceful close.
//
// The entry (src/server/entry.ts) calls handleUpgrade() only after every request step let the
// handshake through; refusals are ordinary responses on the step's ServerResponse (sendError).
// Everything that does not depend on the request (the path table, one WebSocketServer per endpoint,
// the subprotocol choice, the message rate policy) is built in the factory (websocket/endpoints.ts).
// The parts under websocket/ share one WsState: handshake.ts (pure decision), envelope.ts (message
// convention), connection.ts (one connection), broadcast.ts (rooms), deliver.ts (slow consumers).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Tunnel } from './context.js';
import { ERRORS, sendError } from './errors.js';
import { onConnection } from './websocket/connection.js';
import { buildEndpoints, closeEndpoints } from './websocket/endpoints.js';
import { checkHandshake, isSameOrigin } from './websocket/handshake.js';
import type { WebSocketDeps, WebSocketEndpoint, WsState } from './websocket/types.js';

export type { Envelope } from './websocket/envelope.js';
export { isAppPing, parseEnvelope } from './websocket/envelope.js';
export type { HandshakeDecision } from './websocket/handshake.js';
export { checkHandshake, isSameOrigin } from './websocket/handshake.js';
export type { WebSocketDeps, WebSocketEndpoint, WebSocketHandler } from './websocket/types.js';
export { CLOSE_CODES, WebSocketConfigError } from './websocket/types.js';

export interface WebSocketEndpoints {
  /** Whether the request's path is one of ours (decides which handshakes become tunnels). */
  owns(req: IncomingMessage): boolean;
  /** Takes a handshake whose path is ours (then returns true): refuses it on `res`, or accepts the
   *  tunnel and switches protocols. Returns false and touches nothing otherwise. */
  handleUpgrade(req: IncomingMessage, res: ServerResponse, tunnel: Tunnel): boolean;
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
  return {
    owns: (req) => ws.byPath.has(pathOf(req.url ?? '/')),
    handleUpgrade: (req, res, tunnel) => handleUpgrade(ws, req, res, tunnel),
    close: () => closeEndpoints(ws),
    clients: (path) => ws.byPath.get(path)?.clients.size ?? 0,
  };
}

function handleUpgrade(ws: WsState, req: IncomingMessage, res: ServerResponse, tunnel: Tunnel): boolean {
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
  tunnel.accept();
  // ws has its own error handling on the socket once it has taken it.
  ep.wss.handleUpgrade(req, tunnel.socket, tunnel.head, (socket) => onConnection(ws, ep, socket, req));
  return true;
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
