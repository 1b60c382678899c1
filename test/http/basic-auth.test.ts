import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type BasicCredentialsResult,
  formatBasicAuthorization,
  formatBasicChallenge,
  MAX_BASIC_TOKEN_LENGTH,
  normalizePassword,
  parseBasicAuthorization,
  privateCacheControl,
} from '../../src/http/basic-auth.js';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const b64raw = (bytes: number[]) => Buffer.from(bytes).toString('base64');

describe('parseBasicAuthorization (RFC 7617 §2)', () => {
  const ok = (userId: string, password: string): BasicCredentialsResult => ({
    kind: 'credentials',
    userId,
    password,
  });
  const cases: [string, string | undefined, BasicCredentialsResult['kind'] | BasicCredentialsResult][] = [
    [
      'the §2 example: Aladdin / open sesame',
      'Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==',
      ok('Aladdin', 'open sesame'),
    ],
    ['scheme name is case-insensitive (RFC 9110 §11.1)', `bAsIc ${b64('a:b')}`, ok('a', 'b')],
    ['several spaces after the scheme (1*SP)', `Basic    ${b64('a:b')}`, ok('a', 'b')],
    ['surrounding whitespace is ignored', `  Basic ${b64('a:b')}  `, ok('a', 'b')],
    ['the password may contain ":" (the user-id ends at the first)', `Basic ${b64('a:b:c')}`, ok('a', 'b:c')],
    ['an empty password is still credentials', `Basic ${b64('a:')}`, ok('a', '')],
    ['UTF-8 user-id and password (§2.1 charset="UTF-8")', `Basic ${b64('test:123£')}`, ok('test', '123£')],
    ['§2.1 example bytes: "test:123" + U+00A3 in UTF-8', 'Basic dGVzdDoxMjPCow==', ok('test', '123£')],
    [
      'decomposed accents are NFC-normalised (§2.1, RFC 8265)',
      `Basic ${b64('Jose\u0301:cafe\u0301')}`,
      ok('Jos\u00e9', 'caf\u00e9'),
    ],
    [
      'a no-break space in the password becomes a space (OpaqueString)',
      `Basic ${b64('a:x\u00a0y')}`,
      ok('a', 'x y'),
    ],
    ['no header -> missing', undefined, 'missing'],
    ['another scheme -> other-scheme', 'Bearer abc.def', 'other-scheme'],
    ['"Basicx" is another scheme', `Basicx ${b64('a:b')}`, 'other-scheme'],
    ['"Basic" alone -> invalid', 'Basic', 'invalid'],
    ['"Basic " with nothing -> invalid', 'Basic   ', 'invalid'],
    ['not base64 -> invalid', 'Basic !!!!', 'invalid'],
    ['base64 with bad padding -> invalid', 'Basic YTpi=', 'invalid'],
    ['no colon -> invalid (§2: user-pass = user-id ":" password)', `Basic ${b64('nocolon')}`, 'invalid'],
    ['invalid UTF-8 -> invalid', `Basic ${b64raw([0x61, 0x3a, 0xc3, 0x28])}`, 'invalid'],
    ['a control character -> invalid (§2: no CTL)', `Basic ${b64('a:b\x00c')}`, 'invalid'],
    ['DEL -> invalid', `Basic ${b64('a\x7f:b')}`, 'invalid'],
    [
      'a token over the length limit -> invalid',
      `Basic ${'QUFB'.repeat(MAX_BASIC_TOKEN_LENGTH / 4 + 1)}`,
      'invalid',
    ],
  ];
  for (const [name, header, expected] of cases) {
    it(name, () => {
      const r = parseBasicAuthorization(header);
      if (typeof expected === 'string') assert.equal(r.kind, expected);
      else assert.deepEqual(r, expected);
    });
  }

  it('formatBasicAuthorization round-trips through the parser', () => {
    const h = formatBasicAuthorization('zoë', 'pa:ss wörd');
    assert.deepEqual(parseBasicAuthorization(h), ok('zoë', 'pa:ss wörd'));
  });
});

describe('normalizePassword (RFC 8265 OpaqueString)', () => {
  it('maps Unicode spaces to U+0020 and applies NFC', () => {
    assert.equal(normalizePassword('a\u2003b\u3000c'), 'a b c');
    assert.equal(normalizePassword('e\u0301'), '\u00e9');
  });
});

describe('formatBasicChallenge (RFC 7617 §2, §2.1)', () => {
  const cases: [string, string, string][] = [
    ['realm and charset', 'Gatehouse', 'Basic realm="Gatehouse", charset="UTF-8"'],
    [
      'DQUOTE and backslash in the realm are escaped',
      'my "area" \\',
      'Basic realm="my \\"area\\" \\\\", charset="UTF-8"',
    ],
  ];
  for (const [name, realm, expected] of cases)
    it(name, () => assert.equal(formatBasicChallenge(realm), expected));
  it('CR LF in the realm -> TypeError', () => assert.throws(() => formatBasicChallenge('a\r\nb'), TypeError));
});

describe('privateCacheControl (RFC 9111 §3.5, §5.2.2.7)', () => {
  const cases: [string, string | undefined, string][] = [
    [
      'public is replaced by private',
      'public, max-age=31536000, immutable',
      'private, max-age=31536000, immutable',
    ],
    ['s-maxage goes (shared caches only)', 'public, s-maxage=600, max-age=60', 'private, max-age=60'],
    ['no-cache keeps its meaning', 'no-cache', 'private, no-cache'],
    ['no-store stays', 'no-store', 'private, no-store'],
    ['already private: unchanged', 'private, max-age=60', 'private, max-age=60'],
    ['qualified private="x" becomes plain private', 'private="set-cookie", max-age=5', 'private, max-age=5'],
    [
      'must-revalidate stays (private already forbids shared storage)',
      'max-age=0, must-revalidate',
      'private, max-age=0, must-revalidate',
    ],
    ['absent -> private', undefined, 'private'],
  ];
  for (const [name, input, expected] of cases)
    it(name, () => assert.equal(privateCacheControl(input), expected));
});
