// The proxy cache's hit path: from the second hit of a stored response on, a plain GET is answered
// without a promise (RouteCache.tryHit). Whatever path answers, hits must carry the same fields, an Age
// that grows with resident time (RFC 9111 §4.2.3, §5.1), and the request's own CORS fields; requests
// that are not plain (Range, conditionals, HEAD, Cache-Control) and stale responses must leave it.
// The disk store answers hits from its memory tier the same way.
// matrix: http1 h2 h1-tls adapters runtimes (the static, policy, proxy and cache suites run on every protocol, adapter and runtime)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { get, makeSite, removeSite, startServer, type TestServer } from '../../helpers/http.js';
import { type Origin, origin, text } from '../../helpers/origin.js';
import { waitUntilElapsed, waitUntilStored } from '../../helpers/wait.js';

const A = 'https://a.example';
const B = 'https://b.example';

/** A response's fields without the ones that change per request (Date) or per hit (Age, ttl). */
function stable(headers: Record<string, string | string[] | undefined>): Record<string, unknown> {
  const { date: _d, age: _a, 'cache-status': _s, ...rest } = headers;
  return rest;
}

for (const store of ['memory', 'disk'] as const)
  describe(`proxy cache hit path (${store} store)`, () => {
    let up: Origin;
    let site: string;
    let gh: TestServer;
    before(async () => {
      up = await origin({
        '/aged': (_q, s, n) =>
          text(
            s,
            200,
            { 'cache-control': 'max-age=3600', age: '100', etag: '"g"', 'x-n': String(n) },
            'aged',
          ),
        '/varied': (_q, s, n) => {
          s.setHeader('set-cookie', ['a=1', 'b=2']);
          text(s, 200, { 'cache-control': 'public, max-age=3600', vary: 'Accept-Encoding' }, `varied ${n}`);
        },
        '/short': (_q, s, n) => text(s, 200, { 'cache-control': 'max-age=3' }, `short ${n}`),
        '/cookies': (_q, s, n) => {
          s.setHeader('set-cookie', ['a=1', 'b=2']);
          text(s, 200, { 'cache-control': 'public, max-age=3600' }, `cookies ${n}`);
        },
        '/empty': (_q, s) => {
          s.writeHead(204, { 'cache-control': 'max-age=3600' });
          s.end();
        },
      });
      site = makeSite({ 'index.html': 'static' });
      gh = await startServer(site, {
        cors: { origins: [A, B] },
        proxy: [{ prefix: '/', upstream: up.url, cacheControl: null, cache: { enabled: true, store } }],
      });
    });
    after(async () => {
      await gh.close();
      await up.close();
      removeSite(site);
    });

    it('answers every later hit with the same fields and body as the first, Age included', async () => {
      const t0 = Date.now();
      const miss = await get(gh.url, '/aged');
      assert.match(String(miss.headers['cache-status']), /fwd=uri-miss/);
      await waitUntilStored(gh.url, '/aged');
      const hits = [];
      for (let i = 0; i < 5; i++) hits.push(await get(gh.url, '/aged'));
      // Whole seconds resident so far, rounded up: Age and ttl move by at most that much.
      const residentSec = Math.ceil((Date.now() - t0) / 1000);
      for (const h of hits) {
        assert.equal(h.status, 200);
        assert.equal(String(h.body), 'aged');
        assert.deepEqual(stable(h.headers), stable(hits[0]!.headers));
        // §4.2.3: the origin's Age (100) plus the seconds it has been stored here.
        const age = Number(h.headers.age);
        assert.ok(age >= 100 && age <= 100 + residentSec, `age ${h.headers.age}, ${residentSec} s resident`);
        const ttl = Number(/^gatehouse; hit; ttl=(\d+)$/.exec(String(h.headers['cache-status']))?.[1]);
        // RFC 9211 §2.6: ttl is what is left of the 3600 s lifetime at that Age (rounded up).
        assert.ok(ttl + age === 3600 || ttl + age === 3601, `${h.headers['cache-status']}, age ${age}`);
        assert.equal(h.headers['content-length'], '4');
        assert.equal(h.headers['x-n'], '1');
      }
      assert.equal(up.count('/aged'), 1);
    });

    it('gives each hit the CORS fields of its own request, not those of an earlier one', async () => {
      await get(gh.url, '/aged'); // stored already; another hit to be sure the fields are memoised
      const a = await get(gh.url, '/aged', { headers: { origin: A } });
      const b = await get(gh.url, '/aged', { headers: { origin: B } });
      const none = await get(gh.url, '/aged');
      const other = await get(gh.url, '/aged', { headers: { origin: 'https://evil.example' } });
      assert.equal(a.headers['access-control-allow-origin'], A);
      assert.equal(b.headers['access-control-allow-origin'], B);
      assert.equal(none.headers['access-control-allow-origin'], undefined);
      assert.equal(other.headers['access-control-allow-origin'], undefined);
      for (const r of [a, b, none, other]) {
        assert.equal(String(r.body), 'aged');
        assert.match(String(r.headers['cache-status']), /; hit/);
      }
      assert.equal(up.count('/aged'), 1);
    });

    it('merges the CORS Vary with the stored Vary and keeps every Set-Cookie line (RFC 9110 §12.5.5)', async () => {
      for (let i = 0; i < 4; i++) {
        if (i === 1) await waitUntilStored(gh.url, '/varied', { origin: A });
        const r = await get(gh.url, '/varied', { headers: { origin: A } });
        assert.equal(String(r.body), 'varied 1');
        assert.equal(r.headers['access-control-allow-origin'], A);
        const vary = String(r.headers.vary)
          .split(',')
          .map((v) => v.trim().toLowerCase())
          .sort();
        assert.deepEqual(vary, ['accept-encoding', 'origin'], `request ${i + 1}: ${r.headers.vary}`);
        assert.deepEqual(r.headers['set-cookie'], ['a=1', 'b=2'], `request ${i + 1}`);
      }
      assert.equal(up.count('/varied'), 1);
    });

    it('leaves Range, conditional, HEAD and Cache-Control requests to the full path', async () => {
      await get(gh.url, '/aged');
      await get(gh.url, '/aged');
      const range = await get(gh.url, '/aged', { headers: { range: 'bytes=1-2' } });
      assert.equal(range.status, 206);
      assert.equal(String(range.body), 'ge');
      const inm = await get(gh.url, '/aged', { headers: { 'if-none-match': '"g"' } });
      assert.equal(inm.status, 304);
      assert.equal(String(inm.body), '');
      const head = await get(gh.url, '/aged', { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(String(head.body), '');
      assert.equal(head.headers['content-length'], '4');
      // §5.2.1.1: max-age=0 from the client makes the cache revalidate (a 304 here: same ETag).
      const reload = await get(gh.url, '/aged', { headers: { 'cache-control': 'max-age=0' } });
      assert.equal(reload.status, 200);
      assert.match(String(reload.headers['cache-status']), /fwd=request/);
      assert.equal(up.count('/aged'), 2);
    });

    it('stops answering from the store when the response turns stale', async () => {
      const t0 = Date.now();
      const first = await get(gh.url, '/short');
      assert.equal(String(first.body), 'short 1');
      await waitUntilStored(gh.url, '/short');
      const hit = await get(gh.url, '/short');
      // max-age=3 counts from the upstream's Date, whole seconds (RFC 9111 §4.2.3: age = now - date
      // here), so the age right after storing is under 2 s (the Date's lost fraction, plus the store):
      // a hit is owed on every run. (With max-age=1 it was owed only within 1 s of that Date, and the
      // assertion had to be skipped on the runs that missed it.)
      assert.match(String(hit.headers['cache-status']), /; hit/);
      assert.equal(String(hit.body), 'short 1');
      const before = up.count('/short');
      assert.equal(before, 1);
      await waitUntilElapsed(t0, 3100); // time is the event: the response turns stale
      const after1 = await get(gh.url, '/short');
      assert.equal(String(after1.body), `short ${before + 1}`);
      assert.match(String(after1.headers['cache-status']), /fwd=stale/);
      assert.equal(up.count('/short'), before + 1);
    });

    it('repeats every Set-Cookie line and sends no body with a stored 204', async () => {
      for (let i = 0; i < 3; i++) {
        const r = await get(gh.url, '/cookies');
        assert.deepEqual(r.headers['set-cookie'], ['a=1', 'b=2']);
        assert.equal(String(r.body), 'cookies 1');
      }
      for (let i = 0; i < 3; i++) {
        const r = await get(gh.url, '/empty');
        assert.equal(r.status, 204);
        assert.equal(String(r.body), '');
        assert.equal(r.headers['content-length'], undefined);
      }
      assert.equal(up.count('/cookies'), 1);
      assert.equal(up.count('/empty'), 1);
    });
  });
