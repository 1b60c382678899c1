// What a Redis outage is reported as, and what is not one (issue 26 §5, "logs that don't mislead"),
// with a real server and a real redis-server: closing the server (app.close()) drops its Redis
// connections on purpose, which is not logged as `redis: unreachable` (it was, on every clean
// shutdown); a redis-server that goes away while serving still is. A proxy-cache miss says
// `detail=storing` (RFC 9211 §2.8) only while the Redis store can write: with Redis down it says
// `detail=store-unavailable` (the put would not be stored).
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { GatehouseConfigInput } from '../../../src/config/schema.js';
import type { Gatehouse } from '../../../src/server/app/gatehouse.js';
import { connectRedis } from '../../../src/server/redis/connection.js';
import { get, makeSite, removeSite } from '../../helpers/http.js';
import { type MemoryLogger, memoryLogger, startLoggedApp } from '../../helpers/log.js';
import { type Origin, origin, text } from '../../helpers/origin.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { waitUntil, waitUntilStored } from '../../helpers/wait.js';

const UNREACHABLE = /redis: unreachable/;

describe('redis outage reporting (real redis-server)', () => {
  let up: Origin;
  let redis: TestRedis;
  let site: string;
  let running: Gatehouse | undefined;
  before(async () => {
    up = await origin({
      '/c': (_q, s, n) => text(s, 200, { 'cache-control': 'max-age=3600' }, `c ${n}`),
      '/down': (_q, s, n) => text(s, 200, { 'cache-control': 'max-age=3600' }, `down ${n}`),
      '/again': (_q, s, n) => text(s, 200, { 'cache-control': 'max-age=3600' }, `again ${n}`),
    });
    redis = await startRedis();
    site = makeSite({ 'index.html': 'static' });
  });
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });
  after(async () => {
    await up.close();
    await redis.close();
    removeSite(site);
  });

  /** A server using Redis for its proxy cache and its rate limit (two features, one connection). */
  const config = (prefix: string): GatehouseConfigInput => ({
    redis: { url: redis.url, keyPrefix: prefix },
    limits: { rateLimit: { requestsPerSec: 1000, burst: 1000, store: 'redis' as const } },
    proxy: [
      {
        prefix: '/',
        upstream: up.url,
        cacheControl: null,
        cache: { enabled: true, store: 'redis' as const },
      },
    ],
  });

  /** Starts a server and waits until its Redis store answers (a miss, then a hit). */
  async function serving(prefix: string, logger: MemoryLogger, path = '/c') {
    const s = await startLoggedApp(config(prefix), logger);
    running = s.app;
    await get(s.url, path);
    await waitUntilStored(s.url, path);
    return s;
  }

  it('app.close() after serving with Redis logs no `redis: unreachable`', async () => {
    const probe = connectRedis({ url: redis.url, keyPrefix: '', logger: memoryLogger() });
    try {
      await waitUntil('probe connected', () => probe.isUp());
      const clients = async () =>
        String(await probe.client.client('LIST'))
          .trim()
          .split('\n').length;
      const alone = await clients();
      const logger = memoryLogger();
      const s = await serving('close-clean:', logger);
      // The server's connections were up and used (a stored entry served from Redis)...
      assert.ok((await clients()) > alone, 'the server is connected to redis-server');
      running = undefined;
      await s.app.close();
      // ...and are gone, as redis-server sees it: the client side's 'close' and 'end' came before.
      await waitUntil('the server disconnected', async () => (await clients()) === alone);
      await new Promise((r) => setImmediate(r));
      assert.doesNotMatch(logger.text(), UNREACHABLE, logger.text());
    } finally {
      await probe.close();
    }
  });

  it('control: redis-server stopped while serving logs `redis: unreachable` once', async () => {
    const logger = memoryLogger();
    await serving('close-control:', logger);
    await redis.stop();
    try {
      await waitUntil('the outage is logged', () => UNREACHABLE.test(logger.text('warn')));
      assert.equal(logger.lines.filter((l) => UNREACHABLE.test(l.msg)).length, 1, logger.text());
    } finally {
      await redis.start();
    }
  });

  it('Cache-Status on a miss: `detail=storing` with Redis up, `detail=store-unavailable` with it down', async () => {
    const logger = memoryLogger();
    const s = await serving('status:', logger);
    const upMiss = await get(s.url, '/again');
    assert.equal(upMiss.headers['cache-status'], 'gatehouse; fwd=uri-miss; fwd-status=200; detail=storing');
    await redis.stop();
    try {
      await waitUntil('the outage is seen', () => UNREACHABLE.test(logger.text('warn')));
      const before = up.count('/down');
      const downMiss = await get(s.url, '/down');
      assert.equal(downMiss.status, 200);
      assert.equal(up.count('/down'), before + 1, 'the miss went upstream');
      const status = String(downMiss.headers['cache-status']);
      assert.doesNotMatch(status, /storing|stored/);
      assert.equal(status, 'gatehouse; fwd=uri-miss; fwd-status=200; detail=store-unavailable');
    } finally {
      await redis.start();
    }
    // Back up: the store writes again, and the miss says so again.
    await waitUntil('storing again', async () =>
      String((await get(s.url, `/down?${Math.random()}`)).headers['cache-status']).endsWith('detail=storing'),
    );
  });
});
