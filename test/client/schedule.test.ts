// The reconnecting WebSocket's pure decisions, table-tested: delays, what follows a close, dead links.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type AfterClose, afterClose, isLinkDead, reconnectDelayMs } from '../../src/client/schedule.js';
import { FUZZ_SEED, mulberry32, SEED_OFFSET } from '../helpers/random.js';

const EXP = { factor: 2, maxMs: 60_000, jitter: 0 };

describe('reconnectDelayMs', () => {
  const cases: [string, number, number, Parameters<typeof reconnectDelayMs>[2], number, number][] = [
    // name, attempt, intervalMs, backoff, random(), expected
    ['no backoff, first attempt -> the interval', 0, 5000, undefined, 0.5, 5000],
    ['no backoff, 10000th attempt -> still the interval', 10_000, 5000, undefined, 0.5, 5000],
    ['no backoff, jittery random -> ignored', 3, 5000, undefined, 0.99, 5000],
    ['backoff, attempt 0 -> the interval', 0, 1000, EXP, 0, 1000],
    ['backoff x2, attempt 3 -> 8 x the interval', 3, 1000, EXP, 0, 8000],
    ['backoff x2, attempt 6 -> capped at maxMs', 6, 1000, EXP, 0, 60_000],
    ['backoff, attempt 5000 -> maxMs, not NaN or Infinity', 5000, 1000, EXP, 0, 60_000],
    ['backoff x1e9, attempt 5000 -> maxMs', 5000, 1000, { factor: 1e9, maxMs: 30_000, jitter: 0 }, 0, 30_000],
    ['backoff, interval 0, attempt 5000 -> 0', 5000, 0, EXP, 0, 0],
    ['backoff x1 -> constant', 40, 700, { factor: 1, maxMs: 60_000, jitter: 0 }, 0, 700],
    ['jitter 0.5, random 0 -> full delay', 2, 1000, { ...EXP, jitter: 0.5 }, 0, 4000],
    ['jitter 0.5, random 0.5 -> a quarter off', 2, 1000, { ...EXP, jitter: 0.5 }, 0.5, 3000],
    ['jitter 1, random ~1 -> nearly 0', 2, 1000, { ...EXP, jitter: 1 }, 0.9999, 0],
    ['jitter on a capped delay -> below maxMs', 50, 1000, { ...EXP, jitter: 0.2 }, 0.5, 54_000],
  ];
  for (const [name, attempt, intervalMs, backoff, r, expected] of cases) {
    it(name, () =>
      assert.equal(
        reconnectDelayMs(attempt, intervalMs, backoff, () => r),
        expected,
      ),
    );
  }

  it(`any attempt, factor and jitter -> a finite delay in [0, maxMs] (FUZZ_SEED=${FUZZ_SEED})`, () => {
    const rnd = mulberry32(SEED_OFFSET + 13);
    for (let i = 0; i < 3000; i++) {
      const backoff = { factor: 1 + rnd() * 100, maxMs: Math.floor(rnd() * 1e6), jitter: rnd() };
      const attempt = Math.floor(rnd() * 1e6);
      const ms = reconnectDelayMs(attempt, Math.floor(rnd() * 1e4), backoff, rnd);
      assert.ok(
        Number.isFinite(ms) && ms >= 0 && ms <= backoff.maxMs,
        `${JSON.stringify({ backoff, attempt })}: ${ms}`,
      );
    }
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
