// limits.rateLimit.store "redis" (issue 17) against a real redis-server: two Gatehouse instances on
// one Redis count a client together with the same fields as the in-process store; Redis stopped ->
// open or closed as configured, then recovery; a hung Redis (SIGSTOP) logged once each way; the
// script survives SCRIPT FLUSH (EVALSHA falls back to EVAL); keys expire when the bucket is full again.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { ConfigError, parseConfig } from '../../../src/config/load.js';
import { serveSteps } from '../../../src/server/index.js';
import type { StepContext } from '../../../src/server/node/types.js';
import { connectRedis, type RedisConnection } from '../../../src/server/redis/connection.js';
import { createRedisPool, type RedisPool } from '../../../src/server/redis/pool.js';
import { createRateLimit, type LimitsOptions } from '../../../src/server/steps/limits.js';
import { createRedisBucketStore } from '../../../src/server/steps/rate-limit-redis.js';
import {
  get,
  makeSite,
  type Res,
  removeSite,
  startServer,
  type TestServer,
  wsTarget,
} from '../../helpers/http.js';
import { memoryLogger } from '../../helpers/log.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { waitUntil } from '../../helpers/wait.js';

// 0.1 tokens/s: nothing refills while a test runs, however slow the machine.
const SLOW = { requestsPerSec: 0.1, burst: 3 };

const from = (localAddress: string) => ({ localAddress, headers: { accept: 'application/json' } });

describe('rate limit store redis (real redis-server)', () => {
  let redis: TestRedis;
  let dir: string;
  let a: TestServer;
  let b: TestServer;
  let closedA: TestServer;
  let probe: RedisConnection;
  before(async () => {
    redis = await startRedis();
    dir = makeSite({ 'index.html': '<!doctype html><title>x</title>' });
    const config = (redisDown: 'open' | 'closed') => ({
      redis: { url: redis.url },
      limits: { rateLimit: { ...SLOW, store: 'redis' as const, redisDown } },
    });
    [a, b, closedA] = await Promise.all([
      startServer(dir, config('open')),
      startServer(dir, config('open')),
      startServer(dir, config('closed')),
    ]);
    probe = connectRedis({ url: redis.url, keyPrefix: 'gatehouse:', logger: memoryLogger() });
    await waitUntil('probe connected', () => probe.isUp());
    // Every instance counts (its connection is up) before the tests run.
    for (const s of [a, b, closedA])
      await waitUntil(
        'instance counting',
        async () => (await get(s.url, '/', from('127.0.0.99'))).headers.ratelimit,
      );
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close(), closedA?.close()]);
    await probe?.close();
    await redis?.close();
    removeSite(dir);
  });

  it('two instances count together: the burst used through A and B, the next request on B -> 429', async () => {
    const addr = '127.0.0.21';
    const seen: Res[] = [];
    for (const s of [a, b, a]) seen.push(await get(s.url, '/', from(addr)));
    assert.deepEqual(
      seen.map((r) => [
        r.status,
        String(r.headers.ratelimit).replace(/;t=\d+$/, ''),
        r.headers['ratelimit-policy'],
      ]),
      [
        [200, '"default";r=2', '"default";q=3;w=30'],
        [200, '"default";r=1', '"default";q=3;w=30'],
        [200, '"default";r=0', '"default";q=3;w=30'],
      ],
    );
    const limited = await get(b.url, '/', from(addr));
    assert.equal(limited.status, 429);
    const retry = Number(limited.headers['retry-after']);
    assert.ok(Number.isInteger(retry) && retry >= 1, `Retry-After ${retry}`);
    // The same fields as the in-process store: r=0 and t equal to Retry-After on a refusal.
    assert.equal(limited.headers.ratelimit, `"default";r=0;t=${retry}`);
    assert.equal(limited.headers['ratelimit-policy'], '"default";q=3;w=30');
    assert.equal(JSON.parse(limited.text).code, 'too_many_requests');
    // Another client is not affected.
    assert.equal((await get(a.url, '/', from('127.0.0.22'))).status, 200);
  });

  it('the bucket key expires when the bucket would be full again (no later than burst / rate)', async () => {
    await get(a.url, '/', from('127.0.0.23'));
    const ttlMs = await probe.client.pttl('gatehouse:rl:127.0.0.23');
    // One token taken at 0.1/s: full again in 10 s.
    assert.ok(ttlMs > 0 && ttlMs <= 10_000, `PTTL ${ttlMs}`);
    const state = await probe.client.hgetall('gatehouse:rl:127.0.0.23');
    assert.equal(Number(state.t), 2);
  });

  it('SCRIPT FLUSH (a restarted Redis has no scripts): EVALSHA falls back to EVAL, counting goes on', async () => {
    await probe.client.script('FLUSH');
    const r = await get(a.url, '/', from('127.0.0.24'));
    assert.equal(r.status, 200);
    assert.match(String(r.headers.ratelimit), /^"default";r=2;t=\d+$/);
  });

  it('Redis stopped: open lets every request through without fields, closed -> 503 Retry-After: 1; both recover', async () => {
    await redis.stop();
    const addr = '127.0.0.25';
    // Open: the request is not counted and carries no rate-limit fields (nothing was decided).
    await waitUntil(
      'open while down',
      async () => (await get(a.url, '/', from(addr))).headers.ratelimit === undefined,
    );
    for (let i = 0; i < 5; i++) {
      const r = await get(a.url, '/', from(addr));
      assert.equal(r.status, 200);
      assert.equal(r.headers.ratelimit, undefined);
      assert.equal(r.headers['ratelimit-policy'], undefined);
    }
    // Closed: 503 (the server cannot check the limit; not the client's fault) with Retry-After.
    const down = await waitUntil('closed while down', async () => {
      const r = await get(closedA.url, '/', from(addr));
      return r.status === 503 ? r : undefined;
    });
    assert.equal(down.headers['retry-after'], '1');
    assert.equal(down.headers.ratelimit, undefined);
    assert.equal(JSON.parse(down.text).code, 'service_unavailable');

    await redis.start();
    // Recovery: counted again (the restarted Redis is empty, so the bucket starts full).
    await waitUntil(
      'open counting again',
      async () => (await get(a.url, '/', from('127.0.0.98'))).headers.ratelimit,
    );
    await waitUntil(
      'closed counting again',
      async () => (await get(closedA.url, '/', from('127.0.0.98'))).status === 200,
    );
    const after: number[] = [];
    for (let i = 0; i < 4; i++)
      after.push((await get(i % 2 ? b.url : closedA.url, '/', from('127.0.0.26'))).status);
    assert.deepEqual(after, [200, 200, 200, 429]);
  });
});

describe('rate limit store redis: WebSocket handshakes', () => {
  let redis: TestRedis;
  let dir: string;
  let s: TestServer;
  before(async () => {
    redis = await startRedis();
    dir = makeSite({ 'index.html': 'x' });
    s = await startServer(dir, {
      redis: { url: redis.url },
      limits: { rateLimit: { ...SLOW, store: 'redis' } },
      websocket: [{ path: '/ws', mode: 'echo' }],
    });
    await waitUntil('counting', async () => (await get(s.url, '/', from('127.0.0.97'))).headers.ratelimit);
  });
  after(async () => {
    await s?.close();
    await redis?.close();
    removeSite(dir);
  });

  it('each handshake takes a token through the awaited Redis step; over the burst -> 429, the switch still works', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const { url, options } = wsTarget(s, '/ws');
      const ws = new WebSocket(url, { ...options, localAddress: '127.0.0.41' });
      statuses.push(
        await new Promise<number>((resolve, reject) => {
          ws.once('open', () => {
            ws.send('hi');
            ws.once('message', () => {
              ws.close();
              resolve(101);
            });
          });
          ws.once('unexpected-response', (_req, res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          });
          ws.once('error', reject);
        }),
      );
    }
    assert.deepEqual(statuses, [101, 101, 101, 429]);
  });
});

describe('rate limit store redis: skewed instance clocks', () => {
  let redis: TestRedis;
  let pool: RedisPool;
  let server: Server;
  let url: string;
  before(async () => {
    redis = await startRedis();
    const logger = memoryLogger();
    pool = createRedisPool({ url: redis.url, keyPrefix: 'skew:' }, logger);
    const ctx: StepContext = { logger, clientAddress: () => '192.0.2.50', redis: pool };
    const limits = { rateLimit: { ...SLOW, store: 'redis' } } as LimitsOptions;
    // Two instances whose clocks are two hours apart: were the local clock used, the one ahead
    // would see a full bucket again on every request.
    const steps = {
      behind: createRateLimit(limits, ctx, { nowMs: () => Date.now() - 3_600_000 })!,
      ahead: createRateLimit(limits, ctx, { nowMs: () => Date.now() + 3_600_000 })!,
    };
    server = createServer(
      serveSteps(
        [(req, res, cx) => (req.url === '/ahead' ? steps.ahead : steps.behind)(req, res, cx)],
        (_req, res) => res.end('ok'),
      ),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await waitUntil('connected', () => pool.get().isUp());
  });
  after(async () => {
    await new Promise((r) => server.close(r));
    await pool.close();
    await redis.close();
  });

  it('instances two hours apart share one bucket on the Redis clock: ahead, behind, ahead, behind -> 429 last', async () => {
    const got: number[] = [];
    for (const p of ['/ahead', '/behind', '/ahead', '/behind']) got.push((await get(url, p)).status);
    assert.deepEqual(got, [200, 200, 200, 429]);
  });
});

describe('redis bucket store: a hung Redis (SIGSTOP)', () => {
  let redis: TestRedis;
  let conn: RedisConnection;
  const log = memoryLogger();
  before(async () => {
    redis = await startRedis();
    conn = connectRedis({ url: redis.url, keyPrefix: 'gh-rl:', logger: log });
    await waitUntil('connected', () => conn.isUp());
  });
  after(async () => {
    redis.resume();
    await conn.close();
    await redis.close();
  });

  it('calls time out (undefined: redisDown applies); logged once when it starts and once when it ends', async () => {
    const store = createRedisBucketStore({
      conn,
      policy: { ratePerSec: 0.1, burst: 2 },
      timeoutMs: 50,
      logger: log,
    });
    assert.equal((await store.take('192.0.2.1'))?.kind, 'allowed');
    redis.pause();
    for (let i = 0; i < 5; i++) assert.equal(await store.take('192.0.2.1'), undefined);
    assert.deepEqual(
      log.lines.filter((l) => l.level === 'warn').map((l) => l.msg),
      ['rate limit: redis did not answer in time; redisDown applies until it does'],
    );
    redis.resume();
    const r = await waitUntil('answering again', () => store.take('192.0.2.2'));
    assert.equal(r.kind, 'allowed');
    assert.deepEqual(
      log.lines.filter((l) => l.level === 'info').map((l) => l.msg),
      ['rate limit: redis answering in time again'],
    );
    assert.equal(log.lines.filter((l) => l.level === 'warn').length, 1);
  });

  it('while hung, one call probes and the others fall back at once: commands do not pile up per request', async () => {
    const store = createRedisBucketStore({
      conn,
      policy: { ratePerSec: 0.1, burst: 2 },
      timeoutMs: 50,
      logger: log,
    });
    assert.equal((await store.take('192.0.2.3'))?.kind, 'allowed');
    redis.pause();
    try {
      assert.equal(await store.take('192.0.2.3'), undefined); // times out: now slow
      const before = conn.client.commandQueue.length;
      const many = await Promise.all(Array.from({ length: 200 }, (_, i) => store.take(`192.0.2.${i}`)));
      assert.ok(many.every((r) => r === undefined));
      // One probe at a time for 200 requests, not 200 commands sent into the hung server.
      assert.ok(
        conn.client.commandQueue.length - before <= 1,
        `${conn.client.commandQueue.length - before} queued`,
      );
    } finally {
      redis.resume();
    }
    await waitUntil('answering again', () => store.take('192.0.2.4'));
  });
});

describe('rate limit store redis: config', () => {
  it('store redis without the top-level redis -> ConfigError naming the key', () => {
    assert.throws(
      () => parseConfig({ limits: { rateLimit: { ...SLOW, store: 'redis' } } }),
      (e: Error) =>
        e instanceof ConfigError &&
        /limits\.rateLimit\.store: "redis" needs the top-level redis\.url/.test(e.message),
    );
  });

  it('defaults: store memory, redisDown open, redisTimeoutMs 50', () => {
    const c = parseConfig({ limits: { rateLimit: SLOW } });
    assert.equal(c.limits.rateLimit?.store, 'memory');
    assert.equal(c.limits.rateLimit?.redisDown, 'open');
    assert.equal(c.limits.rateLimit?.redisTimeoutMs, 50);
  });

  it('redisDown other than open|closed -> an issue naming the key', () => {
    assert.throws(
      () =>
        parseConfig({
          redis: { url: 'redis://127.0.0.1:1' },
          limits: { rateLimit: { ...SLOW, redisDown: 'maybe' } },
        }),
      /limits\.rateLimit\.redisDown/,
    );
  });
});
