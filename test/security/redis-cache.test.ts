// Attacks on the Redis cache store (issue 17), against a real redis-server: request targets built to
// reach other Redis keys (spaces, CR LF, glob characters), bodies meant to fill Redis, and forged
// invalidation messages. User strings only ever become members or sha1 inputs, never key patterns.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { openRedisStore } from '../../src/cache/store/redis.js';
import type { CacheStore } from '../../src/cache/store/types.js';
import { connectRedis, type RedisConnection } from '../../src/server/redis/connection.js';
import { meta, readBody } from '../cache/store/contract.js';
import { get, makeSite, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { type Origin, origin, text } from '../helpers/origin.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { waitUntil } from '../helpers/wait.js';

const quiet = { info() {}, warn() {}, error() {}, isLevelEnabled: () => false } as never;
const PREFIX = 'gh-sec:';
const VICTIM = 'GET https://site.test/account';
const HOSTILE = [
  'GET https://site.test/a b',
  'GET https://site.test/a\r\nDEL gh-sec:*\r\n',
  'GET https://site.test/*',
  'GET https://site.test/[a-z]?',
  'GET https://site.test/\u0000x',
];

describe('redis cache store attacks', () => {
  let redis: TestRedis;
  let conn: RedisConnection;
  let store: CacheStore;
  let neighbour: CacheStore;
  before(async () => {
    redis = await startRedis();
    conn = connectRedis({ url: redis.url, keyPrefix: PREFIX, logger: quiet });
    await waitUntil('connected', () => conn.isUp());
    const o = { maxSizeBytes: 1_000_000, maxEntryBytes: 1_000, redis: conn };
    store = await openRedisStore({ ...o, namespace: randomUUID() });
    neighbour = await openRedisStore({ ...o, namespace: randomUUID() });
  });
  after(async () => {
    await store.close();
    await neighbour.close();
    await conn.close();
    await redis.close();
  });

  it('attack: keys with spaces, CR LF, NUL and glob characters touch no other key', async () => {
    assert.ok((await store.put(VICTIM, meta(), Buffer.from('victim'))).stored);
    assert.ok((await neighbour.put(VICTIM, meta(), Buffer.from('neighbour'))).stored);
    for (const key of HOSTILE) {
      assert.ok((await store.put(key, meta(), Buffer.from('x'))).stored, JSON.stringify(key));
      assert.equal((await store.getVariants(key)).length, 1, JSON.stringify(key));
      await store.delete(key);
      assert.equal(await store.purge({ keyPrefix: key }), 0);
    }
    const [victim] = await store.getVariants(VICTIM);
    assert.equal((await readBody(store, victim!))?.toString(), 'victim');
    assert.equal((await neighbour.getVariants(VICTIM)).length, 1);
    // Every key in Redis is under the prefix: nothing was written outside it.
    const all = await conn.client.keys('*');
    assert.ok(
      all.every((k) => k.startsWith(PREFIX)),
      all.join(' '),
    );
  });

  it('attack: a purge prefix with glob characters (/*, /[a-z]?) is literal, not a pattern', async () => {
    assert.ok((await store.put('GET https://site.test/ab', meta(), Buffer.from('ab'))).stored);
    assert.equal(await store.purge({ keyPrefix: 'GET https://site.test/[a-z]' }), 0);
    assert.equal(await store.purge({ keyPrefix: 'GET https://site.test/*' }), 0);
    assert.equal((await store.getVariants('GET https://site.test/ab')).length, 1);
    assert.equal((await store.getVariants(VICTIM)).length, 1);
  });

  it('attack: purge all on one route leaves the other routes of the same Redis alone', async () => {
    assert.ok((await neighbour.put(VICTIM, meta(), Buffer.from('n'))).stored);
    await store.purge({ all: true });
    assert.equal((await neighbour.getVariants(VICTIM)).length, 1);
  });

  it('attack: a body over maxEntryBytes is not stored (nothing written to Redis)', async () => {
    const before = await conn.client.dbsize();
    const r = await store.put('GET https://site.test/huge', meta(), new Uint8Array(1_001));
    assert.deepEqual(r, { stored: false, reason: 'too-large' });
    assert.equal(await conn.client.dbsize(), before);
  });

  it('attack: many large Vary variants of one URL -> a lookup does not pull every body from Redis', async () => {
    const big = await openRedisStore({
      maxSizeBytes: 10_000_000,
      maxEntryBytes: 1_000_000,
      redis: conn,
      namespace: randomUUID(),
      memoryTierBytes: 0,
    });
    try {
      const key = 'GET https://site.test/big';
      for (const lang of ['en', 'fr', 'de']) {
        const m = {
          ...meta({ varyKey: lang }),
          response: { ...meta().response, headers: { vary: 'accept-language' } },
        };
        assert.ok((await big.put(key, m, new Uint8Array(600_000).fill(0x61))).stored);
      }
      const variants = await big.getVariants(key);
      assert.equal(variants.length, 3);
      // 1.8 MB of bodies: the lookup read metadata only; a body is read when it is opened.
      for (const v of variants) assert.equal(big.openBodySync?.(v), undefined);
      assert.equal((await readBody(big, variants[0]!))?.byteLength, 600_000);
    } finally {
      await big.close();
    }
  });

  it('attack: forged or garbled invalidation messages are ignored without harm', async () => {
    assert.ok((await store.put(VICTIM, meta(), Buffer.from('victim'))).stored);
    // The store subscribes in the background once it starts: wait for its channel.
    const channels = await waitUntil('the store subscribed', async () => {
      const c = (await conn.client.pubsub('CHANNELS', `${PREFIX}*`)) as string[];
      return c.length > 0 ? c : undefined;
    });
    for (const channel of channels) {
      for (const m of ['not json', '{"k":"x"}', '{"k":[1,{}]}', 'null', '{"a":"1","i":"1"}', '[]']) {
        await conn.client.publish(channel, m);
      }
    }
    // Still answers, and the entry is still in Redis.
    assert.equal((await store.getVariants(VICTIM)).length, 1);
  });
});

describe('redis cache through the proxy: attacks', () => {
  let up: Origin;
  let redis: TestRedis;
  let site: string;
  let gh: TestServer;
  before(async () => {
    up = await origin({
      '/huge': (_q, s, n) => text(s, 200, { 'cache-control': 'max-age=3600' }, `${n}`.padEnd(50_000, 'x')),
    });
    redis = await startRedis();
    site = makeSite({ 'index.html': 'static' });
    gh = await startServer(site, {
      redis: { url: redis.url },
      proxy: [
        {
          prefix: '/',
          upstream: up.url,
          cacheControl: null,
          cache: { enabled: true, store: 'redis', maxEntryBytes: 10_000 },
        },
      ],
    });
  });
  after(async () => {
    await gh.close();
    await up.close();
    await redis.close();
    removeSite(site);
  });

  it('attack: a huge upstream body (over maxEntryBytes) is passed through, never stored in Redis', async () => {
    for (let i = 1; i <= 2; i++) {
      const r = await get(gh.url, '/huge');
      assert.equal(r.body.byteLength, 50_000);
      assert.ok(r.text.startsWith(String(i)), 'each request went upstream');
    }
    const c = connectRedis({ url: redis.url, keyPrefix: '', logger: quiet });
    try {
      await waitUntil('connected', () => c.isUp());
      const entries = (await c.client.keys('*:e:*')).length;
      assert.equal(entries, 0);
    } finally {
      await c.close();
    }
  });
});
