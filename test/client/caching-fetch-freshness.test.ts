// Spec 3.1, the strong-cache rules in order (no-store, no-cache, max-age against now - Date, Expires,
// else validate), as the caching fetch decides them: the engine's isStorable and decideServe with
// `shared: false` (a private cache), the clock injected as nowMs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideServe } from '../../src/cache/request.js';
import { isStorable } from '../../src/cache/storable.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const http = (ms: number) => new Date(ms).toUTCString();

type Verdict = 'not-stored' | 'fresh' | 'validate';

/** Stored at T0 (request and response), asked again at T0 + atSec, with the given response fields. */
function strongCache(
  headers: Record<string, string>,
  atSec: number,
  reqHeaders: Record<string, string> = {},
): Verdict {
  const ok = isStorable({
    method: 'GET',
    requestHeaders: {},
    status: 200,
    responseHeaders: headers,
    shared: false,
  });
  if (!ok.ok) return 'not-stored';
  const d = decideServe({
    stored: { status: 200, headers, requestTimeMs: T0, responseTimeMs: T0 },
    requestHeaders: reqHeaders,
    nowMs: T0 + atSec * 1000,
    shared: false,
  });
  return d.kind === 'fresh' ? 'fresh' : 'validate';
}

describe('spec 3.1: strong cache order, private cache', () => {
  const cases: [string, Record<string, string>, number, Verdict][] = [
    [
      '1. no-store -> not stored, even with max-age',
      { 'cache-control': 'no-store, max-age=600', date: http(T0) },
      0,
      'not-stored',
    ],
    [
      '2. no-cache -> validate, even with max-age',
      { 'cache-control': 'no-cache, max-age=600', date: http(T0) },
      1,
      'validate',
    ],
    [
      '3. max-age=60, now - Date = 30 s -> fresh',
      { 'cache-control': 'max-age=60', date: http(T0) },
      30,
      'fresh',
    ],
    [
      '3. max-age=60, now - Date = 90 s -> validate',
      { 'cache-control': 'max-age=60', date: http(T0) },
      90,
      'validate',
    ],
    [
      '3. max-age=60, Date 50 s before receipt, now = receipt + 20 s -> validate (age counts from Date)',
      { 'cache-control': 'max-age=60', date: http(T0 - 50_000) },
      20,
      'validate',
    ],
    [
      '3. Cache-Control max-age wins over a later Expires: max-age=10 at 30 s -> validate',
      { 'cache-control': 'max-age=10', date: http(T0), expires: http(T0 + 3600_000) },
      30,
      'validate',
    ],
    [
      '3. Cache-Control max-age wins over an Expires in the past: max-age=600 -> fresh',
      { 'cache-control': 'max-age=600', date: http(T0), expires: http(T0 - 3600_000) },
      30,
      'fresh',
    ],
    [
      '4. Expires = Date + 60 s, now = Date + 30 s -> fresh',
      { date: http(T0), expires: http(T0 + 60_000) },
      30,
      'fresh',
    ],
    [
      '4. Expires = Date + 60 s, now = Date + 90 s -> validate',
      { date: http(T0), expires: http(T0 + 60_000) },
      90,
      'validate',
    ],
    ['4. Expires in the past -> validate', { date: http(T0), expires: http(T0 - 60_000) }, 0, 'validate'],
    [
      '4. invalid Expires ("0") -> validate (a time in the past, RFC 9111 §5.3)',
      { date: http(T0), expires: '0' },
      0,
      'validate',
    ],
    [
      '4. missing Date: Expires measured from receipt, +60 s at 30 s -> fresh',
      { expires: http(T0 + 60_000) },
      30,
      'fresh',
    ],
    ['4. missing Date: Expires +60 s at 90 s -> validate', { expires: http(T0 + 60_000) }, 90, 'validate'],
    [
      '5. no freshness information, no Last-Modified -> validate',
      { date: http(T0), etag: '"a"' },
      0,
      'validate',
    ],
    [
      'private cache: private, max-age=60 -> fresh (stored)',
      { 'cache-control': 'private, max-age=60', date: http(T0) },
      30,
      'fresh',
    ],
    [
      'private cache: s-maxage ignored, max-age=60, s-maxage=0 -> fresh',
      { 'cache-control': 'max-age=60, s-maxage=0', date: http(T0) },
      30,
      'fresh',
    ],
    [
      'private cache: heuristic, Last-Modified 10 days before Date, 1 h later -> fresh',
      { date: http(T0), 'last-modified': http(T0 - 10 * 86_400_000) },
      3600,
      'fresh',
    ],
  ];
  for (const [name, headers, atSec, expected] of cases) {
    it(name, () => assert.equal(strongCache(headers, atSec), expected));
  }

  it('request max-age=0 (normal reload) -> validate a fresh response', () => {
    assert.equal(
      strongCache({ 'cache-control': 'max-age=600', date: http(T0) }, 1, { 'cache-control': 'max-age=0' }),
      'validate',
    );
  });
  it('request no-cache + Pragma (forced reload) -> validate a fresh response', () => {
    assert.equal(
      strongCache({ 'cache-control': 'max-age=600', date: http(T0) }, 1, {
        'cache-control': 'no-cache',
        pragma: 'no-cache',
      }),
      'validate',
    );
  });
  it('private cache: Authorization on the request does not stop storing (RFC 9111 §3.5 is for shared caches)', () => {
    const r = isStorable({
      method: 'GET',
      requestHeaders: { authorization: 'Bearer x' },
      status: 200,
      responseHeaders: { 'cache-control': 'max-age=60' },
      shared: false,
    });
    assert.equal(r.ok, true);
  });
});
