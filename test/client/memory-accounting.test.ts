// The memory tier's byte count against the heap it really holds: a child process with --expose-gc
// fills 20,000 tiny entries (1 B bodies, a few header fields, each string its own as from the
// network), then measures heapUsed + arrayBuffers after gc() before and after clear(). The heap freed
// must be at most 1.5x what the tier accounted (so maxMemoryBytes bounds what memory holds), and at
// least half of it (the count is not just inflated).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inGcChild } from '../helpers/gc-child.js';

const ENTRIES = 20_000;

describe('memory tier accounting', () => {
  it('attack: 20,000 tiny entries -> heap freed by clear() is within 1.5x of the accounted bytes', async () => {
    const mod = new URL('../../src/client/cache-tier.ts', import.meta.url).href;
    const code = `const { memoryTier } = await import(${JSON.stringify(mod)});
      const tier = memoryTier(2 ** 40);
      const own = (s, i) => (s + ' ' + i).slice(0, s.length);
      const used = () => { gc(); gc(); const m = process.memoryUsage(); return m.heapUsed + m.arrayBuffers; };
      for (let i = 0; i < ${ENTRIES}; i++) {
        const url = 'http://127.0.0.1:8080/e/' + i;
        tier.put(url, [{
          status: 200, statusText: own('OK', i),
          headers: { 'cache-control': own('max-age=600', i), 'content-type': own('text/plain', i),
            date: new Date(1e12 + i * 1000).toUTCString(), 'content-length': own('1', i) },
          requestHeaders: { accept: own('*/*', i) },
          requestTimeMs: 1e12 + i, responseTimeMs: 1e12 + i, body: new Uint8Array([120]),
        }]);
      }
      const before = used();
      const accounted = tier.sizeBytes();
      const held = tier.keys().length;
      tier.clear();
      const freed = before - used();
      process.stdout.write(JSON.stringify({ accounted, freed, held }));`;
    const { accounted, freed, held } = await inGcChild<{ accounted: number; freed: number; held: number }>(
      code,
    );
    assert.equal(held, ENTRIES);
    const ratio = freed / accounted;
    assert.ok(ratio <= 1.5, `clear() freed ${freed} B, ${ratio.toFixed(2)}x the ${accounted} B accounted`);
    assert.ok(
      ratio >= 0.5,
      `clear() freed ${freed} B, only ${ratio.toFixed(2)}x the ${accounted} B accounted`,
    );
  });
});
