import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  decideServe,
  parseRequestDirectives,
  plainFreshUntilMs,
  type RequestDirectives,
  type ServeDecision,
  type StaleReason,
} from '../../src/cache/request.js';
import type { StoredResponse } from '../../src/cache/types.js';

const T0 = Date.UTC(2024, 0, 10, 12, 0, 0);
const none: RequestDirectives = {
  maxAgeSec: null,
  maxStaleSec: null,
  minFreshSec: null,
  noCache: false,
  noStore: false,
  onlyIfCached: false,
};

describe('parseRequestDirectives (RFC 9111 §5.2.1, §5.4)', () => {
  const cases: [string, Record<string, string>, Partial<RequestDirectives>][] = [
    ['no directives', {}, {}],
    ['max-age (§5.2.1.1)', { 'cache-control': 'max-age=5' }, { maxAgeSec: 5 }],
    ['max-stale with a value (§5.2.1.2)', { 'cache-control': 'max-stale=30' }, { maxStaleSec: 30 }],
    [
      'bare max-stale accepts any staleness (§5.2.1.2)',
      { 'cache-control': 'max-stale' },
      { maxStaleSec: Infinity },
    ],
    ['invalid max-stale argument is ignored', { 'cache-control': 'max-stale=soon' }, { maxStaleSec: null }],
    ['min-fresh (§5.2.1.3)', { 'cache-control': 'min-fresh=10' }, { minFreshSec: 10 }],
    ['no-cache (§5.2.1.4)', { 'cache-control': 'no-cache' }, { noCache: true }],
    ['no-store (§5.2.1.5)', { 'cache-control': 'NO-STORE' }, { noStore: true }],
    ['only-if-cached (§5.2.1.7)', { 'cache-control': 'only-if-cached' }, { onlyIfCached: true }],
    ['Pragma: no-cache without Cache-Control (§5.4)', { pragma: 'no-cache' }, { noCache: true }],
    ['Pragma: no-cache among other pragmas (§5.4)', { pragma: 'x-foo, No-Cache' }, { noCache: true }],
    [
      'Pragma: no-cache ignored beside Cache-Control (§5.4)',
      { pragma: 'no-cache', 'cache-control': 'max-age=5' },
      { maxAgeSec: 5 },
    ],
  ];
  for (const [name, headers, expected] of cases) {
    it(name, () => assert.deepEqual(parseRequestDirectives(headers), { ...none, ...expected }));
  }
});

/** A response received at T0 with these headers (no Date: dated at receipt). */
const stored = (cc: string | undefined, extra: Record<string, string> = {}): StoredResponse => ({
  status: 200,
  headers: cc === undefined ? extra : { 'cache-control': cc, ...extra },
  requestTimeMs: T0,
  responseTimeMs: T0,
});

const fresh: ServeDecision = { kind: 'fresh', immutable: false, omitHeaders: [] };
const stale = (reason: StaleReason): ServeDecision => ({
  kind: 'stale-ok',
  reason,
  immutable: false,
  omitHeaders: [],
});
const revalidate: ServeDecision = { kind: 'revalidate' };
const only504: ServeDecision = { kind: 'miss-only-if-cached' };

describe('decideServe (RFC 9111 §4, §4.2.4, §5.2; RFC 5861; RFC 8246)', () => {
  // [name, response Cache-Control, request headers, age in s at decision, shared, originError, expected]
  const cases: [
    string,
    string | undefined,
    Record<string, string>,
    number,
    boolean,
    boolean,
    ServeDecision,
  ][] = [
    ['fresh by max-age (§4.2)', 'max-age=60', {}, 10, true, false, fresh],
    ['stale, no permission -> revalidate (§4.2.4)', 'max-age=60', {}, 61, true, false, revalidate],
    [
      'stale with only-if-cached -> 504 (§5.2.1.7)',
      'max-age=60',
      { 'cache-control': 'only-if-cached' },
      61,
      true,
      false,
      only504,
    ],
    [
      'fresh with only-if-cached -> fresh (§5.2.1.7)',
      'max-age=60',
      { 'cache-control': 'only-if-cached' },
      10,
      true,
      false,
      fresh,
    ],
    [
      'immutable flag when fresh (RFC 8246 §2)',
      'max-age=60, immutable',
      {},
      10,
      false,
      false,
      { ...fresh, immutable: true },
    ],
    [
      'response no-cache -> always revalidate (§5.2.2.4)',
      'max-age=60, no-cache',
      {},
      0,
      true,
      false,
      revalidate,
    ],
    [
      'response no-cache with only-if-cached -> 504',
      'no-cache',
      { 'cache-control': 'only-if-cached' },
      0,
      true,
      false,
      only504,
    ],
    [
      'qualified no-cache: serve without the fields (§5.2.2.4)',
      'max-age=60, no-cache="set-cookie"',
      {},
      0,
      true,
      false,
      { ...fresh, omitHeaders: ['set-cookie'] },
    ],
    [
      'request no-cache -> revalidate (§5.2.1.4)',
      'max-age=60',
      { 'cache-control': 'no-cache' },
      0,
      true,
      false,
      revalidate,
    ],
    [
      'Pragma no-cache without Cache-Control -> revalidate (§5.4)',
      'max-age=60',
      { pragma: 'no-cache' },
      0,
      true,
      false,
      revalidate,
    ],
    [
      'Pragma no-cache beside Cache-Control is ignored (§5.4)',
      'max-age=60',
      { pragma: 'no-cache', 'cache-control': 'max-stale=0' },
      0,
      true,
      false,
      fresh,
    ],
    [
      'request max-age exceeded -> revalidate (§5.2.1.1)',
      'max-age=60',
      { 'cache-control': 'max-age=5' },
      10,
      true,
      false,
      revalidate,
    ],
    [
      'request max-age equal to age -> fresh (§5.2.1.1 "less than or equal")',
      'max-age=60',
      { 'cache-control': 'max-age=10' },
      10,
      true,
      false,
      fresh,
    ],
    [
      'request max-age exceeded beats max-stale (§5.2.1.1)',
      'max-age=60',
      { 'cache-control': 'max-age=5, max-stale' },
      70,
      true,
      false,
      revalidate,
    ],
    [
      'min-fresh satisfied (§5.2.1.3)',
      'max-age=60',
      { 'cache-control': 'min-fresh=50' },
      10,
      true,
      false,
      fresh,
    ],
    [
      'min-fresh not satisfied -> revalidate (§5.2.1.3)',
      'max-age=60',
      { 'cache-control': 'min-fresh=51' },
      10,
      true,
      false,
      revalidate,
    ],
    [
      'max-stale within value -> stale-ok (§5.2.1.2)',
      'max-age=60',
      { 'cache-control': 'max-stale=30' },
      90,
      true,
      false,
      stale('max-stale'),
    ],
    [
      'max-stale exceeded -> revalidate (§5.2.1.2)',
      'max-age=60',
      { 'cache-control': 'max-stale=30' },
      91,
      true,
      false,
      revalidate,
    ],
    [
      'bare max-stale accepts any staleness (§5.2.1.2)',
      'max-age=60',
      { 'cache-control': 'max-stale' },
      1e6,
      true,
      false,
      stale('max-stale'),
    ],
    [
      'must-revalidate forbids max-stale (§5.2.2.2)',
      'max-age=60, must-revalidate',
      { 'cache-control': 'max-stale' },
      61,
      false,
      false,
      revalidate,
    ],
    [
      'proxy-revalidate forbids stale in a shared cache (§5.2.2.8)',
      'max-age=60, proxy-revalidate',
      { 'cache-control': 'max-stale' },
      61,
      true,
      false,
      revalidate,
    ],
    [
      'proxy-revalidate ignored by a private cache (§5.2.2.8)',
      'max-age=60, proxy-revalidate',
      { 'cache-control': 'max-stale' },
      61,
      false,
      false,
      stale('max-stale'),
    ],
    [
      's-maxage implies proxy-revalidate in a shared cache (§5.2.2.10)',
      's-maxage=60',
      { 'cache-control': 'max-stale' },
      61,
      true,
      false,
      revalidate,
    ],
    [
      'stale-while-revalidate within window (RFC 5861 §3)',
      'max-age=60, stale-while-revalidate=30',
      {},
      90,
      true,
      false,
      stale('stale-while-revalidate'),
    ],
    [
      'stale-while-revalidate window passed (RFC 5861 §3)',
      'max-age=60, stale-while-revalidate=30',
      {},
      91,
      true,
      false,
      revalidate,
    ],
    [
      'must-revalidate beats stale-while-revalidate (§5.2.2.2)',
      'max-age=60, must-revalidate, stale-while-revalidate=30',
      {},
      70,
      true,
      false,
      revalidate,
    ],
    [
      'request min-fresh refuses stale-while-revalidate (§5.2.1.3)',
      'max-age=60, stale-while-revalidate=30',
      { 'cache-control': 'min-fresh=0' },
      70,
      true,
      false,
      revalidate,
    ],
    [
      'stale-if-error needs an origin error (RFC 5861 §4)',
      'max-age=60, stale-if-error=300',
      {},
      100,
      true,
      false,
      revalidate,
    ],
    [
      'stale-if-error after an origin error (RFC 5861 §4)',
      'max-age=60, stale-if-error=300',
      {},
      100,
      true,
      true,
      stale('stale-if-error'),
    ],
    [
      'stale-if-error window passed (RFC 5861 §4)',
      'max-age=60, stale-if-error=30',
      {},
      100,
      true,
      true,
      revalidate,
    ],
    [
      'stale-if-error as a request directive (RFC 5861 §4)',
      'max-age=60',
      { 'cache-control': 'stale-if-error=300' },
      100,
      true,
      true,
      stale('stale-if-error'),
    ],
    [
      'must-revalidate beats stale-if-error (§5.2.2.2)',
      'max-age=60, must-revalidate, stale-if-error=300',
      {},
      100,
      true,
      true,
      revalidate,
    ],
    ['no freshness information -> revalidate', undefined, {}, 0, true, false, revalidate],
    ['duplicate max-age is stale (§4.2.1)', 'max-age=60, max-age=60', {}, 1, true, false, revalidate],
  ];
  for (const [name, cc, requestHeaders, ageSec, shared, originError, expected] of cases) {
    it(name, () => {
      const decision = decideServe({
        stored: stored(cc),
        requestHeaders,
        nowMs: T0 + ageSec * 1000,
        shared,
        originError,
      });
      assert.deepEqual(decision, expected);
    });
  }
});

describe('decideServe while disconnected (RFC 9111 §4.2.4)', () => {
  // [name, response Cache-Control, age in s, originUnreachable, disconnectedStaleSec, expected]
  const cases: [string, string | undefined, number, boolean, number | undefined, ServeDecision][] = [
    ['stale, origin unreachable, within the window', 'max-age=2', 5, true, 300, stale('disconnected')],
    ['stale, origin unreachable, past the window', 'max-age=2', 400, true, 300, revalidate],
    ['stale, origin unreachable, no window configured', 'max-age=2', 5, false, undefined, revalidate],
    ['stale, origin reachable: the window does not apply', 'max-age=2', 5, false, 300, revalidate],
    ['must-revalidate forbids it (§5.2.2.2)', 'max-age=2, must-revalidate', 5, true, 300, revalidate],
    [
      'proxy-revalidate forbids it in a shared cache (§5.2.2.8)',
      'max-age=2, proxy-revalidate',
      5,
      true,
      300,
      revalidate,
    ],
    ['s-maxage forbids it in a shared cache (§5.2.2.10)', 'max-age=2, s-maxage=2', 5, true, 300, revalidate],
    ['no-cache forbids it (§5.2.2.4)', 'max-age=2, no-cache', 5, true, 300, revalidate],
    [
      'unreachable also enables stale-if-error (RFC 5861 §4)',
      'max-age=2, stale-if-error=60',
      5,
      true,
      0,
      stale('stale-if-error'),
    ],
    ['fresh is fresh', 'max-age=60', 5, true, 300, fresh],
  ];
  for (const [name, cc, ageSec, originUnreachable, disconnectedStaleSec, expected] of cases) {
    it(name, () => {
      const decision = decideServe({
        stored: stored(cc),
        requestHeaders: {},
        nowMs: T0 + ageSec * 1000,
        shared: true,
        originUnreachable,
        ...(disconnectedStaleSec === undefined ? {} : { disconnectedStaleSec }),
      });
      assert.deepEqual(decision, expected);
    });
  }
});

describe('plainFreshUntilMs agrees with decideServe on plain requests (§4.2)', () => {
  const responses: [string, Record<string, string>][] = [
    ['max-age', { 'cache-control': 'max-age=60' }],
    ['max-age with Age', { 'cache-control': 'max-age=60', age: '20' }],
    ['s-maxage (shared)', { 'cache-control': 'max-age=5, s-maxage=60' }],
    ['Expires', { date: new Date(T0).toUTCString(), expires: new Date(T0 + 30_000).toUTCString() }],
    [
      'heuristic',
      { date: new Date(T0).toUTCString(), 'last-modified': new Date(T0 - 100_000).toUTCString() },
    ],
    ['already stale by Age', { 'cache-control': 'max-age=60', age: '100' }],
    ['no-cache', { 'cache-control': 'max-age=60, no-cache' }],
    ['qualified no-cache', { 'cache-control': 'max-age=60, no-cache="set-cookie"' }],
    ['Age list (first member, §5.1)', { 'cache-control': 'max-age=60', age: '1, 2' }],
    ['nothing', {}],
  ];
  for (const [name, headers] of responses) {
    it(name, () => {
      const s: StoredResponse = { status: 200, headers, requestTimeMs: T0 - 500, responseTimeMs: T0 };
      const until = plainFreshUntilMs(s, true);
      for (const dtSec of [0, 1, 9.999, 10, 19.5, 29.9, 30, 40, 59, 60, 61, 1000]) {
        const nowMs = T0 + dtSec * 1000;
        const d = decideServe({ stored: s, requestHeaders: {}, nowMs, shared: true });
        const fast = until !== null && nowMs < until;
        if (fast) assert.deepEqual(d, fresh, `${name} at +${dtSec}s`);
        else if (until !== null) assert.notEqual(d.kind, 'fresh', `${name} at +${dtSec}s`);
      }
    });
  }
});
