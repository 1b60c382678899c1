import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type CacheControl,
  deltaSeconds,
  fieldNames,
  formatCacheControl,
  hasDirective,
  parseCacheControl,
  parseDeltaSeconds,
} from '../../src/http/cache-control.js';

const plain = (cc: CacheControl) => ({
  directives: Object.fromEntries(cc.directives),
  duplicates: [...cc.duplicates].sort(),
});

describe('parseCacheControl', () => {
  type Expected = { directives: Record<string, string | true>; duplicates: string[] };
  const cases: [string, string | string[] | undefined, Expected][] = [
    [
      'directive with a token argument (RFC 9111 §5.2)',
      'max-age=60',
      { directives: { 'max-age': '60' }, duplicates: [] },
    ],
    [
      'names are case-insensitive and lowercased (RFC 9111 §5.2)',
      'Max-Age=60, PUBLIC',
      { directives: { 'max-age': '60', public: true }, duplicates: [] },
    ],
    [
      'quoted-string argument is unquoted (RFC 9111 §5.2)',
      'max-age="60", private="a\\"b"',
      { directives: { 'max-age': '60', private: 'a"b' }, duplicates: [] },
    ],
    [
      'qualified no-cache with a comma inside the quotes (RFC 9111 §5.2.2.4)',
      'no-cache="Set-Cookie, X-Foo", must-revalidate',
      { directives: { 'no-cache': 'Set-Cookie, X-Foo', 'must-revalidate': true }, duplicates: [] },
    ],
    [
      'duplicate directive: first kept, name recorded (RFC 9111 §4.2.1)',
      'max-age=60, public, MAX-AGE=0, public',
      { directives: { 'max-age': '60', public: true }, duplicates: ['max-age', 'public'] },
    ],
    [
      'several field lines form one list (RFC 9110 §5.3)',
      ['public', 'max-age=5, s-maxage=10'],
      { directives: { public: true, 'max-age': '5', 's-maxage': '10' }, duplicates: [] },
    ],
    [
      'duplicates across field lines (RFC 9111 §4.2.1)',
      ['max-age=5', 'max-age=10'],
      { directives: { 'max-age': '5' }, duplicates: ['max-age'] },
    ],
    [
      'OWS and empty members (RFC 9110 §5.6.1)',
      ' , no-store ,, ',
      { directives: { 'no-store': true }, duplicates: [] },
    ],
    [
      'whitespace around "=" is malformed and skipped',
      'max-age = 5, public',
      { directives: { public: true }, duplicates: [] },
    ],
    [
      'empty argument is malformed and skipped',
      'max-age=, public',
      { directives: { public: true }, duplicates: [] },
    ],
    ['missing name is malformed and skipped', '=5, public', { directives: { public: true }, duplicates: [] }],
    [
      'non-token unquoted argument is skipped',
      'private=a/b, public',
      { directives: { public: true }, duplicates: [] },
    ],
    [
      'trailing junk makes a member malformed',
      'max-age=5 x, public',
      { directives: { public: true }, duplicates: [] },
    ],
    [
      'bad quoted-string is skipped',
      'private="a\nb", public',
      { directives: { public: true }, duplicates: [] },
    ],
    [
      'unterminated quoted-string swallows the rest',
      'public, private="a, max-age=5',
      { directives: { public: true }, duplicates: [] },
    ],
    [
      'malformed first occurrence lets a later valid one in',
      'max-age=x/y, max-age=7',
      { directives: { 'max-age': '7' }, duplicates: [] },
    ],
    [
      'extension directive (RFC 9111 §5.2.3)',
      'community="UCI"',
      { directives: { community: 'UCI' }, duplicates: [] },
    ],
    ['only commas', ',,,', { directives: {}, duplicates: [] }],
    ['empty string', '', { directives: {}, duplicates: [] }],
    ['absent', undefined, { directives: {}, duplicates: [] }],
    ['empty array', [], { directives: {}, duplicates: [] }],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.deepEqual(plain(parseCacheControl(input)), expected));
  }
});

describe('parseDeltaSeconds (RFC 9111 §1.2.2)', () => {
  const cases: [string, string, number | null][] = [
    ['zero', '0', 0],
    ['a plain integer', '60', 60],
    ['leading zeros', '007', 7],
    ['2^31 - 1', '2147483647', 2147483647],
    ['2^31 exactly', '2147483648', 2147483648],
    ['overflow saturates at 2^31 (RFC 9111 §1.2.2)', '2147483649', 2147483648],
    ['huge overflow saturates at 2^31', '9'.repeat(400), 2147483648],
    ['negative -> null', '-1', null],
    ['plus sign -> null', '+5', null],
    ['decimal -> null', '1.5', null],
    ['empty -> null', '', null],
    ['leading space -> null', ' 5', null],
    ['letters -> null', '5s', null],
    ['huge with junk at the end -> null', '9'.repeat(40) + 'x', null],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.equal(parseDeltaSeconds(input), expected));
  }
});

describe('deltaSeconds / hasDirective / fieldNames', () => {
  const cc = parseCacheControl(
    'max-age=60, s-maxage="120", stale-if-error=-1, no-cache="Set-Cookie, X-A, bad name", private, must-revalidate',
  );
  const deltas: [string, string, number | null][] = [
    ['token argument (RFC 9111 §5.2.2.1)', 'max-age', 60],
    ['quoted argument is accepted (RFC 9111 §5.2)', 's-maxage', 120],
    ['name lookup is case-insensitive (RFC 9111 §5.2)', 'MAX-AGE', 60],
    ['negative argument -> null (RFC 9111 §1.2.2)', 'stale-if-error', null],
    ['directive without argument -> null', 'must-revalidate', null],
    ['absent directive -> null', 'min-fresh', null],
  ];
  for (const [name, directive, expected] of deltas) {
    it(`deltaSeconds: ${name}`, () => assert.equal(deltaSeconds(cc, directive), expected));
  }
  const presence: [string, string, boolean][] = [
    ['bare directive', 'must-revalidate', true],
    ['directive with argument', 'max-age', true],
    ['case-insensitive', 'Private', true],
    ['absent', 'no-store', false],
  ];
  for (const [name, directive, expected] of presence) {
    it(`hasDirective: ${name}`, () => assert.equal(hasDirective(cc, directive), expected));
  }
  const names: [string, string, string[] | null][] = [
    ['qualified no-cache lists lowercase field names (RFC 9111 §5.2.2.4)', 'no-cache', ['set-cookie', 'x-a']],
    ['unqualified private -> null (RFC 9111 §5.2.2.7)', 'private', null],
    ['absent -> null', 'no-store', null],
  ];
  for (const [name, directive, expected] of names) {
    it(`fieldNames: ${name}`, () => assert.deepEqual(fieldNames(cc, directive), expected));
  }
  it('fieldNames: qualified private="x" (RFC 9111 §5.2.2.7)', () => {
    assert.deepEqual(fieldNames(parseCacheControl('private="Authorization"'), 'private'), ['authorization']);
  });
});

describe('formatCacheControl', () => {
  const cases: [string, Parameters<typeof formatCacheControl>[0], string][] = [
    [
      'record with bare and numeric directives (RFC 9111 §5.2)',
      { public: true, 'max-age': 60 },
      'public, max-age=60',
    ],
    ['names are lowercased', { 'Max-Age': 0 }, 'max-age=0'],
    [
      'non-token value becomes a quoted-string (RFC 9111 §5.2)',
      { private: 'set-cookie, x-a' },
      'private="set-cookie, x-a"',
    ],
    ['token string value stays bare', { 'max-age': '5' }, 'max-age=5'],
    ['empty string value is quoted', { ext: '' }, 'ext=""'],
    ['quotes and backslashes escaped (RFC 9110 §5.6.4)', { ext: 'a"b' }, 'ext="a\\"b"'],
    ['false and undefined are skipped', { 'no-store': false, public: true, 'max-age': undefined }, 'public'],
    [
      'a Map keeps its order',
      new Map<string, string | true>([
        ['no-cache', true],
        ['max-age', '0'],
      ]),
      'no-cache, max-age=0',
    ],
    ['array of pairs', [['immutable', true] as const], 'immutable'],
    ['nothing', {}, ''],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.equal(formatCacheControl(input), expected));
  }
  it('output re-parses to the same directives', () => {
    const text = formatCacheControl({ public: true, 'max-age': 60, 'no-cache': 'Set-Cookie, X' });
    assert.deepEqual(Object.fromEntries(parseCacheControl(text).directives), {
      public: true,
      'max-age': '60',
      'no-cache': 'Set-Cookie, X',
    });
  });
  const throwing: [string, Parameters<typeof formatCacheControl>[0]][] = [
    ['a name that is not a token', { 'max age': 1 }],
    ['a negative number (delta-seconds, RFC 9111 §1.2.2)', { 'max-age': -1 }],
    ['a fractional number', { 'max-age': 1.5 }],
    ['NaN', { 'max-age': Number.NaN }],
    ['CR LF in a value', { ext: 'a\r\nb' }],
  ];
  for (const [name, input] of throwing) {
    it(`throws TypeError for ${name}`, () => assert.throws(() => formatCacheControl(input), TypeError));
  }
});
