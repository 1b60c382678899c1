import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  parseSfDictionary,
  type SfBareItem,
  type SfItem,
  type SfMember,
} from '../../src/http/structured-fields.js';
import { ITERATIONS, mulberry32, SEED_OFFSET } from '../helpers/random.js';

/** A compact view: bare items as `type:value`, inner lists as arrays, parameters as `;k=v`. */
function show(item: SfBareItem): string {
  return item.type === 'byte-sequence' ? `bytes:${item.base64}` : `${item.type}:${item.value}`;
}
function showMember(m: SfMember): string | string[] {
  const params = [...m.params].map(([k, v]) => `;${k}=${show(v)}`).join('');
  if (m.kind === 'inner-list') return [...m.items.flatMap(showMember), `()${params}`];
  return show(m.item) + params;
}
function plain(value: string): Record<string, string | string[]> | null {
  const dict = parseSfDictionary(value);
  return dict === null ? null : Object.fromEntries([...dict].map(([k, m]) => [k, showMember(m)]));
}

describe('parseSfDictionary (RFC 8941 §4.2.2)', () => {
  const valid: [string, string, Record<string, string | string[]>][] = [
    ['empty value: empty dictionary', '', {}],
    ['only spaces: empty dictionary (§4.2)', '   ', {}],
    ['bare key is Boolean true (§4.2.2)', 'no-store', { 'no-store': 'boolean:true' }],
    ['integer member', 'max-age=60', { 'max-age': 'integer:60' }],
    [
      'several members, OWS around commas',
      'a=1 ,\tb=2,c',
      { a: 'integer:1', b: 'integer:2', c: 'boolean:true' },
    ],
    ['no whitespace', 'a=1,b=2', { a: 'integer:1', b: 'integer:2' }],
    ['leading SP discarded (§4.2)', '  a=1', { a: 'integer:1' }],
    ['trailing SP discarded (§4.2)', 'a=1  ', { a: 'integer:1' }],
    ['trailing HTAB after a member (§4.2.2 OWS)', 'a=1\t', { a: 'integer:1' }],
    [
      'duplicate key: last value, first position (§4.2.2)',
      'a=1, b=2, a=3',
      { a: 'integer:3', b: 'integer:2' },
    ],
    ['key may start with "*"', '*a=1', { '*a': 'integer:1' }],
    ['key chars lcalpha digit _ - . *', 'a0_-.*=1', { 'a0_-.*': 'integer:1' }],
    ['string', 'private="set-cookie"', { private: 'string:set-cookie' }],
    ['string with escapes (§4.2.5)', 'a="x\\"y\\\\z"', { a: 'string:x"y\\z' }],
    ['empty string', 'a=""', { a: 'string:' }],
    ['string with a comma inside', 'a="x, y", b', { a: 'string:x, y', b: 'boolean:true' }],
    ['token (§4.2.6)', 'a=foo', { a: 'token:foo' }],
    ['token with ":" and "/"', 'a=text/html:x', { a: 'token:text/html:x' }],
    ['token starting with "*"', 'a=*', { a: 'token:*' }],
    ['token starting uppercase', 'a=Foo', { a: 'token:Foo' }],
    ['boolean ?1 / ?0 (§4.2.8)', 'a=?1, b=?0', { a: 'boolean:true', b: 'boolean:false' }],
    ['negative integer', 'a=-5', { a: 'integer:-5' }],
    ['-0 is 0', 'a=-0', { a: 'integer:0' }],
    ['leading zeros', 'a=007', { a: 'integer:7' }],
    ['15-digit integer (§4.2.4)', 'a=999999999999999', { a: 'integer:999999999999999' }],
    ['decimal (§4.2.4)', 'a=1.5', { a: 'decimal:1.5' }],
    ['decimal with 3 fraction digits', 'a=-1.125', { a: 'decimal:-1.125' }],
    ['decimal with 12 integer digits', 'a=123456789012.1', { a: 'decimal:123456789012.1' }],
    ['byte sequence (§4.2.7)', 'a=:aGVsbG8=:', { a: 'bytes:aGVsbG8=' }],
    ['empty byte sequence', 'a=::', { a: 'bytes:' }],
    ['parameters on a value (§4.2.3.2)', 'a=1;p;q=x', { a: 'integer:1;p=boolean:true;q=token:x' }],
    ['parameters on a bare key', 'a;p=2', { a: 'boolean:true;p=integer:2' }],
    ['SP after ";" in parameters', 'a=1; p=2', { a: 'integer:1;p=integer:2' }],
    ['repeated parameter: last value', 'a;p=1;p=2', { a: 'boolean:true;p=integer:2' }],
    ['inner list (§4.2.1.2)', 'a=(1 "x" y)', { a: ['integer:1', 'string:x', 'token:y', '()'] }],
    ['empty inner list', 'a=()', { a: ['()'] }],
    ['inner list with spaces inside', 'a=(  1  2  )', { a: ['integer:1', 'integer:2', '()'] }],
    [
      'inner list with parameters on items and on the list',
      'a=(1;x 2);y=?0',
      { a: ['integer:1;x=boolean:true', 'integer:2', '();y=boolean:false'] },
    ],
  ];
  for (const [name, value, expected] of valid) {
    it(name, () => assert.deepEqual(plain(value), expected));
  }

  const invalid: [string, string][] = [
    ['trailing comma', 'a=1,'],
    ['trailing comma and space', 'a=1, '],
    ['empty member', 'a=1,,b=2'],
    ['leading comma', ',a=1'],
    ['uppercase key', 'A=1'],
    ['key starting with a digit', '1a=1'],
    ['key starting with "-"', '-a=1'],
    ['empty key', '=1'],
    ['space before "="', 'a =1'],
    ['space after "="', 'a= 1'],
    ['missing value after "="', 'a='],
    ['leading HTAB (only SP is discarded, §4.2)', '\ta=1'],
    ['member separated by space only', 'a=1 b=2'],
    ['semicolon-separated members', 'a=1;b=2 c'],
    ['space before ";"', 'a=1 ;p'],
    ['unterminated string', 'a="abc'],
    ['bad escape in string', 'a="\\x"'],
    ['control character in string', 'a="a\tb"'],
    ['non-ASCII in string', 'a="\u00e9"'],
    ['non-ASCII key', '\u00e9=1'],
    ['16-digit integer', 'a=1234567890123456'],
    ['13 integer digits before "."', 'a=1234567890123.1'],
    ['decimal with 4 fraction digits', 'a=1.1234'],
    ['decimal ending in "."', 'a=1.'],
    ['two dots', 'a=1.2.3'],
    ['lone minus', 'a=-'],
    ['minus then letter', 'a=-x'],
    ['boolean other than 0/1', 'a=?2'],
    ['lone "?"', 'a=?'],
    ['unterminated byte sequence', 'a=:abc'],
    ['non-base64 in byte sequence', 'a=:a b:'],
    ['unterminated inner list (RFC 9213 example)', 'max-age=60, foo=('],
    ['inner list without SP between items', 'a=(1"x")'],
    ['nested inner list', 'a=((1))'],
    ['trailing junk after a string', 'a="x"y'],
    ['junk character', 'a=1, @'],
    ['date (RFC 9651, not RFC 8941)', 'a=@1659578233'],
    ['parameter with uppercase key', 'a;P'],
    ['parameter value an inner list', 'a;p=(1)'],
  ];
  for (const [name, value] of invalid) {
    it(`invalid: ${name}`, () => assert.equal(parseSfDictionary(value), null));
  }
});

// --- property tests ---------------------------------------------------------------------------------
// Seeded (test/helpers/random.ts): FUZZ_SEED=7 FUZZ_ITERATIONS=100000 node scripts/run-tests.mjs ...

describe('fuzz: parseSfDictionary', () => {
  const next = mulberry32(0x5f0d1c + SEED_OFFSET);
  const int = (n: number) => Math.floor(next() * n);
  const pick = (s: string) => s[int(s.length)]!;
  const LC = 'abcdefghijklmnopqrstuvwxyz';
  const ALPHA = LC + LC.toUpperCase();
  const DIGIT = '0123456789';
  const TCHAR = "!#$%&'*+-.^_`|~" + ALPHA + DIGIT;
  const many = (chars: string, max: number) => {
    let s = '';
    for (let n = int(max + 1); n > 0; n--) s += pick(chars);
    return s;
  };
  /** A key from a small set, so duplicates happen. */
  const key = () => ['a', 'b', 'max-age', 'no-store', '*x', 'k0_-.*'][int(6)]!;

  /** A random bare item: its text and what parsing it must give. */
  function bare(): [string, SfBareItem] {
    switch (int(6)) {
      case 0: {
        const n = (next() < 0.3 ? -1 : 1) * Number(DIGIT[1 + int(9)]! + many(DIGIT, 14));
        return [String(n), { type: 'integer', value: n || 0 }];
      }
      case 1: {
        const text =
          (next() < 0.3 ? '-' : '') + pick(DIGIT) + many(DIGIT, 11) + '.' + pick(DIGIT) + many(DIGIT, 2);
        return [text, { type: 'decimal', value: Number(text) }];
      }
      case 2: {
        let value = '';
        for (let n = int(12); n > 0; n--) value += String.fromCharCode(0x20 + int(0x5f));
        return ['"' + value.replace(/[\\"]/g, '\\$&') + '"', { type: 'string', value }];
      }
      case 3: {
        const value = pick(ALPHA + '*') + many(TCHAR + ':/', 10);
        return [value, { type: 'token', value }];
      }
      case 4: {
        const base64 = many(ALPHA + DIGIT + '+/=', 12);
        return [':' + base64 + ':', { type: 'byte-sequence', base64 }];
      }
      default: {
        const value = next() < 0.5;
        return [value ? '?1' : '?0', { type: 'boolean', value }];
      }
    }
  }
  function params(): [string, Map<string, SfBareItem>] {
    let text = '';
    const map = new Map<string, SfBareItem>();
    for (let n = int(3); n > 0; n--) {
      const k = key();
      const [t, v] = next() < 0.3 ? ['', { type: 'boolean', value: true } as const] : bare();
      text += ';' + (next() < 0.3 ? ' ' : '') + k + (t === '' ? '' : '=' + t);
      map.set(k, v);
    }
    return [text, map];
  }
  function member(): [string, SfMember] {
    if (next() < 0.2) {
      const items: SfItem[] = [];
      const texts: string[] = [];
      for (let n = int(4); n > 0; n--) {
        const [t, item] = bare();
        const [pt, p] = params();
        texts.push(t + pt);
        items.push({ kind: 'item', item, params: p });
      }
      const [pt, p] = params();
      return [
        '=(' + (next() < 0.5 ? ' ' : '') + texts.join(' '.repeat(1 + int(2))) + ')' + pt,
        { kind: 'inner-list', items, params: p },
      ];
    }
    if (next() < 0.3) {
      const [pt, p] = params();
      return [pt, { kind: 'item', item: { type: 'boolean', value: true }, params: p }];
    }
    const [t, item] = bare();
    const [pt, p] = params();
    return ['=' + t + pt, { kind: 'item', item, params: p }];
  }

  it(`${ITERATIONS} generated dictionaries parse to what was generated`, () => {
    for (let n = 0; n < ITERATIONS; n++) {
      const expected = new Map<string, SfMember>();
      const texts: string[] = [];
      for (let m = int(5); m > 0; m--) {
        const k = key();
        const [t, value] = member();
        texts.push(k + t);
        expected.set(k, value); // RFC 8941 §4.2.2: last value, first position
      }
      const text =
        ' '.repeat(int(2)) + texts.join([',', ', ', ' ,\t', '\t,  '][int(4)]!) + ' '.repeat(int(2));
      const got = parseSfDictionary(text);
      assert.ok(got !== null, text);
      assert.deepEqual(
        [...got].map(([k, m]) => [k, showMember(m)]),
        [...expected].map(([k, m]) => [k, showMember(m)]),
        text,
      );
    }
  });

  it(`${ITERATIONS} hostile strings never throw`, () => {
    const PIECES = [
      'a',
      'max-age',
      '=',
      '=',
      ',',
      ', ',
      ' ',
      '\t',
      ';',
      '"',
      '\\',
      '(',
      ')',
      ':',
      '?',
      '?1',
      '-',
      '.',
    ];
    const MORE = ['1', '99999999999999999', '*', '/', '@', '%', '\u00e9', '\u{1f600}', '\x00', '\r\n', 'A'];
    const all = [...PIECES, ...MORE];
    for (let n = 0; n < ITERATIONS; n++) {
      let s = '';
      for (let m = next() < 0.005 ? 20000 : int(24); m > 0; m--) s += all[int(all.length)];
      const got = parseSfDictionary(s);
      if (got !== null) for (const k of got.keys()) assert.match(k, /^[a-z*][a-z0-9_\-.*]*$/, s);
    }
  });
});
