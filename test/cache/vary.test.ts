import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { matchesVary, preferredLanguage, selectsByLanguage, varyKey } from '../../src/cache/vary.js';
import { mulberry32, SEED_OFFSET } from '../helpers/random.js';

describe('varyKey (RFC 9111 §4.1)', () => {
  it('no Vary -> empty key', () => assert.equal(varyKey(undefined, { accept: 'x' }), ''));
  it('empty Vary -> empty key', () => assert.equal(varyKey(' , ', { accept: 'x' }), ''));
  it('Vary: * -> null (§4.1 always fails to match)', () => assert.equal(varyKey('*', {}), null));
  it('* among other names -> null (§4.1)', () => assert.equal(varyKey('Accept, *', {}), null));
  it('names are case-insensitive and order-free (RFC 9110 §5.1)', () =>
    assert.equal(
      varyKey('Accept-Encoding, ORIGIN', { origin: 'o', 'accept-encoding': 'gzip' }),
      varyKey('origin, accept-encoding', { origin: 'o', 'accept-encoding': 'gzip' }),
    ));
  it('a prototype name such as constructor reads as absent', () =>
    assert.equal(varyKey('constructor', {}), JSON.stringify(['constructor', null])));
});

describe('matchesVary (RFC 9111 §4.1)', () => {
  const cases: [string, string | undefined, Record<string, string>, Record<string, string>, boolean][] = [
    ['no Vary matches anything', undefined, { accept: 'a' }, { accept: 'b' }, true],
    [
      'same value matches',
      'Accept-Encoding',
      { 'accept-encoding': 'gzip' },
      { 'accept-encoding': 'gzip' },
      true,
    ],
    [
      'different value does not match',
      'Accept-Encoding',
      { 'accept-encoding': 'gzip' },
      { 'accept-encoding': 'br' },
      false,
    ],
    [
      'whitespace around commas is normalised (§4.1)',
      'Accept-Language',
      { 'accept-language': 'en ,  fr' },
      { 'accept-language': 'en,fr' },
      true,
    ],
    [
      'leading and trailing OWS is normalised (§4.1)',
      'Accept',
      { accept: ' text/html\t' },
      { accept: 'text/html' },
      true,
    ],
    ['values of unknown fields are case-sensitive', 'X-Mode', { 'x-mode': 'en' }, { 'x-mode': 'EN' }, false],
    ['inner whitespace is significant', 'X-Mode', { 'x-mode': 'a b' }, { 'x-mode': 'ab' }, false],
    [
      'member order of unknown fields is significant',
      'X-Mode',
      { 'x-mode': 'en, fr' },
      { 'x-mode': 'fr, en' },
      false,
    ],
    ['absent matches absent (§4.1)', 'Origin', {}, {}, true],
    ['absent does not match present (§4.1)', 'Origin', {}, { origin: 'https://a.example' }, false],
    ['absent does not match empty (§4.1)', 'Origin', {}, { origin: '' }, false],
    [
      'Vary names are case-insensitive against lowercase maps',
      'ACCEPT',
      { accept: 'x' },
      { accept: 'x' },
      true,
    ],
    [
      'unnamed headers do not matter',
      'Accept',
      { accept: 'x', cookie: 'a' },
      { accept: 'x', cookie: 'b' },
      true,
    ],
    [
      'Accept-Language order of equal weights does not matter',
      'Accept-Language',
      { 'accept-language': 'en, de' },
      { 'accept-language': 'de, en' },
      true,
    ],
    [
      'Accept-Language case does not matter (RFC 4647 §2)',
      'Accept-Language',
      { 'accept-language': 'en, de' },
      { 'accept-language': 'eN, De' },
      true,
    ],
    [
      'explicit q=1 is the default',
      'Accept-Language',
      { 'accept-language': 'en;q=1, de' },
      { 'accept-language': 'de,en' },
      true,
    ],
    [
      'different weights differ',
      'Accept-Language',
      { 'accept-language': 'en, de;q=0.5' },
      { 'accept-language': 'en;q=0.5, de' },
      false,
    ],
    [
      'weight order is kept whatever the member order',
      'Accept-Language',
      { 'accept-language': 'de;q=0.5, en' },
      { 'accept-language': 'en, de;q=0.5' },
      true,
    ],
    [
      'Accept-Encoding codings are case-insensitive',
      'Accept-Encoding',
      { 'accept-encoding': 'GZIP, br' },
      { 'accept-encoding': 'br, gzip' },
      true,
    ],
    [
      'an odd member falls back to the literal comparison',
      'Accept-Language',
      { 'accept-language': 'en;x=1, de' },
      { 'accept-language': 'de, en;x=1' },
      false,
    ],
    ['other fields keep case', 'Foo', { foo: 'A' }, { foo: 'a' }, false],
    ['Vary: * never matches, even identical requests (§4.1)', '*', { accept: 'x' }, { accept: 'x' }, false],
  ];
  for (const [name, vary, a, b, expected] of cases) {
    it(name, () => assert.equal(matchesVary(vary, a, b), expected));
  }
});

describe('matchesVary agrees with comparing secondary keys (fuzzed)', () => {
  // matchesVary skips normalising when the raw values are the same; it must still mean exactly
  // "the secondary keys are equal and not null" (§4.1).
  const varies = [
    undefined,
    '',
    '*',
    'Accept-Encoding',
    'accept-encoding, Origin',
    'Origin, *',
    'X-A',
    ' , x-a ,',
  ];
  const values = [undefined, '', 'gzip', 'GZIP', 'gzip, br', 'br,gzip', 'br;q=0.5, gzip', 'a', 'A', ' a '];
  const names = ['accept-encoding', 'origin', 'x-a'];
  const next = mulberry32(7 + SEED_OFFSET);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const headers = () => {
    const h: Record<string, string> = {};
    for (const n of names) {
      const v = pick(values);
      if (v !== undefined) h[n] = v;
    }
    return h;
  };
  it('3000 random cases', () => {
    for (let i = 0; i < 3000; i++) {
      const vary = pick(varies);
      const a = headers();
      const b = pick([true, false]) ? { ...a } : headers();
      const ka = varyKey(vary, a);
      const want = ka !== null && ka === varyKey(vary, b);
      assert.equal(matchesVary(vary, a, b), want, JSON.stringify({ vary, a, b }));
    }
  });
});

describe('preferredLanguage (RFC 9110 §12.5.4)', () => {
  const cases: [string, string | undefined, string | null][] = [
    ['absent', undefined, null],
    ['one language', 'de', 'de'],
    ['the highest weight wins, wherever it is listed', 'fr;q=0.5, de;q=1.0', 'de'],
    ['lowercased', 'fr;q=0.5, DE-ch', 'de-ch'],
    ['q=1 is the default weight', 'de, fr;q=0.9', 'de'],
    ['a tie at the top: none', 'en, de', null],
    ['a tie at the top with q forms: none', 'en;q=0.8, de;q=0.80', null],
    ['the wildcard on top: none', '*, de;q=0.5', null],
    ['everything refused: none', 'de;q=0', null],
    ['a member of another shape: none', 'de;x=1', null],
  ];
  for (const [name, value, want] of cases) it(name, () => assert.equal(preferredLanguage(value), want));
});

describe('selectsByLanguage (Content-Language selection beyond §4.1)', () => {
  const de = { 'content-language': 'de' };
  const cases: [
    string,
    string | undefined,
    Record<string, string>,
    Record<string, string>,
    Record<string, string>,
    boolean,
  ][] = [
    [
      'stored de for "en, de"; new "fr;q=0.5, de;q=1.0"',
      'Accept-Language',
      { 'accept-language': 'en, de' },
      de,
      { 'accept-language': 'fr;q=0.5, de;q=1.0' },
      true,
    ],
    [
      'Content-Language compared case-insensitively',
      'accept-language',
      {},
      { 'content-language': 'DE' },
      { 'accept-language': 'de' },
      true,
    ],
    [
      'another top language',
      'Accept-Language',
      { 'accept-language': 'de' },
      de,
      { 'accept-language': 'fr, de;q=0.5' },
      false,
    ],
    [
      'a tie at the top',
      'Accept-Language',
      { 'accept-language': 'de' },
      de,
      { 'accept-language': 'fr, de' },
      false,
    ],
    [
      'a more specific top range is not the stored tag',
      'Accept-Language',
      {},
      de,
      { 'accept-language': 'de-ch' },
      false,
    ],
    [
      'several Content-Language tags',
      'Accept-Language',
      {},
      { 'content-language': 'de, en' },
      { 'accept-language': 'de' },
      false,
    ],
    ['no Content-Language', 'Accept-Language', {}, {}, { 'accept-language': 'de' }, false],
    ['no Accept-Language in the new request', 'Accept-Language', { 'accept-language': 'de' }, de, {}, false],
    ['Vary without Accept-Language', 'Accept-Encoding', {}, de, { 'accept-language': 'de' }, false],
    ['Vary: *', '*', {}, de, { 'accept-language': 'de' }, false],
    [
      'another varying field matches',
      'Accept-Language, Accept-Encoding',
      { 'accept-language': 'en, de', 'accept-encoding': 'gzip, br' },
      de,
      { 'accept-language': 'de', 'accept-encoding': 'br,gzip' },
      true,
    ],
    [
      'another varying field differs',
      'Accept-Language, Accept-Encoding',
      { 'accept-language': 'en, de', 'accept-encoding': 'gzip' },
      de,
      { 'accept-language': 'de', 'accept-encoding': 'br' },
      false,
    ],
    [
      'another varying field absent on one side',
      'Accept-Language, Origin',
      { origin: 'https://a' },
      de,
      { 'accept-language': 'de' },
      false,
    ],
  ];
  for (const [name, vary, storedReq, storedRes, newReq, want] of cases)
    it(name, () => assert.equal(selectsByLanguage(vary, storedReq, storedRes, newReq), want));
});
