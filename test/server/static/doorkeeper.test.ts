// The file view's doorkeeper (src/server/static/doorkeeper.ts): admission on second use.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Doorkeeper } from '../../../src/server/static/doorkeeper.js';

describe('Doorkeeper', () => {
  it('answers false the first time a key is asked about and true after, key by key', () => {
    const d = new Doorkeeper();
    const rows: [string, boolean][] = [
      ['/a.txt', false],
      ['/a.txt', true],
      ['/b.txt', false],
      ['/a.txt', true],
      ['/b.txt', true],
      ['/A.txt', false],
      ['', false],
      ['', true],
    ];
    for (const [key, want] of rows) assert.equal(d.seenBefore(key), want, key);
  });

  it('forgets everything when a quarter of its bits are set, so it never fills up', () => {
    const d = new Doorkeeper(1024);
    // Distinct keys until the 256th new bit clears the set (collisions set no new bit, so count them).
    let cleared = false;
    for (let i = 0; i < 10_000 && !cleared; i++) {
      d.seenBefore(`/k${i}`);
      cleared = !d.seenBefore('/first') && i > 0;
    }
    assert.ok(cleared, 'the set was cleared');
    // Among 1,000 new keys in a quarter-full set at most, far fewer than half pass for seen ones.
    const small = new Doorkeeper(1 << 20);
    let falsePositives = 0;
    for (let i = 0; i < 1000; i++) small.seenBefore(`/seen${i}`);
    for (let i = 0; i < 1000; i++) if (small.seenBefore(`/new${i}`)) falsePositives++;
    assert.ok(falsePositives < 10, `${falsePositives} false positives`);
  });

  it('clear() forgets; bad sizes are refused', () => {
    const d = new Doorkeeper(64);
    d.seenBefore('/x');
    d.clear();
    assert.equal(d.seenBefore('/x'), false);
    assert.throws(() => new Doorkeeper(100), RangeError);
    assert.throws(() => new Doorkeeper(16), RangeError);
  });
});
