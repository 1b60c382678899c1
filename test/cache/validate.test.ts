import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StoredResponse } from '../../src/cache/types.js';
import {
  conditionalHeaders,
  freshenHeaders,
  freshenStored,
  selectForUpdate,
  selectValidated,
  storedHeaderFields,
} from '../../src/cache/validate.js';

const LM = 'Wed, 10 Jan 2024 12:00:00 GMT';
const LM2 = 'Wed, 10 Jan 2024 13:00:00 GMT';
const v = (headers: Record<string, string>, responseTimeMs = 0): StoredResponse => ({
  status: 200,
  headers,
  requestTimeMs: responseTimeMs,
  responseTimeMs,
});

describe('conditionalHeaders (RFC 9111 §4.3.1)', () => {
  const cases: [string, StoredResponse[], Record<string, string>][] = [
    ['no variants -> unconditional', [], {}],
    ['one strong ETag', [v({ etag: '"a"' })], { 'if-none-match': '"a"' }],
    [
      'all tags, strong and weak, deduplicated',
      [v({ etag: '"a"' }), v({ etag: 'W/"b"' }), v({ etag: '"a"' })],
      { 'if-none-match': '"a", W/"b"' },
    ],
    [
      'ETag and Last-Modified: tags only (If-None-Match wins, RFC 9110 §13.2.2)',
      [v({ etag: '"a"', 'last-modified': LM })],
      { 'if-none-match': '"a"' },
    ],
    ['invalid ETag is skipped', [v({ etag: 'abc', 'last-modified': LM })], { 'if-modified-since': LM }],
    [
      'single variant, Last-Modified only -> If-Modified-Since',
      [v({ 'last-modified': LM })],
      { 'if-modified-since': LM },
    ],
    [
      'several variants, Last-Modified only -> unconditional (§4.3.1 single response)',
      [v({ 'last-modified': LM }), v({ 'last-modified': LM2 })],
      {},
    ],
    ['invalid Last-Modified -> unconditional', [v({ 'last-modified': 'yesterday' })], {}],
    ['no validators -> unconditional', [v({})], {}],
  ];
  for (const [name, variants, expected] of cases) {
    it(name, () => assert.deepEqual(conditionalHeaders(variants), expected));
  }
});

describe('freshenHeaders (RFC 9111 §4.3.4, §3.2)', () => {
  const storedHeaders = {
    'content-type': 'text/html',
    'content-length': '1234',
    'content-encoding': 'br',
    'cache-control': 'max-age=10',
    etag: '"a"',
    date: LM,
    age: '30',
    'x-old': 'kept',
  };
  const cases: [string, Record<string, string>, Record<string, string>][] = [
    ['empty 304 keeps everything but Age (departure)', {}, {}],
    [
      'replaces and adds fields (§3.2)',
      { 'cache-control': 'max-age=60', date: LM2, 'x-new': '1' },
      { 'cache-control': 'max-age=60', date: LM2, 'x-new': '1' },
    ],
    ['Content-Length is not updated (§3.2)', { 'content-length': '0' }, {}],
    [
      'Content-Encoding and Content-Range keep the stored framing (§3.2)',
      { 'content-encoding': 'gzip', 'content-range': 'bytes 0-1/2' },
      {},
    ],
    [
      'Content-MD5 keeps the digest of the stored bytes (§3.2)',
      { 'content-md5': 'N7UdGUp1E+RbVvZSTy1R8g==' },
      {},
    ],
    ['Content-Type is updated (§3.2)', { 'content-type': 'text/plain' }, { 'content-type': 'text/plain' }],
    [
      'hop-by-hop fields are not stored (§3.1)',
      { connection: 'close', 'keep-alive': 'timeout=5', 'transfer-encoding': 'chunked', upgrade: 'h2c' },
      {},
    ],
    ['fields named by Connection are not stored (§3.1)', { connection: 'X-Hop', 'x-hop': '1' }, {}],
    [
      'proxy authentication fields are not stored (§3.1)',
      { 'proxy-authenticate': 'Basic', 'proxy-authentication-info': 'x' },
      {},
    ],
    ['Age from the 304 replaces the stored one', { age: '5' }, { age: '5' }],
  ];
  for (const [name, notModified, changes] of cases) {
    it(name, () => {
      const expected: Record<string, string> = { ...storedHeaders };
      delete expected.age;
      for (const [k, val] of Object.entries(changes)) {
        expected[k] = val;
      }
      assert.deepEqual(freshenHeaders(v(storedHeaders), notModified), expected);
    });
  }
  it('freshenStored takes the 304 exchange times (§4.2.3)', () => {
    const s = freshenStored(v({ etag: '"a"' }, 5), { 'cache-control': 'max-age=9' }, 100, 120);
    assert.deepEqual(s, {
      status: 200,
      headers: { etag: '"a"', 'cache-control': 'max-age=9' },
      requestTimeMs: 100,
      responseTimeMs: 120,
    });
  });
});

describe('selectForUpdate (RFC 9111 §4.3.4)', () => {
  const a1 = v({ etag: '"a"' }, 1);
  const a2 = v({ etag: '"a"' }, 2);
  const b = v({ etag: '"b"' }, 3);
  const wa1 = v({ etag: 'W/"a"' }, 4);
  const wa2 = v({ etag: 'W/"a"' }, 5);
  const lm1 = v({ 'last-modified': LM }, 6);
  const lm2 = v({ 'last-modified': LM }, 7);
  const lmOther = v({ 'last-modified': LM2 }, 8);
  const bare = v({}, 9);
  const cases: [string, StoredResponse[], Record<string, string>, StoredResponse[]][] = [
    ['strong ETag selects every strong match', [a1, b, a2], { etag: '"a"' }, [a1, a2]],
    ['strong ETag does not select weak stored tags (strong comparison)', [wa1], { etag: '"a"' }, []],
    ['strong ETag with no match -> none (full request)', [b], { etag: '"z"' }, []],
    ['weak ETag selects the most recent weak match', [wa1, wa2, b], { etag: 'W/"a"' }, [wa2]],
    ['weak ETag matches a strong stored tag weakly', [a1, a2], { etag: 'W/"a"' }, [a2]],
    ['invalid ETag on the 304 -> none', [a1], { etag: 'a' }, []],
    [
      'Last-Modified without ETags: most recent with the same date',
      [lm1, lm2, lmOther],
      { 'last-modified': LM },
      [lm2],
    ],
    [
      'Last-Modified does not select a variant with an ETag',
      [v({ etag: '"a"', 'last-modified': LM })],
      { 'last-modified': LM },
      [],
    ],
    ['Last-Modified with no match -> none', [lmOther], { 'last-modified': LM }, []],
    ['no validator: the single stored response without validators', [bare], {}, [bare]],
    ['no validator: several stored responses -> none', [bare, v({}, 10)], {}, []],
    ['no validator: the stored response has one -> none', [a1], {}, []],
  ];
  for (const [name, variants, headers, expected] of cases) {
    it(name, () => {
      const got = selectForUpdate(variants, headers);
      assert.equal(got.length, expected.length);
      for (let i = 0; i < got.length; i++) assert.equal(got[i], expected[i]);
    });
  }
});

describe('selectValidated (a 304 to our own conditional request)', () => {
  const a = v({ etag: '"a"' }, 1);
  const b = v({ etag: '"b"' }, 2);
  const cases: [string, StoredResponse[], Record<string, string>, StoredResponse[]][] = [
    ['no validator on the 304, one response asked about (it has an ETag) -> it', [a], {}, [a]],
    ['no validator on the 304, two asked about -> none (cannot tell which)', [a, b], {}, []],
    ['matching strong ETag -> as selectForUpdate', [a, b], { etag: '"b"' }, [b]],
    ['other ETag -> none', [a], { etag: '"z"' }, []],
  ];
  for (const [name, asked, headers, expected] of cases) {
    it(name, () => {
      const got = selectValidated(asked, headers);
      assert.equal(got.length, expected.length);
      for (let i = 0; i < got.length; i++) assert.equal(got[i], expected[i]);
    });
  }
});

describe('storedHeaderFields (RFC 9111 §3.1)', () => {
  const cases: [string, Record<string, string>, Record<string, string>][] = [
    [
      'hop-by-hop fields dropped',
      { connection: 'keep-alive', 'keep-alive': 'timeout=5', etag: '"a"' },
      { etag: '"a"' },
    ],
    ['fields named by Connection dropped', { connection: 'a, B', a: '1', b: '2', c: '3' }, { c: '3' }],
    ['Proxy-Authenticate dropped', { 'proxy-authenticate': 'Basic', 'x-y': '1' }, { 'x-y': '1' }],
    ['nothing to drop -> same fields', { 'cache-control': 'max-age=1' }, { 'cache-control': 'max-age=1' }],
  ];
  for (const [name, input, expected] of cases)
    it(name, () => assert.deepEqual(storedHeaderFields(input), expected));
});
