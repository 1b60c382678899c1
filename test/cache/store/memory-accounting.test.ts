// The proxy cache's memory store: its byte count against the memory it really holds (issue 40). A child
// process with --expose-gc fills 20,000 entries of 1 KiB bodies with the fields a proxied response has
// (each string its own, as from the network), then measures heapUsed + arrayBuffers after gc() before and
// after close() empties it. What close() frees must be within 1.25x of what the store counted toward
// maxSizeBytes (so the bound bounds memory), and at least half of it (the count is not just inflated).
// It counted 623 B of metadata for an entry that held 2,352 B of heap: a "64 MiB" cache of small
// responses held twice that.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inGcChild } from '../../helpers/gc-child.js';

const ENTRIES = 20_000;

describe('memory store accounting', () => {
  it('attack: 20,000 small responses -> memory freed by close() is within 1.25x of the counted bytes', async () => {
    const mod = new URL('../../../src/cache/store/memory.ts', import.meta.url).href;
    const code = `const { createMemoryStore } = await import(${JSON.stringify(mod)});
      let counted = 0;
      const store = createMemoryStore({ maxSizeBytes: 2 ** 40, maxEntryBytes: 2 ** 23, onSizeBytes: (b) => { counted = b; } });
      const own = (s, i) => (s + ' ' + i).slice(0, s.length);
      const used = () => { gc(); gc(); const m = process.memoryUsage(); return m.heapUsed + m.arrayBuffers; };
      for (let i = 0; i < ${ENTRIES}; i++) {
        const now = 1e12 + i;
        const meta = {
          response: {
            status: 200,
            headers: {
              'content-type': own('text/plain; charset=utf-8', i), 'content-length': own('1024', i),
              'cache-control': own('public, max-age=3600', i), date: new Date(now).toUTCString(),
              via: own('1.1 gatehouse', i),
            },
            requestTimeMs: now, responseTimeMs: now,
          },
          varyKey: '', varyHeaders: {}, discardAfterMs: now + 3.6e6,
        };
        const r = await store.put('GET http://127.0.0.1:8080/cached/1k?miss=' + i, { meta, body: Buffer.alloc(1024, 117) });
        if (!r.stored) throw new Error('not stored: ' + r.reason);
      }
      const before = used();
      await store.close();
      const freed = before - used();
      process.stdout.write(JSON.stringify({ counted, freed }));`;
    const { counted, freed } = await inGcChild<{ counted: number; freed: number }>(code);
    const ratio = freed / counted;
    assert.ok(ratio <= 1.25, `close() freed ${freed} B, ${ratio.toFixed(2)}x the ${counted} B counted`);
    assert.ok(ratio >= 0.5, `close() freed ${freed} B, only ${ratio.toFixed(2)}x the ${counted} B counted`);
  });
});
