// Access, limits and header config: `trustProxy`, `limits.rateLimit`, `auth`, `headers`.
// Semantic checks and defaults come from the steps' options modules (authRulesIssues, headerRuleIssues,
// through src/server/index.ts) and src/http (parseIpRange), so the config file and library callers
// refuse the same things; issues name the key (auth[0].allow[1]).
import { z } from 'zod';
import { parseIpRange } from '../http/ip.js';
import {
  authRulesIssues,
  DEFAULT_REALM,
  FAILURE_DEFAULTS,
  headerRuleIssues,
  RATE_LIMIT_DEFAULTS,
} from '../server/index.js';
import { redisOverrideSchema } from './redis.js';

export const ipRangeEntry = z
  .string()
  .min(1)
  .superRefine((entry, ctx) => {
    const r = parseIpRange(entry);
    if (r.kind === 'invalid') ctx.addIssue({ code: 'custom', message: r.reason, input: entry });
  });

export const trustProxySchema = z
  .array(ipRangeEntry)
  .describe(
    'Proxies whose X-Forwarded-For is believed: addresses, CIDRs (IPv4, IPv6, ::ffff:a.b.c.d/n) or ' +
      'loopback, private, linklocal. The client address is the first untrusted hop, read right to left ' +
      'from the socket peer; a peer not listed is the client and its forwarding headers are ignored.',
  );

/** Not in schema.ts yet: `forwardedHeader: forwardedHeaderSchema.default('x-forwarded-for')`. */
export const forwardedHeaderSchema = z
  .enum(['x-forwarded-for', 'forwarded'])
  .describe(
    'The header your trusted proxies write: x-forwarded-for (nginx, HAProxy, Envoy, cloud load balancers) ' +
      'or forwarded (RFC 7239). Only that one is read; a client could forge the other.',
  );

export const rateLimitSchema = z
  .strictObject({
    requestsPerSec: z
      .number()
      .positive()
      .describe('Sustained requests per second per client (a token bucket refill rate; 0.5 = one per 2 s).'),
    burst: z
      .number()
      .int()
      .min(1)
      .describe('Requests a client may make at once after being idle (bucket size).'),
    paths: z
      .array(z.string().min(1))
      .optional()
      .describe('URL path globs that count (* within a segment, ** across segments). Default: every path.'),
    maxClients: z
      .number()
      .int()
      .min(1)
      .default(RATE_LIMIT_DEFAULTS.maxClients)
      .describe(
        'Client buckets kept in memory (least recently used dropped first; a dropped bucket starts full).',
      ),
    ipv6PrefixLength: z
      .number()
      .int()
      .min(1)
      .max(128)
      .default(RATE_LIMIT_DEFAULTS.ipv6PrefixLength)
      .describe('IPv6 clients share one bucket per prefix of this length (a host usually owns a /64).'),
    store: z
      .enum(['memory', 'redis'])
      .default('memory')
      .describe(
        'Where the buckets live: memory (this process) or redis (the top-level redis, shared by every ' +
          'instance on it: a client is counted once across all of them, on the Redis clock).',
      ),
    redis: redisOverrideSchema.optional(),
    redisDown: z
      .enum(['open', 'closed'])
      .default('open')
      .describe(
        'With store redis, while Redis is down or slower than redisTimeoutMs: open lets requests ' +
          'through without rate-limit fields; closed answers 503 with Retry-After: 1.',
      ),
    redisTimeoutMs: z
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(RATE_LIMIT_DEFAULTS.redisTimeoutMs)
      .describe('With store redis: a bucket call slower than this counts as Redis down (redisDown applies).'),
  })
  .describe(
    'Per-client rate limit: 429 with Retry-After beyond it; RateLimit and RateLimit-Policy fields ' +
      '(draft-ietf-httpapi-ratelimit-headers-11) on every counted response.',
  );

const authRuleSchema = z
  .strictObject({
    prefix: z
      .string()
      .min(1)
      .describe(
        'URL path prefix, matched by whole segments on the decoded path, ignoring case (/admin covers /admin/x, /ADMIN/x).',
      ),
    basic: z
      .strictObject({
        realm: z.string().optional().describe(`Realm shown by browsers (default "${DEFAULT_REALM}").`),
        users: z
          .record(z.string(), z.string())
          .describe('user-id -> scrypt hash from `gatehouse hash-password`; plaintext is refused.'),
        maxFailures: z
          .number()
          .int()
          .min(1)
          .max(86_400)
          .optional()
          .describe(
            `Failed logins a client address (IPv6: its /64) may make per window; beyond them 429 with ` +
              `Retry-After, without checking, until the window ends; a success resets the count ` +
              `(default ${FAILURE_DEFAULTS.maxFailures}).`,
          ),
        failureWindowSec: z
          .number()
          .int()
          .min(1)
          .max(86_400)
          .optional()
          .describe(
            `The failure window in seconds, from a client's first failure (default ${FAILURE_DEFAULTS.failureWindowSec}).`,
          ),
      })
      .optional()
      .describe('HTTP Basic authentication (RFC 7617); answers 401 with a challenge until it succeeds.'),
    allow: z
      .array(z.string().min(1))
      .optional()
      .describe('Client addresses, CIDRs or keywords allowed (others get 403).'),
    deny: z
      .array(z.string().min(1))
      .optional()
      .describe('Client addresses, CIDRs or keywords refused with 403; deny wins over allow.'),
  })
  .describe('One access rule; the first rule whose prefix matches decides.');

export const authSchema = z
  .array(authRuleSchema)
  .superRefine((rules, ctx) => {
    for (const issue of authRulesIssues(rules)) {
      ctx.addIssue({ code: 'custom', path: [...issue.path], message: issue.message, input: undefined });
    }
  })
  .describe(
    'Ordered access rules by path prefix: IP allow/deny lists and Basic auth. Responses under a rule ' +
      'are sent Cache-Control: private.',
  );

const headerMapSchema = z.record(z.string(), z.string());

const headerRuleSchema = z
  .strictObject({
    glob: z
      .union([z.string(), z.array(z.string())])
      .optional()
      .describe('URL path glob(s); default every path.'),
    set: headerMapSchema.optional().describe('Headers to set (a later rule replaces an earlier value).'),
    append: headerMapSchema.optional().describe('Headers to add as another field line.'),
    remove: z
      .array(z.string())
      .optional()
      .describe('Headers an earlier rule or preset set, dropped for these paths.'),
    preset: z
      .enum(['security'])
      .optional()
      .describe(
        'security: X-Content-Type-Options nosniff, Referrer-Policy strict-origin-when-cross-origin, ' +
          'X-Frame-Options SAMEORIGIN, and Strict-Transport-Security (1 year, subdomains) on HTTPS only.',
      ),
  })
  .superRefine((rule, ctx) => {
    for (const issue of headerRuleIssues(rule)) {
      ctx.addIssue({ code: 'custom', path: [...issue.path], message: issue.message, input: undefined });
    }
  })
  .describe('One header rule; every matching rule applies, in order.');

export const headersSchema = z
  .array(headerRuleSchema)
  .describe('Response headers by path, on every response including errors.');

export type RateLimitConfig = z.output<typeof rateLimitSchema>;
export type AuthRuleConfig = z.output<typeof authRuleSchema>;
export type HeaderRuleConfig = z.output<typeof headerRuleSchema>;
