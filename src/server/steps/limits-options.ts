// The `limits` config section: the server-wide limits every listener runs with (URL, header block,
// timeouts, connections, bodies, pipelining), the rate limit's options and the HTTP/2 session limits,
// with their defaults. Read by the rate limit step, the listeners and src/config (through
// src/server/index.ts).
import type { RedisOptions } from '../redis/connection.js';

/** How long one Redis bucket call may take before the request is treated as "Redis down". */
export const REDIS_RATE_LIMIT_TIMEOUT_MS = 50;

/** Longer request targets get 414 (RFC 9110 §15.5.15): the config's default for `limits.maxUrlBytes`. */
export const DEFAULT_MAX_URL_BYTES = 8192;

export interface LimitsOptions {
  maxUrlBytes: number;
  maxHeaderBytes: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  shutdownTimeoutMs: number;
  /** Request bodies over this get 413 on endpoints that read bodies. */
  maxBodyBytes: number;
  /** Open connections at most (0: no limit); more are refused. */
  maxConnections: number;
  /**
   * What the process may hold in memory (RSS): the caches shed near it (ops/pressure.ts). `gatehouse
   * serve` sets the budget it derived (config/memory.ts); undefined: only the heap limit is watched.
   */
  memoryBytes?: number | undefined;
  /** Requests handled and not yet answered per connection at most; the rest wait unhandled and the
   *  socket is not read beyond them (0: no bound). */
  maxPipelinedRequests: number;
  /** Every connection read one head at a time from its first byte (the parser never runs ahead). */
  strictPipelining?: boolean | undefined;
  /** A client that accepts no response bytes for this long is dropped (proxied responses). */
  sendTimeoutMs: number;
  rateLimit?: RateLimitOptions | undefined;
  /** HTTP/2 sessions on the TLS listener (tls/h2-sessions.ts); HTTP2_DEFAULTS fill the gaps. */
  http2?: Partial<Http2LimitsOptions> | undefined;
}

export interface Http2LimitsOptions {
  /** SETTINGS_MAX_CONCURRENT_STREAMS we announce (RFC 9113 §6.5.2); nginx's default is 128. */
  maxConcurrentStreams: number;
  /** Streams a client address may reset within resetWindowMs, over all its connections. */
  maxResetsPerWindow: number;
  resetWindowMs: number;
  /** How long an address over the reset budget has its new connections refused. */
  resetBanMs: number;
  /** Header blocks refused on one session (too large, too many fields) before GOAWAY. */
  maxRefusedHeaderBlocks: number;
}

export const HTTP2_DEFAULTS: Readonly<Http2LimitsOptions> = {
  maxConcurrentStreams: 128,
  maxResetsPerWindow: 400,
  resetWindowMs: 10_000,
  resetBanMs: 30_000,
  maxRefusedHeaderBlocks: 3,
};

export interface RateLimitOptions {
  /** Sustained rate per client (tokens added per second); > 0, may be fractional (0.5 = one per 2 s). */
  requestsPerSec: number;
  /** Requests a client may make at once after being idle (bucket size); integer >= 1. */
  burst: number;
  /** URL path globs that count (`/api/**`); default every path. */
  paths?: string[] | undefined;
  /** Client buckets kept (least recently used dropped first; a dropped bucket starts full). */
  maxClients?: number | undefined;
  /** IPv6 clients share a bucket per prefix of this length (a host usually owns a whole /64). */
  ipv6PrefixLength?: number | undefined;
  /** Where the buckets live: this process (default) or the shared Redis (rate-limit-redis.ts). */
  store?: 'memory' | 'redis' | undefined;
  /** With the Redis store, while Redis is down or slow: allow without rate-limit fields (open, the
   *  default) or refuse with 503 and Retry-After (closed). */
  redisDown?: 'open' | 'closed' | undefined;
  /** With the Redis store: a bucket call slower than this counts as Redis down. */
  redisTimeoutMs?: number | undefined;
  /** This limit's own Redis, in place of the top-level one. */
  redis?: Partial<RedisOptions> | undefined;
}

export const RATE_LIMIT_DEFAULTS = {
  maxClients: 10_000,
  ipv6PrefixLength: 64,
  redisTimeoutMs: REDIS_RATE_LIMIT_TIMEOUT_MS,
  /** Retry-After of the 503 a closed limit answers while Redis is down (its reconnects are <= 2 s apart). */
  redisDownRetryAfterSec: 1,
} as const;
