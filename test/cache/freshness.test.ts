import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  currentAgeSec,
  type FreshnessOptions,
  type FreshnessSource,
  freshEndMs,
  freshness,
  isFresh,
} from '../../src/cache/freshness.js';
import type { StoredResponse } from '../../src/cache/types.js';
import { formatHttpDate } from '../../src/http/dates.js';

const T0 = Date.UTC(2024, 0, 10, 12, 0, 0);
const at = (offsetSec: number): string => formatHttpDate(T0 + offsetSec * 1000);
const stored = (headers: Record<string, string>, over: Partial<StoredResponse> = {}): StoredResponse => ({
  status: 200,
  headers,
  requestTimeMs: T0,
  responseTimeMs: T0,
  ...over,
});

describe('freshness (RFC 9111 §4.2.1, §4.2.2)', () => {
  const cases: [string, StoredResponse, boolean, FreshnessOptions | undefined, number, FreshnessSource][] = [
    [
      's-maxage wins in a shared cache (§4.2.1)',
      stored({ 'cache-control': 'max-age=10, s-maxage=20' }),
      true,
      undefined,
      20,
      's-maxage',
    ],
    [
      's-maxage ignored in a private cache (§4.2.1)',
      stored({ 'cache-control': 'max-age=10, s-maxage=20' }),
      false,
      undefined,
      10,
      'max-age',
    ],
    [
      'max-age beats Expires (§4.2.1, §5.3)',
      stored({ 'cache-control': 'max-age=10', date: at(0), expires: at(100) }),
      true,
      undefined,
      10,
      'max-age',
    ],
    ['max-age=0', stored({ 'cache-control': 'max-age=0' }), true, undefined, 0, 'max-age'],
    [
      'max-age overflow saturates at 2^31 (§1.2.2)',
      stored({ 'cache-control': 'max-age=99999999999' }),
      true,
      undefined,
      2147483648,
      'max-age',
    ],
    [
      'duplicate max-age -> stale (§4.2.1)',
      stored({ 'cache-control': 'max-age=10, max-age=20' }),
      true,
      undefined,
      0,
      'conflict',
    ],
    [
      'duplicate s-maxage in a shared cache -> stale (§4.2.1)',
      stored({ 'cache-control': 's-maxage=1, s-maxage=2, max-age=5' }),
      true,
      undefined,
      0,
      'conflict',
    ],
    [
      'duplicate s-maxage ignored by a private cache',
      stored({ 'cache-control': 's-maxage=1, s-maxage=2, max-age=5' }),
      false,
      undefined,
      5,
      'max-age',
    ],
    [
      'invalid max-age argument -> stale (departure, §4.2.1)',
      stored({ 'cache-control': 'max-age=ten', expires: at(100) }),
      true,
      undefined,
      0,
      'conflict',
    ],
    ['Expires - Date (§4.2.1)', stored({ date: at(0), expires: at(100) }), true, undefined, 100, 'expires'],
    [
      'Expires without Date uses response time (§4.2.1)',
      stored({ expires: at(100) }, { responseTimeMs: T0 + 30_000 }),
      true,
      undefined,
      70,
      'expires',
    ],
    ['Expires before Date -> 0', stored({ date: at(0), expires: at(-100) }), true, undefined, 0, 'expires'],
    [
      'invalid Expires "0" -> already stale (§5.3)',
      stored({ date: at(0), expires: '0', 'last-modified': at(-1000) }),
      true,
      undefined,
      0,
      'expires',
    ],
    [
      'two joined Expires lines are invalid -> stale (§4.2.1, §5.3)',
      stored({ date: at(0), expires: `${at(10)}, ${at(20)}` }),
      true,
      undefined,
      0,
      'expires',
    ],
    [
      'heuristic 10% of Date - Last-Modified (§4.2.2)',
      stored({ date: at(0), 'last-modified': at(-1000) }),
      true,
      undefined,
      100,
      'heuristic',
    ],
    [
      'heuristic without Date uses response time (§4.2.2)',
      stored({ 'last-modified': at(-1000) }),
      true,
      undefined,
      100,
      'heuristic',
    ],
    [
      'heuristic capped at one day by default (§4.2.2)',
      stored({ date: at(0), 'last-modified': at(-100 * 86400) }),
      true,
      undefined,
      86400,
      'heuristic',
    ],
    [
      'heuristic cap configurable',
      stored({ date: at(0), 'last-modified': at(-100 * 86400) }),
      true,
      { heuristicCapSec: 3600 },
      3600,
      'heuristic',
    ],
    [
      'heuristic fraction configurable',
      stored({ date: at(0), 'last-modified': at(-1000) }),
      true,
      { heuristicFraction: 0.5 },
      500,
      'heuristic',
    ],
    [
      'Last-Modified after Date -> 0 heuristic',
      stored({ date: at(0), 'last-modified': at(1000) }),
      true,
      undefined,
      0,
      'heuristic',
    ],
    [
      'no heuristic for a non-heuristically-cacheable status (§4.2.2)',
      stored({ date: at(0), 'last-modified': at(-1000) }, { status: 302 }),
      true,
      undefined,
      0,
      'none',
    ],
    [
      'heuristic for public on any status (§4.2.2)',
      stored({ 'cache-control': 'public', date: at(0), 'last-modified': at(-1000) }, { status: 302 }),
      true,
      undefined,
      100,
      'heuristic',
    ],
    ['no Last-Modified, no expiry -> 0', stored({ date: at(0) }), true, undefined, 0, 'none'],
  ];
  for (const [name, s, shared, opts, lifetimeSec, source] of cases) {
    it(name, () => assert.deepEqual(freshness(s, shared, opts), { lifetimeSec, source }));
  }
});

describe('currentAgeSec (RFC 9111 §4.2.3)', () => {
  // [name, headers, requestTime offset s, responseTime offset s, now offset s, expected age s]
  const cases: [string, Record<string, string>, number, number, number, number][] = [
    ['just received, no Date, no Age', {}, 0, 0, 0, 0],
    ['resident_time = now - response_time', {}, 0, 0, 30, 30],
    ['response_delay is added to age_value', { age: '10' }, 0, 2, 2, 12],
    [
      'apparent_age from Date when larger than corrected_age_value',
      { date: at(-50), age: '10' },
      0,
      1,
      1,
      51,
    ],
    ['corrected_age_value when larger than apparent_age', { date: at(0), age: '100' }, 0, 1, 11, 111],
    ['Date in the future: apparent_age clamps to 0', { date: at(500) }, 0, 0, 5, 5],
    ['non-numeric Age: ignored (§5.1)', { age: 'ten' }, 0, 0, 0, 0],
    ['negative Age: ignored', { age: '-5' }, 0, 0, 0, 0],
    ['float Age: ignored', { age: '7200.0' }, 0, 0, 0, 0],
    ['Age with a parameter: ignored', { age: '7200;foo=bar' }, 0, 0, 0, 0],
    ['invalid Age ignored, apparent_age still counts', { date: at(-50), age: 'x' }, 0, 0, 0, 50],
    ['joined Age lines (a list): the first member (§5.1)', { age: '7, 9' }, 0, 0, 0, 7],
    ['Age: 0,7200: the first member', { age: '0,7200' }, 0, 0, 0, 0],
    ['list with an invalid first member: ignored', { age: 'x, 9' }, 0, 0, 0, 0],
    ['Age with surrounding whitespace is one value', { age: ' 7 ' }, 0, 0, 0, 7],
    ['empty Age: ignored', { age: '' }, 0, 0, 0, 0],
    ['fractional seconds from the ms clock', {}, 0, 0.5, 1.75, 1.75],
  ];
  for (const [name, headers, reqSec, resSec, nowSec, expected] of cases) {
    it(name, () => {
      const s = stored(headers, { requestTimeMs: T0 + reqSec * 1000, responseTimeMs: T0 + resSec * 1000 });
      assert.equal(currentAgeSec(s, T0 + nowSec * 1000), expected);
    });
  }
});

describe('isFresh (RFC 9111 §4.2)', () => {
  const s = stored({ 'cache-control': 'max-age=60' });
  const cases: [string, number, boolean][] = [
    ['age 0 < lifetime 60 -> fresh', 0, true],
    ['age 59.999 -> fresh', 59.999, true],
    ['age == lifetime -> stale (§4.2 response_is_fresh = lifetime > age)', 60, false],
    ['age 61 -> stale', 61, false],
  ];
  for (const [name, nowSec, expected] of cases) {
    it(name, () => assert.equal(isFresh(s, T0 + nowSec * 1000, true), expected));
  }
});

describe('freshEndMs (RFC 9111 §4.2, §4.2.3)', () => {
  // [name, headers, expected end as seconds after T0 (response time), or -Infinity]
  const cases: [string, Record<string, string>, number][] = [
    ['max-age from the response time', { 'cache-control': 'max-age=60' }, 60],
    ['Age shortens it', { 'cache-control': 'max-age=60', age: '20' }, 40],
    ['already stale: in the past', { 'cache-control': 'max-age=60', age: '100' }, -40],
    ['no freshness: now', {}, 0],
    ['Age list: its first member shortens it (§5.1)', { 'cache-control': 'max-age=60', age: '1, 2' }, 59],
    ['invalid Age: ignored (§5.1)', { 'cache-control': 'max-age=60', age: '-1' }, 60],
  ];
  for (const [name, headers, endSec] of cases) {
    it(name, () => {
      const s = stored(headers, { requestTimeMs: T0, responseTimeMs: T0 });
      assert.equal(freshEndMs(s, true), endSec === Number.NEGATIVE_INFINITY ? endSec : T0 + endSec * 1000);
      // §4.2: fresh just before the end, stale from it on.
      if (endSec > 0) assert.equal(isFresh(s, T0 + endSec * 1000 - 1, true), true);
      if (Number.isFinite(endSec)) assert.equal(isFresh(s, Math.max(T0, T0 + endSec * 1000), true), false);
    });
  }
});
