// The WebSocket endpoints' public option types, their internal state (one WsState per factory
// call, passed explicitly to every part) and the RFC 6455 constants they share.
import type { IncomingMessage } from 'node:http';
import type { WebSocket, WebSocketServer } from 'ws';
import type { TokenBucketPolicy } from '../../http/rate-limit.js';
import type { ExchangeRequest } from '../core/exchange.js';
import type { PeerSocket } from '../core/host-tunnel.js';
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

export type { HostTunnel, HostUpgrade, PeerEvents, PeerSocket } from '../core/host-tunnel.js';

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
