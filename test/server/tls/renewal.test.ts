import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type CertificatePlan,
  DEFAULT_BACKOFF,
  planCertificate,
  renewAtMs,
  retryDelayMs,
  type StoredFacts,
} from '../../../src/server/tls/renewal.js';
import { forAll } from '../../helpers/random.js';

const DAY = 86_400_000;

describe('renewAtMs', () => {
  const cases: [string, number, number, number, number][] = [
    ['90-day certificate, 2/3 -> day 60', 0, 90 * DAY, 2 / 3, 60 * DAY],
    ['90-day certificate from a later start, 2/3 -> start + 60 days', 5 * DAY, 95 * DAY, 2 / 3, 65 * DAY],
    ['fraction 1/2 -> the middle', 1000, 3000, 0.5, 2000],
    ['tiny fraction -> just after notBefore', 0, 1000, 0.001, 1],
    ['fraction near 1 -> just before notAfter', 0, 1000, 0.999, 999],
    ['odd lifetime rounds down (never later than the fraction)', 0, 10, 2 / 3, 6],
  ];
  for (const [name, nb, na, f, want] of cases) {
    it(name, () => assert.equal(renewAtMs(nb, na, f), want));
  }
});

describe('retryDelayMs', () => {
  const half = () => 0.5;
  const low = () => 0;
  const high = () => 0.999999;
  const cases: [string, number, () => number, number][] = [
    ['attempt 0, random 0 -> half of 1 min', 0, low, 30_000],
    ['attempt 0, random 0.5 -> 3/4 of 1 min', 0, half, 45_000],
    ['attempt 0, random ~1 -> just under 1 min', 0, high, 59_999],
    ['attempt 1, random 0 -> half of 2 min', 1, low, 60_000],
    ['attempt 5, random 0 -> half of 32 min', 5, low, 16 * 60_000],
    ['attempt 6 -> capped at 1 h (not 64 min), random 0 -> 30 min', 6, low, 1_800_000],
    ['attempt 6, random ~1 -> just under 1 h', 6, high, 3_599_998],
    ['attempt 5000 -> still the cap, finite', 5000, half, 2_700_000],
    ['negative attempt is read as 0', -3, low, 30_000],
    ['random out of range (1.5) is clamped to 1 -> the full step', 0, () => 1.5, 60_000],
    ['random negative (-1) is clamped to 0', 0, () => -1, 30_000],
    ['random NaN is read as 0 (never a NaN timer)', 0, () => Number.NaN, 30_000],
  ];
  for (const [name, attempt, random, want] of cases) {
    it(name, () => assert.equal(retryDelayMs(attempt, random), want));
  }
  it('test backoff (base 20 ms, cap 200 ms): attempt 3, random 0 -> 80 ms', () => {
    assert.equal(retryDelayMs(3, low, { baseMs: 20, maxMs: 200 }), 80);
  });
  it('any attempt and random: between half the capped step and the capped step', () => {
    forAll(
      1501,
      2000,
      (g) => ({ attempt: g.int(40), r: g.float() }),
      ({ attempt, r }) => {
        const d = retryDelayMs(attempt, () => r);
        const step = Math.min(DEFAULT_BACKOFF.maxMs, DEFAULT_BACKOFF.baseMs * 2 ** attempt);
        assert.ok(d >= step / 2 && d <= step, `${d} outside [${step / 2}, ${step}]`);
      },
    );
  });
  it('non-decreasing in the attempt for a fixed random', () => {
    for (let a = 0; a < 30; a++) assert.ok(retryDelayMs(a + 1, () => 0.3) >= retryDelayMs(a, () => 0.3));
  });
});

describe('planCertificate', () => {
  const facts = (o: Partial<StoredFacts> = {}): StoredFacts => ({
    notBeforeMs: 0,
    notAfterMs: 90 * DAY,
    coversDomains: true,
    ...o,
  });
  const cases: [string, StoredFacts | undefined, number, CertificatePlan][] = [
    ['nothing stored -> order', undefined, 0, { kind: 'order', reason: 'none stored' }],
    ['fresh, day 1 -> use, renew at day 60', facts(), DAY, { kind: 'use', renewAtMs: 60 * DAY }],
    ['just before the renewal time -> use', facts(), 60 * DAY - 1, { kind: 'use', renewAtMs: 60 * DAY }],
    [
      'at the renewal time -> use and renew',
      facts(),
      60 * DAY,
      { kind: 'use-and-renew', reason: 'due for renewal' },
    ],
    [
      'one ms before notAfter -> still used while renewing',
      facts(),
      90 * DAY - 1,
      { kind: 'use-and-renew', reason: 'due for renewal' },
    ],
    ['at notAfter -> expired, order', facts(), 90 * DAY, { kind: 'order', reason: 'expired' }],
    ['long expired -> order', facts(), 400 * DAY, { kind: 'order', reason: 'expired' }],
    [
      'a configured domain missing from the certificate -> order even when fresh',
      facts({ coversDomains: false }),
      DAY,
      { kind: 'order', reason: 'names changed' },
    ],
    [
      'notBefore ahead of our clock (CA skew) -> used, not ordered again',
      facts({ notBeforeMs: 10 * DAY, notAfterMs: 100 * DAY }),
      9 * DAY,
      { kind: 'use', renewAtMs: 70 * DAY },
    ],
  ];
  for (const [name, stored, nowMs, want] of cases) {
    it(name, () => assert.deepEqual(planCertificate(stored, nowMs, 2 / 3), want));
  }
});
