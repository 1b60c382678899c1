// Attack: a client sends a fresh value of a field the origin's Vary names on every request, so one
// URL collects thousands of variants. The count per URL stays at cache.maxVariants (least recently
// used goes) and selecting a variant is an index lookup per distinct Vary value, never a scan.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { varyKey } from '../../src/cache/index.js';
import { openDiskCache } from '../../src/cache/store/disk.js';
import type { EntryCache } from '../../src/cache/store/entry-cache.js';
import { createMemoryCache } from '../../src/cache/store/memory.js';
import type { EntryMeta, StoreOptions } from '../../src/cache/store/types.js';
import { get, makeSite, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { type Origin, origin, text } from '../helpers/origin.js';
import { waitUntil, waitUntilStored } from '../helpers/wait.js';

const KEY = 'GET http://example.test/v';

function variantMeta(foo: string, timeMs: number): EntryMeta {
  return {
    response: {
      status: 200,
      headers: { vary: 'X-Foo', 'cache-control': 'max-age=60' },
      requestTimeMs: timeMs,
      responseTimeMs: timeMs,
    },
    varyKey: varyKey('X-Foo', { 'x-foo': foo })!,
    varyHeaders: { 'x-foo': foo },
  };
}

/** findVariant for `foo`, counting how often the store asked for a secondary key (its comparisons). */
async function find(
  store: EntryCache,
  foo: string,
): Promise<{ found: string | undefined; keyCalls: number }> {
  let keyCalls = 0;
  const m = await store.findVariant(KEY, (vary) => {
    keyCalls++;
    return varyKey(vary, { 'x-foo': foo });
  });
  return { found: m.entry?.meta.varyHeaders['x-foo'], keyCalls };
}

const stores: [string, (o: StoreOptions) => Promise<{ store: EntryCache; done: () => Promise<void> }>][] = [
  ['memory', async (o) => ({ store: createMemoryCache(o), done: async () => {} })],
  [
    'disk',
    async (o) => {
      const dir = await mkdtemp(join(tmpdir(), 'gatehouse-vary-'));
      const store = await openDiskCache({ ...o, dir });
      return {
        store,
        done: async () => {
          await store.close();
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  ],
];

for (const [kind, open] of stores) {
  describe(`cache vary explosion (${kind} store)`, () => {
    const n = kind === 'memory' ? 3000 : 300;
    it(`attack: ${n} Vary variants of one URL -> at most maxVariantsPerKey stored, least recently used evicted`, async () => {
      const { store, done } = await open({
        maxSizeBytes: 64 << 20,
        maxEntryBytes: 1024,
        maxVariantsPerKey: 32,
      });
      try {
        await store.put(KEY, variantMeta('keep', 1), new Uint8Array(1));
        for (let i = 0; i < n; i++) {
          await store.put(KEY, variantMeta(`v${i}`, 2 + i), new Uint8Array(1));
          // A client keeps using one variant: it is never the least recently used one.
          if (i % 16 === 0) assert.equal((await find(store, 'keep')).found, 'keep');
        }
        assert.equal((await store.getVariants(KEY)).length, 32);
        assert.equal((await find(store, 'keep')).found, 'keep');
        assert.equal((await find(store, `v${n - 1}`)).found, `v${n - 1}`);
        assert.equal((await find(store, 'v0')).found, undefined, 'the oldest unused variant went');
      } finally {
        await done();
      }
    });

    it(`attack: ${n} Vary variants without a cap -> a lookup asks for one secondary key, not one per variant`, async () => {
      const { store, done } = await open({ maxSizeBytes: 64 << 20, maxEntryBytes: 1024 });
      try {
        for (let i = 0; i < n; i++) await store.put(KEY, variantMeta(`v${i}`, 1 + i), new Uint8Array(1));
        assert.equal((await store.getVariants(KEY)).length, n);
        const hit = await find(store, `v${n >> 1}`);
        assert.deepEqual(hit, { found: `v${n >> 1}`, keyCalls: 1 });
        const miss = await find(store, 'absent');
        assert.deepEqual(miss, { found: undefined, keyCalls: 1 });
      } finally {
        await done();
      }
    });
  });
}

describe('cache vary explosion (through the proxy)', () => {
  let up: Origin;
  let site: string;
  let gh: TestServer;
  before(async () => {
    up = await origin({
      '/v': (q, s) =>
        text(s, 200, { 'cache-control': 'max-age=3600', vary: 'X-Foo' }, `foo=${q.headers['x-foo']}`),
      '/static': (_q, s) => text(s, 200, { 'cache-control': 'max-age=3600' }, 'static'),
    });
    site = makeSite({});
    gh = await startServer(site, {
      proxy: [
        { prefix: '/', upstream: up.url, cacheControl: null, cache: { enabled: true, maxVariants: 8 } },
      ],
    });
  });
  after(async () => {
    await gh.close();
    await up.close();
    removeSite(site);
  });

  /** GET /v with X-Foo, retried until it comes from the store (the put lands after the response). */
  async function untilHit(foo: string): Promise<void> {
    await waitUntil(`a hit for X-Foo: ${foo}`, async () => {
      const r = await get(gh.url, '/v', { headers: { 'x-foo': foo } });
      assert.equal(r.text, `foo=${foo}`);
      return /^gatehouse; hit/.test(String(r.headers['cache-status']));
    });
  }

  it('attack: 200 fresh X-Foo values on one URL -> maxVariants stored (PURGE counts them), others still served', async () => {
    // An unrelated URL, stored before the attack, must still be answered from the store after it.
    await get(gh.url, '/static');
    await waitUntilStored(gh.url, '/static');
    const before = up.count('/static');
    assert.equal(before, 1);
    for (let i = 0; i < 200; i++) {
      const r = await get(gh.url, '/v', { headers: { 'x-foo': `a${i}` } });
      assert.equal(r.text, `foo=a${i}`);
    }
    assert.equal(up.count('/v'), 200, 'every variant reached the origin');
    await untilHit('a199');
    const unrelated = await get(gh.url, '/static');
    assert.equal(unrelated.text, 'static');
    assert.match(String(unrelated.headers['cache-status']), /^gatehouse; hit/);
    assert.equal(up.count('/static'), before);
    const purge = await get(gh.url, '/v', { method: 'PURGE' });
    assert.equal(purge.status, 200);
    assert.deepEqual(JSON.parse(purge.text), { purged: 8 });
  });
});
