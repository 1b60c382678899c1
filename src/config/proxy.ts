// proxy: path prefixes forwarded to upstream servers.
import { z } from 'zod';
import { DEFAULT_MAX_PIECES_PER_ENTRY } from '../cache/pieces.js';
import { ipRangeEntry } from './access.js';
import { redisOverrideSchema } from './redis.js';

const upstreamUrl = z.string().refine((s) => {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.search && !u.hash;
  } catch {
    return false;
  }
}, 'must be an http:// or https:// URL without credentials, query or fragment');

export const proxyRouteSchema = z
  .strictObject({
    prefix: z
      .string()
      .regex(/^\/[^?#]*$/, 'must be a path starting with /')
      .describe('Path prefix, e.g. /api; matches /api and /api/... (not /apiary).'),
    upstream: z
      .union([upstreamUrl, z.array(upstreamUrl).min(1)])
      .describe('Upstream base URL(s); several are load-balanced.'),
    stripPrefix: z.boolean().default(true).describe('/api/x -> UPSTREAM/x (true) or UPSTREAM/api/x (false).'),
    rewrite: z
      .strictObject({ from: z.string(), to: z.string() })
      .optional()
      .describe('Regex rewrite of the path (after prefix handling), e.g. { from: "^/v1/(.*)", to: "/$1" }.'),
    changeOrigin: z
      .boolean()
      .default(false)
      .describe('Send the upstream host as Host instead of the client one.'),
    xForwarded: z.boolean().default(true).describe('Send X-Forwarded-For/-Host/-Proto.'),
    forwarded: z.boolean().default(false).describe('Send the RFC 7239 Forwarded header.'),
    via: z.boolean().default(true).describe('Add Via (RFC 9110 §7.6.3) in both directions.'),
    rewriteLocation: z
      .boolean()
      .default(false)
      .describe('Rewrite Location headers that point at the upstream.'),
    rewriteCookies: z
      .boolean()
      .default(false)
      .describe('Rewrite Set-Cookie Domain/Path for the public address.'),
    websocket: z.boolean().default(true).describe('Pass WebSocket upgrades under the prefix through.'),
    maxUpgrades: z
      .number()
      .int()
      .min(1)
      .default(10_000)
      .describe('WebSocket connections open to one upstream at most; more handshakes get 503.'),
    balance: z.enum(['round-robin', 'least-busy']).default('round-robin'),
    timeouts: z
      .strictObject({
        connectMs: z
          .number()
          .int()
          .min(1)
          .default(5000)
          .describe(
            'TCP connect and TLS handshake of a new upstream connection, else 504 (within a few ms).',
          ),
        headersMs: z
          .number()
          .int()
          .min(1)
          .default(30_000)
          .describe(
            'From the request (and its body) sent until the final response head, else 504; 1xx do not ' +
              'restart it (within a few ms).',
          ),
        idleMs: z
          .number()
          .int()
          .min(1)
          .default(60_000)
          .describe(
            'Between body chunks, both ways: a stalled request or response body aborts both sides ' +
              '(within a few ms; not while a slow client holds the upstream paused).',
          ),
        queueMs: z
          .number()
          .int()
          .min(1)
          .default(5000)
          .describe(
            'With maxConnections: how long a request waits for a connection before 503 (within a few ms).',
          ),
      })
      .prefault({}),
    retry: z
      .boolean()
      .default(true)
      .describe('Retry idempotent body-less requests once after a connect failure.'),
    health: z
      .strictObject({
        failures: z
          .number()
          .int()
          .min(1)
          .default(3)
          .describe('Consecutive failures that take an upstream out.'),
        cooldownMs: z.number().int().min(0).default(10_000),
        path: z
          .string()
          .startsWith('/')
          .optional()
          .describe(
            "Active check: GET this path every intervalMs; no answer within intervalMs (undici's 0.5 s " +
              'timer tick: up to ~1 s more) marks the upstream down.',
          ),
        intervalMs: z.number().int().min(100).default(10_000),
      })
      .prefault({}),
    cacheControl: z
      .string()
      .nullable()
      .default('no-store')
      .describe(
        'Cache-Control for responses without one (cachePolicy rules are tried first); null: leave them alone.',
      ),
    connections: z
      .number()
      .int()
      .min(0)
      .default(128)
      .describe(
        'Idle keep-alive connections kept per upstream (like nginx `keepalive`); not a concurrency limit.',
      ),
    maxConnections: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        'Concurrent connections per upstream at most; more requests wait up to timeouts.queueMs, then 503.',
      ),
    bufferBytes: z
      .number()
      .int()
      .min(0)
      .default(64 * 1024)
      .describe('Response bytes held for a slow client before the upstream is paused.'),
    maxBodyBytes: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('Request bodies over this get 413 (default: no limit; nginx uses 1 MiB).'),
    allowTrace: z.boolean().default(false).describe('Forward TRACE upstream (default: 405).'),
    cache: z
      .strictObject({
        enabled: z.boolean().default(false).describe('Keep a shared HTTP cache (RFC 9111) for this route.'),
        store: z
          .enum(['memory', 'disk', 'redis'])
          .default('memory')
          .describe(
            'Where entries live: memory (this process), disk (a folder), or redis (shared by every instance on the top-level redis; needs redis.url).',
          ),
        redis: redisOverrideSchema.optional(),
        dir: z
          .string()
          .min(1)
          .optional()
          .describe('Folder of the disk store (default: a new folder under the OS temp dir).'),
        maxSizeBytes: z
          .number()
          .int()
          .min(1)
          .default(64 * 1024 * 1024)
          .describe('Byte bound of the store; least recently used entries are evicted.'),
        maxEntryBytes: z
          .number()
          .int()
          .min(0)
          .default(8 * 1024 * 1024)
          .describe('Larger responses are passed through, not stored.'),
        memoryCacheBytes: z
          .number()
          .int()
          .min(0)
          .optional()
          .describe(
            'Disk store: bytes of recently used bodies (each up to 1 MiB) also kept in memory, so their hits read no file; redis store: bytes of the in-process tier in front of Redis (kept coherent by pub/sub). Default 16 MiB, 0 turns it off.',
          ),
        heuristicCapSec: z
          .number()
          .int()
          .min(0)
          .optional()
          .describe('Upper bound of heuristic freshness (RFC 9111 §4.2.2); default one day.'),
        coalesce: z
          .boolean()
          .default(true)
          .describe('Concurrent misses and revalidations of one URL wait for a single upstream request.'),
        maxVariants: z
          .number()
          .int()
          .min(1)
          .default(32)
          .describe(
            'Stored variants (Vary, RFC 9111 §4.1) per URL at most; a new one beyond it evicts the least recently used.',
          ),
        maxPiecesPerEntry: z
          .number()
          .int()
          .min(0)
          .default(DEFAULT_MAX_PIECES_PER_ENTRY)
          .describe(
            'Partial responses (206, RFC 9111 §3.3): pieces of one representation kept per entry at most; ' +
              'pieces with the same strong validator are combined, held bytes stay within maxEntryBytes. 0: 206s are not stored.',
          ),
        perUser: z
          .boolean()
          .default(false)
          .describe(
            'Cache responses to requests let through by an auth rule, keyed by the authenticated user ' +
              '(default: such requests bypass the shared cache).',
          ),
        staleIfUnreachableSec: z
          .number()
          .int()
          .min(0)
          .default(300)
          .describe(
            'When the upstream cannot be reached, serve stored responses up to this stale (RFC 9111 §4.2.4), ' +
              'unless they say must-revalidate, proxy-revalidate, s-maxage or no-cache. 0: never.',
          ),
        targets: z
          .array(z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'a header field name'))
          .default(['CDN-Cache-Control', 'Surrogate-Control'])
          .describe(
            'Targeted cache-control fields obeyed instead of Cache-Control and Expires, first present wins ' +
              '(RFC 9213). Surrogate-Control follows the Edge Architecture 1.0 targeting rules.',
          ),
        surrogateToken: z
          .string()
          .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'a token')
          .default('gatehouse')
          .describe('Device token of this cache: `Surrogate-Control: max-age=60;gatehouse` targets it.'),
        statusKey: z
          .boolean()
          .default(false)
          .describe('Add key="<cache key>" to Cache-Status (RFC 9211 §2.7), for debugging.'),
        tagHeader: z
          .string()
          .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'a header field name')
          .default('Cache-Tag')
          .describe(
            'Response field listing purge tags (comma or space separated); removed before the client.',
          ),
        purge: z
          .strictObject({
            allow: z
              .array(ipRangeEntry)
              .default(['loopback'])
              .describe('Client addresses allowed to send PURGE requests.'),
          })
          .prefault({})
          .describe(
            'PURGE under the route prefix only: PREFIX/path, PREFIX/path*, or PREFIX/ with a Cache-Tag header.',
          ),
      })
      .optional()
      .describe('Shared cache of upstream responses (off unless enabled).'),
  })
  .describe('A proxied path prefix.');

export const proxySchema = z.array(proxyRouteSchema).superRefine((routes, ctx) => {
  const seen = new Set<string>();
  routes.forEach((r, i) => {
    if (r.cache && r.cache.maxEntryBytes > r.cache.maxSizeBytes)
      ctx.addIssue({
        code: 'custom',
        path: [i, 'cache', 'maxEntryBytes'],
        message: 'must not exceed maxSizeBytes',
      });
    const p = r.prefix.replace(/\/+$/, '') || '/';
    if (seen.has(p)) ctx.addIssue({ code: 'custom', path: [i, 'prefix'], message: `duplicate prefix ${p}` });
    seen.add(p);
    if (r.rewrite) {
      try {
        new RegExp(r.rewrite.from);
      } catch (err) {
        ctx.addIssue({ code: 'custom', path: [i, 'rewrite', 'from'], message: (err as Error).message });
      }
    }
  });
});

export type ProxyRouteConfig = z.output<typeof proxyRouteSchema>;
