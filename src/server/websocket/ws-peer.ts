// The Node transport's WebSockets: the `ws` package over the upgraded socket, one WebSocketServer per
// endpoint (made at its first handshake), its sockets as PeerSockets for connection.ts.
import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import type { RawData, WebSocket, WebSocketServer } from 'ws';
import { type Connection, openConnection } from './connection.js';
import { firstOffered } from './handshake.js';
import { CLOSE_CODES, type Endpoint, type PeerSocket, type WsState } from './types.js';

// ws is loaded only when a Node handshake comes (it costs ~12 MB of RSS).
const loadWs = (): typeof import('ws') => createRequire(import.meta.url)('ws') as typeof import('ws');

/**
 * RFC 6455 §5.5.2: every Ping is answered with a Pong. A peer that sends Pings and never reads the
 * Pongs would queue them without end; past this many Pongs not yet written the connection is
 * terminated (ws's default, pinned here so no upgrade of ws can silently lift it).
 */
export const MAX_PENDING_PONGS = 60;
/** Fragments of one message (RFC 6455 §5.4): a message of a million 1-byte frames is refused. */
export const MAX_FRAGMENTS = 16 * 1024;

/** The endpoint's ws server; `watch` is called once, when it is made. */
export function wsServerOf(ep: Endpoint, watch: (wss: WebSocketServer) => void): WebSocketServer {
  if (ep.wss !== undefined) return ep.wss;
  const { config } = ep;
  const wss = new (loadWs().WebSocketServer)({
    noServer: true,
    clientTracking: false,
    // Checked while inflating too (RFC 7692 §7.2.2): a compressed bomb is refused with 1009
    // once the inflated bytes pass the bound, not after.
    maxPayload: config.maxPayloadBytes,
    maxFragments: MAX_FRAGMENTS,
    perMessageDeflate: config.perMessageDeflate,
    // RFC 6455 §4.2.2 /subprotocol/: never one we do not speak (false: none).
    handleProtocols: (offered: Set<string>) => firstOffered(config.subprotocols, offered) ?? false,
    // ws >= 8.19 reads it; @types/ws does not name it yet.
    ...{ maxPendingAutoPongs: MAX_PENDING_PONGS },
  });
  ep.wss = wss;
  watch(wss);
  return wss;
}

const TEXT = { binary: false } as const;
const BINARY = { binary: true } as const;

function wsPeer(socket: WebSocket): PeerSocket {
  return {
    get readyState() {
      return socket.readyState;
    },
    get bufferedAmount() {
      return socket.bufferedAmount;
    },
    send: (data, binary) => socket.send(data, binary ? BINARY : TEXT),
    close: (code, reason) => socket.close(code, reason),
    terminate: () => socket.terminate(),
    ping: () => {
      socket.ping();
      return true;
    },
  };
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}

/**
 * Wraps the socket's emit so that a 'message' or 'ping' the connection does not admit never reaches a
 * listener (ours or a custom handler's).
 */
function admitOnEmit(socket: WebSocket, conn: Connection): void {
  const emit = socket.emit;
  socket.emit = function (this: WebSocket, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'message' || event === 'ping') {
      const data = args[0] as RawData | undefined;
      const size =
        data === undefined
          ? 0
          : Array.isArray(data)
            ? data.reduce((n, b) => n + b.length, 0)
            : data.byteLength;
      if (!conn.admit(event === 'ping' ? 0 : size)) return false;
    }
    return emit.call(this, event, ...args);
  } as WebSocket['emit'];
}

/** A connection ws accepted on `ep`. */
export function onWsConnection(ws: WsState, ep: Endpoint, socket: WebSocket, req: IncomingMessage): void {
  const { logger } = ws;
  const { path } = ep.config;
  const conn = openConnection(ws, ep, wsPeer(socket));
  // ws refuses oversized messages itself (maxPayload): only a rate needs the wrap.
  if (ep.messagePolicy !== undefined) admitOnEmit(socket, conn);
  socket.on('pong', conn.events.pong);
  socket.on('error', (err: Error & { code?: string }) => {
    // Protocol errors of the peer (too big: 1009, invalid frames: 1002/1007); ws closes the connection.
    logger.warn({ path, code: err.code, err }, 'websocket connection error');
  });
  socket.on('close', (code, reason) => conn.events.closed(code, reason.toString()));
  socket.on('message', (raw, isBinary) => conn.message(toBuffer(raw), isBinary));
  if (ep.config.mode !== 'custom') return;
  try {
    ep.handler!(socket, req);
  } catch (err) {
    logger.error({ err, path }, 'websocket handler failed');
    socket.close(CLOSE_CODES.internalError, 'internal error');
  }
}
