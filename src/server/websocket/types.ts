// The WebSocket endpoints' public option types, their internal state (one WsState per factory
// call, passed explicitly to every part) and the RFC 6455 constants they share.
import type { IncomingMessage } from 'node:http';
import type { WebSocket, WebSocketServer } from 'ws';
import type { TokenBucketPolicy } from '../../http/rate-limit.js';
import type { TunnelBase } from '../core/context.js';
import type { ExchangeRequest } from '../core/exchange.js';
import type { Logger } from '../ops/log.js';
import type { RedisOptions } from '../redis/connection.js';
import type { RedisPool } from '../redis/pool.js';

/** One endpoint, defaults resolved (src/config/websocket.ts fills them in). */
export interface WebSocketEndpoint {
  /** Exact request path, compared with the target before `?` (not percent-decoded). */
  path: string;
  mode: 'echo' | 'broadcast' | 'custom';
  /** The fan-out's own Redis, in place of the top-level one. */
  redis?: Partial<RedisOptions> | undefined;
  /** Largest incoming message (after decompression); bigger ones close the connection with 1009. */
  maxPayloadBytes: number;
  /** Protocol ping period; a client that missed the previous pong is terminated. 0: off. */
  heartbeatIntervalMs: number;
  /** Refuse handshakes without Origin (403). */
  requireOrigin: boolean;
  /** A client with more than this queued for it is closed with 1013 instead of being sent more. */
  maxBufferedBytes: number;
  /** Negotiate permessage-deflate (RFC 7692). */
  perMessageDeflate: boolean;
  /** Subprotocols spoken here, preferred first. */
  subprotocols: string[];
  /** Per-connection message rate (token bucket); a client over it is closed with 1008. Off when absent. */
  rateLimit?: { messagesPerSec: number; burst: number } | undefined;
  /** Broadcast mode: also through Redis pub/sub to the clients of every instance (websocket/fanout-redis.ts). */
  fanout?: 'local' | 'redis' | undefined;
}

/** A `custom` endpoint's connection handler (the library onConnection API). */
export type WebSocketHandler = (socket: WebSocket, req: IncomingMessage) => void;

export interface WebSocketDeps {
  /** Decides a cross-origin handshake's Origin (same-origin handshakes are always allowed). */
  originAllowed: (origin: string, req: ExchangeRequest) => boolean;
  /** Handlers of the `custom` endpoints, by path. */
  handlers?: Record<string, WebSocketHandler>;
  logger: Logger;
  /** How long close() waits for close handshakes before terminating (default 1000 ms). */
  closeGraceMs?: number;
  /** The clock of the message rate limit; default Date.now. */
  nowMs?: () => number;
  /** Shared Redis connections, for endpoints with fanout "redis". */
  redis?: RedisPool | undefined;
}

/** An endpoint list the server cannot run (a duplicate path, a custom endpoint without a handler).
 *  `code` matches ConfigError's, so the CLI can exit 2 for it as for any bad config. */
export class WebSocketConfigError extends Error {
  readonly code = 'bad_config';
  constructor(message: string) {
    super(message);
    this.name = 'WebSocketConfigError';
  }
}

// RFC 6455 readyState values (ws's WebSocket.OPEN / CLOSED).
export const WS_OPEN = 1;
export const WS_CLOSED = 3;

/** RFC 6455 §7.4.1 close codes we send. */
export const CLOSE_CODES = {
  goingAway: 1001,
  policyViolation: 1008,
  tooBig: 1009,
  internalError: 1011,
  tryAgainLater: 1013,
} as const;

/**
 * One open WebSocket as the endpoints drive it, whatever carries it: `ws` on Node (websocket/ws-peer.ts),
 * Bun's ServerWebSocket or Deno's WebSocket (fetch/hosts.ts). readyState as RFC 6455's (WS_OPEN...).
 */
export interface PeerSocket {
  readonly readyState: number;
  /** Bytes queued for the peer and not yet written. */
  readonly bufferedAmount: number;
  /** A text message (`binary` false) or a binary one (RFC 6455 §5.6). */
  send(data: Buffer | string, binary: boolean): void;
  /** Starts the closing handshake (RFC 6455 §7.1.2) with a §7.4.1 code. */
  close(code: number, reason: string): void;
  /** Drops the connection without a closing handshake (where the host cannot: close 1001). */
  terminate(): void;
  /** Sends a Ping (RFC 6455 §5.5.2); false where the host pings by itself (Deno's idleTimeout). */
  ping(): boolean;
}

/** What the host tells an open connection (websocket/connection.ts). */
export interface PeerEvents {
  /** A message, checked first against the endpoint's size and rate (admit). */
  receive(data: Buffer, isBinary: boolean): void;
  /** A Ping from the peer: it counts against the message rate (RFC 6455 §5.5.2: each costs a Pong). */
  ping(): void;
  /** The answer to our heartbeat's Ping. */
  pong(): void;
  /** The connection is closed (either side, or dropped). */
  closed(): void;
}

/**
 * A handshake on a host that switches the connection itself (Bun's server.upgrade, Deno's
 * upgradeWebSocket; fetch/entry.ts): the endpoint decides, the host writes the 101.
 */
export interface HostTunnel extends TunnelBase {
  /** Switches the connection to WebSocket; false when the host could not (nothing was sent). */
  upgradeWebSocket(o: HostUpgrade): boolean;
}

export interface HostUpgrade {
  /** The subprotocol chosen (RFC 6455 §4.2.2), or none. */
  readonly protocol: string | undefined;
  /** The request steps' fields for the 101 (http/switch-fields.ts). */
  readonly fields: readonly [string, string][];
  /** The heartbeat period, for a host that pings by itself (Deno's idleTimeout); 0: off. */
  readonly heartbeatIntervalMs: number;
  /** Called once the connection is open; the host feeds the connection's events to what it returns. */
  open(peer: PeerSocket): PeerEvents;
}

export interface Client {
  readonly socket: PeerSocket;
  readonly path: string;
  readonly maxBufferedBytes: number;
  /** Answered the last heartbeat ping. */
  alive: boolean;
  /** Broadcast rooms this client joined. */
  rooms: Set<string> | undefined;
  /** Called once the connection is closed (the shutdown waits for it). */
  onClosed: (() => void) | undefined;
}

export interface Endpoint {
  readonly config: WebSocketEndpoint;
  /** The `ws` server of the Node transport, made at its first handshake (websocket/ws-peer.ts). */
  wss: WebSocketServer | undefined;
  readonly clients: Map<PeerSocket, Client>;
  /** Broadcast mode: room name -> members. */
  readonly rooms: Map<string, Set<Client>>;
  readonly handler: WebSocketHandler | undefined;
  timer: NodeJS.Timeout | undefined;
  /** The per-connection message rate, when configured. */
  readonly messagePolicy: TokenBucketPolicy | undefined;
  /** fanout "redis": the other instances' side of broadcasts (websocket/fanout-redis.ts). */
  fanout: Fanout | undefined;
}

/** A broadcast endpoint's link to the other instances. */
export interface Fanout {
  /** Sends a message this instance already delivered locally to the other instances. */
  publish(room: string | undefined, data: Buffer, isBinary: boolean): void;
  /** The first local member joined `room` / its last local member left. */
  roomOpened(room: string): void;
  roomClosed(room: string): void;
  close(): Promise<void>;
}

/** One per createWebSocketEndpoints call. */
export interface WsState {
  readonly deps: WebSocketDeps;
  readonly logger: Logger;
  readonly nowMs: () => number;
  readonly closeGraceMs: number;
  /** The endpoints by exact path. */
  readonly byPath: Map<string, Endpoint>;
  /** Set by close(): later handshakes get 503. */
  closing: Promise<void> | undefined;
}
