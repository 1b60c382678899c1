import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type BucketState,
  formatRateLimit,
  formatRateLimitPolicy,
  isBucketFull,
  policyWindowSec,
  type TakeResult,
  type TokenBucketPolicy,
  takeToken,
} from '../../src/http/rate-limit.js';

const P: TokenBucketPolicy = { ratePerSec: 2, burst: 3 };

/** Runs requests at the given times (ms) from a fresh bucket; returns each result. */
function run(policy: TokenBucketPolicy, times: number[]): TakeResult[] {
  let state: BucketState | undefined;
  return times.map((t) => {
    const r = takeToken(state, policy, t);
    state = r.state;
    return r;
  });
}

const summary = (r: TakeResult) =>
  r.kind === 'allowed' ? `ok r=${r.remaining} t=${r.resetSec}` : `429 retry=${r.retryAfterSec}`;

describe('takeToken (token bucket)', () => {
  const cases: [string, TokenBucketPolicy, number[], string[]][] = [
    ['a new client starts with a full bucket', P, [0], ['ok r=2 t=1']],
    [
      'burst requests at once pass, the next is refused',
      P,
      [0, 0, 0, 0],
      ['ok r=2 t=1', 'ok r=1 t=1', 'ok r=0 t=1', '429 retry=1'],
    ],
    [
      'tokens refill at ratePerSec: 500 ms at 2/s is one token',
      P,
      [0, 0, 0, 500],
      ['ok r=2 t=1', 'ok r=1 t=1', 'ok r=0 t=1', 'ok r=0 t=1'],
    ],
    ['the bucket never holds more than burst', P, [0, 60_000], ['ok r=2 t=1', 'ok r=2 t=1']],
    [
      'a refused request takes nothing (hammering does not push recovery out)',
      { ratePerSec: 1, burst: 1 },
      [0, 100, 200, 300, 1000],
      ['ok r=0 t=1', '429 retry=1', '429 retry=1', '429 retry=1', 'ok r=0 t=1'],
    ],
    [
      'slow rates: Retry-After is whole seconds rounded up (RFC 9110 §10.2.3)',
      { ratePerSec: 0.25, burst: 1 },
      [0, 1000],
      ['ok r=0 t=4', '429 retry=3'],
    ],
    [
      'Retry-After is at least 1 even when a token is nearly there',
      { ratePerSec: 1, burst: 1 },
      [0, 999],
      ['ok r=0 t=1', '429 retry=1'],
    ],
    [
      'a clock that goes backwards adds nothing',
      { ratePerSec: 1, burst: 1 },
      [5000, 0],
      ['ok r=0 t=1', '429 retry=1'],
    ],
    [
      'fast rates: t stays >= 1 (draft-11 §4.1.2 is whole seconds)',
      { ratePerSec: 100, burst: 2 },
      [0, 0, 0],
      ['ok r=1 t=1', 'ok r=0 t=1', '429 retry=1'],
    ],
  ];
  for (const [name, policy, times, expected] of cases) {
    it(name, () => assert.deepEqual(run(policy, times).map(summary), expected));
  }

  it('on a refusal t would equal Retry-After, so Retry-After is never before the window ends (draft-11 §6)', () => {
    const [, r] = run({ ratePerSec: 0.5, burst: 1 }, [0, 500]);
    assert.equal(r!.kind, 'limited');
    assert.equal(r!.kind === 'limited' && r!.retryAfterSec, 2);
  });

  it('isBucketFull: a bucket refilled to burst can be forgotten', () => {
    const [r] = run(P, [0]);
    assert.equal(isBucketFull(r!.state, P, 0), false);
    assert.equal(isBucketFull(r!.state, P, 500), true);
  });
});

describe('RateLimit fields (draft-ietf-httpapi-ratelimit-headers-11)', () => {
  const policies: [string, TokenBucketPolicy, string][] = [
    [
      'q=burst, w=seconds to refill an empty bucket (§3.1)',
      { ratePerSec: 10, burst: 100 },
      '"default";q=100;w=10',
    ],
    ['w rounds up to whole seconds (§3.1.3)', { ratePerSec: 3, burst: 10 }, '"default";q=10;w=4'],
    ['w is at least 1 (§3.1.3: non-zero)', { ratePerSec: 50, burst: 5 }, '"default";q=5;w=1'],
    ['fractional rate', { ratePerSec: 0.5, burst: 1 }, '"default";q=1;w=2'],
  ];
  for (const [name, policy, expected] of policies) {
    it(`RateLimit-Policy: ${name}`, () => assert.equal(formatRateLimitPolicy(policy), expected));
  }

  it('policyWindowSec matches the w parameter', () =>
    assert.equal(policyWindowSec({ ratePerSec: 3, burst: 10 }), 4));

  it('RateLimit: "default";r=<remaining>;t=<seconds> (§4, the §4.2 example shape)', () => {
    assert.equal(formatRateLimit(50, 30), '"default";r=50;t=30');
    assert.equal(formatRateLimit(0, 1), '"default";r=0;t=1');
  });

  it('RateLimit: r and t are non-negative integers (§4.1.1, §4.1.2)', () => {
    assert.equal(formatRateLimit(-1, 0.2), '"default";r=0;t=1');
    assert.equal(formatRateLimit(2.7, 2), '"default";r=2;t=2');
  });
});
