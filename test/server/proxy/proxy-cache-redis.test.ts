// proxy[].cache.store "redis" (issue 17): two Gatehouse instances sharing one real redis-server. A
// response stored through A is a hit on B; a PURGE on B empties A, its memory tier included; Redis
// stopped or paused mid-run: both keep serving (misses go upstream), and the cache recovers by itself.
// matrix: runtimes (on Bun.serve and Deno.serve too: upstream requests there go through each runtime's fetch path)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectRedis } from '../../../src/server/redis/connection.js';
import { get, makeSite, removeSite, startServer, type TestServer } from '../../helpers/http.js';
import { type Origin, origin, text } from '../../helpers/origin.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { waitUntil, waitUntilGone, waitUntilStored } from '../../helpers/wait.js';

// Behind a load balancer both instances see the same Host: the key (RFC 9111 §4) is the same.
const HOST = { host: 'shared.test' };
const quiet = { info() {}, warn() {}, error() {}, isLevelEnabled: () => false } as never;

describe('proxy cache on redis: two instances', () => {
  let up: Origin;
  let redis: TestRedis;
  let site: string;
  let a: TestServer;
  let b: TestServer;
  before(async () => {
    up = await origin({
      '/fresh': (_q, s, n) => text(s, 200, { 'cache-control': 'max-age=3600' }, `fresh ${n}`),
      '/tagged': (_q, s, n) =>
        text(s, 200, { 'cache-control': 'max-age=3600', 'cache-tag': 'red' }, `tagged ${n}`),
      '/outage': (_q, s, n) => text(s, 200, { 'cache-control': 'max-age=3600' }, `outage ${n}`),
    });
    redis = await startRedis();
    site = makeSite({ 'index.html': 'static' });
    const config = {
      redis: { url: redis.url, keyPrefix: 'gh-proxy-test:' },
      metrics: {},
      proxy: [
        {
          prefix: '/',
          upstream: up.url,
          cacheControl: null,
          cache: { enabled: true, store: 'redis' as const },
        },
      ],
    };
    a = await startServer(site, config);
    b = await startServer(site, config);
  });
  after(async () => {
    await a.close();
    await b.close();
    await up.close();
    await redis.close();
    removeSite(site);
  });

  it('stored through A is a hit on B (the origin is asked once)', async () => {
    const first = await get(a.url, '/fresh', { headers: HOST });
    assert.equal(first.text, 'fresh 1');
    assert.match(String(first.headers['cache-status']), /fwd=uri-miss/);
    await waitUntilStored(a.url, '/fresh', HOST);
    const onB = await get(b.url, '/fresh', { headers: HOST });
    assert.equal(onB.text, 'fresh 1');
    assert.match(String(onB.headers['cache-status']), /^gatehouse; hit/);
    assert.equal(up.count('/fresh'), 1);
  });

  it("B's metrics report the shared store's bytes, which only A wrote", async () => {
    await get(a.url, '/fresh', { headers: HOST });
    await waitUntilStored(a.url, '/fresh', HOST);
    const shared = (await get(b.url, '/metrics')).text
      .split('\n')
      .find((l) => l.startsWith('gatehouse_cache_shared_stored_bytes{route="/"} '));
    const bytes = Number(shared?.split(' ')[1]);
    assert.ok(bytes > 'fresh 1'.length && bytes < 64 * 1024, String(shared));
  });

  it('the stored entry expires in Redis after freshness plus the stale allowance (PEXPIRE)', async () => {
    const c = connectRedis({ url: redis.url, keyPrefix: '', logger: quiet });
    try {
      await waitUntil('connected', () => c.isUp());
      await get(a.url, '/fresh', { headers: HOST });
      const entries = await c.client.keys('gh-proxy-test:cache:*:e:*');
      assert.ok(entries.length > 0);
      for (const k of entries) {
        const ttlMs = await c.client.pttl(k);
        // max-age=3600 plus staleIfUnreachableSec (300, the longest allowance here).
        assert.ok(ttlMs > 3_000_000 && ttlMs <= 3_900_000, `${k}: ${ttlMs}`);
      }
    } finally {
      await c.close();
    }
  });

  it("a PURGE on B empties A, A's memory tier included", async () => {
    await get(a.url, '/tagged', { headers: HOST });
    await waitUntilStored(a.url, '/tagged', HOST);
    // A hit on A: the entry is now in A's memory tier.
    assert.match(String((await get(a.url, '/tagged', { headers: HOST })).headers['cache-status']), /hit/);
    const purge = await get(b.url, '/', { method: 'PURGE', headers: { ...HOST, 'cache-tag': 'red' } });
    assert.equal(purge.status, 200);
    assert.deepEqual(JSON.parse(purge.text), { purged: 1 });
    await waitUntilGone(a.url, '/tagged', HOST);
    const again = await get(a.url, '/tagged', { headers: HOST });
    assert.equal(again.text, 'tagged 2');
  });

  it('Redis stopped mid-run: both keep serving from the origin; restarted: the cache works again', async () => {
    await redis.stop();
    for (const s of [a, b]) {
      const r = await get(s.url, '/outage', { headers: HOST });
      assert.equal(r.status, 200);
      assert.match(r.text, /^outage \d+$/);
    }
    assert.equal(up.count('/outage'), 2, 'misses went upstream');
    await redis.start();
    // Reconnects by itself (the connection's backoff); then stores and shares again.
    await waitUntil('stored again after the outage', async () => {
      await get(a.url, '/outage', { headers: HOST });
      return (await get(b.url, '/outage', { headers: HOST })).headers['cache-status']
        ?.toString()
        .includes('hit');
    });
  });

  it('Redis paused (hung) mid-run: requests still answered from the origin after the command timeout', async () => {
    redis.pause();
    try {
      const r = await get(a.url, '/fresh?paused', { headers: HOST });
      assert.equal(r.status, 200);
    } finally {
      redis.resume();
    }
    await waitUntil('hits again after the pause', async () => {
      await get(a.url, '/fresh?after-pause', { headers: HOST });
      return String(
        (await get(b.url, '/fresh?after-pause', { headers: HOST })).headers['cache-status'],
      ).includes('hit');
    });
  });
});
