// Attack: hostile request-targets (RFC 9112 §3.2, RFC 3986 §5.2.4): raw and encoded dot segments,
// %2f, backslashes, fragments, absolute-form, asterisk-form, over raw sockets to a real Gatehouse.
// What the upstream receives is the canonical target the routing saw.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { makeSite, raw, rawStatus, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { type Origin, origin } from '../helpers/origin.js';

describe('request-target', () => {
  let up: Origin;
  let site: string;
  let gh: TestServer;
  before(async () => {
    const echo = (req: { url?: string }, res: import('node:http').ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`target=${req.url}`);
    };
    up = await origin({ '/api/victim': echo, '/api/a%2Fb': echo, '/api/x': echo, '/api/it': echo });
    site = makeSite({ 'index.html': 'home', 'a/b.txt': 'file b', 'secret.txt': 'SECRET', 'pub/x.txt': 'x' });
    gh = await startServer(site, {
      proxy: [{ prefix: '/api', upstream: up.url, stripPrefix: false }],
      auth: [{ prefix: '/secret.txt', deny: ['0.0.0.0/0', '::/0'] }],
    });
  });
  after(async () => {
    await gh?.close();
    await up.close();
    removeSite(site);
  });
  const send = (target: string, method = 'GET', host = 'example.com') =>
    raw(gh.port, `${method} ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  const upstreamTarget = (text: string) => /target=(\S+)/.exec(text)?.[1];

  const proxied: [string, string][] = [
    ['raw dot segments', '/api/public/../victim'],
    ['encoded dot segments %2e%2e', '/api/public/%2e%2e/victim'],
    ['encoded dot segments %2E%2E', '/api/public/%2E%2E/victim'],
    ['half-encoded .%2e', '/api/public/.%2e/victim'],
    ['encoded single dot', '/api/%2e/victim'],
    ['unreserved escapes', '/api/%76ictim'],
  ];
  for (const [name, target] of proxied) {
    it(`attack: ${name} (${target}) -> the upstream receives the canonical /api/victim`, async () => {
      const text = await send(target);
      assert.equal(rawStatus(text), 200, text.slice(0, 300));
      assert.equal(upstreamTarget(text), '/api/victim');
    });
  }

  it('attack: dot segments out of a proxy prefix (/api/../secret.txt) are routed after resolution', async () => {
    const text = await send('/api/%2e%2e/secret.txt');
    assert.equal(rawStatus(text), 403, text.slice(0, 300)); // the auth rule on /secret.txt applies
    assert.ok(!text.includes('SECRET'));
  });
  it('attack: dot segments into a proxy prefix (/pub/../api/x) reach the proxy as /api/x', async () => {
    const text = await send('/pub/%2e%2e/api/x');
    assert.equal(rawStatus(text), 200, text.slice(0, 300));
    assert.equal(upstreamTarget(text), '/api/x');
  });

  it('attack: %2f in a static path -> 400 (the file a/b.txt is not served)', async () => {
    const text = await send('/a%2fb.txt');
    assert.equal(rawStatus(text), 400, text.slice(0, 300));
    assert.ok(!text.includes('file b'));
  });
  it('attack: %2F in a static path -> 400', async () => {
    assert.equal(rawStatus(await send('/a%2Fb.txt')), 400);
  });
  it('%2f in a proxied path is passed on encoded, never decoded into a separator', async () => {
    const text = await send('/api/a%2fb');
    assert.equal(rawStatus(text), 200, text.slice(0, 300));
    assert.equal(upstreamTarget(text), '/api/a%2Fb');
  });

  const refused: [string, string, string?][] = [
    ['dot segments above the root', '/../secret.txt'],
    ['encoded dot segments above the root', '/%2e%2e/secret.txt'],
    ['a raw backslash', '/api/public\\..\\victim'],
    ['a fragment', '/api/victim#x'],
    ['a malformed escape in the path', '/api/%zz'],
    ['an encoded NUL in a static path', '/secret.txt%00.png'],
    ['asterisk-form with GET', '*'],
    ['absolute-form with another scheme', 'ftp://example.com/api/victim'],
    ['absolute-form with userinfo', 'http://user@example.com/api/victim'],
  ];
  for (const [name, target] of refused) {
    it(`attack: ${name} (${target}) -> 400`, async () => {
      const text = await send(target);
      assert.equal(rawStatus(text), 400, text.slice(0, 300));
      assert.equal(upstreamTarget(text), undefined, 'never proxied');
      assert.ok(!text.includes('SECRET'));
    });
  }

  it('absolute-form is routed like origin-form: proxied paths reach the upstream', async () => {
    const text = await send('http://example.com/api/victim?q=1');
    assert.equal(rawStatus(text), 200, text.slice(0, 300));
    assert.equal(upstreamTarget(text), '/api/victim?q=1');
  });
  it('absolute-form is routed like origin-form: static files', async () => {
    const text = await send('http://example.com/a/b.txt');
    assert.equal(rawStatus(text), 200, text.slice(0, 300));
    assert.ok(text.endsWith('file b'));
  });
  it('attack: absolute-form with dot segments -> canonical upstream target', async () => {
    const text = await send('http://example.com/api/public/%2e%2e/victim');
    assert.equal(upstreamTarget(text), '/api/victim');
  });
  it('OPTIONS * is not refused as a bad target (RFC 9112 §3.2.4)', async () => {
    const text = await send('*', 'OPTIONS');
    assert.notEqual(rawStatus(text), 400, text.slice(0, 300));
    assert.ok(rawStatus(text) < 500, text.slice(0, 300));
  });
  it('attack: FOOBAR (a valid token Node does not know) -> 400 problem+json', async () => {
    const text = await send('/index.html', 'FOOBAR');
    assert.equal(rawStatus(text), 400);
    assert.match(text, /application\/problem\+json/);
    assert.match(text, /The request method is not one this server accepts/);
  });
  it('attack: CONNECT (authority-form) never reaches a handler or an upstream', async () => {
    const text = await raw(
      gh.port,
      'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
      5000,
    );
    assert.ok(!/^HTTP\/1\.1 2/.test(text), text.slice(0, 300));
  });
});
