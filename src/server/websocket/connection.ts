// One open connection, whatever carries it (PeerSocket: ws on Node, Bun's and Deno's own sockets): the
// message size and rate, the heartbeat's pong, cleanup, and the endpoint's mode (echo, broadcast).
import { type BucketState, takeToken } from '../../http/rate-limit.js';
import { leave, onBroadcastMessage } from './broadcast.js';
import { deliver, PONG } from './deliver.js';
import { isAppPing } from './envelope.js';
import {
  CLOSE_CODES,
  type Client,
  type Endpoint,
  type PeerEvents,
  type PeerSocket,
  type WsState,
} from './types.js';

/** An accepted connection: `admit` guards what reaches `message` (the mode), `events` are the host's. */
export interface Connection {
  readonly client: Client;
  /**
   * Whether a message (or a Ping) of `sizeBytes` may go on. The first one over the endpoint's size
   * closes the connection with 1009 (RFC 6455 §7.4.1, message too big), the first over its rate with
   * 1008 (policy violation); later ones are dropped. Token bucket: `burst` at once, then
   * `messagesPerSec`. A Ping counts as a message: each costs the server a Pong (RFC 6455 §5.5.2).
   */
  admit(sizeBytes: number): boolean;
  /** A message that was admitted, for the endpoint's mode. */
  message(data: Buffer, isBinary: boolean): void;
  readonly events: PeerEvents;
}

/** Registers `socket` as a client of `ep`; the host feeds the connection's events to `events`. */
export function openConnection(ws: WsState, ep: Endpoint, socket: PeerSocket): Connection {
  const { path, maxBufferedBytes, maxPayloadBytes } = ep.config;
  const client: Client = {
    socket,
    path,
    maxBufferedBytes,
    alive: true,
    rooms: undefined,
    onClosed: undefined,
  };
  ep.clients.set(socket, client);
  const policy = ep.messagePolicy;
  let state: BucketState | undefined;
  let over = false;
  const admit = (sizeBytes: number): boolean => {
    if (over) return false;
    // ws refuses these itself (maxPayload); Bun only past the largest endpoint's, Deno never.
    if (sizeBytes > maxPayloadBytes) {
      over = true;
      socket.close(CLOSE_CODES.tooBig, 'message too big');
      return false;
    }
    if (policy === undefined) return true;
    const r = takeToken(state, policy, ws.nowMs());
    state = r.state;
    if (r.kind !== 'limited') return true;
    over = true;
    socket.close(CLOSE_CODES.policyViolation, 'message rate exceeded');
    return false;
  };
  const message = modeOf(ws, ep, client);
  let closed = false;
  const events: PeerEvents = {
    receive: (data, isBinary) => {
      if (admit(data.byteLength)) message(data, isBinary);
    },
    ping: () => {
      admit(0);
    },
    pong: () => {
      client.alive = true;
    },
    closed: () => {
      if (closed) return;
      closed = true;
      ep.clients.delete(socket);
      if (client.rooms) for (const room of client.rooms) leave(ep, client, room);
      client.onClosed?.();
    },
  };
  return { client, admit, message, events };
}

/** The endpoint's mode, for admitted messages (`custom` answers the app ping only; its handler does the rest). */
function modeOf(ws: WsState, ep: Endpoint, client: Client): (data: Buffer, isBinary: boolean) => void {
  switch (ep.config.mode) {
    case 'echo':
      return (data, isBinary) => {
        if (!isBinary && isAppPing(data)) deliver(ws, client, PONG, false);
        else deliver(ws, client, data, isBinary);
      };
    case 'broadcast':
      return (data, isBinary) => onBroadcastMessage(ws, ep, client, data, isBinary);
    case 'custom':
      // The handler sees the ping as well (listeners cannot be skipped); it should ignore it.
      return (data, isBinary) => {
        if (!isBinary && isAppPing(data)) deliver(ws, client, PONG, false);
      };
  }
}
