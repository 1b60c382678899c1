// Broadcast across instances (`websocket[].fanout: "redis"`): every broadcast is published
// on Redis and delivered by every other instance on it to its own clients.
//
// No duplicates: the sending instance delivers to its own clients at once (broadcast.ts, as with
// local fan-out, so its clients see no Redis latency and keep receiving while Redis is down) and
// tags the publish with its instance id; the subscription skips messages carrying its own id.
// Channels: key('ws', path) for messages to everyone on the path, key('ws', path) + '#' + room for a
// room, subscribed only while this instance has a member in the room. '#' and not ':': a path cannot
// hold '#' (config), so no room channel of one endpoint is another endpoint's channel (room "admin"
// on /chat would otherwise be /chat:admin's, and leaving it would unsubscribe that endpoint). While Redis is down local delivery
// goes on (publishes are dropped; the connection logs the outage once each way) and ioredis
// subscribes again when it returns.
//
// Wire format: a JSON head {"i": instance id, "p": path, "r"?: room, "b": binary} then "\n" then the
// message bytes. The head is checked against the channel it came on, so a message cannot reach a
// room or a path other than the one it was published for.
import { randomUUID } from 'node:crypto';
import type { Logger } from '../ops/log.js';
import { QUIT_WAIT_MS, type RedisConnection } from '../redis/connection.js';
import { isRoomName } from './broadcast.js';
import type { Fanout } from './types.js';

interface Head {
  i: string;
  p: string;
  r?: string;
  b: boolean;
}

const NEWLINE = 0x0a;

/** Pause before asking again for channels whose SUBSCRIBE failed. */
const SUBSCRIBE_RETRY_MS = 500;

/** The head and the message of a payload, or undefined for one that is not ours. */
export function decodeFanout(payload: Buffer): { head: Head; data: Buffer } | undefined {
  const nl = payload.indexOf(NEWLINE);
  if (nl === -1) return undefined;
  let head: unknown;
  try {
    head = JSON.parse(payload.subarray(0, nl).toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof head !== 'object' || head === null) return undefined;
  const h = head as Record<string, unknown>;
  if (typeof h.i !== 'string' || typeof h.p !== 'string' || typeof h.b !== 'boolean') return undefined;
  if (h.r !== undefined && !isRoomName(h.r)) return undefined;
  return { head: h as unknown as Head, data: payload.subarray(nl + 1) };
}

export function encodeFanout(head: Head, data: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${JSON.stringify(head)}\n`, 'utf8'), data]);
}

export function createRedisFanout(o: {
  conn: RedisConnection;
  path: string;
  /** Delivers a message from another instance to this instance's clients (on the path, or in the room). */
  deliverLocal: (room: string | undefined, data: Buffer, isBinary: boolean) => void;
  logger: Logger;
  /** This instance's id (default a random UUID per endpoint). */
  instanceId?: string;
}): Fanout {
  const { conn, path } = o;
  const id = o.instanceId ?? randomUUID();
  const allChannel = conn.key('ws', path);
  const roomChannel = (room: string) => `${allChannel}#${room}`;
  /** Channel -> the room it carries (undefined: everyone on the path). */
  const channels = new Map<string, string | undefined>([[allChannel, undefined]]);
  const sub = conn.subscriber();
  const quiet = () => {};
  const onMessage = (channelBuf: Buffer, payload: Buffer) => {
    const channel = channelBuf.toString('utf8');
    if (!channels.has(channel)) return;
    const m = decodeFanout(payload);
    if (m === undefined || m.head.i === id || m.head.p !== path) return;
    const room = channels.get(channel);
    // The head must name the path and room of its channel.
    if (m.head.r !== room) return;
    o.deliverLocal(room, m.data, m.head.b);
  };
  sub.on('messageBuffer', onMessage);
  // Belt and braces (the lost subscriptions were the ready check's: redis/connection.ts): every
  // channel is asked for again on each 'ready' and, after a failed SUBSCRIBE (the connection closed
  // under it), half a second later, until it holds or the fan-out closes.
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  const ensure = () => {
    if (closed || channels.size === 0) return;
    sub.subscribe(...channels.keys()).catch(() => {
      if (closed || retry !== undefined) return;
      retry = setTimeout(() => {
        retry = undefined;
        ensure();
      }, SUBSCRIBE_RETRY_MS);
      retry.unref();
    });
  };
  sub.on('ready', ensure);
  ensure();
  return {
    publish(room, data, isBinary) {
      if (!conn.isUp()) return;
      const head: Head =
        room === undefined ? { i: id, p: path, b: isBinary } : { i: id, p: path, r: room, b: isBinary };
      const channel = room === undefined ? allChannel : roomChannel(room);
      conn.client.publish(channel, encodeFanout(head, data)).catch(quiet);
    },
    roomOpened(room) {
      const channel = roomChannel(room);
      if (channels.has(channel)) return;
      channels.set(channel, room);
      sub.subscribe(channel).catch(quiet);
    },
    roomClosed(room) {
      const channel = roomChannel(room);
      if (!channels.has(channel)) return;
      channels.delete(channel);
      sub.unsubscribe(channel).catch(quiet);
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      sub.off('ready', ensure);
      sub.off('messageBuffer', onMessage);
      const all = [...channels.keys()];
      channels.clear();
      // While Redis is down an UNSUBSCRIBE would wait for it (the subscriber retries), and a hung
      // Redis never answers one: the wait is bounded; the connection is closed with the server anyway.
      if (sub.status !== 'ready') return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        sub.unsubscribe(...all).catch(quiet),
        new Promise((resolve) => {
          timer = setTimeout(resolve, QUIT_WAIT_MS);
        }),
      ]);
      clearTimeout(timer);
    },
  };
}
