// cacheApiTier on a fake Cache API (Maps): round-trips of variants, keys, delete, clear, and a
// caching fetch served from the tier against a real origin on 127.0.0.1, across two instances.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type CachedVariants, cacheApiTier, createCachingFetch } from '../../src/client/index.js';
import { FakeCaches } from '../helpers/fake-caches.js';
import { type Origin, origin } from '../helpers/origin.js';

const fake = () => new FakeCaches() as unknown as CacheStorage;

const VARIANTS: CachedVariants = [
  {
    status: 200,
    statusText: 'OK',
    headers: { 'content-type': 'application/octet-stream', vary: 'accept-language', 'x-a': 'é "q"' },
    requestHeaders: { 'accept-language': 'fr' },
    requestTimeMs: 1000,
    responseTimeMs: 1005,
    body: new Uint8Array([0, 255, 1, 254, 10, 13, 0]),
  },
  {
    status: 203,
    statusText: '',
    headers: { vary: 'accept-language' },
    requestHeaders: {},
    requestTimeMs: 900,
    responseTimeMs: 901,
    body: new Uint8Array(0),
  },
];
const KEY = 'http://127.0.0.1:1/a b?x=1&y=%2F';

describe('cacheApiTier', () => {
  it('no Cache API -> TypeError naming it', () => {
    assert.equal((globalThis as { caches?: unknown }).caches, undefined);
    assert.throws(
      () => cacheApiTier(),
      (e: unknown) => e instanceof TypeError && /Cache API/.test(e.message),
    );
  });

  it('put then get: bodies byte-exact, metadata exact, order kept', async () => {
    const t = cacheApiTier('t', { caches: fake() });
    await t.put(KEY, VARIANTS);
    const got = await t.get(KEY);
    assert.deepEqual(got, VARIANTS);
    assert.ok(got![0]!.body instanceof Uint8Array);
  });

  it('a missing key -> undefined', async () => {
    const t = cacheApiTier('t', { caches: fake() });
    await t.put(KEY, VARIANTS);
    assert.equal(await t.get(`${KEY}#other`), undefined);
    assert.equal(await t.get('http://127.0.0.1:1/'), undefined);
  });

  it('a second put replaces the variants and leaves no old bodies behind', async () => {
    const caches = new FakeCaches();
    const t = cacheApiTier('t', { caches: caches as unknown as CacheStorage });
    await t.put(KEY, VARIANTS);
    await t.put(KEY, [VARIANTS[1]!]);
    assert.deepEqual(await t.get(KEY), [VARIANTS[1]]);
    assert.equal((await caches.open('t')).entries.size, 2); // one meta, one body
  });

  it('keys lists every key (decoded), one per URL', async () => {
    const t = cacheApiTier('t', { caches: fake() });
    await t.put(KEY, VARIANTS);
    await t.put('http://127.0.0.1:1/b', VARIANTS);
    assert.deepEqual([...(await t.keys())].sort(), [
      'http://127.0.0.1:1/a b?x=1&y=%2F',
      'http://127.0.0.1:1/b',
    ]);
  });

  it('delete removes the key and its bodies; others stay', async () => {
    const caches = new FakeCaches();
    const t = cacheApiTier('t', { caches: caches as unknown as CacheStorage });
    await t.put(KEY, VARIANTS);
    await t.put('http://127.0.0.1:1/b', [VARIANTS[0]!]);
    await t.delete(KEY);
    assert.equal(await t.get(KEY), undefined);
    assert.deepEqual([...(await t.keys())], ['http://127.0.0.1:1/b']);
    assert.equal((await caches.open('t')).entries.size, 2);
  });

  it('clear deletes the whole Cache; the tier works again afterwards', async () => {
    const caches = new FakeCaches();
    const t = cacheApiTier('t', { caches: caches as unknown as CacheStorage });
    await t.put(KEY, VARIANTS);
    await t.clear();
    assert.deepEqual(await caches.keys(), []);
    assert.equal(await t.get(KEY), undefined);
    await t.put(KEY, VARIANTS);
    assert.deepEqual(await t.get(KEY), VARIANTS);
  });

  it('a body evicted by the browser -> a miss, not a partial list', async () => {
    const caches = new FakeCaches();
    const t = cacheApiTier('t', { caches: caches as unknown as CacheStorage });
    await t.put(KEY, VARIANTS);
    const c = await caches.open('t');
    const body = [...c.entries.keys()].find((u) => !u.endsWith('/meta'))!;
    c.entries.delete(body);
    assert.equal(await t.get(KEY), undefined);
  });
});

describe('createCachingFetch with cacheApiTier against a real origin', () => {
  let o: Origin;
  before(async () => {
    o = await origin({
      '/data': (_req, res, n) => {
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=600' });
        res.end(JSON.stringify({ n }));
      },
    });
  });
  after(() => o.close());

  it('no memory tier: the second call and a new instance hit the tier, one origin request', async () => {
    const caches = fake();
    const f1 = createCachingFetch({ stores: [cacheApiTier('g', { caches })], maxMemoryBytes: 0 });
    const a = await f1(`${o.url}/data`);
    assert.deepEqual(await a.json(), { n: 1 });
    const b = await f1(`${o.url}/data`);
    assert.equal(b.headers.get('cache-status'), 'gatehouse-client; hit');
    assert.deepEqual(await b.json(), { n: 1 });
    const f2 = createCachingFetch({ stores: [cacheApiTier('g', { caches })], maxMemoryBytes: 0 });
    const c = await f2(`${o.url}/data`);
    assert.equal(c.headers.get('cache-status'), 'gatehouse-client; hit');
    assert.equal(c.headers.get('content-type'), 'application/json');
    assert.deepEqual(await c.json(), { n: 1 });
    assert.equal(o.count('/data'), 1);
  });
});
