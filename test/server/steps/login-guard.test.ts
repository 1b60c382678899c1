// The password-check fairness units, table style: FairQueue (round robin across client keys, a
// per-key and a total cap) and the failure throttle (checkThrottle / recordFailure over nowMs).
// matrix: http1 h2 h1-tls adapters (the static, policy, proxy and cache suites run on every protocol and adapter)
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkThrottle,
  type FailurePolicy,
  type FailureRecord,
  FairQueue,
  type FairQueueLimits,
  recordFailure,
} from '../../../src/server/steps/login-guard.js';

/** `+a1` admits item a1 for key a (expects run / queued / key-full / queue-full); `-` finishes one
 *  running task (expects the item started next, or `none`). */
type Op = [op: string, expect: string];

function play(limits: FairQueueLimits, ops: readonly Op[]): void {
  const q = new FairQueue<string>(limits);
  for (const [i, [op, expect]] of ops.entries()) {
    if (op.startsWith('+')) {
      const item = op.slice(1);
      const a = q.admit(item[0]!, item);
      assert.equal(a.kind === 'refused' ? a.reason : a.kind, expect, `step ${i}: ${op}`);
    } else {
      assert.equal(q.finish() ?? 'none', expect, `step ${i}: ${op}`);
    }
  }
}

const L: FairQueueLimits = { maxRunning: 2, maxQueuedPerKey: 2, maxQueued: 64 };

describe('FairQueue', () => {
  const cases: [string, FairQueueLimits, Op[]][] = [
    [
      'free slots -> run at once',
      L,
      [
        ['+a1', 'run'],
        ['+b1', 'run'],
        ['-', 'none'],
      ],
    ],
    [
      'slots full -> queued; a finish starts the oldest',
      L,
      [
        ['+a1', 'run'],
        ['+a2', 'run'],
        ['+a3', 'queued'],
        ['-', 'a3'],
        ['-', 'none'],
      ],
    ],
    [
      'a key with its share waiting -> key-full; another key still queues',
      L,
      [
        ['+a1', 'run'],
        ['+a2', 'run'],
        ['+a3', 'queued'],
        ['+a4', 'queued'],
        ['+a5', 'key-full'],
        ['+b1', 'queued'],
      ],
    ],
    [
      'round robin: a key that queued first does not go twice in a row',
      L,
      [
        ['+a1', 'run'],
        ['+a2', 'run'],
        ['+a3', 'queued'],
        ['+a4', 'queued'],
        ['+b1', 'queued'],
        ['+c1', 'queued'],
        ['-', 'a3'],
        ['-', 'b1'],
        ['-', 'c1'],
        ['-', 'a4'],
        ['-', 'none'],
      ],
    ],
    [
      'a key served goes to the back of the ring; a key arriving later queues behind it',
      L,
      [
        ['+a1', 'run'],
        ['+a2', 'run'],
        ['+a3', 'queued'],
        ['+a4', 'queued'],
        ['-', 'a3'],
        ['+b1', 'queued'],
        ['+a5', 'queued'],
        ['-', 'a4'],
        ['-', 'b1'],
        ['-', 'a5'],
      ],
    ],
    [
      'a finished key may queue again up to its share',
      L,
      [
        ['+a1', 'run'],
        ['+a2', 'run'],
        ['+a3', 'queued'],
        ['+a4', 'queued'],
        ['-', 'a3'],
        ['+a5', 'queued'],
        ['+a6', 'key-full'],
      ],
    ],
    [
      'total cap reached -> queue-full even for a new key',
      { maxRunning: 1, maxQueuedPerKey: 2, maxQueued: 2 },
      [
        ['+a1', 'run'],
        ['+a2', 'queued'],
        ['+b1', 'queued'],
        ['+c1', 'queue-full'],
        ['-', 'a2'],
        ['+c1', 'queued'],
      ],
    ],
    [
      'per-key cap is checked before the total cap',
      { maxRunning: 1, maxQueuedPerKey: 1, maxQueued: 1 },
      [
        ['+a1', 'run'],
        ['+a2', 'queued'],
        ['+a3', 'key-full'],
        ['+b1', 'queue-full'],
      ],
    ],
  ];
  for (const [name, limits, ops] of cases) it(name, () => play(limits, ops));

  it('one key flooding, another key asking once: the other waits at most one turn', () => {
    const q = new FairQueue<string>(L);
    q.admit('a', 'a-run1');
    q.admit('a', 'a-run2');
    let refused = 0;
    for (let i = 0; i < 400; i++) if (q.admit('a', `a${i}`).kind === 'refused') refused++;
    assert.equal(refused, 398);
    assert.equal(q.admit('b', 'b').kind, 'queued');
    const order = [q.finish(), q.finish()];
    assert.ok(order.includes('b'), `b served within two finishes: ${order}`);
    assert.deepEqual(q.size(), { running: 2, queued: 1, keys: 1 });
  });
});

describe('failure throttle', () => {
  const P: FailurePolicy = { maxFailures: 3, windowMs: 60_000 };
  const rec = (windowStartMs: number, failures: number, warned = false): FailureRecord => ({
    windowStartMs,
    failures,
    warned,
  });

  const checks: [string, FailureRecord | undefined, number, string][] = [
    ['no record -> allow', undefined, 0, 'allow'],
    ['fewer failures than the limit -> allow', rec(0, 2), 1000, 'allow'],
    [
      'limit reached in the window -> throttled 60 s after the first failure',
      rec(0, 3),
      0,
      'throttled 60 warn',
    ],
    ['limit reached, part way -> Retry-After rounds up', rec(0, 3), 30_500, 'throttled 30 warn'],
    ['last millisecond of the window -> at least 1 s', rec(0, 3), 59_999, 'throttled 1 warn'],
    ['already warned this window -> throttled, no second warning', rec(0, 5, true), 1000, 'throttled 59'],
    ['window over -> allow, record dropped', rec(0, 9, true), 60_000, 'allow dropped'],
  ];
  for (const [name, record, nowMs, want] of checks) {
    it(name, () => {
      const d = checkThrottle(record, nowMs, P);
      const got =
        d.kind === 'allow'
          ? `allow${record !== undefined && d.record === undefined ? ' dropped' : ''}`
          : `throttled ${d.retryAfterSec}${d.warn ? ' warn' : ''}`;
      assert.equal(got, want);
      if (d.kind === 'throttled') assert.equal(d.record.warned, true, 'the record remembers the warning');
    });
  }

  const failures: [string, FailureRecord | undefined, number, FailureRecord][] = [
    ['first failure starts a window', undefined, 5000, rec(5000, 1)],
    ['a failure in the window counts', rec(5000, 1), 6000, rec(5000, 2)],
    [
      'a failure after the window starts a new one (and forgets the warning)',
      rec(0, 7, true),
      60_000,
      rec(60_000, 1),
    ],
  ];
  for (const [name, record, nowMs, want] of failures) {
    it(name, () => assert.deepEqual(recordFailure(record, nowMs, P), want));
  }

  it('maxFailures failures in a row -> the next check is throttled', () => {
    let r: FailureRecord | undefined;
    for (let i = 0; i < P.maxFailures; i++) {
      assert.equal(checkThrottle(r, i * 1000, P).kind, 'allow', `check ${i}`);
      r = recordFailure(r, i * 1000, P);
    }
    assert.equal(checkThrottle(r, 10_000, P).kind, 'throttled');
  });
});
