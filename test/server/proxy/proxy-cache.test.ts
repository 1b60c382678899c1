// The proxy's shared cache (proxy[].cache) against a real upstream that counts requests.
// matrix: http1 h2 h1-tls adapters runtimes (the static, policy, proxy and cache suites run on every protocol, adapter and runtime)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { get, makeSite, removeSite, startServer, type TestServer } from '../../helpers/http.js';
import { type Origin, origin, text } from '../../helpers/origin.js';
import { waitUntilGone, waitUntilStored } from '../../helpers/wait.js';

describe('proxy cache', () => {
  let up: Origin;
  let site: string;
  let gh: TestServer;
  let plain: TestServer;
  before(async () => {
    up = await origin({
      '/fresh': (_q, s, n) =>
        text(s, 200, { 'cache-control': 'max-age=3600', etag: `"f${n}"` }, `fresh ${n}`),
      // No Last-Modified: the stored Date stands in for it (RFC 9111 §4.3.2).
      '/no-lm': (_q, s, n) => text(s, 200, { 'cache-control': 'max-age=3600' }, `no-lm ${n}`),
      '/nostore': (_q, s, n) => text(s, 200, { 'cache-control': 'no-store' }, `nostore ${n}`),
      '/vary': (q, s, n) =>
        text(
          s,
          200,
          { 'cache-control': 'max-age=3600', vary: 'Accept-Language' },
          `${q.headers['accept-language'] ?? 'none'} ${n}`,
        ),
      '/reval': (q, s, n) => {
        if (q.headers['if-none-match'] === '"r1"') {
          s.writeHead(304, { etag: '"r1"', 'cache-control': 'max-age=0' });
          s.end();
          return;
        }
        text(s, 200, { 'cache-control': 'max-age=0', etag: '"r1"' }, `reval ${n}`);
      },
      '/item': (q, s, n) => {
        if (q.method === 'POST') {
          s.writeHead(204);
          s.end();
          return;
        }
        text(s, 200, { 'cache-control': 'max-age=3600' }, `item ${n}`);
      },
      '/bare304': (q, s, n) => {
        // A 304 without any validator (common in the wild).
        if (q.headers['if-none-match'] === '"b1"') {
          s.writeHead(304);
          s.end();
          return;
        }
        text(s, 200, { 'cache-control': 'max-age=0', etag: '"b1"' }, `bare ${n}`);
      },
      '/sie': (_q, s, n) => {
        if (n === 1) text(s, 200, { 'cache-control': 'max-age=0, stale-if-error=60' }, 'sie 1');
        else text(s, 503, {}, 'down');
      },
      '/cl304': (_q, s) => {
        s.writeHead(304, { etag: '"c"', 'content-length': '10' });
        s.end();
      },
      '/head': (_q, s, n) => text(s, 200, { 'cache-control': 'max-age=3600' }, `head body ${n}`),
      '/private': (_q, s, n) => text(s, 200, { 'cache-control': 'private, max-age=3600' }, `private ${n}`),
      '/auth': (_q, s, n) => text(s, 200, { 'cache-control': 'max-age=3600' }, `auth ${n}`),
    });
    site = makeSite({ 'index.html': 'static' });
    gh = await startServer(site, {
      proxy: [{ prefix: '/', upstream: up.url, cacheControl: null, cache: { enabled: true } }],
    });
    plain = await startServer(site, { proxy: [{ prefix: '/', upstream: up.url }] });
  });
  after(async () => {
    await gh.close();
    await plain.close();
    await up.close();
    removeSite(site);
  });

  it('serves a fresh stored response without asking the origin, with Age', async () => {
    const a = await get(gh.url, '/fresh');
    assert.equal(a.status, 200);
    assert.equal(a.text, 'fresh 1');
    assert.match(String(a.headers['cache-status']), /^gatehouse; fwd=uri-miss; fwd-status=200; stored$/);
    await waitUntilStored(gh.url, '/fresh'); // the store write completes after the response
    const b = await get(gh.url, '/fresh');
    assert.equal(b.status, 200);
    assert.equal(b.text, 'fresh 1');
    assert.match(String(b.headers['cache-status']), /^gatehouse; hit; ttl=\d+$/);
    assert.match(String(b.headers.age), /^\d+$/);
    assert.equal(b.headers['content-length'], '7');
    assert.equal(b.headers.etag, '"f1"');
    assert.equal(up.count('/fresh'), 1);
  });

  it('answers a matching If-None-Match from the store with 304', async () => {
    await get(gh.url, '/fresh');
    const r = await get(gh.url, '/fresh', { headers: { 'if-none-match': '"f1"' } });
    assert.equal(r.status, 304);
    assert.equal(r.text, '');
    assert.equal(up.count('/fresh'), 1);
  });

  it('If-Modified-Since against a stored response without Last-Modified compares its Date (RFC 9111 §4.3.2)', async () => {
    const first = await get(gh.url, '/no-lm');
    await waitUntilStored(gh.url, '/no-lm');
    const dateMs = Date.parse(String(first.headers.date));
    const ims = (ms: number) => ({ 'if-modified-since': new Date(ms).toUTCString() });
    // Not modified since the stored Date (or later): 304 from the store.
    for (const ms of [dateMs, dateMs + 3_600_000]) {
      const r = await get(gh.url, '/no-lm', { headers: ims(ms) });
      assert.equal(r.status, 304);
      assert.match(String(r.headers['cache-status']), /^gatehouse; hit/);
    }
    // RFC 9110 §13.1.3: a Date after the client's date counts as modified, so the full 200 (the
    // cache-tests case conditional-lm-fresh-no-lm expects a 304 here; see test/conformance/README.md).
    const older = await get(gh.url, '/no-lm', { headers: ims(dateMs - 3_000_000) });
    assert.equal(older.status, 200);
    assert.equal(older.text, 'no-lm 1');
    assert.equal(up.count('/no-lm'), 1);
  });

  it('does not store no-store responses', async () => {
    const a = await get(gh.url, '/nostore');
    assert.equal(a.text, 'nostore 1');
    // Whether to store is decided before the head goes out: Cache-Status says so, no need to wait.
    assert.doesNotMatch(String(a.headers['cache-status']), /stored/);
    const b = await get(gh.url, '/nostore');
    assert.equal(b.text, 'nostore 2');
    assert.doesNotMatch(String(b.headers['cache-status']), /stored|hit/);
    assert.equal(up.count('/nostore'), 2);
  });

  it('does not store private responses in the shared cache', async () => {
    assert.doesNotMatch(String((await get(gh.url, '/private')).headers['cache-status']), /stored/);
    assert.equal((await get(gh.url, '/private')).text, 'private 2');
  });

  it('does not store responses to requests with Authorization without public/s-maxage/must-revalidate', async () => {
    const h = { authorization: 'Basic dTpw' };
    assert.doesNotMatch(
      String((await get(gh.url, '/auth', { headers: h })).headers['cache-status']),
      /stored/,
    );
    assert.equal((await get(gh.url, '/auth', { headers: h })).text, 'auth 2');
  });

  it('keeps one variant per Vary value', async () => {
    const en = { 'accept-language': 'en' };
    const de = { 'accept-language': 'de' };
    assert.equal((await get(gh.url, '/vary', { headers: en })).text, 'en 1');
    await waitUntilStored(gh.url, '/vary', en);
    const deRes = await get(gh.url, '/vary', { headers: de });
    assert.equal(deRes.text, 'de 2');
    assert.match(String(deRes.headers['cache-status']), /fwd=vary-miss/);
    await waitUntilStored(gh.url, '/vary', de);
    assert.equal((await get(gh.url, '/vary', { headers: en })).text, 'en 1');
    assert.equal((await get(gh.url, '/vary', { headers: de })).text, 'de 2');
    assert.equal((await get(gh.url, '/vary')).text, 'none 3');
    assert.equal(up.count('/vary'), 3);
  });

  it('revalidates a stale response: the origin sees If-None-Match, the client gets 200 from the store', async () => {
    assert.equal((await get(gh.url, '/reval')).text, 'reval 1');
    await waitUntilStored(gh.url, '/reval');
    const b = await get(gh.url, '/reval');
    assert.equal(b.status, 200);
    assert.equal(b.text, 'reval 1');
    // max-age=0 and the stored Date (whole seconds, kept: the 304 has none) make it 0 or 1 s stale
    // (§4.2.3 apparent_age), depending on where in the second the two answers fell.
    assert.match(String(b.headers['cache-status']), /^gatehouse; fwd=stale; fwd-status=304; ttl=(0|-1)$/);
    const second = up.seen.filter((r) => r.url === '/reval')[1];
    assert.equal(second?.headers['if-none-match'], '"r1"');
    assert.equal(up.count('/reval'), 2);
  });

  it('revalidates when the client sends no-cache (fwd=request)', async () => {
    await get(gh.url, '/fresh');
    const before = up.count('/fresh');
    const r = await get(gh.url, '/fresh', { headers: { 'cache-control': 'no-cache' } });
    assert.equal(r.status, 200);
    assert.match(String(r.headers['cache-status']), /^gatehouse; fwd=request/);
    assert.equal(up.count('/fresh'), before + 1);
    assert.equal(up.seen.at(-1)?.headers['if-none-match'], '"f1"');
  });

  it('answers only-if-cached with 504 on a miss, from the store on a hit', async () => {
    const miss = await get(gh.url, '/never-stored', { headers: { 'cache-control': 'only-if-cached' } });
    assert.equal(miss.status, 504);
    assert.equal(up.count('/never-stored'), 0);
    await get(gh.url, '/fresh');
    const hit = await get(gh.url, '/fresh', { headers: { 'cache-control': 'only-if-cached' } });
    assert.equal(hit.status, 200);
  });

  it('invalidates a stored response after a successful POST to its URI', async () => {
    assert.equal((await get(gh.url, '/item')).text, 'item 1');
    await waitUntilStored(gh.url, '/item');
    assert.equal((await get(gh.url, '/item')).text, 'item 1');
    const post = await get(gh.url, '/item', { method: 'POST', body: 'x' });
    assert.equal(post.status, 204);
    assert.match(String(post.headers['cache-status']), /fwd=method/);
    await waitUntilGone(gh.url, '/item');
    assert.equal((await get(gh.url, '/item')).text, 'item 3');
  });

  it('freshens with a 304 that carries no validator', async () => {
    assert.equal((await get(gh.url, '/bare304')).text, 'bare 1');
    await waitUntilStored(gh.url, '/bare304');
    const b = await get(gh.url, '/bare304');
    assert.equal(b.status, 200);
    assert.equal(b.text, 'bare 1');
    // max-age=0 and the stored Date (whole seconds, kept: the 304 has none) make it 0 or 1 s stale
    // (§4.2.3 apparent_age), depending on where in the second the two answers fell.
    assert.match(String(b.headers['cache-status']), /^gatehouse; fwd=stale; fwd-status=304; ttl=(0|-1)$/);
    assert.equal(up.count('/bare304'), 2);
  });

  it('serves a stale response when the origin fails and stale-if-error allows it', async () => {
    assert.equal((await get(gh.url, '/sie')).text, 'sie 1');
    await waitUntilStored(gh.url, '/sie');
    const b = await get(gh.url, '/sie');
    assert.equal(b.status, 200);
    assert.equal(b.text, 'sie 1');
    assert.match(String(b.headers['cache-status']), /^gatehouse; hit; fwd=stale; fwd-status=503; ttl=-?\d+$/);
  });

  it('answers HEAD from a stored GET without a body', async () => {
    await get(gh.url, '/head');
    await waitUntilStored(gh.url, '/head');
    const h = await get(gh.url, '/head', { method: 'HEAD' });
    assert.equal(h.status, 200);
    assert.equal(h.text, '');
    assert.equal(h.headers['content-length'], String('head body 1'.length));
    assert.match(String(h.headers['cache-status']), /^gatehouse; hit; ttl=\d+$/);
    assert.equal(up.count('/head'), 1);
  });

  it('works with the disk store; its miss never claims `stored` (the write settles after the head)', async () => {
    const disk = await startServer(site, {
      proxy: [{ prefix: '/', upstream: up.url, cacheControl: null, cache: { enabled: true, store: 'disk' } }],
    });
    try {
      const before = up.count('/head');
      const miss = await get(disk.url, '/head');
      assert.equal(miss.status, 200);
      assert.equal(miss.headers['cache-status'], 'gatehouse; fwd=uri-miss; fwd-status=200; detail=storing');
      await waitUntilStored(disk.url, '/head');
      const b = await get(disk.url, '/head');
      assert.match(String(b.headers['cache-status']), /^gatehouse; hit; ttl=\d+$/);
      assert.equal(b.text, `head body ${before + 1}`);
      assert.equal(up.count('/head'), before + 1);
    } finally {
      await disk.close();
    }
  });

  it('passes a 304 that announces a Content-Length through intact (no 502, no broken response)', async () => {
    for (const server of [plain, gh]) {
      const r = await get(server.url, '/cl304', { headers: { 'if-none-match': '"c"' } });
      assert.equal(r.status, 304);
      assert.equal(r.text, '');
    }
  });

  it('is off by default', async () => {
    const before = up.count('/fresh');
    const a = await get(plain.url, '/fresh');
    const b = await get(plain.url, '/fresh');
    assert.equal(a.headers['cache-status'], undefined);
    assert.equal(b.headers['cache-status'], undefined);
    assert.equal(up.count('/fresh'), before + 2);
  });
});
