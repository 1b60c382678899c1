// The proxy cache's primary key (RFC 9111 §2): the fast path must agree with the URL parser.
// matrix: http1 h2 h1-tls adapters (the static, policy, proxy and cache suites run on every protocol and adapter)
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { primaryKey, primaryKeyOf } from '../../../src/server/proxy/cache/index.js';
import { mulberry32, SEED_OFFSET } from '../../helpers/random.js';

function viaUrl(proto: 'http' | 'https', host: string, url: string): string | undefined {
  if (!url.startsWith('/')) return undefined;
  try {
    const u = new URL(`${proto}://${host}${url}`);
    u.hash = '';
    return `GET ${u.href}`;
  } catch {
    return undefined;
  }
}

describe('primaryKeyOf', () => {
  const cases: [string, 'http' | 'https', string, string, string | undefined][] = [
    ['plain target', 'http', 'a.example', '/x?y=1', 'GET http://a.example/x?y=1'],
    ['host case is folded', 'http', 'A.Example', '/x', 'GET http://a.example/x'],
    ['default port dropped', 'http', 'a.example:80', '/x', 'GET http://a.example/x'],
    ['https default port dropped', 'https', 'a.example:443', '/x', 'GET https://a.example/x'],
    ['other port kept', 'http', 'a.example:8080', '/x', 'GET http://a.example:8080/x'],
    ['dot segments removed', 'http', 'a.example', '/a/./b/../c', 'GET http://a.example/a/c'],
    ['fragment dropped', 'http', 'a.example', '/x#frag', 'GET http://a.example/x'],
    ['space encoded', 'http', 'a.example', '/a b', 'GET http://a.example/a%20b'],
    ['not origin-form', 'http', 'a.example', '*', undefined],
    ['bad host', 'http', 'a b', '/x', undefined],
  ];
  for (const [name, proto, host, url, expected] of cases) {
    it(name, () => assert.equal(primaryKeyOf(proto, host, url), expected));
  }

  it('agrees with the URL parser on random targets (fuzz)', () => {
    const alphabet = 'aZ09-._~/?=&+,;:@!$*()%#\\ \'"<>[]{}|^`.';
    const hosts = [
      'a.example',
      'A.example',
      'a.example:80',
      'a.example:443',
      'x:8080',
      '127.0.0.1:3000',
      '.a',
      'a..b',
    ];
    const next = mulberry32(42 + SEED_OFFSET);
    const rand = (n: number) => Math.floor(next() * n);
    for (let i = 0; i < 5000; i++) {
      let url = '/';
      const len = rand(12);
      for (let k = 0; k < len; k++) url += alphabet[rand(alphabet.length)];
      const host = hosts[rand(hosts.length)]!;
      const proto = rand(2) === 0 ? 'http' : 'https';
      assert.equal(primaryKeyOf(proto, host, url), viaUrl(proto, host, url), `${proto} ${host} ${url}`);
    }
  });
});

describe('primaryKey (memoised per scheme, Host and target)', () => {
  const req = (host: string | undefined, url: string, encrypted = false) =>
    ({
      headers: host === undefined ? {} : { host },
      url,
      socket: { encrypted },
    }) as unknown as IncomingMessage;
  it('gives what primaryKeyOf gives, every time, per scheme', () => {
    const cases: [string, string][] = [
      ['example.com', '/a?b=1'],
      ['example.com', '/a/../b'],
      ['EXAMPLE.com:80', '/x'],
      ['example.com', 'nope'],
      ['bad host', '/'],
    ];
    for (let round = 0; round < 3; round++) {
      for (const [host, url] of cases) {
        assert.equal(primaryKey(req(host, url)), primaryKeyOf('http', host, url), `${host} ${url}`);
        assert.equal(
          primaryKey(req(host, url, true)),
          primaryKeyOf('https', host, url),
          `${host} ${url} tls`,
        );
      }
    }
    assert.equal(primaryKey(req(undefined, '/a')), undefined);
  });
  it('stays right past its size bound (it starts over)', () => {
    for (let i = 0; i < 25_000; i++) {
      const url = `/n/${i}`;
      assert.equal(primaryKey(req('h.example', url)), `GET http://h.example${url}`);
    }
    assert.equal(primaryKey(req('h.example', '/n/3')), 'GET http://h.example/n/3');
  });
});
