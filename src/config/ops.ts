// Operations: `workers`, `health` and `metrics`. Each is off unless configured, so a
// server without them does no per-request work for them.
import { z } from 'zod';
import { ipRangeEntry } from './access.js';

const targetPath = z
  .string()
  .regex(/^\/[\x21-\x7e]*$/, 'expected a path starting with / (visible ASCII, no query)')
  .refine((p) => !p.includes('?') && !p.includes('#'), 'expected a path without ? or #');

export const workersSchema = z
  .union([z.literal('auto'), z.number().int().min(1).max(256)])
  .describe(
    'Worker processes on one port (node:cluster): a number, or "auto" for os.availableParallelism(). ' +
      '1 runs no primary. Memory and disk stores stay per process: share them through Redis.',
  );

export const healthSchema = z
  .strictObject({
    path: targetPath.default('/healthz').describe('Liveness: 200 while the event loop answers in time.'),
    readyPath: targetPath
      .default('/readyz')
      .describe(
        'Readiness: 503 while draining, while a required store is down, or with memory at its limit ' +
          'after the caches shed (docs/deploy.md, "Memory"); 200 reporting the pressure while they shed.',
      ),
    maxEventLoopDelayMs: z
      .number()
      .int()
      .min(10)
      .max(60_000)
      .default(1000)
      .describe('Liveness answers 503 when the event loop was blocked longer than this in the last second.'),
    requireRedis: z
      .boolean()
      .optional()
      .describe(
        'true: readiness answers 503 while the top-level Redis is down (needs redis.url). ' +
          'Unset: 503 until a configured redis.url has been reached once (a mistyped URL or a Redis not ' +
          'up yet keeps the instance out of the pool); later outages keep it serving. false: Redis is ignored.',
      ),
  })
  .describe('Health endpoints for load balancers; answered before auth and rate limits, never logged.');

export const metricsSchema = z
  .strictObject({
    path: targetPath.default('/metrics').describe('Prometheus text format (prom-client).'),
    allow: z
      .array(ipRangeEntry)
      .default(['loopback'])
      .describe(
        'Client addresses (addresses, CIDRs, loopback, private) that may read the metrics; others get 403. ' +
          'The client address is the one trustProxy yields.',
      ),
  })
  .describe('Prometheus metrics; off unless configured.');

export type HealthConfig = z.output<typeof healthSchema>;
export type MetricsConfig = z.output<typeof metricsSchema>;
