// The one Redis connection features share: the top-level `redis` key. A feature set to
// Redis without it is a config error naming the feature (load.ts).
import { z } from 'zod';

export const redisSchema = z
  .strictObject({
    url: z
      .string()
      .regex(/^rediss?:\/\/[^\s]+$/, 'expected redis://[user:password@]host[:port][/db] or rediss://...')
      .describe('Redis server URL (redis:// or rediss:// for TLS).'),
    keyPrefix: z
      .string()
      .regex(/^[\x21-\x7e]{0,64}$/, 'expected up to 64 visible ASCII characters')
      .default('gatehouse:')
      .describe('Prefix of every key and channel Gatehouse uses, so several sites can share one Redis.'),
  })
  .describe('The Redis server that instances share (proxy cache store, rate limits, WebSocket fan-out).');

export type RedisConfig = z.output<typeof redisSchema>;

/** A feature's own Redis, in place of the top-level one; keyPrefix defaults to the top-level's. */
export const redisOverrideSchema = z
  .strictObject({
    url: redisSchema.shape.url,
    keyPrefix: redisSchema.shape.keyPrefix.unwrap().optional(),
  })
  .describe("This feature's own Redis server, in place of the top-level redis.");
