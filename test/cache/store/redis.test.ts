// The CacheStore contract over the Redis store (issue 17), against a real redis-server: with the
// memory tier in front (the default) and with every read going to Redis. Plus what only a shared
// store does: two stores on one Redis see each other's puts and purges, tiers included.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { EntryCache } from '../../../src/cache/store/entry-cache.js';
import { openRedisCache, type RedisStoreOptions } from '../../../src/cache/store/redis.js';
import { connectRedis, type RedisConnection } from '../../../src/server/redis/connection.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { waitUntil } from '../../helpers/wait.js';
import { bytes, meta, readBody, storeContract } from './contract.js';

const quiet = { info() {}, warn() {}, error() {}, isLevelEnabled: () => false };
let redis: TestRedis;
let conn: RedisConnection;
const ready = (async () => {
  redis = await startRedis();
  conn = connectRedis({ url: redis.url, keyPrefix: 'gh-store-test:', logger: quiet as never });
  await waitUntil('redis connected', () => conn.isUp());
})();
before(() => ready);
after(async () => {
  await conn?.close();
  await redis?.close();
});

for (const [label, extra] of [
  ['redis', {}],
  ['redis without memory tier', { memoryTierBytes: 0 }],
] as const) {
  storeContract(label, async (options) => {
    await ready;
    return {
      store: await openRedisCache({ ...options, ...extra, redis: conn, namespace: randomUUID() }),
      async cleanup() {},
    };
  });
}

async function pair(
  extra: Partial<RedisStoreOptions> = {},
): Promise<[EntryCache, EntryCache, () => Promise<void>]> {
  await ready;
  const namespace = randomUUID();
  // Two connections: two instances, as two Gatehouse processes would have.
  const other = connectRedis({ url: redis.url, keyPrefix: 'gh-store-test:', logger: quiet as never });
  await waitUntil('second connection', () => other.isUp());
  const base = { maxSizeBytes: 1_000_000, maxEntryBytes: 100_000, namespace, ...extra };
  const a = await openRedisCache({ ...base, redis: conn });
  const b = await openRedisCache({ ...base, redis: other });
  return [
    a,
    b,
    async () => {
      await a.close();
      await b.close();
      await other.close();
    },
  ];
}

const KEY = 'GET https://example.test/shared';

describe('redis store: shared between instances', () => {
  it('stored through A is found on B, body included', async () => {
    const [a, b, done] = await pair();
    try {
      const put = await a.put(KEY, meta(), Buffer.from('shared'));
      assert.ok(put.stored);
      const [found] = await b.getVariants(KEY);
      assert.equal(found?.id, put.entry.id);
      assert.equal((await readBody(b, found!))?.toString(), 'shared');
      assert.equal(b.sizeBytes(), a.sizeBytes());
    } finally {
      await done();
    }
  });

  it("a delete on B empties A's memory tier (pub/sub invalidation)", async () => {
    const [a, b, done] = await pair();
    try {
      assert.ok((await a.put(KEY, meta(), bytes(10))).stored);
      assert.equal((await a.getVariants(KEY)).length, 1); // now in A's tier
      await b.delete(KEY);
      await waitUntil("A's tier dropped the key", async () => (await a.getVariants(KEY)).length === 0);
    } finally {
      await done();
    }
  });

  it('a purge by tag on B while a put streams on A -> the put is invalidated', async () => {
    const [a, b, done] = await pair();
    try {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      async function* slow() {
        yield bytes(10);
        await gate;
        yield bytes(10);
      }
      // A marker key in A's tier: B's messages arrive in order, so once A drops the marker, A has
      // also seen the purge published before it.
      const MARK = 'GET https://example.test/marker';
      assert.ok((await a.put(MARK, meta(), bytes(1))).stored);
      assert.equal((await a.getVariants(MARK)).length, 1);
      const pending = a.put(KEY, meta({ tags: ['t1'] }), slow());
      await new Promise((r) => setImmediate(r));
      await b.purge({ tag: 't1' });
      await b.delete(MARK);
      await waitUntil('A saw the purge', async () => (await a.getVariants(MARK)).length === 0);
      release();
      const results = [await pending];
      assert.deepEqual(results[0], { stored: false, reason: 'invalidated' });
      assert.deepEqual(await b.getVariants(KEY), []);
    } finally {
      await done();
    }
  });

  it('an entry expires in Redis after discardAfterMs (PEXPIRE)', async () => {
    const [a, b, done] = await pair({ memoryTierBytes: 0 });
    try {
      const put = await a.put(KEY, meta({ discardAfterMs: Date.now() + 50 }), bytes(10));
      assert.ok(put.stored);
      await waitUntil('expired in redis', async () =>
        (await conn.client.keys('gh-store-test:cache:*:e:*')).every((k) => !k.endsWith(put.entry.id)),
      );
      assert.deepEqual(await b.getVariants(KEY), []);
    } finally {
      await done();
    }
  });
});

describe('redis store: outage', () => {
  it('Redis stopped: lookups miss, puts resolve unavailable, delete resolves (nothing throws, so the proxy logs nothing); back: works again', async () => {
    await ready;
    const store = await openRedisCache({
      maxSizeBytes: 1_000_000,
      maxEntryBytes: 100_000,
      redis: conn,
      namespace: randomUUID(),
    });
    try {
      assert.ok((await store.put(KEY, meta(), bytes(10))).stored);
      await redis.stop();
      await waitUntil('seen down', () => !conn.isUp());
      assert.deepEqual(await store.getVariants(KEY), []);
      assert.deepEqual(await store.put(KEY, meta(), bytes(10)), { stored: false, reason: 'unavailable' });
      await store.delete(KEY);
      assert.equal(await store.updateMeta(KEY, 'x', meta()), null);
      await assert.rejects(store.purge({ all: true }), 'a purge must not look done');
      await redis.start();
      await waitUntil('back up', () => conn.isUp());
      assert.ok((await store.put(KEY, meta(), bytes(10))).stored);
      assert.equal((await store.getVariants(KEY)).length, 1);
    } finally {
      await store.close();
    }
  });
});
