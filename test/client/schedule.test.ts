// The reconnecting WebSocket's pure decisions, table-tested: delays, what follows a close, dead links.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type AfterClose, afterClose, isLinkDead, reconnectDelayMs } from '../../src/client/schedule.js';
import { FUZZ_SEED, mulberry32, SEED_OFFSET } from '../helpers/random.js';

const EXP = { factor: 2, maxMs: 60_000, jitter: 0 };

describe('reconnectDelayMs', () => {
  const cases: [string, number, number, Parameters<typeof reconnectDelayMs>[2], number, number][] = [
    // name, attempt, intervalMs, backoff, random(), expected
    ['no backoff, random 0.5 (the middle) -> the interval', 0, 5000, undefined, 0.5, 5000],
    ['no backoff, random 0 -> the interval minus the default jitter (0.5)', 0, 5000, undefined, 0, 2500],
    ['no backoff, random ~1 -> the interval plus the default jitter', 0, 5000, undefined, 0.9999, 7500],
    ['no backoff, 10000th attempt -> still about the interval', 10_000, 5000, undefined, 0.5, 5000],
    ['backoff jitter 0, no growth -> the interval exactly', 7, 5000, { jitter: 0 }, 0.99, 5000],
    ['backoff, attempt 0 -> the interval', 0, 1000, EXP, 0, 1000],
    ['backoff x2, attempt 3 -> 8 x the interval', 3, 1000, EXP, 0, 8000],
    ['backoff x2, attempt 6 -> capped at maxMs', 6, 1000, EXP, 0, 60_000],
    ['backoff, attempt 5000 -> maxMs, not NaN or Infinity', 5000, 1000, EXP, 0, 60_000],
    ['backoff x1e9, attempt 5000 -> maxMs', 5000, 1000, { factor: 1e9, maxMs: 30_000, jitter: 0 }, 0, 30_000],
    ['backoff, interval 0, attempt 5000 -> 0', 5000, 0, EXP, 0, 0],
    ['backoff x1 -> constant', 40, 700, { factor: 1, maxMs: 60_000, jitter: 0 }, 0, 700],
    [
      '{ factor: 2 } alone, attempt 2 -> 4 x the interval, jittered around it',
      2,
      1000,
      { factor: 2 },
      0.5,
      4000,
    ],
    ['{ factor: 2 } alone, attempt 20 -> the default cap 30000', 20, 1000, { factor: 2 }, 0.5, 30_000],
    [
      '{ factor: 2 } alone, interval above 30000 -> the cap is the interval',
      20,
      45_000,
      { factor: 2 },
      0.5,
      45_000,
    ],
    ['jitter 0.5, random 0 -> half the delay', 2, 1000, { ...EXP, jitter: 0.5 }, 0, 2000],
    ['jitter 0.5, random 0.5 -> the delay', 2, 1000, { ...EXP, jitter: 0.5 }, 0.5, 4000],
    ['jitter 0.5, random 0.75 -> a quarter more', 2, 1000, { ...EXP, jitter: 0.5 }, 0.75, 5000],
    ['jitter 1, random 0 -> 0', 2, 1000, { ...EXP, jitter: 1 }, 0, 0],
    [
      'jitter on a capped delay, random ~1 -> up to maxMs x (1 + jitter)',
      50,
      1000,
      { ...EXP, jitter: 0.2 },
      0.9999,
      71_998,
    ],
  ];
  for (const [name, attempt, intervalMs, backoff, r, expected] of cases) {
    it(name, () =>
      assert.equal(
        reconnectDelayMs(attempt, intervalMs, backoff, () => r),
        expected,
      ),
    );
  }

  it(`any attempt, factor and jitter -> a finite delay in [0, maxMs x (1 + jitter)] (FUZZ_SEED=${FUZZ_SEED})`, () => {
    const rnd = mulberry32(SEED_OFFSET + 13);
    for (let i = 0; i < 3000; i++) {
      const backoff = { factor: 1 + rnd() * 100, maxMs: Math.floor(rnd() * 1e6), jitter: rnd() };
      const attempt = Math.floor(rnd() * 1e6);
      const ms = reconnectDelayMs(attempt, Math.floor(rnd() * 1e4), backoff, rnd);
      assert.ok(
        Number.isFinite(ms) && ms >= 0 && ms <= Math.ceil(backoff.maxMs * (1 + backoff.jitter)),
        `${JSON.stringify({ backoff, attempt })}: ${ms}`,
      );
    }
  });

  it(`default options over 10,000 draws -> mean the interval, spread over [0.5, 1.5] x it (FUZZ_SEED=${FUZZ_SEED})`, () => {
    const rnd = mulberry32(SEED_OFFSET + 14);
    const draws = Array.from({ length: 10_000 }, () => reconnectDelayMs(0, 5000, undefined, rnd));
    const mean = draws.reduce((a, b) => a + b, 0) / draws.length;
    assert.ok(Math.abs(mean - 5000) < 50, `mean ${mean}`);
    assert.ok(Math.min(...draws) >= 2500 && Math.max(...draws) <= 7500);
    // Spread: a quarter of the clients in each quarter of the window, none all at one instant.
    const lowQuarter = draws.filter((d) => d < 3750).length;
    assert.ok(lowQuarter > 2000 && lowQuarter < 3000, `${lowQuarter} of 10,000 in the first quarter`);
  });
});

describe('afterClose', () => {
  const base = { userClosed: false, reconnect: true, allowed: true, offline: false, delayMs: 5000 };
  const cases: [string, Partial<typeof base>, AfterClose][] = [
    ['nothing special -> reconnect after the delay', {}, { kind: 'reconnect', delayMs: 5000 }],
    ['user closed -> stop', { userClosed: true }, { kind: 'stop', why: 'user-closed' }],
    [
      'user closed while offline -> stop',
      { userClosed: true, offline: true },
      { kind: 'stop', why: 'user-closed' },
    ],
    ['reconnect off -> stop', { reconnect: false }, { kind: 'stop', why: 'reconnect-off' }],
    ['shouldReconnect said no -> stop', { allowed: false }, { kind: 'stop', why: 'refused' }],
    [
      'shouldReconnect said no while offline -> stop',
      { allowed: false, offline: true },
      { kind: 'stop', why: 'refused' },
    ],
    ['offline -> wait for online', { offline: true }, { kind: 'wait-online' }],
    ['delay 0 -> reconnect at once', { delayMs: 0 }, { kind: 'reconnect', delayMs: 0 }],
  ];
  for (const [name, over, expected] of cases) {
    it(name, () => assert.deepEqual(afterClose({ ...base, ...over }), expected));
  }
});

describe('isLinkDead', () => {
  const cases: [string, number, number, number, boolean][] = [
    // name, nowMs, lastReceivedMs, heartbeatIntervalMs, dead
    ['just received -> alive', 1000, 1000, 30_000, false],
    ['silent for one interval -> alive', 31_000, 1000, 30_000, false],
    ['silent for 2 x interval minus 1 ms -> alive', 60_999, 1000, 30_000, false],
    ['silent for exactly 2 x interval -> dead', 61_000, 1000, 30_000, true],
    ['silent for 10 minutes (throttled tab) -> dead', 601_000, 1000, 30_000, true],
    ['clock behind the last message -> alive', 500, 1000, 30_000, false],
  ];
  for (const [name, nowMs, last, interval, dead] of cases) {
    it(name, () => assert.equal(isLinkDead(nowMs, last, interval), dead));
  }
});
