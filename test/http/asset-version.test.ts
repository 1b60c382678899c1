import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  MIN_VERSION_CHARS,
  type QueryParam,
  queryParam,
  urlVersionMatches,
  versionMatches,
} from '../../src/http/asset-version.js';

// The 27 characters a strong ETag quotes: base64url sha256 of the bytes.
const HASH = createHash('sha256').update('export const answer = 42;\n').digest('base64url').slice(0, 27);
const HEX = createHash('sha256').update('export const answer = 42;\n').digest('hex');
// sha256('d') in standard base64 starts `GKw+c0PwFo`: a `+` where base64url has `-`.
const D_URL = createHash('sha256').update('d').digest('base64url').slice(0, 27);
const D_B64 = createHash('sha256').update('d').digest('base64');

describe('versionMatches', () => {
  const flipCase = (s: string) =>
    s.replace(/[a-z]/i, (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()));
  const cases: [string, string, string, boolean][] = [
    ['right: the 10 characters assetUrl gives', HASH.slice(0, 10), HASH, true],
    ['exactly 8 characters (the minimum)', HASH.slice(0, MIN_VERSION_CHARS), HASH, true],
    ['too short: 7 characters', HASH.slice(0, 7), HASH, false],
    ['full length (27)', HASH, HASH, true],
    ['longer than the hash', `${HASH}A`, HASH, false],
    ['wrong: another hash', 'AAAAAAAAAA', HASH, false],
    [
      'wrong: right prefix, last character changed',
      HASH.slice(0, 9) + (HASH[9] === 'x' ? 'y' : 'x'),
      HASH,
      false,
    ],
    ['not a prefix: characters from the middle', HASH.slice(1, 11), HASH, false],
    ['empty', '', HASH, false],
    ['case differs (base64url is case-sensitive)', flipCase(HASH.slice(0, 10)), HASH, false],
    ['other alphabet: hex of the same sha256', HEX.slice(0, 10), HASH, false],
    ['other alphabet: standard base64 (+) of the same sha256', D_B64.slice(0, 10), D_URL, false],
    ['the base64url form of that same sha256', D_URL.slice(0, 10), D_URL, true],
    ['percent-encoded character is not decoded', `${HASH.slice(0, 8)}%41`, `${HASH.slice(0, 8)}A`, false],
  ];
  for (const [name, value, hash, expected] of cases) {
    it(`${name} -> ${expected}`, () => assert.equal(versionMatches(value, hash), expected));
  }
  it('the standard-base64 case above really differs from base64url in its first 10 characters', () => {
    assert.notEqual(D_B64.slice(0, 10), D_URL.slice(0, 10));
  });
});

describe('queryParam', () => {
  const one = (value: string): QueryParam => ({ kind: 'one', value });
  const absent: QueryParam = { kind: 'absent' };
  const repeated: QueryParam = { kind: 'repeated' };
  const cases: [string, string, QueryParam][] = [
    ['no query', '/app.js', absent],
    ['empty query', '/app.js?', absent],
    ['the one parameter', '/app.js?v=abc', one('abc')],
    ['after another parameter', '/app.js?lang=en&v=abc', one('abc')],
    ['before another parameter', '/app.js?v=abc&lang=en', one('abc')],
    ['repeated -> ambiguous', '/app.js?v=a&v=b', repeated],
    ['repeated with the same value -> still ambiguous', '/app.js?v=a&v=a', repeated],
    ['bare name: empty value', '/app.js?v', one('')],
    ['empty value', '/app.js?v=', one('')],
    ['a name that ends with v is another name', '/app.js?xv=abc', absent],
    ['a name that starts with v is another name', '/app.js?vx=abc', absent],
    ['v only inside a value', '/app.js?x=v=abc', absent],
    ['names are case-sensitive', '/app.js?V=abc', absent],
    ['names are not percent-decoded', '/app.js?%76=abc', absent],
    ['value kept raw (not decoded)', '/app.js?v=a%2Bb', one('a%2Bb')],
    ['value may hold =', '/app.js?v=a=b', one('a=b')],
    ['a fragment ends the query', '/app.js?v=abc#v=def', one('abc')],
    ['empty members are skipped', '/app.js?&&v=abc&', one('abc')],
    ['? in the path part is the query start', '/a?b?v=1', absent],
  ];
  for (const [name, url, expected] of cases) {
    it(`${name}: ${url}`, () => assert.deepEqual(queryParam(url, 'v'), expected));
  }
  it('another parameter name (ver)', () => {
    assert.deepEqual(queryParam('/app.js?v=a&ver=b', 'ver'), one('b'));
    assert.deepEqual(queryParam('/app.js?ver=a&v=b', 'v'), one('b'));
  });
});

describe('urlVersionMatches', () => {
  const v = HASH.slice(0, 10);
  const cases: [string, string, boolean][] = [
    ['right v', `/app.js?v=${v}`, true],
    ['right v beside other parameters', `/app.js?lang=en&v=${v}&x=1`, true],
    ['repeated v, both right', `/app.js?v=${v}&v=${v}`, false],
    ['repeated v, one wrong', `/app.js?v=${v}&v=AAAAAAAAAA`, false],
    ['no query', '/app.js', false],
    ['too short', `/app.js?v=${HASH.slice(0, 7)}`, false],
    ['empty v', '/app.js?v=', false],
  ];
  for (const [name, url, expected] of cases) {
    it(`${name} -> ${expected}`, () => assert.equal(urlVersionMatches(url, 'v', HASH), expected));
  }
});
