// The shared CacheStore suite: every store runs it through its own *.test.ts with a factory.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BodySource, CacheStore, EntryMeta, StoredEntry } from '../../../src/cache/store/types.js';
import { CacheStoreError } from '../../../src/cache/store/types.js';

export interface StoreFactoryOptions {
  readonly maxSizeBytes: number;
  readonly maxEntryBytes: number;
  readonly nowMs: () => number;
}

/** A store under test, and how to release what it left behind (temp folders) after close. */
export interface StoreHarness {
  readonly store: CacheStore;
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

export function meta(
  options: { varyKey?: string; timeMs?: number; etag?: string; discardAfterMs?: number } = {},
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

export async function readBody(store: CacheStore, entry: StoredEntry): Promise<Buffer | null> {
  const body = await store.openBody(entry);
  if (!body) return null;
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

async function putOk(store: CacheStore, key: string, m: EntryMeta, body: BodySource): Promise<StoredEntry> {
  const result = await store.put(key, m, body);
  assert.ok(result.stored, `expected the put to be stored, got ${JSON.stringify(result)}`);
  return result.entry;
}

/** Runs the contract for one store kind. */
export function storeContract(kind: string, factory: StoreFactory): void {
  const defaults = { maxSizeBytes: 1_000_000, maxEntryBytes: 100_000 };

  async function withStore(
    options: Partial<StoreFactoryOptions>,
    fn: (store: CacheStore, clock: TestClock) => Promise<void>,
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

    it('size bound: the oldest entry is evicted first', () =>
      withStore({ maxSizeBytes: 10_000, maxEntryBytes: 5_000 }, async (store, clock) => {
        for (const path of ['1', '2', '3']) {
          clock.ms += 1000;
          await putOk(store, `GET /${path}`, meta(), bytes(4_000));
        }
        assert.deepEqual(await store.getVariants('GET /1'), []);
        assert.equal((await store.getVariants('GET /2')).length, 1);
        assert.equal((await store.getVariants('GET /3')).length, 1);
        assert.ok(store.sizeBytes() <= 10_000);
      }));

    it('size bound: a recently used entry survives, the least recently used goes', () =>
      withStore({ maxSizeBytes: 10_000, maxEntryBytes: 5_000 }, async (store, clock) => {
        await putOk(store, 'GET /1', meta(), bytes(4_000));
        clock.ms += 1000;
        await putOk(store, 'GET /2', meta(), bytes(4_000));
        clock.ms += 1000;
        assert.equal((await store.getVariants('GET /1')).length, 1); // a use
        clock.ms += 1000;
        await putOk(store, 'GET /3', meta(), bytes(4_000));
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
      } finally {
        await harness.cleanup();
      }
    });
  });
}
