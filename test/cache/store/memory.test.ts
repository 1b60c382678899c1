import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { approxMetaBytes, createMemoryCache } from '../../../src/cache/store/memory.js';
import { bytes, meta, readBody, storeContract } from './contract.js';

storeContract('memory', async (options) => ({
  store: createMemoryCache(options),
  async cleanup() {},
}));

describe('memory store', () => {
  it('an entry that could not be served (status 101, CR LF in a field) is refused on put and reported', async () => {
    const reported: string[] = [];
    const store = createMemoryCache({
      maxSizeBytes: 100_000,
      maxEntryBytes: 10_000,
      onInvalidEntry: (key, reason) => reported.push(`${key}: ${reason}`),
    });
    const m = meta();
    const s101 = { ...m, response: { ...m.response, status: 101 } };
    const crlf = { ...m, response: { ...m.response, headers: { 'x-a': 'a\r\nb: c' } } };
    assert.deepEqual(await store.put('GET /101', s101, bytes(1)), { stored: false, reason: 'invalid' });
    assert.deepEqual(await store.put('GET /crlf', crlf, bytes(1)), { stored: false, reason: 'invalid' });
    assert.equal((await store.getVariants('GET /101')).length, 0);
    assert.deepEqual(reported, [
      'GET /101: status 101',
      'GET /crlf: field x-a has a character not allowed in a field value',
    ]);
    await store.close();
  });

  it('memory pressure: shed drops the least recently used entries, as evictions, and reports the size', async () => {
    const store = createMemoryCache({ maxSizeBytes: 1_000_000, maxEntryBytes: 100_000 });
    const keys = ['a', 'b', 'c', 'd', 'e', 'f'].map((k) => `GET /${k}`);
    for (const key of keys) await store.put(key, meta({ tags: ['t'] }), bytes(10_000));
    assert.equal((await store.getVariants(keys[0]!)).length, 1); // a is now the most recent
    const before = store.sizeBytes();
    const dropped = store.shed(0.5);
    assert.ok(dropped >= before / 2 && dropped < before, `${dropped} of ${before}`);
    assert.equal(store.sizeBytes(), before - dropped, 'the size reported after the shed');
    const left = [];
    for (const key of keys) if ((await store.getVariants(key)).length > 0) left.push(key);
    assert.deepEqual(left, ['GET /a', 'GET /e', 'GET /f'], 'b, c and d were least recently used');
    // The indexes followed: a tag purge finds only what is left.
    assert.equal(await store.purge({ tag: 't' }), 3);
    assert.equal(store.shed(1), 0);
    await store.close();
  });

  it('sizeBytes counts the body plus the approximate meta size', async () => {
    const store = createMemoryCache({ maxSizeBytes: 100_000, maxEntryBytes: 10_000 });
    const m = meta();
    await store.put('GET /a', m, bytes(1_000));
    assert.equal(store.sizeBytes(), 1_000 + approxMetaBytes('GET /a', m));
    await store.close();
  });

  it('the approximate meta size counts purge tags', () => {
    const tagged = meta({ tags: ['product-1', 'all'] });
    assert.equal(
      approxMetaBytes('GET /a', tagged),
      approxMetaBytes('GET /a', meta()) + 2 * 'product-1all'.length,
    );
  });

  it('keeps a copy: changing the caller buffer after put does not change the stored body', async () => {
    const store = createMemoryCache({ maxSizeBytes: 100_000, maxEntryBytes: 10_000 });
    const source = Buffer.from('abc');
    const result = await store.put('GET /a', meta(), source);
    assert.ok(result.stored);
    source.fill(0x7a);
    assert.equal((await readBody(store, result.entry))?.toString(), 'abc');
    await store.close();
  });
});
