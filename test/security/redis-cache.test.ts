// Attacks on the Redis cache store (issue 17), against a real redis-server: request targets built to
// reach other Redis keys (spaces, CR LF, glob characters), bodies meant to fill Redis, and forged
// invalidation messages. User strings only ever become members or sha1 inputs, never key patterns.
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { EntryCache } from '../../src/cache/store/entry-cache.js';
import { openRedisCache } from '../../src/cache/store/redis.js';
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
  let store: EntryCache;
  let neighbour: EntryCache;
  before(async () => {
    redis = await startRedis();
    conn = connectRedis({ url: redis.url, keyPrefix: PREFIX, logger: quiet });
    await waitUntil('connected', () => conn.isUp());
    const o = { maxSizeBytes: 1_000_000, maxEntryBytes: 1_000, redis: conn };
    store = await openRedisCache({ ...o, namespace: randomUUID() });
    neighbour = await openRedisCache({ ...o, namespace: randomUUID() });
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
    const big = await openRedisCache({
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

  it('attack: forged or garbled invalidation messages -> ignored: the local memory tier keeps its entries', async () => {
    // A store of its own, so the test knows its keys in Redis (the namespace's hash, as redis.ts makes it).
    const ns = randomUUID();
    const tiered = await openRedisCache({
      maxSizeBytes: 1_000_000,
      maxEntryBytes: 1_000,
      redis: conn,
      namespace: ns,
    });
    const base = `${PREFIX}cache:${createHash('sha1').update(ns).digest('hex').slice(0, 16)}`;
    const SENTINEL = 'GET https://site.test/sentinel';
    const crashes: string[] = [];
    const crashed = (err: Error) => crashes.push(String(err));
    try {
      assert.ok((await tiered.put(VICTIM, meta(), Buffer.from('victim'))).stored);
      assert.ok((await tiered.put(SENTINEL, meta(), Buffer.from('sentinel'))).stored);
      const hashOf = async (key: string) => {
        for (const k of await conn.client.keys(`${base}:e:*`))
          if ((await conn.client.hget(k, 'k')) === key) return k;
        throw new Error(`no entry for ${key}`);
      };
      const served = async (key: string) =>
        (await readBody(tiered, (await tiered.getVariants(key))[0]!))?.toString();
      // Lookups fill the tier once the store's subscription holds. The bodies in Redis are then
      // changed behind the store's back: a lookup answered from the tier still has the old body, one
      // that reaches Redis has the new one. So the test can see which of the two answered.
      let inRedis = '';
      await waitUntil('the memory tier holds both entries', async () => {
        await tiered.getVariants(VICTIM);
        await tiered.getVariants(SENTINEL);
        inRedis = `changed in redis ${randomUUID().slice(0, 8)}`;
        for (const key of [VICTIM, SENTINEL]) await conn.client.hset(await hashOf(key), 'b', inRedis);
        return (await served(VICTIM)) !== inRedis && (await served(SENTINEL)) !== inRedis;
      });
      const fromTier = await served(VICTIM);
      const channel = `${base}:inval`;
      // A message the handler chokes on throws out of the subscriber's socket: in a server, a crash.
      process.on('uncaughtExceptionMonitor', crashed);
      for (const m of [
        'not json',
        '{"k":"x"}',
        '{"k":[1,{}]}',
        'null',
        '{"a":"1","i":"1"}',
        '[]',
        '"a"',
        '7',
      ]) {
        assert.equal(await conn.client.publish(channel, m), 1, 'the store is subscribed and receives it');
      }
      // Then a valid message from "another instance" dropping the sentinel: messages are handled in
      // order, so once the sentinel is read from Redis every forged message has been handled.
      await conn.client.publish(channel, JSON.stringify({ o: 'another-instance', k: [SENTINEL] }));
      await waitUntil('the sentinel message was handled', async () => (await served(SENTINEL)) === inRedis);
      assert.deepEqual(crashes, [], 'no forged message threw');
      // None of the forged messages touched the tier: the victim is still answered from it.
      assert.equal(await served(VICTIM), fromTier);
      assert.notEqual(fromTier, inRedis);
    } finally {
      process.off('uncaughtExceptionMonitor', crashed);
      await tiered.close();
    }
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
