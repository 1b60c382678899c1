import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  isToken,
  listIncludesToken,
  parseParameters,
  quote,
  splitList,
  trimOws,
  unquote,
} from '../../src/http/lists.js';

describe('splitList', () => {
  const cases: [string, string, string[]][] = [
    ['plain list (RFC 9110 §5.6.1)', 'a,b,c', ['a', 'b', 'c']],
    ['OWS around elements is trimmed (RFC 9110 §5.6.1)', ' a , b\t,\tc ', ['a', 'b', 'c']],
    ['empty elements are dropped (RFC 9110 §5.6.1.2)', ',, a ,, b ,', ['a', 'b']],
    ['only commas and spaces -> empty (RFC 9110 §5.6.1.2)', ' , ,', []],
    ['empty string -> empty', '', []],
    ['a single element is returned as is', 'gzip', ['gzip']],
    ['comma inside a quoted-string does not split (RFC 9110 §5.6.4)', '"a,b", c', ['"a,b"', 'c']],
    ['escaped quote inside a quoted-string (RFC 9110 §5.6.4 quoted-pair)', '"a\\",b", c', ['"a\\",b"', 'c']],
    ['escaped backslash ends before the closing quote', '"a\\\\", b', ['"a\\\\"', 'b']],
    ['parameters with quoted commas stay in their element', 'a;x="1,2", b', ['a;x="1,2"', 'b']],
    ['unterminated quote runs to the end', 'a, "b,c', ['a', '"b,c']],
    ['inner spaces are kept', 'a b, c', ['a b', 'c']],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.deepEqual(splitList(input), expected));
  }
});

describe('isToken', () => {
  const cases: [string, string, boolean][] = [
    ['a plain token (RFC 9110 §5.6.2)', 'gzip', true],
    ['every tchar symbol (RFC 9110 §5.6.2)', "!#$%&'*+-.^_`|~09AZaz", true],
    ['empty is not a token (1*tchar)', '', false],
    ['space is a delimiter', 'a b', false],
    ['"/" is a delimiter', 'text/html', false],
    ['"," is a delimiter', 'a,b', false],
    ['DQUOTE is a delimiter', '"a"', false],
    ['"=" is a delimiter', 'a=b', false],
    ['obs-text is not tchar', 'caf\u00e9', false],
    ['non-latin1 is not tchar', '\u4e2d', false],
    ['control characters are not tchar', 'a\x00', false],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.equal(isToken(input), expected));
  }
});

describe('unquote', () => {
  const cases: [string, string, string | null][] = [
    ['simple quoted-string (RFC 9110 §5.6.4)', '"abc"', 'abc'],
    ['empty quoted-string', '""', ''],
    ['escaped DQUOTE (RFC 9110 §5.6.4 quoted-pair)', '"a\\"b"', 'a"b'],
    ['escaped backslash', '"a\\\\"', 'a\\'],
    ['escaped ordinary char is the char itself', '"\\a\\b"', 'ab'],
    ['space and HTAB are qdtext', '"a b\tc"', 'a b\tc'],
    ['obs-text is qdtext (RFC 9110 §5.6.4)', '"caf\u00e9"', 'caf\u00e9'],
    ['not quoted -> null', 'abc', null],
    ['missing closing quote -> null', '"abc', null],
    ['a lone quote -> null', '"', null],
    ['unescaped quote inside -> null', '"a"b"', null],
    ['backslash escaping the closing quote -> null', '"a\\"', null],
    ['LF is not qdtext -> null', '"a\nb"', null],
    ['DEL is not qdtext -> null', '"a\x7fb"', null],
    ['escaped LF is not a quoted-pair -> null', '"a\\\nb"', null],
    ['code unit above 0xFF -> null', '"\u4e2d"', null],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.equal(unquote(input), expected));
  }
});

describe('quote', () => {
  const cases: [string, string, string][] = [
    ['plain text (RFC 9110 §5.6.4)', 'abc', '"abc"'],
    ['empty text', '', '""'],
    ['DQUOTE and backslash are escaped (RFC 9110 §5.6.4 quoted-pair)', 'a"b\\c', '"a\\"b\\\\c"'],
    ['commas and spaces need no escape', 'a, b', '"a, b"'],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => {
      assert.equal(quote(input), expected);
      assert.equal(unquote(quote(input)), input);
    });
  }
  const throwing: [string, string][] = [
    ['CR LF (header injection)', 'a\r\nSet-Cookie: x'],
    ['NUL', 'a\x00'],
    ['DEL', '\x7f'],
    ['code units above 0xFF', '\u2028'],
  ];
  for (const [name, input] of throwing) {
    it(`throws TypeError for ${name} (RFC 9110 §5.5 field value chars)`, () =>
      assert.throws(() => quote(input), TypeError));
  }
});

describe('parseParameters', () => {
  const cases: [string, string, Record<string, string>][] = [
    [
      'names lowercased, values kept (RFC 9110 §5.6.6)',
      '; charset=UTF-8; Q=0.5',
      { charset: 'UTF-8', q: '0.5' },
    ],
    ['media type before the parameters is skipped', 'text/html; charset="utf-8"', { charset: 'utf-8' }],
    ['quoted value with ";" inside (RFC 9110 §5.6.4)', ';a="x;y";b=2', { a: 'x;y', b: '2' }],
    ['quoted value with escapes', ';a="x\\"y"', { a: 'x"y' }],
    ['first occurrence wins', ';a=1;a=2', { a: '1' }],
    ['whitespace around "=" is malformed (RFC 9110 §5.6.6)', ';a = 1;b=2', { b: '2' }],
    ['empty value is malformed (token = 1*tchar)', ';a=;b=2', { b: '2' }],
    ['non-token value is malformed', ';a=x/y;b=2', { b: '2' }],
    ['unterminated quoted value is dropped', ';a="x;b=2', {}],
    ['trailing junk after a value is malformed', ';a=1 junk;b=2', { b: '2' }],
    ['empty parameters between semicolons (RFC 9110 §5.6.6)', ';;a=1; ;', { a: '1' }],
    ['a leading name=value pair counts', 'a=1; b=2', { a: '1', b: '2' }],
    ['empty string', '', {}],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.deepEqual(Object.fromEntries(parseParameters(input)), expected));
  }
});

describe('listIncludesToken', () => {
  const cases: [string, string | undefined, string, boolean][] = [
    [
      'member present, case-insensitive (RFC 9110 §7.6.1 Connection options)',
      'keep-alive, Upgrade',
      'upgrade',
      true,
    ],
    ['token argument is case-insensitive too', 'close', 'CLOSE', true],
    ['Vary member (RFC 9110 §12.5.5)', 'Accept-Encoding,Origin', 'origin', true],
    ['OWS around the member', '  close\t', 'close', true],
    ['absent header', undefined, 'close', false],
    ['empty header', '', 'close', false],
    ['prefix is not a match', 'close', 'clos', false],
    ['longer member is not a match', 'closed', 'close', false],
    ['a comma inside quotes does not make a member (RFC 9110 §5.6.4)', '"a, close"', 'close', false],
    ['member after a quoted one', '"a, b", close', 'close', true],
    ['Vary: * (RFC 9110 §12.5.5)', '*', '*', true],
  ];
  for (const [name, value, token, expected] of cases) {
    it(name, () => assert.equal(listIncludesToken(value, token), expected));
  }
});

describe('trimOws', () => {
  const cases: [string, string, string][] = [
    ['SP and HTAB are OWS (RFC 9110 §5.6.3)', ' \ta b\t ', 'a b'],
    ['nothing to trim', 'ab', 'ab'],
    ['all OWS', ' \t ', ''],
    ['other whitespace is not OWS', '\na\n', '\na\n'],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.equal(trimOws(input), expected));
  }
});
