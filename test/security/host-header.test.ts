// Attack: hostile Host header values (RFC 9112 §3.2: 400 for a missing Host on HTTP/1.1, more than one
// Host line or an invalid value), sent over raw sockets to a real Gatehouse; valid ones reach the
// upstream normalised.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { makeSite, raw, rawStatus, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { type Origin, origin } from '../helpers/origin.js';

describe('Host header', () => {
  let up: Origin;
  let site: string;
  let gh: TestServer;
  before(async () => {
    up = await origin({
      '/echo': (req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(`host=${req.headers.host}`);
      },
    });
    site = makeSite({ 'index.html': 'home' });
    gh = await startServer(site, { proxy: [{ prefix: '/api', upstream: up.url }] });
  });
  after(async () => {
    await gh.close();
    await up.close();
    removeSite(site);
  });
  const send = (head: string) => raw(gh.port, `${head}Connection: close\r\n\r\n`);

  const bad: [string, string][] = [
    ['a slash and a fragment', 'example.com/api/account/me#'],
    ['a backslash', 'example.com\\api'],
    ['a fragment', 'example.com#x'],
    ['a query', 'example.com?x'],
    ['userinfo @', 'evil.com@example.com'],
    ['a space inside', 'example .com'],
    ['empty', ''],
    ['a port with letters', 'example.com:80x'],
    ['a port over 65535', 'example.com:99999'],
    ['an empty label', 'example..com'],
    ['a short IPv4 the URL parser would rewrite', '127.1'],
    ['an unterminated IPv6 literal', '[::1'],
    ['an IPv6 zone id', '[fe80::1%25eth0]'],
    ['percent-encoding', 'ex%61mple.com'],
    ['a non-ASCII byte', 'ex\xe4mple.com'],
  ];
  for (const [name, value] of bad) {
    it(`attack: Host with ${name} -> 400`, async () => {
      const text = await send(`GET /api/echo HTTP/1.1\r\nHost: ${value}\r\n`);
      assert.equal(rawStatus(text), 400, text.slice(0, 300));
      assert.match(text, /connection: close/i);
      assert.ok(!text.includes('host='), 'never proxied');
    });
  }

  it('attack: two Host lines -> 400', async () => {
    const text = await send('GET /api/echo HTTP/1.1\r\nHost: example.com\r\nHost: evil.com\r\n');
    assert.equal(rawStatus(text), 400);
    assert.match(text, /More than one Host/);
  });
  it('attack: two Host lines with the same value -> 400', async () => {
    const text = await send('GET /api/echo HTTP/1.1\r\nHost: example.com\r\nhost: example.com\r\n');
    assert.equal(rawStatus(text), 400);
  });
  it('attack: HTTP/1.1 without Host -> 400', async () => {
    const text = await send('GET /api/echo HTTP/1.1\r\n');
    assert.equal(rawStatus(text), 400);
    assert.match(text, /Host header field missing/);
  });
  it('HTTP/1.0 without Host is served (RFC 9112 §3.2 requires Host of HTTP/1.1 only)', async () => {
    const text = await send('GET /index.html HTTP/1.0\r\n');
    assert.equal(rawStatus(text), 200);
    assert.ok(text.endsWith('home'));
  });

  const normalised: [string, string, string][] = [
    ['uppercase', 'EXAMPLE.com', 'example.com'],
    ['the default port', 'example.com:80', 'example.com'],
    ['an empty port', 'example.com:', 'example.com'],
    ['a trailing dot', 'example.com.:8080', 'example.com:8080'],
    ['an IPv6 literal', '[0:0::1]:3000', '[::1]:3000'],
  ];
  for (const [name, value, want] of normalised) {
    it(`Host with ${name} reaches the upstream normalised (${want})`, async () => {
      const text = await send(`GET /api/echo HTTP/1.1\r\nHost: ${value}\r\n`);
      assert.equal(rawStatus(text), 200, text.slice(0, 300));
      assert.equal(/host=(\S+)/.exec(text)?.[1], want, text);
    });
  }

  it('absolute-form: the target authority replaces Host (RFC 9112 §3.2.2)', async () => {
    const text = await send('GET http://Example.com:80/api/echo HTTP/1.1\r\nHost: other.test\r\n');
    assert.equal(rawStatus(text), 200, text.slice(0, 300));
    assert.equal(/host=(\S+)/.exec(text)?.[1], 'example.com', text);
  });
  it('attack: absolute-form with a valid authority still needs a valid Host -> 400', async () => {
    const text = await send('GET http://example.com/api/echo HTTP/1.1\r\nHost: a/b\r\n');
    assert.equal(rawStatus(text), 400);
  });
});
