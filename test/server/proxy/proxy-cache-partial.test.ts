// Partial responses in the shared cache (RFC 9111 §3.3, §3.4), with the memory, disk and redis stores:
// a 206 is stored as its piece, a held range is answered from it, a request for more asks upstream for
// the missing bytes only (with If-Range), pieces with the same strong validator are combined and a
// complete set becomes a 200; pieces of another representation are never mixed; pieces per entry are
// bounded. Every test counts what reaches a real origin that honours Range.
// matrix: http1 h2 h1-tls adapters runtimes (the static, policy, proxy and cache suites run on every protocol, adapter and runtime)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { get, makeSite, removeSite, startServer, type TestServer } from '../../helpers/http.js';
import { type Origin, origin } from '../../helpers/origin.js';
import { pattern, type RangeRoute, rangeRoute } from '../../helpers/range-origin.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { waitUntilStored } from '../../helpers/wait.js';

const BODY = pattern(100);
const NEW_BODY = pattern(100, 7);
const range = (r: string) => ({ headers: { range: r } });

for (const store of ['memory', 'disk', 'redis'] as const) {
  describe(`proxy cache partial responses (${store} store)`, () => {
    let up: Origin;
    let redis: TestRedis | undefined;
    let site: string;
    let gh: TestServer;
    const routes: Record<string, RangeRoute> = {
      '/held': rangeRoute(() => ({ body: BODY, etag: '"v1"' })),
      '/more': rangeRoute(() => ({ body: BODY, etag: '"v1"' })),
      '/whole': rangeRoute(() => ({ body: BODY, etag: '"v1"' })),
      // A new representation from the second request on: If-Range gets the whole new 200.
      '/changed': rangeRoute((n) =>
        n === 1 ? { body: BODY, etag: '"v1"' } : { body: NEW_BODY, etag: '"v2"' },
      ),
      '/bounded': rangeRoute(() => ({ body: BODY, etag: '"v1"' })),
      '/weak': rangeRoute(() => ({ body: BODY, etag: 'W/"w"' })),
    };
    before(async () => {
      up = await origin(Object.fromEntries(Object.entries(routes).map(([p, r]) => [p, r.handler])));
      site = makeSite({ 'index.html': 'static' });
      let extra = {};
      if (store === 'redis') {
        redis = await startRedis();
        extra = { redis: { url: redis.url, keyPrefix: 'gh-partial-test:' } };
      }
      gh = await startServer(site, {
        ...extra,
        proxy: [
          {
            prefix: '/',
            upstream: up.url,
            cacheControl: null,
            cache: { enabled: true, store, maxPiecesPerEntry: 2 },
          },
        ],
      });
    });
    after(async () => {
      await gh.close();
      await up.close();
      await redis?.close();
      removeSite(site);
    });

    it('a 206 is stored as its piece; a range inside it is a 206 from the store', async () => {
      const first = await get(gh.url, '/held', range('bytes=10-29'));
      assert.equal(first.status, 206);
      assert.equal(first.text, BODY.subarray(10, 30).toString());
      await waitUntilStored(gh.url, '/held', { range: 'bytes=10-29' });
      const r = await get(gh.url, '/held', range('bytes=12-15'));
      assert.equal(r.status, 206);
      assert.equal(r.headers['content-range'], 'bytes 12-15/100');
      assert.equal(r.headers['content-length'], '4');
      assert.equal(r.headers.etag, '"v1"');
      assert.equal(r.text, BODY.subarray(12, 16).toString());
      assert.match(String(r.headers['cache-status']), /^gatehouse; hit/);
      // Not held: a plain GET without only-if-cached would complete it; only-if-cached gets 504.
      const probe = await get(gh.url, '/held', { headers: { 'cache-control': 'only-if-cached' } });
      assert.equal(probe.status, 504);
      assert.equal(up.count('/held'), 1, 'the ranges and the only-if-cached probe came from the store');
    });

    it('a range partly held: upstream is asked for the missing bytes only, with If-Range', async () => {
      await get(gh.url, '/more', range('bytes=10-29'));
      await waitUntilStored(gh.url, '/more', { range: 'bytes=10-29' });
      const r = await get(gh.url, '/more', range('bytes=20-49'));
      assert.equal(r.status, 206);
      assert.equal(r.headers['content-range'], 'bytes 20-49/100');
      assert.equal(r.text, BODY.subarray(20, 50).toString());
      assert.deepEqual(routes['/more']!.seen[1], { range: 'bytes=30-49', ifRange: '"v1"' });
      // Combined: 10-49 is held now.
      await waitUntilStored(gh.url, '/more', { range: 'bytes=10-49' });
      const again = await get(gh.url, '/more', range('bytes=10-49'));
      assert.equal(again.text, BODY.subarray(10, 50).toString());
      assert.match(String(again.headers['cache-status']), /^gatehouse; hit/);
      assert.equal(up.count('/more'), 2);
    });

    it('pieces that become complete are stored as a 200 (RFC 9111 §3.4)', async () => {
      await get(gh.url, '/whole', range('bytes=0-49'));
      await waitUntilStored(gh.url, '/whole', { range: 'bytes=0-49' });
      const r = await get(gh.url, '/whole');
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-range'], undefined);
      assert.equal(r.text, BODY.toString());
      assert.deepEqual(routes['/whole']!.seen[1], { range: 'bytes=50-', ifRange: '"v1"' });
      await waitUntilStored(gh.url, '/whole');
      const hit = await get(gh.url, '/whole');
      assert.equal(hit.status, 200);
      assert.equal(hit.text, BODY.toString());
      assert.match(String(hit.headers['cache-status']), /^gatehouse; hit/);
      // The stored 200 answers ranges too (stored-range.ts).
      assert.equal((await get(gh.url, '/whole', range('bytes=95-'))).text, BODY.subarray(95).toString());
      assert.equal(up.count('/whole'), 2);
    });

    it('another representation upstream: If-Range brings the whole new 200, nothing is mixed', async () => {
      await get(gh.url, '/changed', range('bytes=0-9'));
      await waitUntilStored(gh.url, '/changed', { range: 'bytes=0-9' });
      const r = await get(gh.url, '/changed', range('bytes=5-14'));
      assert.equal(r.status, 200);
      assert.equal(r.text, NEW_BODY.toString());
      await waitUntilStored(gh.url, '/changed');
      const later = await get(gh.url, '/changed', range('bytes=0-9'));
      assert.equal(
        later.text,
        NEW_BODY.subarray(0, 10).toString(),
        'the new representation, not the old piece',
      );
      assert.equal(up.count('/changed'), 2);
    });

    it('pieces per entry are bounded (maxPiecesPerEntry 2): a third apart is not stored', async () => {
      await get(gh.url, '/bounded', range('bytes=0-0'));
      await waitUntilStored(gh.url, '/bounded', { range: 'bytes=0-0' });
      await get(gh.url, '/bounded', range('bytes=10-10'));
      await waitUntilStored(gh.url, '/bounded', { range: 'bytes=10-10' });
      const third = await get(gh.url, '/bounded', range('bytes=20-20'));
      assert.equal(third.text, BODY.subarray(20, 21).toString());
      const again = await get(gh.url, '/bounded', range('bytes=20-20'));
      assert.equal(again.text, BODY.subarray(20, 21).toString());
      assert.equal(up.count('/bounded'), 4, 'the third piece went upstream twice');
      // The first two are still held.
      const held = await get(gh.url, '/bounded', range('bytes=10-10'));
      assert.match(String(held.headers['cache-status']), /^gatehouse; hit/);
      assert.equal(up.count('/bounded'), 4);
    });

    it('no strong validator: a held range is served, but nothing is combined', async () => {
      await get(gh.url, '/weak', range('bytes=0-9'));
      await waitUntilStored(gh.url, '/weak', { range: 'bytes=0-9' });
      assert.equal((await get(gh.url, '/weak', range('bytes=2-3'))).text, '23');
      const r = await get(gh.url, '/weak', range('bytes=5-14'));
      assert.equal(r.status, 206);
      assert.equal(r.text, BODY.subarray(5, 15).toString());
      // The completion (10-14, no If-Range: no strong validator) cannot be combined: the client's own
      // range goes upstream once more.
      assert.deepEqual(
        routes['/weak']!.seen.slice(1).map((s) => s.range),
        ['bytes=10-14', 'bytes=5-14'],
      );
      assert.equal(routes['/weak']!.seen[1]!.ifRange, undefined);
    });
  });
}
