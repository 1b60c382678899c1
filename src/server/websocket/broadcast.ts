// Broadcast mode: messages to everyone on the path or to a room; join/leave/ping envelopes.
import { deliver, PONG } from './deliver.js';
import { parseEnvelope } from './envelope.js';
import type { Client, Endpoint, WsState } from './types.js';

/** Broadcast rooms: bounded so that a client cannot grow the room table without limit. */
const MAX_ROOM_NAME_CHARS = 128;
const MAX_ROOMS_PER_CLIENT = 64;
const BAD_ROOM = `room must be a string of 1 to ${MAX_ROOM_NAME_CHARS} characters`;

export function isRoomName(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0 && v.length <= MAX_ROOM_NAME_CHARS;
}

export function onBroadcastMessage(
  ws: WsState,
  ep: Endpoint,
  client: Client,
  data: Buffer,
  isBinary: boolean,
): void {
  const envelope = isBinary ? undefined : parseEnvelope(data);
  if (envelope === undefined) {
    broadcast(ws, ep, data, isBinary);
    return;
  }
  const { type } = envelope;
  if (type === 'ping') {
    deliver(ws, client, PONG, false);
  } else if (type === 'join' || type === 'leave') {
    const room = envelope.room;
    if (!isRoomName(room)) replyError(ws, client, 'bad_room', BAD_ROOM);
    else if (type === 'leave') {
      leave(ep, client, room);
      deliver(ws, client, JSON.stringify({ type: 'left', room }), false);
    } else if (join(ep, client, room)) {
      deliver(ws, client, JSON.stringify({ type: 'joined', room }), false);
    } else {
      replyError(ws, client, 'too_many_rooms', `at most ${MAX_ROOMS_PER_CLIENT} rooms per client`);
    }
  } else if ('room' in envelope) {
    // Fail closed: a malformed room must not turn a room message into a message to everyone.
    const room = envelope.room;
    if (!isRoomName(room)) replyError(ws, client, 'bad_room', BAD_ROOM);
    else {
      deliverLocal(ws, ep, room, data, false);
      ep.fanout?.publish(room, data, false);
    }
  } else {
    broadcast(ws, ep, data, false);
  }
}

/** Everyone on the path, the sender included: every client sees the same order of messages. The
 *  local clients get it at once; the other instances' through the fan-out, when there is one. */
function broadcast(ws: WsState, ep: Endpoint, data: Buffer, isBinary: boolean): void {
  deliverLocal(ws, ep, undefined, data, isBinary);
  ep.fanout?.publish(undefined, data, isBinary);
}

/** To this instance's clients on the path, or in `room`: a local message or one from another instance. */
export function deliverLocal(
  ws: WsState,
  ep: Endpoint,
  room: string | undefined,
  data: Buffer,
  isBinary: boolean,
): void {
  if (room === undefined) {
    for (const c of ep.clients.values()) deliver(ws, c, data, isBinary);
    return;
  }
  const members = ep.rooms.get(room);
  if (members) for (const m of members) deliver(ws, m, data, isBinary);
}

/** Adds `client` to `room`; false when it is in too many rooms already. */
function join(ep: Endpoint, client: Client, room: string): boolean {
  if (client.rooms?.has(room)) return true;
  if ((client.rooms?.size ?? 0) >= MAX_ROOMS_PER_CLIENT) return false;
  (client.rooms ??= new Set()).add(room);
  let members = ep.rooms.get(room);
  if (members === undefined) {
    ep.rooms.set(room, (members = new Set()));
    ep.fanout?.roomOpened(room);
  }
  members.add(client);
  return true;
}

export function leave(ep: Endpoint, client: Client, room: string): void {
  client.rooms?.delete(room);
  const members = ep.rooms.get(room);
  if (members === undefined) return;
  members.delete(client);
  if (members.size === 0) {
    ep.rooms.delete(room);
    ep.fanout?.roomClosed(room);
  }
}

function replyError(ws: WsState, client: Client, code: string, message: string): void {
  deliver(ws, client, JSON.stringify({ type: 'error', content: { code, message } }), false);
}
