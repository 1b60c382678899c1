import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runInNewContext } from 'node:vm';
import {
  CALLBACK_REASONS,
  type CallbackCheck,
  type CallbackDecision,
  callbackFromQuery,
  checkCallback,
  escapeJsonForScript,
  firstQueryParam,
  jsonpBody,
  MAX_CALLBACK_LENGTH,
  type QueryParam,
} from '../../src/http/jsonp.js';

const present = (value: string): QueryParam => ({ kind: 'present', value });
const ABSENT: QueryParam = { kind: 'absent' };
const MALFORMED: QueryParam = { kind: 'malformed' };

describe('firstQueryParam', () => {
  const cases: [string, string | undefined, QueryParam][] = [
    ['no query -> absent', undefined, ABSENT],
    ['empty query -> absent', '', ABSENT],
    ['one parameter', 'callback=cb', present('cb')],
    ['after other parameters', 'x=1&y=2&callback=cb', present('cb')],
    ['repeated: the first value wins', 'callback=a&callback=b', present('a')],
    ['repeated, first malformed: still the first (malformed)', 'callback=%zz&callback=ok', MALFORMED],
    ['name without = -> empty value', 'callback', present('')],
    ['name with = and nothing -> empty value', 'callback=', present('')],
    ['percent-decoded value', 'callback=%63b', present('cb')],
    ['+ is a space (form encoding)', 'callback=a+b', present('a b')],
    ['%2B is a plus', 'callback=a%2Bb', present('a+b')],
    ['UTF-8 escapes decode', 'callback=%C3%A9', present('é')],
    ['malformed escape in the value -> malformed', 'callback=%zz', MALFORMED],
    ['lone % -> malformed', 'callback=abc%', MALFORMED],
    ['escape that is not UTF-8 -> malformed', 'callback=%ff', MALFORMED],
    ['encoded surrogate -> malformed', 'callback=%ED%A0%80', MALFORMED],
    ['malformed escape in another parameter is ignored', 'x=%zz&callback=cb', present('cb')],
    ['percent-encoded name matches', '%63allback=cb', present('cb')],
    ['undecodable name never matches', 'callback%zz=x&callback=cb', present('cb')],
    ['a longer name does not match', 'callbackx=a', ABSENT],
    ['a shorter name does not match', 'callbac=a', ABSENT],
    ['names are case-sensitive', 'Callback=a', ABSENT],
    ['empty pairs are skipped', '&&callback=a&', present('a')],
    ['= in the value is kept', 'callback=a=b', present('a=b')],
  ];
  for (const [name, query, expected] of cases) {
    it(name, () => assert.deepEqual(firstQueryParam(query, 'callback'), expected));
  }
});

describe('checkCallback', () => {
  const ok = (callback: string): CallbackCheck => ({ kind: 'ok', callback });
  const bad = (reason: string): CallbackCheck => ({ kind: 'invalid', reason });
  const cases: [string, string, boolean, CallbackCheck][] = [
    ['plain identifier', 'cb', false, ok('cb')],
    ['underscore alone', '_', false, ok('_')],
    ['dollar alone', '$', false, ok('$')],
    ['jQuery style', 'jQuery3600_1700000000000', false, ok('jQuery3600_1700000000000')],
    ['digits after the first character', 'a1', false, ok('a1')],
    ['exactly 64 characters', 'a'.repeat(64), false, ok('a'.repeat(64))],
    ['reserved word passes (documented: a syntax error in the page)', 'if', false, ok('if')],
    ['empty -> invalid', '', false, bad(CALLBACK_REASONS.empty)],
    ['65 characters -> too long', 'a'.repeat(65), false, bad(CALLBACK_REASONS.tooLong)],
    ['1000 characters -> too long', 'a'.repeat(1000), false, bad(CALLBACK_REASONS.tooLong)],
    ['leading digit -> invalid', '1abc', false, bad(CALLBACK_REASONS.notIdentifier)],
    ['call and comment: alert(1)// -> invalid', 'alert(1)//', false, bad(CALLBACK_REASONS.notIdentifier)],
    ['statement separator a;b -> invalid', 'a;b', false, bad(CALLBACK_REASONS.notIdentifier)],
    ['space a b -> invalid', 'a b', false, bad(CALLBACK_REASONS.notIdentifier)],
    ['CR LF -> invalid', '\r\n', false, bad(CALLBACK_REASONS.notIdentifier)],
    ['hyphen -> invalid', 'a-b', false, bad(CALLBACK_REASONS.notIdentifier)],
    ['non-ASCII letters -> invalid', 'ünïcödé', false, bad(CALLBACK_REASONS.notIdentifier)],
    ['non-Latin letters -> invalid', 'функция', false, bad(CALLBACK_REASONS.notIdentifier)],
    ['script tag -> invalid', '<script>', false, bad(CALLBACK_REASONS.notIdentifier)],
    ['bracket access -> invalid', 'a["b"]', false, bad(CALLBACK_REASONS.notIdentifier)],
    ['dotted, not allowed -> invalid (SOME)', 'ns.fn', false, bad(CALLBACK_REASONS.dotted)],
    ['opener.document.x, not allowed -> invalid', 'opener.document.x', false, bad(CALLBACK_REASONS.dotted)],
    ['dotted, allowed', 'ns.fn', true, ok('ns.fn')],
    ['three parts, allowed', 'a.b.c', true, ok('a.b.c')],
    ['empty part, allowed dotted -> invalid', 'a..b', true, bad(CALLBACK_REASONS.notIdentifier)],
    ['leading dot -> invalid', '.a', true, bad(CALLBACK_REASONS.notIdentifier)],
    ['trailing dot -> invalid', 'a.', true, bad(CALLBACK_REASONS.notIdentifier)],
    ['part starting with a digit -> invalid', 'a.1b', true, bad(CALLBACK_REASONS.notIdentifier)],
    [
      'dotted over 64 -> too long',
      `${'a'.repeat(40)}.${'b'.repeat(40)}`,
      true,
      bad(CALLBACK_REASONS.tooLong),
    ],
  ];
  for (const [name, input, allowDotted, expected] of cases) {
    it(name, () => assert.deepEqual(checkCallback(input, allowDotted), expected));
  }

  it('limit is 64 (DESIGN.md)', () => assert.equal(MAX_CALLBACK_LENGTH, 64));

  it('reasons never contain the callback: every reason is one of the fixed texts', () => {
    const fixed = new Set<string>(Object.values(CALLBACK_REASONS));
    for (const input of ['alert(1)//', 'a;b', '<img src=x>', 'x'.repeat(100), 'opener.document.x', 'é']) {
      const r = checkCallback(input, false);
      assert.equal(r.kind, 'invalid');
      if (r.kind === 'invalid') assert.ok(fixed.has(r.reason), r.reason);
    }
  });
});

describe('callbackFromQuery', () => {
  const cases: [string, string | undefined, CallbackDecision][] = [
    ['no parameter -> none (plain JSON)', 'x=1', { kind: 'none' }],
    ['valid', 'callback=cb', { kind: 'ok', callback: 'cb' }],
    ['empty value -> invalid', 'callback=', { kind: 'invalid', reason: CALLBACK_REASONS.empty }],
    ['malformed escape -> invalid', 'callback=%zz', { kind: 'invalid', reason: CALLBACK_REASONS.malformed }],
    [
      'encoded CR LF -> invalid',
      'callback=%0d%0aSet-Cookie:x',
      { kind: 'invalid', reason: CALLBACK_REASONS.notIdentifier },
    ],
    ['repeated: first wins', 'callback=first&callback=second', { kind: 'ok', callback: 'first' }],
  ];
  for (const [name, query, expected] of cases) {
    it(name, () => assert.deepEqual(callbackFromQuery(query, 'callback', false), expected));
  }
  it('custom parameter name', () =>
    assert.deepEqual(callbackFromQuery('callback=x&cb=y', 'cb', false), { kind: 'ok', callback: 'y' }));
});

describe('escapeJsonForScript', () => {
  const cases: [string, string, string][] = [
    ['</script> cannot close the element', '"</script>"', '"\\u003c/script\\u003e"'],
    ['HTML comment opener', '"<!--"', '"\\u003c!--"'],
    ['ampersand', '"a&b"', '"a\\u0026b"'],
    ['U+2028 line separator', '"a\u2028b"', '"a\\u2028b"'],
    ['U+2029 paragraph separator', '"a\u2029b"', '"a\\u2029b"'],
    ['escaped backslash before <', '"\\\\<"', '"\\\\\\u003c"'],
    ['nothing to escape: unchanged', '{"a":[1,2,{"b":null}]}', '{"a":[1,2,{"b":null}]}'],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => {
      const out = escapeJsonForScript(input);
      assert.equal(out, expected);
      assert.deepEqual(JSON.parse(out), JSON.parse(input), 'the same JSON value');
    });
  }
});

describe('jsonpBody', () => {
  it('is /**/ cb(json); with the JSON escaped', () => {
    assert.equal(jsonpBody('cb', '{"a":"</script>"}'), '/**/ cb({"a":"\\u003c/script\\u003e"});');
  });

  it('runs as a script and hands the callback the original value', () => {
    const value = { s: '</script><script>alert(1)</script>', ls: '\u2028\u2029', amp: '&&', n: [1, null] };
    let got: unknown;
    runInNewContext(jsonpBody('cb', JSON.stringify(value)), {
      cb: (v: unknown) => {
        got = v;
      },
    });
    // The value comes from another realm (other prototypes): compare its JSON.
    assert.deepEqual(JSON.parse(JSON.stringify(got)), value);
  });
});
