// Per-client rate limiting: a token bucket per client address (http/rate-limit.ts does the math),
// kept in a bounded LRU, or shared by every instance in Redis (store "redis", rate-limit-redis.ts).
// Over the limit: 429 with Retry-After and the RateLimit fields of
// draft-ietf-httpapi-ratelimit-headers-11; allowed responses carry RateLimit too. WebSocket
// handshakes run this step like any request (src/server/core/entry.ts), so each one costs a token.
//
// The other limits (URL, header block, timeouts, connections) are Node server options
// (http1ServerOptions below, used by every listener);
// client-error.ts turns Node's refusals into proper 400/408/431 answers, and `maxConnections`
// (server.maxConnections) makes Node drop sockets beyond the limit at accept time, without a response;
// an upgraded (WebSocket) socket keeps its place until it closes.
import { LRUCache } from 'lru-cache';
import { formatIp, isIpv4Mapped, maskIp, parseIp } from '../../http/ip.js';
import {
  type BucketState,
  formatRateLimit,
  formatRateLimitPolicy,
  type TakeResult,
  type TokenBucketPolicy,
  takeToken,
} from '../../http/rate-limit.js';
import type { RequestContext, Step } from '../core/context.js';
import { ERRORS, sendError } from '../core/errors.js';
import type { ExchangeRequest, ResponseSink } from '../core/exchange.js';
import type { Feature } from '../core/feature.js';
import type { StepContext } from '../node/types.js';
import { compileGlobs, rulePath } from './headers.js';
import { type LimitsOptions, RATE_LIMIT_DEFAULTS, type RateLimitOptions } from './limits-options.js';
import { createRedisBucketStore } from './rate-limit-redis.js';

export type { Http2LimitsOptions, LimitsOptions, RateLimitOptions } from './limits-options.js';

/**
 * How often Node walks the connections that are mid-request for headersTimeout / requestTimeout: the
 * 408 comes at most this much after the limit (at 1000 ms, a 300 ms headersTimeoutMs answered after
 * ~1000 ms). Node's walk visits only connections with a request in progress, not idle keep-alive
 * ones. Measured (Node 20, shared 2-core machine, CPU of an idle server over 10-20 s, two runs;
 * noise ~0.3 %): 10k idle keep-alive connections 0.03-0.25 % at 1000 ms, 0.4-0.6 % at 25 ms; 10k
 * half-sent request heads (slowloris) 0.2-0.4 % at 1000 ms, 3.6-5.0 % at 50 ms, 6.9-9.0 % at 25 ms;
 * 1k half-sent heads 0.5 % at 1000 ms, 1.2-1.5 % at 25 ms. 25 ms keeps the 408 within 50 ms of its
 * value (event-loop delay included) at no measurable cost on the proxy and static benches.
 */
export const CONNECTIONS_CHECK_INTERVAL_MS = 25;

/**
 * The options of every node:http server we run (the main listener, the plain-HTTP one beside TLS),
 * named as Node's HTTP/1 code also reads them off a server object (the HTTP/2 server's HTTP/1.1
 * connections: tls/listener.ts assigns them). A missing Host gets its 400 from request-head.ts
 * (problem+json), not Node's bare one.
 */
export function http1ServerOptions(limits: LimitsOptions) {
  return {
    maxHeaderSize: limits.maxHeaderBytes,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: CONNECTIONS_CHECK_INTERVAL_MS,
    requireHostHeader: false,
  };
}

export interface RateLimitDeps {
  /** The clock; default Date.now. */
  readonly nowMs?: () => number;
}

/** The bucket key of a client: IPv4 as is, IPv6 by its prefix, anything else (`unknown`) verbatim. */
export function bucketKey(address: string, ipv6PrefixLength: number): string {
  const bytes = parseIp(address);
  if (!bytes || isIpv4Mapped(bytes) || ipv6PrefixLength >= 128) return address;
  return `${formatIp(maskIp(bytes, ipv6PrefixLength))}/${ipv6PrefixLength}`;
}

/** The rate limit step, or undefined when `limits.rateLimit` is not configured. */
export function createRateLimit(
  limits: LimitsOptions,
  ctx: StepContext,
  deps: RateLimitDeps = {},
): Step | undefined {
  const o = limits.rateLimit;
  if (o === undefined) return undefined;
  if (!(o.requestsPerSec > 0) || !Number.isInteger(o.burst) || o.burst < 1) {
    throw new TypeError('limits.rateLimit: requestsPerSec must be > 0 and burst an integer >= 1');
  }
  const policy: TokenBucketPolicy = { ratePerSec: o.requestsPerSec, burst: o.burst };
  const policyField = formatRateLimitPolicy(policy);
  const prefix = o.ipv6PrefixLength ?? RATE_LIMIT_DEFAULTS.ipv6PrefixLength;
  const now = deps.nowMs ?? Date.now;
  const matches = compileGlobs(o.paths);
  const counts = (cx: RequestContext): boolean => {
    if (matches === undefined) return true;
    const path = rulePath(cx);
    // An unresolvable path counts: it must not be a way around the limit.
    return path === null || matches(path);
  };
  if (o.store === 'redis') return redisRateLimit(o, policy, policyField, counts, ctx);
  const buckets = new LRUCache<string, BucketState>({ max: o.maxClients ?? RATE_LIMIT_DEFAULTS.maxClients });
  return (req, res, cx) => {
    if (!counts(cx)) return false;
    const key = bucketKey(ctx.clientAddress(req), prefix);
    const r = takeToken(buckets.get(key), policy, now());
    buckets.set(key, r.state);
    return applyDecision(req, res, r, policyField);
  };
}

/** Sets the fields of a decision; on a refusal answers 429 (true). */
function applyDecision(req: ExchangeRequest, res: ResponseSink, r: TakeResult, policyField: string): boolean {
  res.setHeader('RateLimit-Policy', policyField);
  if (r.kind === 'allowed') {
    res.setHeader('RateLimit', formatRateLimit(r.remaining, r.resetSec));
    return false;
  }
  const retryAfter = String(r.retryAfterSec);
  sendError(req, res, ERRORS.tooManyRequests, `Too many requests; retry in ${retryAfter} s.`, {
    'Retry-After': retryAfter,
    RateLimit: formatRateLimit(0, r.retryAfterSec),
  });
  return true;
}

/**
 * The step over the shared Redis buckets. The connection opens with the server. While
 * Redis is down or slower than redisTimeoutMs, `redisDown` decides: open lets the request through
 * with no rate-limit fields (nothing was counted), closed answers 503 (the server cannot do its
 * job; not 429, which would blame the client, RFC 9110 §15.6.4) with Retry-After.
 */
function redisRateLimit(
  o: RateLimitOptions,
  policy: TokenBucketPolicy,
  policyField: string,
  counts: (cx: RequestContext) => boolean,
  ctx: StepContext,
): Step {
  if (ctx.redis === undefined) {
    throw new TypeError('limits.rateLimit.store: "redis" needs the top-level redis.url');
  }
  const store = createRedisBucketStore({
    conn: ctx.redis.get(o.redis),
    policy,
    timeoutMs: o.redisTimeoutMs ?? RATE_LIMIT_DEFAULTS.redisTimeoutMs,
    logger: ctx.logger,
  });
  const prefix = o.ipv6PrefixLength ?? RATE_LIMIT_DEFAULTS.ipv6PrefixLength;
  const closed = o.redisDown === 'closed';
  const retryAfter = String(RATE_LIMIT_DEFAULTS.redisDownRetryAfterSec);
  return async (req, res, cx) => {
    if (!counts(cx)) return false;
    const r = await store.take(bucketKey(ctx.clientAddress(req), prefix));
    if (r !== undefined) return applyDecision(req, res, r, policyField);
    if (!closed) return false;
    sendError(
      req,
      res,
      ERRORS.serviceUnavailable,
      'The rate limit cannot be checked right now; retry shortly.',
      {
        'Retry-After': retryAfter,
      },
    );
    return true;
  };
}

/** The rate limit as a feature (core/feature.ts): a gate step, off without `limits.rateLimit`. */
export function create(options: LimitsOptions, kernel: StepContext): Feature | undefined {
  const gate = createRateLimit(options, kernel);
  return gate && { gate };
}
