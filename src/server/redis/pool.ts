// One Redis connection per server address for every feature of one Gatehouse: the
// top-level `redis`, or a feature's own `redis: { url }` override. Connected on first use; closed
// with the server.
import type { Logger } from '../ops/log.js';
import { connectRedis, type RedisConnection, type RedisOptions } from './connection.js';

export interface RedisPool {
  /** A top-level `redis` is configured (features may still bring their own url). */
  readonly configured: boolean;
  /** The connection for the top-level `redis`, or for a feature's override of it. */
  get(override?: Partial<RedisOptions>): RedisConnection;
  close(): Promise<void>;
  /** Drops every connection now, without QUIT (the shutdown deadline passed). */
  disconnect(): void;
}

export function createRedisPool(base: RedisOptions | undefined, logger: Logger): RedisPool {
  const open = new Map<string, RedisConnection>();
  /** Connections whose close() is under way (disconnect() drops them too). */
  const closing = new Set<RedisConnection>();
  return {
    configured: base?.url !== undefined,
    get(override) {
      const url = override?.url ?? base?.url;
      if (url === undefined)
        throw new TypeError('a feature is set to Redis but no top-level redis.url is configured');
      const keyPrefix = override?.keyPrefix ?? base?.keyPrefix ?? 'gatehouse:';
      const id = `${url} ${keyPrefix}`;
      let c = open.get(id);
      if (c === undefined) {
        c = connectRedis({ url, keyPrefix, logger });
        open.set(id, c);
      }
      return c;
    },
    async close() {
      const all = [...open.values()];
      open.clear();
      for (const c of all) closing.add(c);
      await Promise.allSettled(all.map((c) => c.close().finally(() => closing.delete(c))));
    },
    disconnect() {
      for (const c of [...open.values(), ...closing]) c.disconnect();
      open.clear();
      closing.clear();
    },
  };
}
