// gatehouse-http/fetch on Node: Fetch-standard Requests in, Responses out, through the same features
// and kernel entry as the Node transport. Bun and Deno run the same face natively (test/runtimes/).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ConfigError } from '../../../src/config/load.js';
import { createFetchHandler, type GatehouseConfigInput } from '../../../src/fetch.js';
import type { FetchHandler } from '../../../src/server/index.js';
import { makeSite, removeSite } from '../../helpers/http.js';

const BIG = randomBytes(300_000);

describe('createFetchHandler: the static files through a Request and a Response', () => {
  let site: string;
  let h: FetchHandler;
  const at = (path: string, init?: RequestInit) => h.fetch(new Request(`http://site.test${path}`, init));

  before(async () => {
    site = makeSite({ 'index.html': '<h1>hi</h1>', 'big.bin': BIG, 'app.abcdef12.js': 'x()' });
    h = createFetchHandler({ root: site, log: { level: 'error' } });
    await h.ready();
  });
  after(async () => {
    await h.close();
    removeSite(site);
  });

  it('GET: 200 with the body, validators, Date and the HTML security fields', async () => {
    const r = await at('/index.html');
    assert.equal(r.status, 200);
    assert.equal(await r.text(), '<h1>hi</h1>');
    assert.match(r.headers.get('etag') ?? '', /^"/);
    assert.ok(r.headers.get('last-modified'));
    assert.ok(r.headers.get('date'), 'Date is sent (RFC 9110 §6.6.1)');
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
  });

  it('HEAD: the fields of GET and no content (RFC 9110 §9.3.2)', async () => {
    const get = await at('/index.html');
    const head = await at('/index.html', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), get.headers.get('content-length'));
    assert.equal(head.headers.get('etag'), get.headers.get('etag'));
    assert.equal((await head.arrayBuffer()).byteLength, 0);
  });

  it('If-None-Match -> 304 with no body (RFC 9110 §13.1.2); If-Match that fails -> 412', async () => {
    const etag = (await at('/index.html')).headers.get('etag')!;
    const r = await at('/index.html', { headers: { 'if-none-match': etag } });
    assert.equal(r.status, 304);
    assert.equal(r.body, null);
    assert.equal(r.headers.get('etag'), etag);
    const p = await at('/index.html', { method: 'PUT', headers: { 'if-match': '"other"' }, body: 'x' });
    assert.equal(p.status, 405, 'PUT on a file: not a method the files answer');
  });

  it('a file larger than the in-memory cache streams whole; ranges: one -> 206, two -> multipart', async () => {
    const whole = Buffer.from(await (await at('/big.bin')).arrayBuffer());
    assert.ok(whole.equals(BIG));
    const one = await at('/big.bin', { headers: { range: 'bytes=10-19' } });
    assert.equal(one.status, 206);
    assert.equal(one.headers.get('content-range'), `bytes 10-19/${BIG.length}`);
    assert.ok(Buffer.from(await one.arrayBuffer()).equals(BIG.subarray(10, 20)));
    const two = await at('/big.bin', { headers: { range: 'bytes=0-1,100-101' } });
    assert.equal(two.status, 206);
    assert.match(two.headers.get('content-type') ?? '', /^multipart\/byteranges; boundary=/);
    const text = Buffer.from(await two.arrayBuffer());
    assert.equal(text.length, Number(two.headers.get('content-length')));
  });

  it('a reader that stops early: the stream is cancelled and the next request is answered', async () => {
    const r = await at('/big.bin');
    const reader = r.body!.getReader();
    await reader.read();
    await reader.cancel();
    assert.equal((await at('/index.html')).status, 200);
  });

  it('bad input: a target that cannot be decoded -> 400 problem+json; a missing file -> 404', async () => {
    const bad = await at('/%zz');
    assert.equal(bad.status, 400);
    assert.equal(bad.headers.get('content-type'), 'application/problem+json');
    const missing = await at('/nope.txt');
    assert.equal(missing.status, 404);
  });

  it("static: the files' view, as createHandler gives it (assetUrl and hashes read it)", () => {
    assert.equal(typeof h.static.serveFileAt, 'function');
    assert.ok(h.static.files);
  });

  it('hashed names get the immutable class (the same policy as on Node)', async () => {
    const r = await at('/app.abcdef12.js');
    assert.equal(r.status, 200);
    assert.match(r.headers.get('cache-control') ?? '', /immutable/);
  });
});

describe('createFetchHandler: the policy steps and the client address', () => {
  it('CORS preflight and a rate limit keyed by info.remoteAddress', async () => {
    const site = makeSite({ 'a.txt': 'a' });
    const h = createFetchHandler({
      root: site,
      log: { level: 'error' },
      cors: { origins: ['https://app.test'] },
      limits: { rateLimit: { requestsPerSec: 1, burst: 2 } },
    });
    try {
      const pre = await h.fetch(
        new Request('http://site.test/a.txt', {
          method: 'OPTIONS',
          headers: { origin: 'https://app.test', 'access-control-request-method': 'GET' },
        }),
      );
      assert.equal(pre.status, 200, 'the default preflightStatus');
      assert.equal(pre.headers.get('access-control-allow-origin'), 'https://app.test');
      const from = (remoteAddress: string) =>
        h.fetch(new Request('http://site.test/a.txt'), { remoteAddress });
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await from('192.0.2.1')).status);
      assert.deepEqual(statuses, [200, 200, 429]);
      assert.equal((await from('192.0.2.2')).status, 200, 'another client has its own bucket');
    } finally {
      await h.close();
      removeSite(site);
    }
  });
});

describe('createFetchHandler: /metrics', () => {
  it('counts answers by kind and class, and the content bytes; only allowed addresses read it', async () => {
    const site = makeSite({ 'a.txt': 'twelve bytes' });
    const h = createFetchHandler({
      root: site,
      log: { level: 'error' },
      metrics: { path: '/metrics', allow: ['loopback'] },
    });
    try {
      const local = { remoteAddress: '127.0.0.1' };
      for (let i = 0; i < 3; i++) await (await h.fetch(new Request('http://site.test/a.txt'), local)).text();
      await (await h.fetch(new Request('http://site.test/nope'), local)).text();
      const m = await h.fetch(new Request('http://site.test/metrics'), local);
      assert.equal(m.status, 200);
      const text = await m.text();
      assert.match(text, /^gatehouse_requests_total\{class="2xx",kind="static"\} 3$/m);
      assert.match(text, /^gatehouse_requests_total\{class="4xx",kind="static"\} 1$/m);
      // The host writes the head: on this face the bytes are the content's (3 x 12, and the 404's body).
      const bytes = Number(/^gatehouse_response_bytes_total\{kind="static"\} (\d+)$/m.exec(text)?.[1]);
      assert.ok(bytes > 36 && bytes < 36 + 400, `bytes ${bytes}`);
      const other = await h.fetch(new Request('http://site.test/metrics'), { remoteAddress: '203.0.113.9' });
      assert.equal(other.status, 403);
    } finally {
      await h.close();
      removeSite(site);
    }
  });
});

describe('createFetchHandler: what this face cannot serve is a config error that names it', () => {
  const cases: [string, GatehouseConfigInput, string][] = [
    ['a WebSocket endpoint', { websocket: [{ path: '/ws', mode: 'echo' }] }, 'websocket'],
  ];
  for (const [name, extra, key] of cases) {
    it(`${name} -> ConfigError naming ${key}`, () => {
      assert.throws(
        () => createFetchHandler({ root: '.', ...extra }),
        (err: unknown) => err instanceof ConfigError && err.message.startsWith(`${key}:`),
      );
    });
  }
  it('a WebSocket endpoint on a host that switches handshakes (deps.upgrades) is taken', async () => {
    const h = createFetchHandler(
      { root: '.', websocket: [{ path: '/ws', mode: 'echo' }] },
      { upgrades: true },
    );
    await h.close();
  });
});
