// One accepted connection: rate limit, heartbeat pong, cleanup, and the endpoint's mode.
import type { IncomingMessage } from 'node:http';
import type { RawData, WebSocket } from 'ws';
import { type BucketState, type TokenBucketPolicy, takeToken } from '../../http/rate-limit.js';
import { leave, onBroadcastMessage } from './broadcast.js';
import { deliver, PONG } from './deliver.js';
import { isAppPing } from './envelope.js';
import { CLOSE_CODES, type Client, type Endpoint, type WsState } from './types.js';

/**
 * Wraps the socket's emit so that a 'message' over the endpoint's rate never reaches a listener
 * (ours or a custom handler's): the first one over closes the connection with 1008 (RFC 6455
 * §7.4.1, policy violation) and later ones are dropped. Token bucket: `burst` at once, then
 * `messagesPerSec`. A Ping counts as a message: each costs the server a Pong (RFC 6455 §5.5.2).
 */
function limitMessages(socket: WebSocket, policy: TokenBucketPolicy, nowMs: () => number): void {
  let state: BucketState | undefined;
  let over = false;
  const emit = socket.emit;
  socket.emit = function (this: WebSocket, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'message' || event === 'ping') {
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

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}

export function onConnection(ws: WsState, ep: Endpoint, socket: WebSocket, req: IncomingMessage): void {
  const { logger } = ws;
  const { path, maxBufferedBytes } = ep.config;
  const client: Client = { socket, path, maxBufferedBytes, alive: true, rooms: undefined };
  ep.clients.set(socket, client);
  if (ep.messagePolicy !== undefined) limitMessages(socket, ep.messagePolicy, ws.nowMs);
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
        if (!isBinary && isAppPing(data)) deliver(ws, client, PONG, false);
        else deliver(ws, client, data, isBinary);
      });
      break;
    case 'broadcast':
      socket.on('message', (raw, isBinary) => onBroadcastMessage(ws, ep, client, toBuffer(raw), isBinary));
      break;
    case 'custom':
      socket.on('message', (raw, isBinary) => {
        // The handler sees the ping as well (listeners cannot be skipped); it should ignore it.
        if (!isBinary && isAppPing(toBuffer(raw))) deliver(ws, client, PONG, false);
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
