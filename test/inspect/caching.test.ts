import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkCaching } from '../../src/inspect/checks/caching.js';
import type { Recording, Severity } from '../../src/inspect/types.js';
import { type FindingCase, findingTableTests } from '../helpers/inspect-cases.js';
import { type ExchangeSpec, type Fields, NOW_MS, recording } from '../helpers/recording.js';

const at = (offsetSec: number): string => new Date(NOW_MS + offsetSec * 1000).toUTCString();
const DATE = at(0);
const HASHED = 'https://site.example/assets/app-3f2a9c1b.js';

/** A recording whose primary response has these fields (a valid Date unless given or nulled). */
function primary(
  headers: Record<string, string | string[]>,
  more: ExchangeSpec & { finalUrl?: string } = {},
) {
  const { finalUrl, ...spec } = more;
  const fields: Fields = { date: DATE, ...headers };
  return recording({
    ...(finalUrl === undefined ? {} : { finalUrl }),
    probes: { primary: { headers: fields, ...spec } },
  });
}
const noDate = (headers: Record<string, string | string[]>, more: ExchangeSpec = {}) =>
  recording({ probes: { primary: { headers, ...more } } });

const SEVERITY: Record<string, Severity> = {
  'caching.storable': 'info',
  'caching.freshness': 'info',
  'caching.age': 'info',
  'caching.stale': 'info',
  'caching.on-expiry': 'info',
  'caching.no-store-with-max-age': 'warning',
  'caching.expires-past-with-max-age': 'warning',
  'caching.public-and-private': 'warning',
  'caching.invalid-expires': 'warning',
  'caching.missing-date': 'error',
  'caching.pragma-alone': 'warning',
  'caching.immutable-without-lifetime': 'warning',
  'caching.bad-lifetime-directive': 'warning',
  'caching.html-long-lifetime': 'error',
  'caching.html-heuristic-lifetime': 'warning',
  'caching.html-no-cache-control': 'warning',
  'caching.error-long-lifetime': 'error',
  'caching.hashed-short-lifetime': 'warning',
  'caching.hashed-no-cache': 'warning',
  'caching.api-shared-with-credentials': 'error',
};

const CASES: FindingCase[] = [
  ['any response -> who may store it', primary({ 'cache-control': 'no-store' }), 'caching.storable', true],
  [
    'primary failed -> nothing',
    recording({ probes: { primary: { error: 'ECONNREFUSED' } } }),
    'caching.storable',
    false,
  ],
  ['max-age -> lifetime explained', primary({ 'cache-control': 'max-age=60' }), 'caching.freshness', true],
  [
    'no-store -> no lifetime to explain',
    primary({ 'cache-control': 'no-store' }),
    'caching.freshness',
    false,
  ],
  ['storable -> current age', primary({ 'cache-control': 'max-age=60' }), 'caching.age', true],
  ['not storable -> no age', primary({ 'cache-control': 'no-store' }), 'caching.age', false],
  [
    'Age beyond max-age -> stale',
    primary({ 'cache-control': 'max-age=60', age: '120' }),
    'caching.stale',
    true,
  ],
  [
    'Age within max-age -> fresh',
    primary({ 'cache-control': 'max-age=60', age: '10' }),
    'caching.stale',
    false,
  ],
  [
    'no-cache (lifetime 0) -> not called stale',
    primary({ 'cache-control': 'no-cache' }),
    'caching.stale',
    false,
  ],
  [
    'no-cache, max-age=60, Age: 120 -> not called stale (revalidated anyway)',
    primary({ 'cache-control': 'no-cache, max-age=60', age: '120' }),
    'caching.stale',
    false,
  ],
  [
    'Date 2 min ago, max-age=60 -> stale',
    primary({ date: at(-120), 'cache-control': 'max-age=60' }),
    'caching.stale',
    true,
  ],
  [
    'storable -> what happens on expiry',
    primary({ 'cache-control': 'no-cache', etag: '"a"' }),
    'caching.on-expiry',
    true,
  ],
  ['not storable -> nothing on expiry', primary({ 'cache-control': 'no-store' }), 'caching.on-expiry', false],
  [
    'no-store with max-age',
    primary({ 'cache-control': 'no-store, max-age=60' }),
    'caching.no-store-with-max-age',
    true,
  ],
  [
    'no-store with s-maxage',
    primary({ 'cache-control': 's-maxage=60, no-store' }),
    'caching.no-store-with-max-age',
    true,
  ],
  ['no-store alone', primary({ 'cache-control': 'no-store' }), 'caching.no-store-with-max-age', false],
  [
    'Expires in the past with max-age=60',
    primary({ 'cache-control': 'max-age=60', expires: 'Thu, 01 Jan 1970 00:00:00 GMT' }),
    'caching.expires-past-with-max-age',
    true,
  ],
  [
    'Expires = Date + max-age',
    primary({ 'cache-control': 'max-age=60', expires: at(60) }),
    'caching.expires-past-with-max-age',
    false,
  ],
  [
    'Expires in the past with max-age=0 (consistent)',
    primary({ 'cache-control': 'max-age=0', expires: 'Thu, 01 Jan 1970 00:00:00 GMT' }),
    'caching.expires-past-with-max-age',
    false,
  ],
  [
    'public with private',
    primary({ 'cache-control': 'public, private, max-age=60' }),
    'caching.public-and-private',
    true,
  ],
  [
    'public with qualified private="set-cookie"',
    primary({ 'cache-control': 'public, private="set-cookie", max-age=60' }),
    'caching.public-and-private',
    false,
  ],
  ['Expires: 0', primary({ expires: '0' }), 'caching.invalid-expires', true],
  [
    'Expires: -1 beside max-age',
    primary({ expires: '-1', 'cache-control': 'max-age=5' }),
    'caching.invalid-expires',
    true,
  ],
  ['two Expires lines', primary({ expires: [at(60), at(60)] }), 'caching.invalid-expires', true],
  ['Expires an IMF-fixdate', primary({ expires: at(60) }), 'caching.invalid-expires', false],
  ['200 without Date', noDate({ 'cache-control': 'no-cache' }), 'caching.missing-date', true],
  ['404 without Date', noDate({}, { status: 404 }), 'caching.missing-date', true],
  ['200 with Date', primary({ 'cache-control': 'no-cache' }), 'caching.missing-date', false],
  ['503 without Date (MAY)', noDate({}, { status: 503 }), 'caching.missing-date', false],
  ['Pragma: no-cache without Cache-Control', primary({ pragma: 'no-cache' }), 'caching.pragma-alone', true],
  [
    'Pragma beside Cache-Control',
    primary({ pragma: 'no-cache', 'cache-control': 'no-cache' }),
    'caching.pragma-alone',
    false,
  ],
  ['immutable alone', primary({ 'cache-control': 'immutable' }), 'caching.immutable-without-lifetime', true],
  [
    'immutable with max-age=0',
    primary({ 'cache-control': 'max-age=0, immutable' }),
    'caching.immutable-without-lifetime',
    true,
  ],
  [
    'immutable with max-age=31536000',
    primary({ 'cache-control': 'public, max-age=31536000, immutable' }),
    'caching.immutable-without-lifetime',
    false,
  ],
  [
    'immutable with a future Expires',
    primary({ 'cache-control': 'immutable', expires: at(3600) }),
    'caching.immutable-without-lifetime',
    false,
  ],
  [
    'max-age twice',
    primary({ 'cache-control': 'max-age=60, max-age=120' }),
    'caching.bad-lifetime-directive',
    true,
  ],
  [
    'max-age not a number',
    primary({ 'cache-control': 'max-age=1h' }),
    'caching.bad-lifetime-directive',
    true,
  ],
  ['max-age once', primary({ 'cache-control': 'max-age=60' }), 'caching.bad-lifetime-directive', false],
  [
    'HTML with max-age=3600',
    primary({ 'content-type': 'text/html; charset=utf-8', 'cache-control': 'max-age=3600' }),
    'caching.html-long-lifetime',
    true,
  ],
  [
    'HTML with s-maxage=86400 (shared caches only)',
    primary({ 'content-type': 'text/html', 'cache-control': 's-maxage=86400' }),
    'caching.html-long-lifetime',
    true,
  ],
  [
    'HTML with Expires a day ahead',
    primary({ 'content-type': 'text/html', expires: at(86_400) }),
    'caching.html-long-lifetime',
    true,
  ],
  [
    'HTML with max-age=600 (the threshold)',
    primary({ 'content-type': 'text/html', 'cache-control': 'max-age=600' }),
    'caching.html-long-lifetime',
    false,
  ],
  [
    'HTML with no-cache beside max-age (always revalidated)',
    primary({ 'content-type': 'text/html', 'cache-control': 'no-cache, max-age=3600' }),
    'caching.html-long-lifetime',
    false,
  ],
  [
    'HTML with no-store, max-age (never stored)',
    primary({ 'content-type': 'text/html', 'cache-control': 'no-store, max-age=3600' }),
    'caching.html-long-lifetime',
    false,
  ],
  [
    'JSON with max-age=3600 (not HTML)',
    primary({ 'content-type': 'application/json', 'cache-control': 'max-age=3600' }),
    'caching.html-long-lifetime',
    false,
  ],
  [
    'HTML, Cache-Control: public without a lifetime, Last-Modified 30 days ago',
    primary({ 'content-type': 'text/html', 'cache-control': 'public', 'last-modified': at(-30 * 86_400) }),
    'caching.html-heuristic-lifetime',
    true,
  ],
  [
    'HTML, Cache-Control: public, Last-Modified an hour ago (heuristic 6 min)',
    primary({ 'content-type': 'text/html', 'cache-control': 'public', 'last-modified': at(-3600) }),
    'caching.html-heuristic-lifetime',
    false,
  ],
  [
    'HTML, no Cache-Control, Last-Modified 30 days ago',
    primary({ 'content-type': 'text/html', 'last-modified': at(-30 * 86_400) }),
    'caching.html-no-cache-control',
    true,
  ],
  [
    // Issue 26: right after a deploy (heuristic 4 s) it passed, a month later it warned.
    'HTML, no Cache-Control, Last-Modified 40 s ago (heuristic 4 s)',
    primary({ 'content-type': 'text/html', 'last-modified': at(-40) }),
    'caching.html-no-cache-control',
    true,
  ],
  [
    'HTML, no Cache-Control, no Last-Modified',
    primary({ 'content-type': 'text/html' }),
    'caching.html-no-cache-control',
    true,
  ],
  [
    'HTML with Cache-Control: no-cache',
    primary({ 'content-type': 'text/html', 'cache-control': 'no-cache' }),
    'caching.html-no-cache-control',
    false,
  ],
  [
    'HTML with Expires a day ahead is the long-lifetime error, not this',
    primary({ 'content-type': 'text/html', expires: at(86_400) }),
    'caching.html-no-cache-control',
    false,
  ],
  [
    'a 404 HTML page without Cache-Control (the status warns)',
    primary({ 'content-type': 'text/html' }, { status: 404 }),
    'caching.html-no-cache-control',
    false,
  ],
  [
    '404 with max-age=31536000, immutable',
    primary({ 'cache-control': 'public, max-age=31536000, immutable' }, { status: 404 }),
    'caching.error-long-lifetime',
    true,
  ],
  [
    '502 with max-age=7200',
    primary({ 'cache-control': 'max-age=7200' }, { status: 502 }),
    'caching.error-long-lifetime',
    true,
  ],
  [
    '404 with immutable and a short max-age',
    primary({ 'cache-control': 'max-age=60, immutable' }, { status: 404 }),
    'caching.error-long-lifetime',
    true,
  ],
  [
    '404 with max-age=3600 (the threshold)',
    primary({ 'cache-control': 'max-age=3600' }, { status: 404 }),
    'caching.error-long-lifetime',
    false,
  ],
  [
    '200 with max-age=31536000, immutable',
    primary({ 'cache-control': 'max-age=31536000, immutable' }),
    'caching.error-long-lifetime',
    false,
  ],
  [
    '503 with no-store',
    primary({ 'cache-control': 'no-store' }, { status: 503 }),
    'caching.error-long-lifetime',
    false,
  ],
  [
    'HTML with no-cache and an old Last-Modified',
    primary({ 'content-type': 'text/html', 'cache-control': 'no-cache', 'last-modified': at(-30 * 86_400) }),
    'caching.html-heuristic-lifetime',
    false,
  ],
  [
    'hashed name with max-age=3600',
    primary({ 'cache-control': 'public, max-age=3600' }, { finalUrl: HASHED }),
    'caching.hashed-short-lifetime',
    true,
  ],
  [
    'hashed name without Cache-Control (heuristic only)',
    primary({ 'last-modified': at(-30 * 86_400) }, { finalUrl: HASHED }),
    'caching.hashed-short-lifetime',
    true,
  ],
  [
    'hashed name with a year, immutable',
    primary({ 'cache-control': 'public, max-age=31536000, immutable' }, { finalUrl: HASHED }),
    'caching.hashed-short-lifetime',
    false,
  ],
  [
    'plain name with max-age=3600',
    primary({ 'cache-control': 'max-age=3600' }, { finalUrl: 'https://site.example/assets/app-settings.js' }),
    'caching.hashed-short-lifetime',
    false,
  ],
  [
    'hashed name answered 404',
    primary({ 'cache-control': 'no-cache' }, { finalUrl: HASHED, status: 404 }),
    'caching.hashed-short-lifetime',
    false,
  ],
  [
    'hashed name with no-cache',
    primary({ 'cache-control': 'no-cache' }, { finalUrl: HASHED }),
    'caching.hashed-no-cache',
    true,
  ],
  [
    'hashed name with no-store',
    primary({ 'cache-control': 'no-store' }, { finalUrl: HASHED }),
    'caching.hashed-no-cache',
    true,
  ],
  [
    'hashed name with a year',
    primary({ 'cache-control': 'max-age=31536000' }, { finalUrl: HASHED }),
    'caching.hashed-no-cache',
    false,
  ],
  [
    'JSON, public, with Set-Cookie',
    primary({
      'content-type': 'application/json',
      'cache-control': 'public, max-age=60',
      'set-cookie': 'sid=1',
    }),
    'caching.api-shared-with-credentials',
    true,
  ],
  [
    'JSON without Cache-Control (heuristically storable) with Set-Cookie',
    primary({ 'content-type': 'application/json', 'set-cookie': 'sid=1' }),
    'caching.api-shared-with-credentials',
    true,
  ],
  [
    'problem+json, s-maxage, to a request with Authorization',
    primary(
      { 'content-type': 'application/problem+json', 'cache-control': 's-maxage=60' },
      { requestHeaders: { authorization: 'Bearer x' } },
    ),
    'caching.api-shared-with-credentials',
    true,
  ],
  [
    'JSON, private, with Set-Cookie',
    primary({
      'content-type': 'application/json',
      'cache-control': 'private, max-age=60',
      'set-cookie': 'sid=1',
    }),
    'caching.api-shared-with-credentials',
    false,
  ],
  [
    'JSON, public, private="set-cookie" (the cookie is not stored)',
    primary({
      'content-type': 'application/json',
      'cache-control': 'public, max-age=60, private="set-cookie"',
      'set-cookie': 'sid=1',
    }),
    'caching.api-shared-with-credentials',
    false,
  ],
  [
    'JSON, max-age only, to a request with Authorization (shared caches refuse it)',
    primary(
      { 'content-type': 'application/json', 'cache-control': 'max-age=60' },
      { requestHeaders: { authorization: 'Bearer x' } },
    ),
    'caching.api-shared-with-credentials',
    false,
  ],
  [
    'JSON, public, no cookie, no Authorization',
    primary({ 'content-type': 'application/json', 'cache-control': 'public, max-age=60' }),
    'caching.api-shared-with-credentials',
    false,
  ],
  [
    'HTML, public, with Set-Cookie (not an API response)',
    primary({ 'content-type': 'text/html', 'cache-control': 'public, max-age=60', 'set-cookie': 'sid=1' }),
    'caching.api-shared-with-credentials',
    false,
  ],
];

describe('caching checks (issue 16 item 3)', () => {
  findingTableTests({
    area: 'caching',
    check: checkCaching,
    cases: CASES,
    severity: SEVERITY,
    allIdsListed: true,
  });
});

describe('caching explanations say what the cache engine decided', () => {
  const cases: [condition: string, rec: Recording, id: string, says: RegExp][] = [
    [
      'public -> both',
      primary({ 'cache-control': 'public, max-age=60' }),
      'caching.storable',
      /browser and shared/,
    ],
    [
      'private -> browser only',
      primary({ 'cache-control': 'private, max-age=60' }),
      'caching.storable',
      /only the browser.*\(private\)/,
    ],
    [
      'no-store -> nobody',
      primary({ 'cache-control': 'no-store' }),
      'caching.storable',
      /no cache may store it \(no-store\)/,
    ],
    ['POST -> nobody', primary({}, { method: 'POST' }), 'caching.storable', /not GET or HEAD/],
    [
      'max-age=3600',
      primary({ 'cache-control': 'max-age=3600' }),
      'caching.freshness',
      /^fresh for 3600 s \(1 h\) from max-age$/,
    ],
    [
      's-maxage differs per cache',
      primary({ 'cache-control': 'max-age=60, s-maxage=600' }),
      'caching.freshness',
      /the browser: fresh for 60 s.*max-age; shared caches: fresh for 600 s.*s-maxage/,
    ],
    [
      'Expires an hour after Date',
      primary({ expires: at(3600) }),
      'caching.freshness',
      /3600 s .*from Expires/,
    ],
    [
      'Last-Modified 10 days ago -> heuristic',
      primary({ 'last-modified': at(-10 * 86_400) }),
      'caching.freshness',
      /86400 s .*heuristic/,
    ],
    [
      'no-cache -> no lifetime',
      primary({ 'cache-control': 'no-cache' }),
      'caching.freshness',
      /no freshness lifetime/,
    ],
    [
      'no-cache beside a heuristic lifetime -> revalidated anyway',
      primary({ 'cache-control': 'no-cache', 'last-modified': at(-10 * 86_400) }),
      'caching.freshness',
      /^no-cache: revalidated before each reuse \(its lifetime alone: fresh for 86400 s/,
    ],
    [
      'no-cache -> no "fresh for another"',
      primary({ 'cache-control': 'no-cache, max-age=600' }),
      'caching.age',
      /^current age 0 s$/,
    ],
    [
      'Age: 100',
      primary({ 'cache-control': 'max-age=3600', age: '100' }),
      'caching.age',
      /current age 100 s .*another 3500 s/,
    ],
    [
      'ETag -> If-None-Match',
      primary({ 'cache-control': 'no-cache', etag: '"a"' }),
      'caching.on-expiry',
      /no-cache.*If-None-Match/,
    ],
    [
      'Last-Modified only',
      primary({ 'cache-control': 'max-age=5', 'last-modified': at(-60) }),
      'caching.on-expiry',
      /If-Modified-Since/,
    ],
    ['no validator', primary({ 'cache-control': 'max-age=5' }), 'caching.on-expiry', /whole body again/],
    [
      'must-revalidate',
      primary({ 'cache-control': 'max-age=5, must-revalidate' }),
      'caching.on-expiry',
      /never served stale/,
    ],
    [
      'stale-while-revalidate and stale-if-error',
      primary({ 'cache-control': 'max-age=5, stale-while-revalidate=30, stale-if-error=86400' }),
      'caching.on-expiry',
      /30 s stale while it revalidates.*86400 s .*stale when the origin fails/,
    ],
  ];
  for (const [condition, rec, id, says] of cases) {
    it(`${condition} -> ${id} says ${says}`, () => {
      const f = checkCaching(rec).find((x) => x.id === id);
      assert.ok(f, `expected ${id}`);
      assert.match(f.message, says);
    });
  }
});

describe('Gatehouse defaults raise no caching warnings', () => {
  const cases: [condition: string, rec: Recording][] = [
    [
      'HTML: no-cache, ETag, Last-Modified',
      primary({
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-cache',
        etag: '"x"',
        'last-modified': at(-86_400),
      }),
    ],
    [
      'hashed asset: public, a year, immutable, Expires',
      primary(
        {
          'content-type': 'text/javascript',
          'cache-control': 'public, max-age=31536000, immutable',
          expires: at(31_536_000),
        },
        { finalUrl: HASHED },
      ),
    ],
    [
      'a 404 problem+json: no-cache',
      primary({ 'content-type': 'application/problem+json', 'cache-control': 'no-cache' }, { status: 404 }),
    ],
  ];
  for (const [condition, rec] of cases) {
    it(condition, () => {
      const loud = checkCaching(rec).filter((f) => f.severity !== 'info');
      assert.deepEqual(loud, []);
    });
  }
});
