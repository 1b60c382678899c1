import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isStorable, type StorableInput, type StorableResult } from '../../src/cache/storable.js';

const base: StorableInput = {
  method: 'GET',
  requestHeaders: {},
  status: 200,
  responseHeaders: {},
  shared: true,
};
const ok: StorableResult = { ok: true, omitHeaders: [] };
const no = (reason: string): StorableResult => ({ ok: false, reason }) as StorableResult;

describe('isStorable (RFC 9111 §3)', () => {
  const cases: [string, Partial<StorableInput>, StorableResult][] = [
    ['GET 200 without directives: heuristically cacheable (§4.2.2)', {}, ok],
    [
      'HEAD 200 max-age (§3 method understood)',
      { method: 'HEAD', responseHeaders: { 'cache-control': 'max-age=60' } },
      ok,
    ],
    [
      'POST with max-age -> method not cacheable (§3)',
      { method: 'POST', responseHeaders: { 'cache-control': 'max-age=60' } },
      no('method-not-cacheable'),
    ],
    [
      'lowercase get is a different method (RFC 9110 §9.1 case-sensitive)',
      { method: 'get' },
      no('method-not-cacheable'),
    ],
    ['103 is not final (§3)', { status: 103 }, no('status-not-final')],
    [
      '600 is not a status (§3)',
      { status: 600, responseHeaders: { 'cache-control': 'max-age=60' } },
      no('status-not-final'),
    ],
    [
      'unknown 299 with max-age is storable (§3: understanding needed only with must-understand)',
      { status: 299, responseHeaders: { 'cache-control': 'max-age=60' } },
      ok,
    ],
    [
      'unknown 299 without explicit freshness -> not heuristically cacheable (§4.2.2)',
      { status: 299 },
      no('no-explicit-cacheability'),
    ],
    [
      'must-understand with unknown status (§5.2.2.3)',
      { status: 299, responseHeaders: { 'cache-control': 'must-understand, no-store, max-age=60' } },
      no('status-not-understood'),
    ],
    [
      'must-understand with known status ignores no-store (§5.2.2.3)',
      { responseHeaders: { 'cache-control': 'must-understand, no-store, max-age=60' } },
      ok,
    ],
    [
      '206 is not stored as a complete response (§3.3)',
      { status: 206, responseHeaders: { 'cache-control': 'max-age=60' } },
      no('partial-content'),
    ],
    [
      '304 is an update, not a stored response (§4.3.4)',
      { status: 304, responseHeaders: { 'cache-control': 'max-age=60' } },
      no('not-modified'),
    ],
    [
      'response no-store (§5.2.2.5)',
      { responseHeaders: { 'cache-control': 'max-age=60, no-store' } },
      no('no-store-response'),
    ],
    [
      'request no-store (§5.2.1.5)',
      { requestHeaders: { 'cache-control': 'no-store' }, responseHeaders: { 'cache-control': 'max-age=60' } },
      no('no-store-request'),
    ],
    [
      'private in a shared cache (§5.2.2.7)',
      { responseHeaders: { 'cache-control': 'private, max-age=60' } },
      no('private-in-shared-cache'),
    ],
    [
      'private in a private cache counts as explicit (§3)',
      { shared: false, status: 299, responseHeaders: { 'cache-control': 'private' } },
      ok,
    ],
    [
      'qualified private in a shared cache: store without the fields (§5.2.2.7)',
      { responseHeaders: { 'cache-control': 'private="Set-Cookie, x-user", max-age=60' } },
      { ok: true, omitHeaders: ['set-cookie', 'x-user'] },
    ],
    [
      'Authorization in a shared cache without permission (§3.5)',
      { requestHeaders: { authorization: 'Basic eDp5' }, responseHeaders: { 'cache-control': 'max-age=60' } },
      no('authorization-in-shared-cache'),
    ],
    [
      'Authorization in a shared cache with public (§3.5)',
      { requestHeaders: { authorization: 'Basic eDp5' }, responseHeaders: { 'cache-control': 'public' } },
      ok,
    ],
    [
      'Authorization in a shared cache with must-revalidate (§3.5)',
      {
        requestHeaders: { authorization: 'Basic eDp5' },
        responseHeaders: { 'cache-control': 'must-revalidate, max-age=60' },
      },
      ok,
    ],
    [
      'Authorization in a shared cache with s-maxage (§3.5)',
      {
        requestHeaders: { authorization: 'Basic eDp5' },
        responseHeaders: { 'cache-control': 's-maxage=60' },
      },
      ok,
    ],
    [
      'Authorization in a private cache (§3.5 applies to shared only)',
      {
        shared: false,
        requestHeaders: { authorization: 'Basic eDp5' },
        responseHeaders: { 'cache-control': 'max-age=60' },
      },
      ok,
    ],
    [
      '302 without explicit freshness (§3, not heuristically cacheable)',
      { status: 302 },
      no('no-explicit-cacheability'),
    ],
    ['302 with Expires (§5.3), even invalid', { status: 302, responseHeaders: { expires: '0' } }, ok],
    ['302 with public (§5.2.2.9)', { status: 302, responseHeaders: { 'cache-control': 'public' } }, ok],
    [
      '302 with s-maxage in a shared cache (§5.2.2.10)',
      { status: 302, responseHeaders: { 'cache-control': 's-maxage=5' } },
      ok,
    ],
    [
      '302 with s-maxage in a private cache does not count (§3)',
      { shared: false, status: 302, responseHeaders: { 'cache-control': 's-maxage=5' } },
      no('no-explicit-cacheability'),
    ],
    [
      '302 with a configured extension (§5.2.3)',
      { status: 302, responseHeaders: { 'cache-control': 'x-cache-me' }, storableExtensions: ['x-cache-me'] },
      ok,
    ],
    [
      '302 with an unknown extension (§5.2.3)',
      { status: 302, responseHeaders: { 'cache-control': 'x-cache-me' } },
      no('no-explicit-cacheability'),
    ],
    ['500 without explicit freshness', { status: 500 }, no('no-explicit-cacheability')],
  ];
  for (const status of [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]) {
    cases.push([`${status} is heuristically cacheable (§4.2.2)`, { status }, ok]);
  }
  for (const [name, over, expected] of cases) {
    it(name, () => assert.deepEqual(isStorable({ ...base, ...over }), expected));
  }
});
