// WebSocket endpoints (RFC 6455) on the `ws` package: our own handshake guards, heartbeat, echo /
// broadcast (with rooms) / custom modes, slow-consumer protection and a graceful close.
//
// The entry (src/server/entry.ts) calls handleUpgrade() only after every request step let the
// handshake through; refusals are ordinary responses on the step's ServerResponse (sendError).
// Everything that does not depend on the request (the path table, one WebSocketServer per endpoint,
// the subprotocol choice, the message rate policy) is built in the factory.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { RawData, WebSocket, WebSocketServer } from 'ws';
import { type BucketState, type TokenBucketPolicy, takeToken } from '../http/rate-limit.js';
import type { Tunnel } from './context.js';
import { ERRORS, type ErrorEntry, sendError } from './errors.js';
import type { Logger } from './log.js';

// RFC 6455 readyState values (ws's WebSocket.OPEN / CLOSED).
const WS_OPEN = 1;
const WS_CLOSED = 3;
// ws is loaded only when an endpoint is configured (it costs ~12 MB of RSS).
const loadWs = (): typeof import('ws') => createRequire(import.meta.url)('ws') as typeof import('ws');

/** One endpoint, defaults resolved (src/config/websocket.ts fills them in). */
export interface WebSocketEndpoint {
  /** Exact request path, compared with the target before `?` (not percent-decoded). */
  path: string;
  mode: 'echo' | 'broadcast' | 'custom';
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
}

/** A `custom` endpoint's connection handler (the library onConnection API). */
export type WebSocketHandler = (socket: WebSocket, req: IncomingMessage) => void;

export interface WebSocketDeps {
  /** Decides a cross-origin handshake's Origin (same-origin handshakes are always allowed). */
  originAllowed: (origin: string, req: IncomingMessage) => boolean;
  /** Handlers of the `custom` endpoints, by path. */
  handlers?: Record<string, WebSocketHandler>;
  logger: Logger;
  /** How long close() waits for close handshakes before terminating (default 1000 ms). */
  closeGraceMs?: number;
  /** The clock of the message rate limit; default Date.now. */
  nowMs?: () => number;
}

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

/** An endpoint list the server cannot run (a duplicate path, a custom endpoint without a handler).
 *  `code` matches ConfigError's, so the CLI can exit 2 for it as for any bad config. */
export class WebSocketConfigError extends Error {
  readonly code = 'bad_config';
  constructor(message: string) {
    super(message);
    this.name = 'WebSocketConfigError';
  }
}

/** RFC 9110 §15.5.22; not in the shared error catalogue (yet). */
const UPGRADE_REQUIRED: ErrorEntry = { status: 426, code: 'upgrade_required', title: 'Upgrade Required' };

/** RFC 6455 §7.4.1 close codes we send. */
export const CLOSE_CODES = {
  goingAway: 1001,
  policyViolation: 1008,
  tooBig: 1009,
  internalError: 1011,
  tryAgainLater: 1013,
} as const;

const DEFAULT_CLOSE_GRACE_MS = 1000;
/** Broadcast rooms: bounded so that a client cannot grow the room table without limit. */
const MAX_ROOM_NAME_CHARS = 128;
const MAX_ROOMS_PER_CLIENT = 64;
const BAD_ROOM = `room must be a string of 1 to ${MAX_ROOM_NAME_CHARS} characters`;

const PONG = '{"type":"pong"}';
const TEXT = { binary: false } as const;
const BINARY = { binary: true } as const;
const PING_BYTES = Buffer.from('ping');
const BACKSLASH = 0x5c;
/** RFC 6455 §4.1: the key is the base64 of 16 random bytes. */
const KEY = /^[+/0-9A-Za-z]{22}==$/;
const DIGITS = /^\d+$/;

// ---------- the handshake decision (pure) ----------

export type HandshakeDecision =
  | { kind: 'accept' }
  | { kind: 'refuse'; entry: ErrorEntry; detail: string; headers?: Record<string, string> };

/**
 * Checks an upgrade request against RFC 6455 §4.2.1 and the endpoint's origin policy, in order:
 * method, Upgrade, Sec-WebSocket-Key, Sec-WebSocket-Version, Origin. One status and message each.
 */
export function checkHandshake(i: {
  method: string | undefined;
  header: (name: string) => string | undefined;
  requireOrigin: boolean;
  originAllowed: (origin: string) => boolean;
}): HandshakeDecision {
  // §4.2.1 item 1: the method MUST be GET. §4.2.1 asks for "such as 400", not 405.
  if (i.method !== 'GET') {
    return refusal(ERRORS.badRequest, 'A WebSocket handshake must be a GET request.');
  }
  // §4.2.1 item 3: Upgrade is "websocket", ASCII case-insensitive (ws accepts nothing else either).
  if (i.header('upgrade')?.trim().toLowerCase() !== 'websocket') {
    return refusal(ERRORS.badRequest, 'The Upgrade header must be "websocket".');
  }
  const key = i.header('sec-websocket-key');
  if (key === undefined || !KEY.test(key.trim())) {
    return refusal(ERRORS.badRequest, 'Missing or invalid Sec-WebSocket-Key header.');
  }
  const version = i.header('sec-websocket-version')?.trim();
  if (version === undefined || !DIGITS.test(version)) {
    return refusal(ERRORS.badRequest, 'Missing or invalid Sec-WebSocket-Version header.');
  }
  // §4.2.2 / §4.4: a version we do not speak gets 426 and the versions we do. 426 needs Upgrade, and
  // Upgrade needs the "upgrade" connection option (RFC 9110 §15.5.22, §7.8).
  if (version !== '13') {
    return refusal(UPGRADE_REQUIRED, `WebSocket version ${version} is not supported; use 13.`, {
      'Sec-WebSocket-Version': '13',
      Upgrade: 'websocket',
      Connection: 'Upgrade, close',
    });
  }
  // §10.2: browsers always send Origin; a request without one comes from a non-browser client.
  const origin = i.header('origin');
  if (origin === undefined) {
    if (i.requireOrigin) return refusal(ERRORS.forbidden, 'This endpoint requires an Origin header.');
  } else if (!i.originAllowed(origin)) {
    return refusal(ERRORS.forbidden, 'The Origin of this WebSocket handshake is not allowed.');
  }
  return { kind: 'accept' };
}

function refusal(entry: ErrorEntry, detail: string, headers?: Record<string, string>): HandshakeDecision {
  return headers ? { kind: 'refuse', entry, detail, headers } : { kind: 'refuse', entry, detail };
}

/**
 * True when `origin` names the host the request was sent to (its Host header): the handshake then
 * cannot come from a cross-site page (cross-site WebSocket hijacking), so no allow-list is needed.
 * The scheme is not compared (a page on https may talk to ws behind a TLS-terminating proxy).
 */
export function isSameOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined || origin === 'null') return false;
  let u: URL;
  try {
    u = new URL(origin);
  } catch {
    return false;
  }
  const defaultPort = u.protocol === 'https:' ? '443' : u.protocol === 'http:' ? '80' : undefined;
  if (defaultPort === undefined) return false;
  const h = host.trim().toLowerCase();
  // URL lowercases the host and drops the scheme's default port; Host may still carry it.
  return u.host === h || (u.port === '' && `${u.host}:${defaultPort}` === h);
}

// ---------- the message convention (pure) ----------

/** A message following `{ "type": string, ... }`; any other text or binary message is opaque. */
export type Envelope = { type: string } & Record<string, unknown>;

/** Index of the first byte that is not JSON whitespace (RFC 8259 §2). */
function skipJsonWs(data: Buffer): number {
  let i = 0;
  while (i < data.length) {
    const c = data[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
    i++;
  }
  return i;
}

/** Parses a text message as an envelope; undefined for anything else (non-JSON, arrays, no type). */
export function parseEnvelope(data: Buffer): Envelope | undefined {
  if (data[skipJsonWs(data)] !== 0x7b) return undefined; // not '{': not an object, no parse
  let v: unknown;
  try {
    v = JSON.parse(data.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  return typeof (v as { type?: unknown }).type === 'string' ? (v as Envelope) : undefined;
}

/**
 * True for a text message `{"type":"ping", ...}`. Cheap checks first, since echo runs this on every
 * message: an object starts with `{`, and one whose type is "ping" contains the bytes `ping` or a
 * backslash (a JSON escape); only such messages are parsed.
 */
export function isAppPing(data: Buffer): boolean {
  if (data[skipJsonWs(data)] !== 0x7b) return false;
  if (data.indexOf(PING_BYTES) === -1 && data.indexOf(BACKSLASH) === -1) return false;
  return parseEnvelope(data)?.type === 'ping';
}

function isRoomName(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0 && v.length <= MAX_ROOM_NAME_CHARS;
}

// ---------- the endpoints ----------

interface Client {
  readonly socket: WebSocket;
  readonly path: string;
  readonly maxBufferedBytes: number;
  /** Answered the last heartbeat ping. */
  alive: boolean;
  /** Broadcast rooms this client joined. */
  rooms: Set<string> | undefined;
}

/**
 * Wraps the socket's emit so that a 'message' over the endpoint's rate never reaches a listener
 * (ours or a custom handler's): the first one over closes the connection with 1008 (RFC 6455
 * §7.4.1, policy violation) and later ones are dropped. Token bucket: `burst` at once, then
 * `messagesPerSec`.
 */
function limitMessages(socket: WebSocket, policy: TokenBucketPolicy, nowMs: () => number): void {
  let state: BucketState | undefined;
  let over = false;
  const emit = socket.emit;
  socket.emit = function (this: WebSocket, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'message') {
      if (over) return false;
      const r = takeToken(state, policy, nowMs());
      state = r.state;
      if (r.kind === 'limited') {
        over = true;
        this.close(CLOSE_CODES.policyViolation, 'message rate exceeded');
        return false;
      }
    }
    return emit.call(this, event, ...args);
  } as WebSocket['emit'];
}

interface Endpoint {
  readonly config: WebSocketEndpoint;
  readonly wss: WebSocketServer;
  readonly clients: Map<WebSocket, Client>;
  /** Broadcast mode: room name -> members. */
  readonly rooms: Map<string, Set<Client>>;
  readonly handler: WebSocketHandler | undefined;
  timer: NodeJS.Timeout | undefined;
  /** The per-connection message rate, when configured. */
  readonly messagePolicy: TokenBucketPolicy | undefined;
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}

/** RFC 6455 §4.2.2 /subprotocol/: the first of ours (our preference order) that the client offered. */
function protocolChooser(ours: readonly string[]): (offered: Set<string>) => string | false {
  return (offered) => {
    for (const p of ours) if (offered.has(p)) return p;
    // Never agree to a subprotocol we do not speak; the client decides whether to go on without one.
    return false;
  };
}

export function createWebSocketEndpoints(
  endpoints: readonly WebSocketEndpoint[],
  deps: WebSocketDeps,
): WebSocketEndpoints {
  const { logger } = deps;
  const closeGraceMs = deps.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS;
  const nowMs = deps.nowMs ?? Date.now;
  const byPath = new Map<string, Endpoint>();
  for (const [i, config] of endpoints.entries()) {
    if (byPath.has(config.path)) {
      throw new WebSocketConfigError(`websocket[${i}].path: duplicate path ${config.path}`);
    }
    const handler = deps.handlers?.[config.path];
    if (config.mode === 'custom' && handler === undefined) {
      throw new WebSocketConfigError(
        `websocket[${i}]: mode "custom" on ${config.path} needs deps.handlers['${config.path}']`,
      );
    }
    const wss = new (loadWs().WebSocketServer)({
      noServer: true,
      clientTracking: false,
      maxPayload: config.maxPayloadBytes,
      perMessageDeflate: config.perMessageDeflate,
      handleProtocols: protocolChooser(config.subprotocols),
    });
    const rl = config.rateLimit;
    if (rl !== undefined && (!(rl.messagesPerSec > 0) || !Number.isInteger(rl.burst) || rl.burst < 1)) {
      throw new WebSocketConfigError(
        `websocket[${i}].rateLimit: messagesPerSec must be > 0 and burst an integer >= 1`,
      );
    }
    const ep: Endpoint = {
      config,
      wss,
      clients: new Map(),
      rooms: new Map(),
      handler,
      timer: undefined,
      messagePolicy: rl ? { ratePerSec: rl.messagesPerSec, burst: rl.burst } : undefined,
    };
    if (config.heartbeatIntervalMs > 0) {
      ep.timer = setInterval(() => heartbeat(ep), config.heartbeatIntervalMs);
      ep.timer.unref();
    }
    byPath.set(config.path, ep);
  }

  let closing: Promise<void> | undefined;

  const owns = (req: IncomingMessage): boolean => byPath.has(pathOf(req.url ?? '/'));

  function handleUpgrade(req: IncomingMessage, res: ServerResponse, tunnel: Tunnel): boolean {
    const ep = byPath.get(pathOf(req.url ?? '/'));
    if (ep === undefined) return false;
    if (closing) {
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
      originAllowed: (origin) => isSameOrigin(origin, req.headers.host) || deps.originAllowed(origin, req),
    });
    if (decision.kind === 'refuse') {
      sendError(req, res, decision.entry, decision.detail, decision.headers);
      return true;
    }
    tunnel.accept();
    // ws has its own error handling on the socket once it has taken it.
    ep.wss.handleUpgrade(req, tunnel.socket, tunnel.head, (ws) => onConnection(ep, ws, req));
    return true;
  }

  function onConnection(ep: Endpoint, socket: WebSocket, req: IncomingMessage): void {
    const { path, maxBufferedBytes } = ep.config;
    const client: Client = { socket, path, maxBufferedBytes, alive: true, rooms: undefined };
    ep.clients.set(socket, client);
    if (ep.messagePolicy !== undefined) limitMessages(socket, ep.messagePolicy, nowMs);
    socket.on('pong', () => {
      client.alive = true;
    });
    socket.on('error', (err: Error & { code?: string }) => {
      // Protocol errors of the peer (too big: 1009, invalid frames: 1002/1007); ws closes the connection.
      logger.warn({ path, code: err.code, err }, 'websocket connection error');
    });
    socket.on('close', () => {
      ep.clients.delete(socket);
      if (client.rooms) for (const room of client.rooms) leave(ep, client, room);
    });

    switch (ep.config.mode) {
      case 'echo':
        socket.on('message', (raw, isBinary) => {
          const data = toBuffer(raw);
          if (!isBinary && isAppPing(data)) deliver(client, PONG, false);
          else deliver(client, data, isBinary);
        });
        break;
      case 'broadcast':
        socket.on('message', (raw, isBinary) => onBroadcastMessage(ep, client, toBuffer(raw), isBinary));
        break;
      case 'custom':
        socket.on('message', (raw, isBinary) => {
          // The handler sees the ping as well (listeners cannot be skipped); it should ignore it.
          if (!isBinary && isAppPing(toBuffer(raw))) deliver(client, PONG, false);
        });
        try {
          ep.handler!(socket, req);
        } catch (err) {
          logger.error({ err, path }, 'websocket handler failed');
          socket.close(CLOSE_CODES.internalError, 'internal error');
        }
        break;
    }
  }

  function onBroadcastMessage(ep: Endpoint, client: Client, data: Buffer, isBinary: boolean): void {
    const envelope = isBinary ? undefined : parseEnvelope(data);
    if (envelope === undefined) {
      broadcast(ep, data, isBinary);
      return;
    }
    const { type } = envelope;
    if (type === 'ping') {
      deliver(client, PONG, false);
    } else if (type === 'join' || type === 'leave') {
      const room = envelope.room;
      if (!isRoomName(room)) replyError(client, 'bad_room', BAD_ROOM);
      else if (type === 'leave') {
        leave(ep, client, room);
        deliver(client, JSON.stringify({ type: 'left', room }), false);
      } else if (join(ep, client, room)) {
        deliver(client, JSON.stringify({ type: 'joined', room }), false);
      } else {
        replyError(client, 'too_many_rooms', `at most ${MAX_ROOMS_PER_CLIENT} rooms per client`);
      }
    } else if ('room' in envelope) {
      // Fail closed: a malformed room must not turn a room message into a message to everyone.
      const room = envelope.room;
      if (!isRoomName(room)) replyError(client, 'bad_room', BAD_ROOM);
      else {
        const members = ep.rooms.get(room);
        if (members) for (const m of members) deliver(m, data, false);
      }
    } else {
      broadcast(ep, data, false);
    }
  }

  /** Everyone on the path, the sender included: every client sees the same order of messages. */
  function broadcast(ep: Endpoint, data: Buffer, isBinary: boolean): void {
    for (const c of ep.clients.values()) deliver(c, data, isBinary);
  }

  /** Adds `client` to `room`; false when it is in too many rooms already. */
  function join(ep: Endpoint, client: Client, room: string): boolean {
    if (client.rooms?.has(room)) return true;
    if ((client.rooms?.size ?? 0) >= MAX_ROOMS_PER_CLIENT) return false;
    (client.rooms ??= new Set()).add(room);
    let members = ep.rooms.get(room);
    if (members === undefined) ep.rooms.set(room, (members = new Set()));
    members.add(client);
    return true;
  }

  function leave(ep: Endpoint, client: Client, room: string): void {
    client.rooms?.delete(room);
    const members = ep.rooms.get(room);
    if (members === undefined) return;
    members.delete(client);
    if (members.size === 0) ep.rooms.delete(room);
  }

  function replyError(client: Client, code: string, message: string): void {
    deliver(client, JSON.stringify({ type: 'error', content: { code, message } }), false);
  }

  /** Sends unless the peer is a slow consumer, which is closed with 1013 instead of buffering more. */
  function deliver(client: Client, data: Buffer | string, binary: boolean): void {
    const s = client.socket;
    if (s.readyState !== WS_OPEN) return;
    if (s.bufferedAmount > client.maxBufferedBytes) {
      logger.warn(
        { path: client.path, bufferedBytes: s.bufferedAmount, maxBufferedBytes: client.maxBufferedBytes },
        'websocket slow consumer closed (1013)',
      );
      // The close frame queues behind the backlog; the heartbeat (or ws's 30 s close timer) ends a peer
      // that never reads it.
      s.close(CLOSE_CODES.tryAgainLater, 'slow consumer');
      return;
    }
    s.send(data, binary ? BINARY : TEXT);
  }

  function heartbeat(ep: Endpoint): void {
    for (const c of ep.clients.values()) {
      if (!c.alive) {
        c.socket.terminate();
        continue;
      }
      c.alive = false;
      if (c.socket.readyState === WS_OPEN) c.socket.ping();
    }
  }

  function close(): Promise<void> {
    closing ??= (async () => {
      const waits: Promise<void>[] = [];
      for (const ep of byPath.values()) {
        if (ep.timer) clearInterval(ep.timer);
        ep.timer = undefined;
        for (const { socket } of ep.clients.values()) {
          waits.push(
            new Promise<void>((resolve) => {
              if (socket.readyState === WS_CLOSED) return resolve();
              socket.once('close', () => resolve());
              socket.close(CLOSE_CODES.goingAway, 'server shutting down');
            }),
          );
        }
      }
      const grace = setTimeout(() => {
        for (const ep of byPath.values()) for (const { socket } of ep.clients.values()) socket.terminate();
      }, closeGraceMs);
      await Promise.all(waits);
      clearTimeout(grace);
      await Promise.all([...byPath.values()].map((ep) => new Promise<void>((r) => ep.wss.close(() => r()))));
    })();
    return closing;
  }

  return {
    owns,
    handleUpgrade,
    close,
    clients: (path) => byPath.get(path)?.clients.size ?? 0,
  };
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
