// Proxy header rewriting, table-style (RFC 9110 §7.6.1 hop-by-hop, §7.6.3 Via, RFC 7239).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  appendVia,
  formatInterimHead,
  forwardedNode,
  interimDecision,
  MAX_INTERIM_RESPONSES,
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
    // The usual values take a shortcut (no token set): it must drop exactly what the full parse drops.
    [
      'Connection: Keep-Alive (any case) goes with Keep-Alive',
      { connection: 'Keep-Alive', 'keep-alive': 'timeout=5', a: '1' },
      { a: '1' },
    ],
    [
      'Connection: close also removes a field named close',
      { connection: 'CLOSE', close: 'x', a: '1' },
      { a: '1' },
    ],
    [
      'Connection: close, TE: trailers still passes',
      { connection: 'close', te: 'trailers' },
      { te: 'trailers' },
    ],
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
  it("attack: a trusted hop's Forwarded with an open quote cannot swallow our element (RFC 7239 §4)", () => {
    const h = upstreamRequestHeaders({
      ...base,
      peerTrusted: true,
      headers: { host: 'h', forwarded: 'for="1.1.1.1' },
    });
    assert.equal(h.forwarded, 'for=127.0.0.1;host=h;proto=http');
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

describe('fields a proxy must send, whatever Connection lists (RFC 9110 §7.6.1)', () => {
  const base = {
    peer: '127.0.0.1',
    proto: 'http' as const,
    upstreamHost: 'up:1',
    xForwarded: true,
    forwarded: true,
    via: 'gatehouse',
    peerTrusted: false,
  };
  const cases: [
    string,
    { changeOrigin: boolean; headers: Record<string, string> },
    Record<string, string>,
  ][] = [
    [
      'Connection: host -> the client Host is still sent',
      { changeOrigin: false, headers: { host: 'pub', connection: 'close, host' } },
      { host: 'pub', 'x-forwarded-host': 'pub' },
    ],
    [
      'Connection: host with changeOrigin -> the upstream Host',
      { changeOrigin: true, headers: { host: 'pub', connection: 'host' } },
      { host: 'up:1', 'x-forwarded-host': 'pub' },
    ],
    [
      'Connection lists X-Forwarded-*, Via, Forwarded -> ours regenerated',
      {
        changeOrigin: false,
        headers: {
          host: 'pub',
          connection: 'x-forwarded-for, x-forwarded-proto, via, forwarded',
          'x-forwarded-for': '6.6.6.6',
          'x-forwarded-proto': 'https',
          via: '1.1 spoof',
          forwarded: 'for=6.6.6.6',
        },
      },
      {
        'x-forwarded-for': '127.0.0.1',
        'x-forwarded-proto': 'http',
        forwarded: 'for=127.0.0.1;host=pub;proto=http',
      },
    ],
    [
      'Upgrade: h2c on a plain request -> no Upgrade, Connection or HTTP2-Settings',
      {
        changeOrigin: false,
        headers: {
          host: 'pub',
          connection: 'Upgrade, HTTP2-Settings',
          upgrade: 'h2c',
          'http2-settings': 'AAA',
        },
      },
      { upgrade: '', connection: '', 'http2-settings': '' },
    ],
  ];
  for (const [name, input, want] of cases)
    it(name, () => {
      const h = upstreamRequestHeaders({ ...base, ...input });
      for (const [k, v] of Object.entries(want)) assert.equal(h[k], v === '' ? undefined : v, k);
    });
});

describe('interimDecision (RFC 9110 §15.2)', () => {
  const cases: [string, Parameters<typeof interimDecision>[0], string][] = [
    ['102 to an HTTP/1.1 client -> forward', { status: 102, count: 1, clientHttp10: false }, 'forward'],
    ['103 to an HTTP/1.1 client -> forward', { status: 103, count: 1, clientHttp10: false }, 'forward'],
    ['an unknown 1xx -> forward', { status: 199, count: 1, clientHttp10: false }, 'forward'],
    ['any 1xx to an HTTP/1.0 client -> drop', { status: 103, count: 1, clientHttp10: true }, 'drop'],
    ['101 on a plain request -> drop', { status: 101, count: 1, clientHttp10: false }, 'drop'],
    [
      'the last allowed one -> forward',
      { status: 103, count: MAX_INTERIM_RESPONSES, clientHttp10: false },
      'forward',
    ],
    [
      'one past the limit -> abort',
      { status: 103, count: MAX_INTERIM_RESPONSES + 1, clientHttp10: false },
      'abort',
    ],
    ['past the limit, HTTP/1.0 too -> abort', { status: 102, count: 33, clientHttp10: true }, 'abort'],
  ];
  for (const [name, input, want] of cases) it(name, () => assert.equal(interimDecision(input).kind, want));
});

describe('formatInterimHead', () => {
  it('all fields, hop-by-hop ones and those listed in Connection removed', () => {
    assert.equal(
      formatInterimHead(103, {
        link: ['</a.css>; rel=preload', '</b.js>; rel=preload'],
        'x-hint': '1',
        connection: 'x-private',
        'x-private': 's',
        'keep-alive': 'timeout=5',
      }),
      'HTTP/1.1 103 Early Hints\r\nlink: </a.css>; rel=preload\r\nlink: </b.js>; rel=preload\r\nx-hint: 1\r\n\r\n',
    );
  });
  it('102 without fields', () => {
    assert.equal(formatInterimHead(102, {}), 'HTTP/1.1 102 Processing\r\n\r\n');
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
