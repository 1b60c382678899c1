// The shared store suite: every store runs it through its own *.test.ts with a factory, behind the
// cache's operations (src/cache/store/entry-cache.ts, built on the store's get, put, delete and peek).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EntryCache } from '../../../src/cache/store/entry-cache.js';
import type { BodySource, EntryMeta, PurgeFilter, StoredEntry } from '../../../src/cache/store/types.js';
import { CacheStoreError } from '../../../src/cache/store/types.js';

export interface StoreFactoryOptions {
  readonly maxSizeBytes: number;
  readonly maxEntryBytes: number;
  readonly nowMs: () => number;
}

/** A store under test, and how to release what it left behind (temp folders) after close. */
export interface StoreHarness {
  readonly store: EntryCache;
  cleanup(): Promise<void>;
}

export type StoreFactory = (options: StoreFactoryOptions) => Promise<StoreHarness>;

/** A clock the tests move by hand. */
export class TestClock {
  ms = 1_700_000_000_000;
  readonly nowMs = (): number => this.ms;
}

const KEY = 'GET https://example.test/a';
const OTHER_KEY = 'GET https://example.test/b';
const THIRD_KEY = 'GET https://example.test/c';

export function meta(
  options: {
    varyKey?: string;
    timeMs?: number;
    etag?: string;
    discardAfterMs?: number;
    tags?: readonly string[];
  } = {},
): EntryMeta {
  const timeMs = options.timeMs ?? 1_700_000_000_000;
  return {
    response: {
      status: 200,
      headers: { 'content-type': 'text/plain', 'cache-control': 'max-age=60', etag: options.etag ?? '"a"' },
      requestTimeMs: timeMs - 5,
      responseTimeMs: timeMs,
    },
    varyKey: options.varyKey ?? '',
    varyHeaders: options.varyKey ? { 'accept-encoding': options.varyKey } : {},
    ...(options.discardAfterMs === undefined ? {} : { discardAfterMs: options.discardAfterMs }),
    ...(options.tags === undefined ? {} : { tags: options.tags }),
  };
}

export function bytes(length: number, fill = 0x61): Uint8Array {
  return new Uint8Array(length).fill(fill);
}

export interface StreamedSource extends AsyncIterable<Uint8Array> {
  pulled: number;
  finished: boolean;
}

/** A streamed body that records how far it was read and whether it was stopped. */
export function streamed(chunks: readonly Uint8Array[]): StreamedSource {
  const source: StreamedSource = {
    pulled: 0,
    finished: false,
    async *[Symbol.asyncIterator]() {
      try {
        for (const chunk of chunks) {
          source.pulled++;
          await new Promise((resolve) => setImmediate(resolve));
          yield chunk;
        }
      } finally {
        source.finished = true;
      }
    },
  };
  return source;
}

export async function readBody(store: EntryCache, entry: StoredEntry): Promise<Buffer | null> {
  const body = await store.openBody(entry);
  if (!body) return null;
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

async function putOk(store: EntryCache, key: string, m: EntryMeta, body: BodySource): Promise<StoredEntry> {
  const result = await store.put(key, m, body);
  assert.ok(result.stored, `expected the put to be stored, got ${JSON.stringify(result)}`);
  return result.entry;
}

/** Puts an entry and returns it with the bytes it added to `sizeBytes()` (no eviction expected). */
async function putSized(
  store: EntryCache,
  key: string,
  m: EntryMeta,
  body: BodySource,
): Promise<{ entry: StoredEntry; sizeBytes: number }> {
  const before = store.sizeBytes();
  const entry = await putOk(store, key, m, body);
  return { entry, sizeBytes: store.sizeBytes() - before };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Runs the contract for one store kind. */
export function storeContract(kind: string, factory: StoreFactory): void {
  const defaults = { maxSizeBytes: 1_000_000, maxEntryBytes: 100_000 };

  async function withStore(
    options: Partial<StoreFactoryOptions>,
    fn: (store: EntryCache, clock: TestClock) => Promise<void>,
  ): Promise<void> {
    const clock = new TestClock();
    const harness = await factory({ ...defaults, nowMs: clock.nowMs, ...options });
    try {
      await fn(harness.store, clock);
    } finally {
      await harness.store.close();
      await harness.cleanup();
    }
  }

  describe(`${kind} store: CacheStore contract`, () => {
    it('put then getVariants returns the entry with its meta and body', () =>
      withStore({}, async (store) => {
        const m = meta();
        const entry = await putOk(store, KEY, m, Buffer.from('hello'));
        assert.equal(entry.key, KEY);
        assert.equal(entry.bodyBytes, 5);
        const variants = await store.getVariants(KEY);
        assert.equal(variants.length, 1);
        assert.deepEqual(variants[0]!.meta, m);
        assert.equal(variants[0]!.id, entry.id);
        assert.equal((await readBody(store, variants[0]!))?.toString(), 'hello');
        assert.ok(store.sizeBytes() >= 5);
      }));

    it('unknown key -> no variants', () =>
      withStore({}, async (store) => {
        await putOk(store, KEY, meta(), bytes(3));
        assert.deepEqual(await store.getVariants(OTHER_KEY), []);
      }));

    it('a streamed body of several chunks is stored whole', () =>
      withStore({}, async (store) => {
        const source = streamed([Buffer.from('ab'), Buffer.from(''), Buffer.from('cde')]);
        const entry = await putOk(store, KEY, meta(), source);
        assert.equal(entry.bodyBytes, 5);
        assert.equal(source.finished, true);
        assert.equal((await readBody(store, entry))?.toString(), 'abcde');
      }));

    it('a body offered whole (`whole`) is the same bytes as the streamed one, read twice', () =>
      withStore({}, async (store) => {
        const source = streamed([Buffer.from('ab'), Buffer.from('cde')]);
        const entry = await putOk(store, KEY, meta(), source);
        for (let i = 0; i < 2; i++) {
          const body = await store.openBody(entry);
          assert.ok(body !== null);
          if (body.whole !== undefined) assert.equal(Buffer.from(body.whole).toString(), 'abcde');
          const chunks: Uint8Array[] = [];
          for await (const c of body) chunks.push(c);
          assert.equal(Buffer.concat(chunks).toString(), 'abcde');
        }
      }));

    it('the optional sync reads agree with the async ones', () =>
      withStore({}, async (store) => {
        const entry = await putOk(store, KEY, meta(), Buffer.from('sync'));
        if (store.getVariantsSync !== undefined) {
          assert.deepEqual(
            store.getVariantsSync(KEY).map((e) => e.id),
            (await store.getVariants(KEY)).map((e) => e.id),
          );
          assert.deepEqual(store.getVariantsSync(OTHER_KEY), []);
        }
        if (store.openBodySync !== undefined) {
          // undefined: the store cannot tell without I/O; openBody must then answer.
          const sync = store.openBodySync(entry);
          const body = sync === undefined ? await store.openBody(entry) : sync;
          assert.equal(body?.bodyBytes, 4);
          if (body?.whole !== undefined) assert.equal(Buffer.from(body.whole).toString(), 'sync');
          await body?.close();
          await store.delete(KEY);
          const gone = store.openBodySync(entry);
          assert.ok(gone === null || gone === undefined, 'a deleted entry has no body');
          if (gone === undefined) assert.equal(await store.openBody(entry), null);
        }
      }));

    it('an empty body is stored', () =>
      withStore({}, async (store) => {
        const entry = await putOk(store, KEY, meta(), new Uint8Array(0));
        assert.equal((await readBody(store, entry))?.length, 0);
      }));

    it('Vary variants: one entry per secondary key, newest response first (§4.1)', () =>
      withStore({}, async (store) => {
        await putOk(store, KEY, meta({ varyKey: 'gzip', timeMs: 1000 }), Buffer.from('gz'));
        await putOk(store, KEY, meta({ varyKey: 'br', timeMs: 3000 }), Buffer.from('br'));
        await putOk(store, KEY, meta({ varyKey: 'identity', timeMs: 2000 }), Buffer.from('id'));
        const variants = await store.getVariants(KEY);
        assert.deepEqual(
          variants.map((v) => v.meta.varyKey),
          ['br', 'identity', 'gzip'],
        );
        assert.deepEqual(variants[0]!.meta.varyHeaders, { 'accept-encoding': 'br' });
        assert.equal((await readBody(store, variants[2]!))?.toString(), 'gz');
      }));

    it('a put with the same secondary key replaces the stored variant', () =>
      withStore({}, async (store) => {
        const old = await putOk(store, KEY, meta({ varyKey: 'gzip', etag: '"1"' }), Buffer.from('old'));
        await putOk(store, KEY, meta({ varyKey: 'br' }), Buffer.from('br'));
        const fresh = await putOk(store, KEY, meta({ varyKey: 'gzip', etag: '"2"' }), Buffer.from('new!'));
        const variants = await store.getVariants(KEY);
        assert.equal(variants.length, 2);
        const gzip = variants.find((v) => v.meta.varyKey === 'gzip')!;
        assert.equal(gzip.id, fresh.id);
        assert.equal((await readBody(store, gzip))?.toString(), 'new!');
        assert.equal(await store.openBody(old), null);
      }));

    it('updateMeta replaces the meta and keeps the body (§4.3.4)', () =>
      withStore({}, async (store) => {
        const entry = await putOk(store, KEY, meta({ etag: '"1"', timeMs: 1000 }), Buffer.from('body'));
        const updated = await store.updateMeta(KEY, entry.id, meta({ etag: '"1"', timeMs: 5000 }));
        assert.ok(updated);
        assert.equal(updated.id, entry.id);
        assert.equal(updated.meta.response.responseTimeMs, 5000);
        const [variant] = await store.getVariants(KEY);
        assert.equal(variant?.meta.response.responseTimeMs, 5000);
        assert.equal((await readBody(store, variant!))?.toString(), 'body');
      }));

    it('updateMeta of an unknown id or a different key -> null', () =>
      withStore({}, async (store) => {
        const entry = await putOk(store, KEY, meta(), Buffer.from('body'));
        assert.equal(await store.updateMeta(KEY, 'no-such-id', meta()), null);
        assert.equal(await store.updateMeta(OTHER_KEY, entry.id, meta()), null);
      }));

    it('delete with an id removes that variant only', () =>
      withStore({}, async (store) => {
        const gzip = await putOk(store, KEY, meta({ varyKey: 'gzip' }), Buffer.from('gz'));
        await putOk(store, KEY, meta({ varyKey: 'br' }), Buffer.from('br'));
        await store.delete(KEY, gzip.id);
        const variants = await store.getVariants(KEY);
        assert.deepEqual(
          variants.map((v) => v.meta.varyKey),
          ['br'],
        );
        assert.equal(await store.openBody(gzip), null);
      }));

    it('delete without an id removes every variant of the key (§4.4), and frees their bytes', () =>
      withStore({}, async (store) => {
        await putOk(store, KEY, meta({ varyKey: 'gzip' }), bytes(100));
        await putOk(store, KEY, meta({ varyKey: 'br' }), bytes(100));
        const other = await putOk(store, OTHER_KEY, meta(), bytes(100));
        const before = store.sizeBytes();
        await store.delete(KEY);
        assert.deepEqual(await store.getVariants(KEY), []);
        assert.equal((await store.getVariants(OTHER_KEY))[0]?.id, other.id);
        assert.ok(store.sizeBytes() < before);
        await store.delete(OTHER_KEY);
        assert.equal(store.sizeBytes(), 0);
        await store.delete('GET https://example.test/never'); // no-op
      }));

    it('delete(key) while a body streams in -> the put is invalidated, nothing stored (§4.4)', () =>
      withStore({}, async (store) => {
        const source = streamed([bytes(10), bytes(10), bytes(10)]);
        const pending = store.put(KEY, meta(), source);
        await new Promise((resolve) => setImmediate(resolve));
        await store.delete(KEY);
        assert.deepEqual(await pending, { stored: false, reason: 'invalidated' });
        assert.deepEqual(await store.getVariants(KEY), []);
        assert.equal(store.sizeBytes(), 0);
      }));

    it('purge by tag removes every entry listing the tag, across keys and variants, and only those', () =>
      withStore({}, async (store) => {
        const gzip = await putSized(
          store,
          KEY,
          meta({ varyKey: 'gzip', tags: ['product-1', 'all'] }),
          bytes(100),
        );
        const br = await putSized(store, KEY, meta({ varyKey: 'br', tags: ['product-1'] }), bytes(100));
        const other = await putSized(store, OTHER_KEY, meta({ tags: ['product-2', 'all'] }), bytes(100));
        const untagged = await putOk(store, THIRD_KEY, meta(), bytes(100));
        const before = store.sizeBytes();
        assert.equal(await store.purge({ tag: 'product-1' }), 2);
        assert.deepEqual(await store.getVariants(KEY), []);
        assert.equal(await store.openBody(gzip.entry), null);
        assert.equal((await store.getVariants(OTHER_KEY))[0]?.id, other.entry.id);
        assert.equal(store.sizeBytes(), before - gzip.sizeBytes - br.sizeBytes);
        assert.equal(await store.purge({ tag: 'all' }), 1);
        assert.deepEqual(await store.getVariants(OTHER_KEY), []);
        assert.equal((await store.getVariants(THIRD_KEY))[0]?.id, untagged.id);
        assert.equal(store.sizeBytes(), before - gzip.sizeBytes - br.sizeBytes - other.sizeBytes);
      }));

    it('purge by tag: an entry with several tags goes by any one of them, counted once', () =>
      withStore({}, async (store) => {
        await putOk(store, KEY, meta({ tags: ['a', 'b', 'c'] }), bytes(10));
        await putOk(store, OTHER_KEY, meta({ tags: ['x', 'x'] }), bytes(10));
        assert.equal(await store.purge({ tag: 'b' }), 1);
        assert.deepEqual(await store.getVariants(KEY), []);
        assert.equal(await store.purge({ tag: 'a' }), 0, 'its other tags no longer name it');
        assert.equal(await store.purge({ tag: 'c' }), 0);
        assert.equal(await store.purge({ tag: 'x' }), 1, 'a repeated tag counts the entry once');
        assert.equal(store.sizeBytes(), 0);
      }));

    it('purge by tag is exact and case-sensitive (the caller lowercases)', () =>
      withStore({}, async (store) => {
        const entry = await putOk(store, KEY, meta({ tags: ['product-1'] }), bytes(10));
        for (const tag of ['Product-1', 'product', 'product-10', '']) {
          assert.equal(await store.purge({ tag }), 0, `tag ${JSON.stringify(tag)}`);
        }
        assert.equal((await store.getVariants(KEY))[0]?.id, entry.id);
      }));

    it('purge by key prefix removes every variant of the keys under it, and no other key', () =>
      withStore({}, async (store) => {
        await putOk(store, 'GET https://example.test/blog/1', meta({ varyKey: 'gzip' }), bytes(10));
        await putOk(store, 'GET https://example.test/blog/1', meta({ varyKey: 'br' }), bytes(10));
        await putOk(store, 'GET https://example.test/blog/2', meta({ tags: ['blog'] }), bytes(10));
        const kept = [
          'GET https://example.test/blogroll',
          'GET https://example.test/shop/1',
          'GET https://other.test/blog/1',
        ];
        for (const key of kept) await putOk(store, key, meta(), bytes(10));
        assert.equal(await store.purge({ keyPrefix: 'GET https://example.test/blog/' }), 3);
        assert.deepEqual(await store.getVariants('GET https://example.test/blog/1'), []);
        assert.deepEqual(await store.getVariants('GET https://example.test/blog/2'), []);
        assert.equal(await store.purge({ tag: 'blog' }), 0, 'the tag index forgot the purged entry');
        for (const key of kept) assert.equal((await store.getVariants(key)).length, 1, key);
        // A whole key as the prefix: PURGE of one URL.
        assert.equal(await store.purge({ keyPrefix: 'GET https://example.test/blogroll' }), 1);
        assert.deepEqual(await store.getVariants('GET https://example.test/blogroll'), []);
      }));

    it('purge all empties the store, and later puts are stored', () =>
      withStore({}, async (store) => {
        await putOk(store, KEY, meta({ varyKey: 'gzip', tags: ['a'] }), bytes(100));
        await putOk(store, KEY, meta({ varyKey: 'br' }), bytes(100));
        await putOk(store, OTHER_KEY, meta({ tags: ['b'] }), bytes(100));
        assert.equal(await store.purge({ all: true }), 3);
        assert.equal(store.sizeBytes(), 0);
        assert.deepEqual(await store.getVariants(KEY), []);
        assert.deepEqual(await store.getVariants(OTHER_KEY), []);
        assert.equal(await store.purge({ tag: 'a' }), 0);
        const entry = await putOk(store, KEY, meta({ tags: ['a'] }), Buffer.from('again'));
        assert.equal((await readBody(store, entry))?.toString(), 'again');
      }));

    it('purge matching nothing -> 0, nothing changes', () =>
      withStore({}, async (store) => {
        const filters: PurgeFilter[] = [{ tag: 'none' }, { keyPrefix: 'GET https://nowhere.test/' }];
        for (const filter of [...filters, { all: true } as const]) assert.equal(await store.purge(filter), 0);
        const entry = await putOk(store, KEY, meta({ tags: ['some'] }), bytes(10));
        const size = store.sizeBytes();
        for (const filter of filters) assert.equal(await store.purge(filter), 0);
        assert.equal(store.sizeBytes(), size);
        assert.equal((await store.getVariants(KEY))[0]?.id, entry.id);
      }));

    for (const [condition, filter] of [
      ['its tag', { tag: 'streaming' }],
      ['a prefix of its key', { keyPrefix: 'GET https://example.test/' }],
      ['all', { all: true }],
    ] as const) {
      it(`purge by ${condition} while a body streams in -> the put is invalidated, nothing stored`, () =>
        withStore({}, async (store) => {
          const pending = store.put(
            KEY,
            meta({ tags: ['streaming'] }),
            streamed([bytes(10), bytes(10), bytes(10)]),
          );
          await nextTurn();
          assert.equal(await store.purge(filter), 0, 'a put in flight is not an entry yet');
          assert.deepEqual(await pending, { stored: false, reason: 'invalidated' });
          assert.deepEqual(await store.getVariants(KEY), []);
          assert.equal(store.sizeBytes(), 0);
        }));
    }

    it('a put streaming in that the purge does not match is stored', () =>
      withStore({}, async (store) => {
        const pending = store.put(KEY, meta({ tags: ['kept'] }), streamed([bytes(10), bytes(10), bytes(10)]));
        await nextTurn();
        assert.equal(await store.purge({ tag: 'gone' }), 0);
        assert.equal(await store.purge({ keyPrefix: OTHER_KEY }), 0);
        const result = await pending;
        assert.ok(result.stored);
        assert.equal((await store.getVariants(KEY))[0]?.id, result.entry.id);
      }));

    it('updateMeta changing tags moves the entry in the tag index', () =>
      withStore({}, async (store) => {
        const entry = await putOk(store, KEY, meta({ tags: ['old', 'both'] }), bytes(10));
        const updated = await store.updateMeta(KEY, entry.id, meta({ tags: ['new', 'both'] }));
        assert.deepEqual(updated?.meta.tags, ['new', 'both']);
        assert.equal(await store.purge({ tag: 'old' }), 0);
        assert.deepEqual((await store.getVariants(KEY))[0]?.meta.tags, ['new', 'both']);
        assert.equal(await store.purge({ tag: 'new' }), 1);
        assert.deepEqual(await store.getVariants(KEY), []);
        assert.equal(await store.purge({ tag: 'both' }), 0);

        const untagged = await putOk(store, OTHER_KEY, meta({ tags: ['x'] }), bytes(10));
        assert.ok(await store.updateMeta(OTHER_KEY, untagged.id, meta()));
        assert.equal(await store.purge({ tag: 'x' }), 0, 'updateMeta without tags drops them');
        assert.equal((await store.getVariants(OTHER_KEY)).length, 1);
      }));

    it('streamed body over maxEntryBytes -> too-large, source stopped, nothing stored', () =>
      withStore({ maxEntryBytes: 25 }, async (store) => {
        const source = streamed([bytes(10), bytes(10), bytes(10), bytes(10), bytes(10)]);
        assert.deepEqual(await store.put(KEY, meta(), source), { stored: false, reason: 'too-large' });
        assert.equal(source.pulled, 3, 'reads no further than the chunk that passes the limit');
        assert.equal(source.finished, true, 'the source iterator is returned');
        assert.deepEqual(await store.getVariants(KEY), []);
        assert.equal(store.sizeBytes(), 0);
      }));

    it('whole body over maxEntryBytes -> too-large; exactly maxEntryBytes -> stored', () =>
      withStore({ maxEntryBytes: 25 }, async (store) => {
        assert.deepEqual(await store.put(KEY, meta(), bytes(26)), { stored: false, reason: 'too-large' });
        const entry = await putOk(store, KEY, meta(), streamed([bytes(20), bytes(5)]));
        assert.equal(entry.bodyBytes, 25);
      }));

    it('body plus meta over maxSizeBytes -> too-large even within maxEntryBytes', () =>
      withStore({ maxSizeBytes: 1_000, maxEntryBytes: 1_000 }, async (store) => {
        assert.deepEqual(await store.put(KEY, meta(), bytes(1_000)), { stored: false, reason: 'too-large' });
        assert.deepEqual(await store.getVariants(KEY), []);
        assert.equal(store.sizeBytes(), 0);
      }));

    it('a body source that throws -> put rejects, nothing stored', () =>
      withStore({}, async (store) => {
        async function* failing() {
          yield bytes(10);
          throw new Error('upstream reset');
        }
        await assert.rejects(store.put(KEY, meta(), failing()), /upstream reset/);
        assert.deepEqual(await store.getVariants(KEY), []);
        assert.equal(store.sizeBytes(), 0);
      }));

    it('concurrent puts of one variant -> one entry remains, sizes consistent', () =>
      withStore({}, async (store) => {
        const results = await Promise.all(
          [1, 2, 3, 4].map((n) => store.put(KEY, meta(), streamed([bytes(50, n), bytes(50, n)]))),
        );
        assert.ok(results.every((r) => r.stored));
        const variants = await store.getVariants(KEY);
        assert.equal(variants.length, 1);
        const body = await readBody(store, variants[0]!);
        assert.ok(body);
        assert.equal(body.length, 100);
        assert.ok(
          body.every((b) => b === body[0]),
          'the body is one put, not a mix',
        );
        await store.delete(KEY);
        assert.equal(store.sizeBytes(), 0);
      }));

    // Bodies large beside any store's per-entry overhead (the memory store counts some 2.5 KB of
    // metadata an entry): two entries fit under the bound, a third does not, in every store.
    it('size bound: the oldest entry is evicted first', () =>
      withStore({ maxSizeBytes: 50_000, maxEntryBytes: 25_000 }, async (store, clock) => {
        for (const path of ['1', '2', '3']) {
          clock.ms += 1000;
          await putOk(store, `GET /${path}`, meta(), bytes(20_000));
        }
        assert.deepEqual(await store.getVariants('GET /1'), []);
        assert.equal((await store.getVariants('GET /2')).length, 1);
        assert.equal((await store.getVariants('GET /3')).length, 1);
        assert.ok(store.sizeBytes() <= 50_000);
      }));

    it('size bound: a recently used entry survives, the least recently used goes', () =>
      withStore({ maxSizeBytes: 50_000, maxEntryBytes: 25_000 }, async (store, clock) => {
        await putOk(store, 'GET /1', meta(), bytes(20_000));
        clock.ms += 1000;
        await putOk(store, 'GET /2', meta(), bytes(20_000));
        clock.ms += 1000;
        assert.equal((await store.getVariants('GET /1')).length, 1); // a use
        clock.ms += 1000;
        await putOk(store, 'GET /3', meta(), bytes(20_000));
        assert.equal((await store.getVariants('GET /1')).length, 1);
        assert.deepEqual(await store.getVariants('GET /2'), []);
        assert.equal((await store.getVariants('GET /3')).length, 1);
      }));

    it('an opened body stays readable when its entry is evicted', () =>
      withStore({ maxSizeBytes: 10_000, maxEntryBytes: 5_000 }, async (store) => {
        const first = await putOk(store, 'GET /1', meta(), bytes(4_000, 0x31));
        const body = await store.openBody(first);
        assert.ok(body);
        assert.equal(body.bodyBytes, 4_000);
        await putOk(store, 'GET /2', meta(), bytes(4_000));
        await putOk(store, 'GET /3', meta(), bytes(4_000));
        assert.deepEqual(await store.getVariants('GET /1'), []);
        const chunks: Uint8Array[] = [];
        for await (const chunk of body) chunks.push(chunk);
        assert.ok(Buffer.concat(chunks).equals(Buffer.from(bytes(4_000, 0x31))));
      }));

    it('an opened body can be closed without reading it', () =>
      withStore({}, async (store) => {
        const entry = await putOk(store, KEY, meta(), bytes(10));
        const body = await store.openBody(entry);
        await body?.close();
        assert.equal((await readBody(store, entry))?.length, 10);
      }));

    it('prune drops entries past discardAfterMs; lookups skip them', () =>
      withStore({}, async (store, clock) => {
        await putOk(store, 'GET /short', meta({ discardAfterMs: clock.ms + 1000 }), bytes(10));
        await putOk(store, 'GET /long', meta({ discardAfterMs: clock.ms + 60_000 }), bytes(10));
        await putOk(store, 'GET /forever', meta(), bytes(10));
        assert.equal(await store.prune(), 0);
        clock.ms += 1001;
        assert.deepEqual(await store.getVariants('GET /short'), []);
        await putOk(store, 'GET /short2', meta({ discardAfterMs: clock.ms + 1000 }), bytes(10));
        clock.ms += 60_000;
        assert.equal(await store.prune(), 2);
        assert.deepEqual(await store.getVariants('GET /long'), []);
        assert.equal((await store.getVariants('GET /forever')).length, 1);
      }));

    it('maxEntryBytes above maxSizeBytes -> bad_store_options', async () => {
      await assert.rejects(
        async () => {
          const harness = await factory({ maxSizeBytes: 100, maxEntryBytes: 101, nowMs: Date.now });
          await harness.store.close();
          await harness.cleanup();
        },
        (error: unknown) => error instanceof CacheStoreError && error.code === 'bad_store_options',
      );
    });

    it('close while a body streams in -> the put resolves closed, nothing kept', async () => {
      const harness = await factory({ ...defaults, nowMs: Date.now });
      try {
        const source = streamed([bytes(10), bytes(10), bytes(10)]);
        const pending = harness.store.put(KEY, meta(), source);
        await new Promise((resolve) => setImmediate(resolve));
        await harness.store.close();
        assert.deepEqual(await pending, { stored: false, reason: 'closed' });
        assert.equal(source.finished, true);
      } finally {
        await harness.cleanup();
      }
    });

    it('after close, calls reject with store_closed; close again is a no-op', async () => {
      const harness = await factory({ ...defaults, nowMs: Date.now });
      try {
        await harness.store.close();
        await harness.store.close();
        await assert.rejects(
          harness.store.getVariants(KEY),
          (error: unknown) => error instanceof CacheStoreError && error.code === 'store_closed',
        );
        await assert.rejects(harness.store.put(KEY, meta(), bytes(1)), CacheStoreError);
        await assert.rejects(harness.store.purge({ all: true }), CacheStoreError);
      } finally {
        await harness.cleanup();
      }
    });
  });
}
