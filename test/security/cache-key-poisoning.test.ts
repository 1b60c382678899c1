// Attack: plant a body in the shared proxy cache under a URL other than the one fetched, through a
// hostile Host (`/`, `\`, `#`, `?`, `@`, spaces, empty, two lines) or a hostile target (raw and encoded
// dot segments, `//`, backslashes, absolute-form). A real Gatehouse with a caching proxy route in front
// of a real origin that echoes the Host and target it received; every later clean request must get a
// body fetched for exactly its own URL, and everything the origin received must be canonical.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { canonicalOriginForm, parseAuthority } from '../../src/http/target.js';
import { makeSite, raw, rawStatus, removeSite, startServer, type TestServer } from '../helpers/http.js';

/** A chunked body's data (RFC 9112 §7.1), for raw responses. */
function dechunk(s: string): string {
  let out = '';
  for (let i = 0; ; ) {
    const eol = s.indexOf('\r\n', i);
    const size = Number.parseInt(s.slice(i, eol), 16);
    if (!(size > 0)) return out;
    out += s.slice(eol + 2, eol + 2 + size);
    i = eol + 2 + size + 2;
  }
}

interface Seen {
  host: string | undefined;
  url: string;
}

describe('cache key poisoning through Host and request-target', () => {
  let upstream: Server;
  const seen: Seen[] = [];
  let site: string;
  let gh: TestServer;

  before(async () => {
    upstream = createServer((req, res) => {
      const s = { host: req.headers.host, url: req.url! };
      seen.push(s);
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=600' });
      res.end(JSON.stringify(s));
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const port = (upstream.address() as AddressInfo).port;
    site = makeSite({ 'index.html': 'home' });
    gh = await startServer(site, {
      proxy: [
        {
          prefix: '/api',
          upstream: `http://127.0.0.1:${port}`,
          stripPrefix: false,
          cache: { enabled: true },
        },
      ],
    });
  });
  after(async () => {
    await gh.close();
    upstream.closeAllConnections();
    await new Promise<void>((r) => upstream.close(() => r()));
    removeSite(site);
  });

  /** One request on its own connection; status and body. */
  async function send(head: string): Promise<{ status: number; body: string; text: string }> {
    const text = await raw(gh.port, `${head}Connection: close\r\n\r\n`);
    const top = text.slice(0, text.indexOf('\r\n\r\n'));
    let body = text.slice(top.length + 4);
    if (/\r\ntransfer-encoding: chunked/i.test(top)) body = dechunk(body);
    return { status: rawStatus(text), body, text };
  }
  const clean = (host: string, path: string) => send(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\n`);

  // {p} is a path prefix unique to the case, so one case's entries cannot hide another's.
  const cases: [string, string][] = [
    ['Host with a path and #', 'GET {p}/public HTTP/1.1\r\nHost: example.com{p}/account/me#\r\n'],
    ['Host with a path and ?', 'GET {p}/public HTTP/1.1\r\nHost: example.com{p}/account/me?\r\n'],
    ['Host with a backslash', 'GET {p}/public HTTP/1.1\r\nHost: example.com\\{p}/account/me#\r\n'],
    ['Host with userinfo @', 'GET {p}/public HTTP/1.1\r\nHost: evil.com@example.com\r\n'],
    ['Host with a space and a path', 'GET {p}/public HTTP/1.1\r\nHost: example.com {p}/account/me#\r\n'],
    ['empty Host', 'GET {p}/account/me HTTP/1.1\r\nHost: \r\n'],
    ['two Host lines', 'GET {p}/account/me HTTP/1.1\r\nHost: evil.com\r\nHost: example.com\r\n'],
    ['raw dot segments', 'GET {p}/public/../victim HTTP/1.1\r\nHost: example.com\r\n'],
    ['encoded dot segments %2e%2e', 'GET {p}/public/%2e%2e/victim HTTP/1.1\r\nHost: example.com\r\n'],
    ['encoded dot segments %2E%2e', 'GET {p}/public/%2E%2e/victim HTTP/1.1\r\nHost: example.com\r\n'],
    ['half-encoded dot segments .%2e', 'GET {p}/public/.%2e/victim HTTP/1.1\r\nHost: example.com\r\n'],
    ['single encoded dot %2e', 'GET {p}/public/%2e/../victim HTTP/1.1\r\nHost: example.com\r\n'],
    ['double slash', 'GET {p}//victim HTTP/1.1\r\nHost: example.com\r\n'],
    ['backslash dot segments', 'GET {p}/public\\..\\victim HTTP/1.1\r\nHost: example.com\r\n'],
    ['encoded backslash dot segments', 'GET {p}/public%5c..%5cvictim HTTP/1.1\r\nHost: example.com\r\n'],
    ['a fragment in the target', 'GET {p}/victim#x HTTP/1.1\r\nHost: example.com\r\n'],
    [
      'absolute-form naming another host',
      'GET http://example.com{p}/victim HTTP/1.1\r\nHost: other.test\r\n',
    ],
    [
      'absolute-form with dot segments',
      'GET http://example.com{p}/public/%2e%2e/victim HTTP/1.1\r\nHost: example.com\r\n',
    ],
    ['Host case and default port', 'GET {p}/victim HTTP/1.1\r\nHost: EXAMPLE.com:80\r\n'],
    ['Host with a trailing dot', 'GET {p}/victim HTTP/1.1\r\nHost: example.com.\r\n'],
  ];

  cases.forEach(([name, template], i) => {
    it(`attack: ${name} -> no stored entry reachable from another URL`, async () => {
      const p = `/api/c${i}`;
      const attack = await send(template.replaceAll('{p}', p));
      assert.ok(attack.status === 200 || attack.status === 400, attack.text.slice(0, 300));
      if (attack.status === 200) {
        // What the upstream received is canonical, and exactly what the key was built from: the same
        // clean request is now a hit with the same body.
        const got = JSON.parse(attack.body) as Seen;
        assert.deepEqual(canonicalOriginForm(got.url), { kind: 'ok', path: got.url });
        const a = parseAuthority(got.host ?? '', 80);
        assert.equal(a.kind === 'ok' && a.authority, got.host);
        const again = await clean(got.host!, got.url);
        assert.equal(again.status, 200);
        assert.match(again.text, /cache-status: gatehouse; hit/i);
        assert.deepEqual(JSON.parse(again.body), got);
      }
      for (const path of [`${p}/victim`, `${p}/account/me`, `${p}/public`, `${p}/public/victim`]) {
        const r = await clean('example.com', path);
        assert.equal(r.status, 200, r.text.slice(0, 300));
        assert.deepEqual(JSON.parse(r.body), { host: 'example.com', url: path }, `${name}: ${path}`);
      }
    });
  });

  it('HTTP/1.0 without Host: served, never stored, never answered from another URL', async () => {
    const before = seen.length;
    for (let i = 0; i < 2; i++) {
      const text = await raw(gh.port, 'GET /api/http10/victim HTTP/1.0\r\n\r\n');
      assert.equal(rawStatus(text), 200, text.slice(0, 300));
      assert.doesNotMatch(text, /cache-status: gatehouse; hit/i);
    }
    assert.equal(seen.length, before + 2, 'both went upstream');
    const r = await clean('example.com', '/api/http10/victim');
    assert.deepEqual(JSON.parse(r.body), { host: 'example.com', url: '/api/http10/victim' });
  });

  it('everything the upstream received was a canonical target with a valid Host', () => {
    assert.ok(seen.length > cases.length);
    for (const s of seen) {
      const t = canonicalOriginForm(s.url);
      assert.deepEqual(t, { kind: 'ok', path: s.url }, s.url);
      if (s.host === undefined) continue; // the HTTP/1.0 request without Host
      const a = parseAuthority(s.host, 80);
      assert.equal(a.kind === 'ok' && a.authority, s.host);
    }
  });
});
