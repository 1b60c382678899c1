// The Redis connection features share, on ioredis (loaded only when a feature uses Redis).
// Commands fail at once while Redis is unreachable (no offline queue), so every caller has its own
// fallback (a cache miss, the rate limit's failOpen, local-only fan-out); the client reconnects on
// its own. An outage is logged once when it starts and once when it ends, never per request, and so
// is a Redis unreachable from the start; the end of a connection we close (the server shutting down)
// is not an outage and is not logged.
import { createRequire } from 'node:module';
import type { RedisOptions as IoRedisOptions, Redis as RedisClient } from 'ioredis';
import type { Logger } from '../ops/log.js';

export interface RedisOptions {
  url: string;
  keyPrefix: string;
}

export interface RedisConnection {
  /** For commands (GET, SET, EVALSHA, PUBLISH ...). */
  readonly client: RedisClient;
  /** A second connection for SUBSCRIBE (a subscribed connection takes no other commands), made on first use. */
  subscriber(): RedisClient;
  /** `keyPrefix` + the parts joined with ':'; the same for channel names. */
  key(...parts: string[]): string;
  /** True while the command connection is ready. */
  isUp(): boolean;
  /** Calls `fn(up)` on every change between reachable and unreachable. */
  onStateChange(fn: (up: boolean) => void): () => void;
  /** QUIT (on a ready connection, waiting at most QUIT_WAIT_MS for Redis to answer), then disconnects. */
  close(): Promise<void>;
  /** Drops both connections now, without QUIT. */
  disconnect(): void;
}

/** How long a connect attempt may take, and the reconnect backoff's steps and cap. */
const CONNECT_TIMEOUT_MS = 2000;
const RETRY_STEP_MS = 100;
const RETRY_CAP_MS = 2000;
/** How long close() waits for QUIT: a hung Redis (or one shutting down) may never answer it. */
export const QUIT_WAIT_MS = 500;

// biome-ignore lint/suspicious/noExplicitAny: ioredis's CommonJS export shape
const loadIoRedis = (): any => createRequire(import.meta.url)('ioredis');

function clientOptions(): IoRedisOptions {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: CONNECT_TIMEOUT_MS,
    retryStrategy: (times) => Math.min(times * RETRY_STEP_MS, RETRY_CAP_MS),
    // A Redis that restarts loses its scripts: callers use EVALSHA with an EVAL fallback.
    lazyConnect: false,
  };
}

export function connectRedis(o: RedisOptions & { logger: Logger }): RedisConnection {
  const IoRedis = loadIoRedis();
  const Ctor = (IoRedis.default ?? IoRedis.Redis ?? IoRedis) as new (
    url: string,
    opts: IoRedisOptions,
  ) => RedisClient;
  const client = new Ctor(o.url, clientOptions());
  let sub: RedisClient | undefined;
  let up = false;
  let everUp = false;
  /** The first connect failed and was logged: its success is logged too. */
  let downAtStart = false;
  /** close() or disconnect() was called: the connection ends on purpose, which is no outage. */
  let closing = false;
  const listeners = new Set<(up: boolean) => void>();
  const where = redactedUrl(o.url);
  const set = (next: boolean, reason?: string) => {
    if (next === up) {
      // The first state is already "down": a failed first connect (a typo, a Redis not started yet)
      // changes nothing, so it is reported here, once, naming the URL and the error.
      if (!next && !everUp && !downAtStart && !closing) {
        downAtStart = true;
        o.logger.warn(
          { redis: where, reason },
          `redis: unreachable at start: ${where} (${reason}); features fall back until it is reachable`,
        );
      }
      return;
    }
    up = next;
    if (closing) return;
    if (next) {
      if (everUp) o.logger.info({ redis: where }, 'redis: reachable again');
      else if (downAtStart) o.logger.info({ redis: where }, `redis: reachable: ${where}`);
      everUp = true;
    } else {
      o.logger.warn({ redis: where, reason }, 'redis: unreachable; features fall back until it returns');
    }
    for (const fn of listeners) fn(next);
  };
  client.on('ready', () => set(true));
  // 'error' is emitted on every failed reconnect: only the transition is logged.
  client.on('error', (err: Error) => set(false, err.message));
  client.on('end', () => set(false, 'connection closed'));
  client.on('close', () => {
    if (up) set(false, 'connection closed');
  });
  return {
    client,
    subscriber() {
      if (sub === undefined) {
        // SUBSCRIBE waits through (re)connects until it succeeds: with no retries a SUBSCRIBE queued
        // before a failed first connect was dropped, and ioredis re-subscribes only what succeeded.
        // No ready check: ioredis sends SUBSCRIBE on a connected, not yet ready connection, and the
        // check's INFO is then refused in subscriber mode; the connection was dropped and the channel
        // forgotten (ioredis re-subscribes only after a ready connection).
        sub = new Ctor(o.url, {
          ...clientOptions(),
          enableOfflineQueue: true,
          maxRetriesPerRequest: null,
          enableReadyCheck: false,
        });
        sub.on('error', () => {});
      }
      return sub;
    },
    key: (...parts) => o.keyPrefix + parts.join(':'),
    isUp: () => up,
    onStateChange(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    async close() {
      closing = true;
      listeners.clear();
      // QUIT only on a ready connection: otherwise it would wait for Redis to come back. A ready
      // connection to a hung Redis (SIGSTOP, a shutdown in progress) never answers either: the wait
      // is bounded, then the sockets are dropped (a shutdown waited 13 minutes here).
      const polite = (c: RedisClient | undefined) => (c?.status === 'ready' ? c.quit() : undefined);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([polite(client), polite(sub)]),
        new Promise((resolve) => {
          timer = setTimeout(resolve, QUIT_WAIT_MS);
        }),
      ]);
      clearTimeout(timer);
      drop(client);
      if (sub !== undefined) drop(sub);
    },
    disconnect() {
      closing = true;
      listeners.clear();
      drop(client);
      if (sub !== undefined) drop(sub);
    },
  };
}

/**
 * Disconnects now. ioredis's disconnect() only half-closes the socket and waits up to its
 * disconnectTimeout (2 s) for Redis to close its side, which a hung Redis never does: the socket would
 * keep a process that is shutting down alive that long. A client already ended is left alone: a second
 * disconnect() arms that 2 s timer on a socket whose close has passed, and nothing clears it.
 */
function drop(c: RedisClient): void {
  if (c.status === 'end') return;
  c.disconnect();
  c.stream?.destroy();
}

/** The URL without its password, for logs. */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return 'redis://(unparsable url)';
  }
}
