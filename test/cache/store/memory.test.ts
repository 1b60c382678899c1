import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { approxMetaBytes, createMemoryStore } from '../../../src/cache/store/memory.js';
import { bytes, meta, readBody, storeContract } from './contract.js';

storeContract('memory', async (options) => ({
  store: createMemoryStore(options),
  async cleanup() {},
}));

describe('memory store', () => {
  it('sizeBytes counts the body plus the approximate meta size', async () => {
    const store = createMemoryStore({ maxSizeBytes: 100_000, maxEntryBytes: 10_000 });
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
    const store = createMemoryStore({ maxSizeBytes: 100_000, maxEntryBytes: 10_000 });
    const source = Buffer.from('abc');
    const result = await store.put('GET /a', meta(), source);
    assert.ok(result.stored);
    source.fill(0x7a);
    assert.equal((await readBody(store, result.entry))?.toString(), 'abc');
    await store.close();
  });
});
