// Memory pressure (issue 40 §3): the decision over a window of samples, table-style, and the watch that
// runs it (samples injected, so the shedding is seen at each tick).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Logger } from '../../../src/server/core/context.js';
import {
  createPressureWatch,
  decidePressure,
  type MemorySample,
  type PressureLimits,
  SHED_FRACTION,
  WINDOW_SAMPLES,
} from '../../../src/server/ops/pressure.js';

const MiB = 1024 * 1024;
const full = (heapUsedMiB: number[], rssMiB: number[]): MemorySample[] =>
  Array.from({ length: WINDOW_SAMPLES }, (_, i) => ({
    heapUsedBytes: heapUsedMiB[i % heapUsedMiB.length]! * MiB,
    rssBytes: rssMiB[i % rssMiB.length]! * MiB,
  }));
const LIMITS: PressureLimits = { heapLimitBytes: 200 * MiB, budgetBytes: 400 * MiB };

describe('decidePressure', () => {
  const cases: [string, MemorySample[], PressureLimits, string | undefined][] = [
    ['a window not yet full: no decision', full([190], [390]).slice(1), LIMITS, undefined],
    ['heap and RSS well below', full([100], [200]), LIMITS, 'none'],
    // The least heap in use is the live heap: garbage peaks between collections do not count.
    ['garbage peaks to the limit, live heap low', full([198, 60, 190], [200]), LIMITS, 'none'],
    ['live heap at 80 % of the limit', full([160, 170], [200]), LIMITS, 'shed'],
    ['live heap at 95 %', full([190, 199], [200]), LIMITS, 'critical'],
    ['RSS at 90 % of the budget', full([50], [360, 380]), LIMITS, 'shed'],
    ['RSS at the budget', full([50], [400, 420]), LIMITS, 'critical'],
    ['one low RSS sample in the window', full([50], [420, 100]), LIMITS, 'none'],
    [
      'no budget (a mounted handler): RSS not watched',
      full([50], [4000]),
      { heapLimitBytes: 200 * MiB },
      'none',
    ],
    ['no heap limit (Bun): heap not watched', full([4000], [100]), { budgetBytes: 400 * MiB }, 'none'],
    ['neither: never', full([4000], [4000]), {}, 'none'],
  ];
  for (const [name, window, limits, level] of cases)
    it(name, () => assert.equal(decidePressure(window, limits)?.level, level));

  it('the reason names both figures', () => {
    assert.equal(
      decidePressure(full([170], [380]), LIMITS)?.reason,
      'Memory pressure: live heap 170 of 200 MiB, RSS 380 of a 400 MiB budget.',
    );
  });
});

/** A logger that keeps its lines. */
function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const keep = (o: object | string, msg?: string) => lines.push(msg ?? String(o));
  return { lines, info: keep, warn: keep, error: keep, isLevelEnabled: () => true };
}

const until = async (ok: () => boolean) => {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(ok());
};

describe('the pressure watch', () => {
  it('sheds once a full window shows pressure, then waits for a fresh window; reports it; says when over', async () => {
    const logger = recordingLogger();
    let heapMiB = 170;
    const fractions: number[] = [];
    const w = createPressureWatch({
      ...LIMITS,
      logger,
      sampleMs: 2,
      sample: () => ({ heapUsedBytes: heapMiB * MiB, rssBytes: 100 * MiB }),
      shed: (f) => {
        fractions.push(f);
        return 8 * MiB;
      },
    });
    try {
      assert.equal(w.state().level, 'none', 'no decision before a full window');
      await until(() => fractions.length === 1);
      assert.deepEqual(w.state(), {
        level: 'shed',
        reason: 'Memory pressure: live heap 170 of 200 MiB, RSS 100 of a 400 MiB budget.',
        shedBytes: 8 * MiB,
      });
      assert.equal(fractions[0], SHED_FRACTION);
      assert.match(
        logger.lines[0]!,
        /^Memory pressure: live heap 170 of 200 MiB.* The caches dropped 8 MiB\.$/,
      );
      await until(() => fractions.length === 2);
      assert.equal(w.state().shedBytes, 16 * MiB);
      heapMiB = 50;
      await until(() => w.state().level === 'none');
      assert.equal(w.state().shedBytes, 16 * MiB, 'the total stays');
      assert.equal(logger.lines.at(-1), 'memory pressure: over');
      // Each shed waited for a fresh window: never two within fewer samples.
      assert.equal(fractions.length, 2);
    } finally {
      w.close();
    }
  });
});
