// Proxy header rewriting, table-style (RFC 9110 §7.6.1 hop-by-hop, §7.6.3 Via, RFC 7239).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  appendVia,
  forwardedNode,
  rewriteLocation,
  rewriteSetCookie,
  stripHopByHop,
  upstreamRequestHeaders,
} from '../../src/http/proxy-headers.js';
import { upstreamTarget } from '../../src/server/proxy/handler.js';

describe('stripHopByHop (RFC 9110 §7.6.1)', () => {
  const cases: [string, Record<string, string>, Record<string, string>][] = [
    [
      'fixed hop-by-hop names go',
      {
        connection: 'close',
        'keep-alive': 'x',
        'transfer-encoding': 'chunked',
        upgrade: 'h2c',
        trailer: 'x',
        'proxy-authorization': 'x',
        a: '1',
      },
      { a: '1' },
    ],
    [
      'names listed in Connection go',
      { connection: 'X-A, x-b', 'x-a': '1', 'x-b': '2', 'x-c': '3' },
      { 'x-c': '3' },
    ],
    ['TE: trailers survives alone', { te: 'trailers, deflate;q=0.5' }, { te: 'trailers' }],
    ['TE without trailers goes', { te: 'gzip' }, {}],
    ['TE listed in Connection goes entirely', { connection: 'te', te: 'trailers' }, {}],
  ];
  for (const [name, input, want] of cases) it(name, () => assert.deepEqual(stripHopByHop(input), want));
});

describe('forwarding headers', () => {
  const base = {
    peer: '127.0.0.1',
    proto: 'http' as const,
    upstreamHost: 'up:1',
    changeOrigin: false,
    xForwarded: true,
    forwarded: true,
    via: 'gatehouse',
  };
  it('untrusted peer: X-Forwarded-For and Forwarded start afresh (RFC 7239 §5.2)', () => {
    const h = upstreamRequestHeaders({
      ...base,
      peerTrusted: false,
      headers: { host: 'h', 'x-forwarded-for': '1.1.1.1', forwarded: 'for=1.1.1.1' },
    });
    assert.equal(h['x-forwarded-for'], '127.0.0.1');
    assert.equal(h.forwarded, 'for=127.0.0.1;host=h;proto=http');
    assert.equal(h.via, '1.1 gatehouse');
  });
  it('trusted peer: lists are extended', () => {
    const h = upstreamRequestHeaders({
      ...base,
      peerTrusted: true,
      headers: { host: 'h', 'x-forwarded-for': '1.1.1.1', forwarded: 'for=1.1.1.1' },
    });
    assert.equal(h['x-forwarded-for'], '1.1.1.1, 127.0.0.1');
    assert.equal(h.forwarded, 'for=1.1.1.1, for=127.0.0.1;host=h;proto=http');
  });
  it('IPv6 peers are bracketed and quoted in Forwarded (RFC 7239 §6)', () => {
    assert.equal(forwardedNode('2001:db8::1'), '"[2001:db8::1]"');
    assert.equal(forwardedNode('::ffff:10.0.0.1'), '10.0.0.1');
    assert.equal(forwardedNode(undefined), 'unknown');
  });
  it('Via is appended (RFC 9110 §7.6.3)', () => {
    assert.equal(appendVia('1.0 fred', 'gatehouse'), '1.0 fred, 1.1 gatehouse');
  });
  it('Expect is never forwarded (Node answered 100-continue)', () => {
    const h = upstreamRequestHeaders({ ...base, peerTrusted: false, headers: { expect: '100-continue' } });
    assert.equal(h.expect, undefined);
  });
});

describe('rewriting for the public address', () => {
  const rw = {
    upstreamOrigin: 'http://up:3000',
    publicOrigin: 'https://pub',
    publicPrefix: '/api',
    upstreamPrefix: '',
  };
  const cases: [string, string, string][] = [
    ['absolute upstream URL', 'http://up:3000/login?x=1', 'https://pub/api/login?x=1'],
    ['path-absolute', '/login', '/api/login'],
    ['another host is left alone', 'https://other/x', 'https://other/x'],
    ['protocol-relative is left alone', '//evil/x', '//evil/x'],
    ['a lookalike origin is left alone', 'http://up:30000/x', 'http://up:30000/x'],
  ];
  for (const [name, loc, want] of cases)
    it(`Location: ${name}`, () => assert.equal(rewriteLocation(loc, rw), want));
  it('Set-Cookie Domain and Path', () => {
    assert.equal(
      rewriteSetCookie('a=1; Domain=up; Path=/', 'up', 'pub', '/api'),
      'a=1; Domain=pub; Path=/api',
    );
    assert.equal(rewriteSetCookie('a=1; Domain=other', 'up', 'pub', '/api'), 'a=1; Domain=other');
  });
  it('a cookie named path or domain is the cookie-pair, not an attribute (RFC 6265 §4.1.1)', () => {
    assert.equal(rewriteSetCookie('path=/x; Path=/', 'up', 'pub', '/api'), 'path=/x; Path=/api');
    assert.equal(rewriteSetCookie('domain=up; Domain=up', 'up', 'pub', '/api'), 'domain=up; Domain=pub');
  });
  // Upstream with a base path /api and no public prefix: the base is cut at a segment boundary only.
  const based = { ...rw, publicPrefix: '', upstreamPrefix: '/api' };
  const basedCases: [string, string, string][] = [
    ['under the base', 'http://up:3000/api/login', 'https://pub/login'],
    ['the base itself', 'http://up:3000/api', 'https://pub/'],
    ['the base with a query', '/api?q=1', '/?q=1'],
    [
      'attack: a lookalike of the base names another host',
      'http://up:3000/api.evil.com/',
      'https://pub/api.evil.com/',
    ],
    ['a longer segment is not the base', '/apix', '/apix'],
    ['attack: // after the base stays on the public origin', '/api//evil.com', 'https://pub//evil.com'],
  ];
  for (const [name, loc, want] of basedCases)
    it(`Location with a base path: ${name}`, () => assert.equal(rewriteLocation(loc, based), want));
});

describe('upstreamTarget', () => {
  const cases: [string, string, string, Parameters<typeof upstreamTarget>[2], string][] = [
    ['strip', '/api/a?b=1', '/api', { stripPrefix: true, basePath: '' }, '/a?b=1'],
    ['strip to root', '/api?b=1', '/api', { stripPrefix: true, basePath: '' }, '/?b=1'],
    ['keep', '/api/a', '/api', { stripPrefix: false, basePath: '' }, '/api/a'],
    ['base path', '/api/a', '/api', { stripPrefix: true, basePath: '/v2' }, '/v2/a'],
    [
      'rewrite',
      '/api/1/a',
      '/api',
      { stripPrefix: true, basePath: '', rewrite: { re: /^\/(\d+)\//, to: '/v$1/' } },
      '/v1/a',
    ],
  ];
  for (const [name, url, prefix, o, want] of cases)
    it(name, () => assert.equal(upstreamTarget(url, prefix, o), want));
});
