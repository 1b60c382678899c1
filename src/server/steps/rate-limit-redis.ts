// The rate limit's buckets in Redis (`limits.rateLimit.store: "redis"`), so every instance
// on one Redis counts a client together. One Lua script refills and takes atomically, on Redis's own
// clock (TIME), so instances whose clocks disagree still agree on the bucket; a bucket's key expires
// when the bucket would be full again (a missing bucket is a full one, as in http/rate-limit.ts).
// The script returns the refilled token count and http/rate-limit.ts makes the same decision from
// it, so the RateLimit / Retry-After fields are those of the in-process store.
import { type TakeResult, type TokenBucketPolicy, takeToken } from '../../http/rate-limit.js';
import type { Logger } from '../ops/log.js';
import type { RedisConnection } from '../redis/connection.js';

/** The command name on the shared client (ioredis defineCommand: EVALSHA, EVAL on NOSCRIPT). */
const COMMAND = 'gatehouseTakeToken';

// KEYS[1] bucket; ARGV rate per s, burst, cost. Returns { allowed 0|1, refilled tokens as a string
// (%.17g round-trips a double; a Lua number reply would be truncated to an integer) }.
// Redis >= 5 replicates a script's effects, not the script, so TIME is allowed before writes.
const TAKE_TOKEN_LUA = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local s = redis.call('HMGET', KEYS[1], 't', 'u')
local tokens = burst
if s[1] and s[2] then
  local elapsed = math.max(0, now - tonumber(s[2])) / 1000
  tokens = math.min(burst, tonumber(s[1]) + elapsed * rate)
end
local left = tokens
local allowed = 0
if tokens + 1e-9 >= cost then
  left = math.max(0, tokens - cost)
  allowed = 1
end
redis.call('HSET', KEYS[1], 't', string.format('%.17g', left), 'u', string.format('%.17g', now))
redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil((burst - left) / rate * 1000)))
return { allowed, string.format('%.17g', tokens) }
`;

type TakeCommand = (key: string, rate: number, burst: number, cost: number) => Promise<[number, string]>;

export interface RedisBucketStore {
  /** The decision for the bucket `clientKey`, or undefined when Redis is down or slower than the timeout. */
  take(clientKey: string): Promise<TakeResult | undefined>;
}

const TIMED_OUT = Symbol('timed out');

export function createRedisBucketStore(o: {
  conn: RedisConnection;
  policy: TokenBucketPolicy;
  timeoutMs: number;
  logger: Logger;
}): RedisBucketStore {
  const { conn, policy, timeoutMs, logger } = o;
  const client = conn.client as unknown as Record<string, TakeCommand | undefined>;
  if (client[COMMAND] === undefined) {
    conn.client.defineCommand(COMMAND, { numberOfKeys: 1, lua: TAKE_TOKEN_LUA });
  }
  const run = client[COMMAND]!.bind(conn.client);
  // A hung Redis keeps its TCP connection, so the connection does not see an outage: the store logs
  // the first call that timed out and the first that answered after it (once each way, not per
  // request). While it is slow, one call at a time probes it and the others fall back at once, so a
  // hung Redis neither piles up commands nor costs every request the timeout.
  let slow = false;
  let probing = false;
  const call = (key: string): Promise<[number, string] | typeof TIMED_OUT> => {
    let timer: NodeJS.Timeout | undefined;
    const pending = run(key, policy.ratePerSec, policy.burst, 1);
    return Promise.race([
      pending,
      new Promise<typeof TIMED_OUT>((resolve) => {
        timer = setTimeout(resolve, timeoutMs, TIMED_OUT);
      }),
    ]).finally(() => {
      clearTimeout(timer);
      // The late answer (or failure) of a call that timed out is dropped.
      pending.catch(() => {});
    });
  };
  const probe = async (key: string): Promise<[number, string] | typeof TIMED_OUT> => {
    probing = true;
    try {
      return await call(key);
    } finally {
      probing = false;
    }
  };
  return {
    async take(clientKey) {
      if (!conn.isUp() || (slow && probing)) return undefined;
      let reply: [number, string] | typeof TIMED_OUT;
      try {
        reply = await (slow ? probe : call)(conn.key('rl', clientKey));
      } catch {
        // Refused at once: the connection has just gone down and logs it.
        return undefined;
      }
      if (reply === TIMED_OUT) {
        if (!slow && conn.isUp()) {
          slow = true;
          logger.warn(
            { timeoutMs },
            'rate limit: redis did not answer in time; redisDown applies until it does',
          );
        }
        return undefined;
      }
      if (slow) {
        slow = false;
        logger.info({}, 'rate limit: redis answering in time again');
      }
      const tokens = Number(reply[1]);
      // The script took the token when tokens + 1e-9 >= 1: takeToken on the refilled count decides
      // the same (elapsed 0) and gives the fields.
      return takeToken({ tokens, updatedMs: 0 }, policy, 0);
    },
  };
}
