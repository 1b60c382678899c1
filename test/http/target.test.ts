import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  canonicalOriginForm,
  isCanonicalOriginForm,
  parseAuthority,
  parseRequestTarget,
} from '../../src/http/target.js';

describe('parseAuthority (RFC 9112 §3.2, RFC 3986 §3.2.2)', () => {
  const cases: [string, string, string | null][] = [
    ['plain name', 'example.com', 'example.com'],
    ['uppercase name -> lowercase', 'ExAmple.COM', 'example.com'],
    ['name with port', 'example.com:8080', 'example.com:8080'],
    ['default port 80 dropped', 'example.com:80', 'example.com'],
    ['empty port dropped (RFC 3986 §6.2.3)', 'example.com:', 'example.com'],
    ['leading zeros in port normalised', 'example.com:08080', 'example.com:8080'],
    ['trailing dot dropped', 'example.com.', 'example.com'],
    ['trailing dot with port', 'example.com.:81', 'example.com:81'],
    ['single label', 'localhost', 'localhost'],
    ['underscore allowed', 'my_host.internal', 'my_host.internal'],
    ['IPv4', '127.0.0.1:3000', '127.0.0.1:3000'],
    ['IPv6 literal compressed', '[2001:DB8:0:0:0:0:0:1]:8443', '[2001:db8::1]:8443'],
    ['IPv6 loopback', '[::1]', '[::1]'],
    ['IPv6 with embedded IPv4', '[::ffff:1.2.3.4]', '[::ffff:102:304]'],
    ['empty -> bad', '', null],
    ['slash -> bad', 'example.com/api/account/me#', null],
    ['backslash -> bad', 'example.com\\evil', null],
    ['hash -> bad', 'example.com#x', null],
    ['question mark -> bad', 'example.com?x', null],
    ['userinfo @ -> bad', 'user@example.com', null],
    ['space -> bad', 'example .com', null],
    ['tab -> bad', 'example.com\t', null],
    ['percent-encoded -> bad', 'ex%61mple.com', null],
    ['sub-delim -> bad', 'exa!mple.com', null],
    ['empty label -> bad', 'a..b', null],
    ['leading dot -> bad', '.example.com', null],
    ['only a dot -> bad', '.', null],
    ['port with letters -> bad', 'example.com:80a', null],
    ['port 0 -> bad', 'example.com:0', null],
    ['port over 65535 -> bad', 'example.com:65536', null],
    ['two colons -> bad', 'example.com:80:80', null],
    ['IPv4 octet over 255 -> bad', '1.2.3.256', null],
    ['short IPv4 (WHATWG would read 127.0.0.1) -> bad', '127.1', null],
    ['hex IPv4 -> bad', '0x7f.0.0.1', null],
    ['octal-looking IPv4 -> bad', '010.0.0.1', null],
    ['unterminated IPv6 -> bad', '[::1', null],
    ['IPv6 zone id -> bad', '[fe80::1%25eth0]', null],
    ['IPvFuture -> bad', '[v1.x]', null],
    ['IPv6 with two :: -> bad', '[1::2::3]', null],
    ['IPv6 too many groups -> bad', '[1:2:3:4:5:6:7:8:9]', null],
    ['junk after IPv6 -> bad', '[::1]x', null],
    ['non-ASCII -> bad', 'exämple.com', null],
    ['label of 63 ok, name over 255 -> bad', `${'a'.repeat(63)}.`.repeat(5), null],
  ];
  for (const [name, value, want] of cases) {
    it(name, () => {
      const r = parseAuthority(value, 80);
      if (want === null) assert.equal(r.kind, 'bad', JSON.stringify(r));
      else assert.deepEqual(r.kind === 'ok' ? r.authority : r, want);
    });
  }
  it('default port 443 dropped for https only', () => {
    const r = parseAuthority('example.com:443', 443);
    assert.equal(r.kind === 'ok' && r.authority, 'example.com');
    const h = parseAuthority('example.com:443', 80);
    assert.equal(h.kind === 'ok' && h.authority, 'example.com:443');
  });
});

describe('canonicalOriginForm (RFC 3986 §5.2.4, §6.2.2)', () => {
  const cases: [string, string, string | null][] = [
    ['plain path unchanged', '/api/items?id=1', '/api/items?id=1'],
    ['root', '/', '/'],
    ['raw dot segments removed', '/api/public/../victim', '/api/victim'],
    ['encoded dot segments %2e%2e removed', '/api/public/%2e%2e/victim', '/api/victim'],
    ['mixed-case %2E removed', '/api/public/%2E%2e/victim', '/api/victim'],
    ['half-encoded .%2e removed', '/api/public/.%2e/victim', '/api/victim'],
    ['single dot removed', '/a/./b', '/a/b'],
    ['trailing .. keeps the slash', '/a/b/..', '/a/'],
    ['trailing . keeps the slash', '/a/.', '/a/'],
    ['.. above the root -> bad', '/../etc/passwd', null],
    ['encoded .. above the root -> bad', '/%2e%2e/etc/passwd', null],
    ['.. above the root after a climb -> bad', '/a/../../b', null],
    ['double slash kept (an empty segment)', '//evil.com/x', '//evil.com/x'],
    ['.. after an empty segment removes it (§5.2.4)', '/a//../b', '/a/b'],
    ['inner double slash kept', '/a//b', '/a//b'],
    ['dots in a name are kept', '/a..b/c.d', '/a..b/c.d'],
    ['unreserved escapes decoded', '/%7Euser/%41', '/~user/A'],
    ['reserved escapes kept, hex uppercased', '/a%2fb%3f', '/a%2Fb%3F'],
    ['%2f does not become a separator for dot segments', '/a/..%2f..%2fb', '/a/..%2F..%2Fb'],
    ['raw backslash -> bad', '/a\\..\\b', null],
    ['encoded backslash kept', '/a%5cb', '/a%5Cb'],
    ['raw hash -> bad', '/a#frag', null],
    ['malformed escape -> bad', '/a%zz', null],
    ['truncated escape -> bad', '/a%2', null],
    ['control byte -> bad', '/a\x01b', null],
    ['DEL -> bad', '/a\x7fb', null],
    ['odd ASCII percent-encoded', '/a|b{c}^"<>`', '/a%7Cb%7Bc%7D%5E%22%3C%3E%60'],
    ['non-ASCII byte percent-encoded', '/caf\xe9', '/caf%E9'],
    ['query kept, dot segments there untouched', '/a?x=/../y', '/a?x=/../y'],
    ["query ' encoded (WHATWG special-scheme query set)", "/a?q='1'", '/a?q=%271%27'],
    ["path ' kept", "/it's", "/it's"],
    ['query %2e left as sent', '/a?x=%2e', '/a?x=%2e'],
    ['query malformed escape left as sent', '/a?x=%zz%', '/a?x=%zz%'],
    ['query hash -> bad', '/a?x#y', null],
    ['no leading slash -> bad', 'a/b', null],
  ];
  for (const [name, target, want] of cases) {
    it(name, () => {
      const r = canonicalOriginForm(target);
      if (want === null) assert.equal(r.kind, 'bad', JSON.stringify(r));
      else assert.deepEqual(r, { kind: 'ok', path: want });
    });
  }
});

describe('parseRequestTarget (RFC 9112 §3.2)', () => {
  const cases: [string, string, string, unknown][] = [
    ['origin-form', 'GET', '/x?y', { kind: 'origin', path: '/x?y', authority: undefined }],
    [
      'absolute-form http: authority replaces Host',
      'GET',
      'http://Example.com:80/a/../b?q',
      { kind: 'origin', path: '/b?q', authority: 'example.com' },
    ],
    [
      'absolute-form https scheme',
      'GET',
      'HTTPS://example.com:8443/x',
      { kind: 'origin', path: '/x', authority: 'example.com:8443' },
    ],
    [
      'absolute-form without path -> /',
      'GET',
      'http://example.com',
      { kind: 'origin', path: '/', authority: 'example.com' },
    ],
    [
      'absolute-form query without path -> /?q',
      'GET',
      'http://example.com?q=1',
      { kind: 'origin', path: '/?q=1', authority: 'example.com' },
    ],
    ['absolute-form other scheme -> bad', 'GET', 'ftp://example.com/x', 'bad'],
    ['absolute-form with userinfo -> bad', 'GET', 'http://user@example.com/x', 'bad'],
    ['absolute-form with bad authority -> bad', 'GET', 'http://exa mple.com/x', 'bad'],
    ['absolute-form with a fragment -> bad', 'GET', 'http://example.com#x', 'bad'],
    ['absolute-form with empty authority -> bad', 'GET', 'http:///x', 'bad'],
    ['asterisk-form for OPTIONS', 'OPTIONS', '*', { kind: 'asterisk' }],
    ['asterisk-form for GET -> bad', 'GET', '*', 'bad'],
    ['authority-form (CONNECT) -> bad', 'CONNECT', 'example.com:443', 'bad'],
    ['authority-form without CONNECT -> bad', 'GET', 'example.com:443', 'bad'],
  ];
  for (const [name, method, target, want] of cases) {
    it(name, () => {
      const r = parseRequestTarget(method, target, 80);
      if (want === 'bad') assert.equal(r.kind, 'bad', JSON.stringify(r));
      else assert.deepEqual(r, want);
    });
  }
});

describe('isCanonicalOriginForm (the fast path of the request check)', () => {
  const cases: [string, string, boolean][] = [
    ['a plain path', '/index.html', true],
    ['a plain path and query', '/api/items?page=2&sort=name', true],
    ['the root', '/', true],
    ['a percent-escape (may decode to something else)', '/a%2fb', false],
    ['a raw dot segment', '/a/../b', false],
    ['a dot file (treated as a possible dot segment)', '/.well-known/x', false],
    ['a trailing dot segment', '/a/.', false],
    ['a backslash', '/a\\b', false],
    ['asterisk-form', '*', false],
    ['absolute-form', 'http://example.com/', false],
    ['empty', '', false],
    ['a query holding "?" and "/"', '/a?b=c?d/e', true],
    ['"/." in the query (left to the full parse)', '/a?b=/.c', false],
    ['a dot inside a name', '/a.b/c.d', true],
    ['a space', '/a b', false],
    ['a non-ASCII character', '/caf\u00e9', false],
    ['a fragment', '/a#b', false],
    ['a raw double quote', '/a"b', false],
  ];
  // The regular expression this fast path replaced, with its "/." rule: the two must agree on every case.
  const before = (t: string) =>
    /^\/[A-Za-z0-9\-._~!$&()*+,;=:@/]*(?:\?[A-Za-z0-9\-._~!$&()*+,;=:@/?]*)?$/.test(t) && !t.includes('/.');
  for (const [name, target, want] of cases) {
    it(`${name}: ${JSON.stringify(target)} -> ${want}`, () => {
      assert.equal(isCanonicalOriginForm(target), want);
      assert.equal(before(target), want);
      // Whenever the fast path says canonical, the full parse agrees and leaves the target as it is.
      if (want) assert.deepEqual(canonicalOriginForm(target), { kind: 'ok', path: target });
    });
  }
  it('agrees with the regular expression on every ASCII character at every place of a short target', () => {
    for (let c = 0; c < 130; c++) {
      const ch = String.fromCharCode(c);
      for (const t of [`/${ch}`, `/a${ch}b`, `/a?${ch}`, `/${ch}.`, `/x/${ch}`]) {
        assert.equal(isCanonicalOriginForm(t), before(t), JSON.stringify(t));
      }
    }
  });
});
