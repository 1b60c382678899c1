// Range requests answered from a stored complete 200 (RFC 9111 §3.4, RFC 9110 §14, §13.1.5), with the
// memory, disk and redis stores: one range, multipart/byteranges, If-Range (strong comparison), 416,
// HEAD, and a stale entry revalidated without Range. Every test counts what reaches a real origin.
// matrix: http1 h2 h1-tls adapters runtimes (the static, policy, proxy and cache suites run on every protocol, adapter and runtime)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { get, makeSite, removeSite, startServer, type TestServer } from '../../helpers/http.js';
import { type Origin, origin } from '../../helpers/origin.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { waitUntilStored } from '../../helpers/wait.js';

// 64 bytes holding the boundary a two-range answer would pick first (`gatehouse-cache-2-64`).
const BODY = Buffer.from('0123456789-gatehouse-cache-2-64-abcdefghijklmnopqrstuvwxyz-ABCDE');
const LAST_MODIFIED = 'Mon, 02 Jan 2023 03:04:05 GMT';

/** The parts of a multipart/byteranges body (RFC 2046 §5.1.1), as [Content-Range, bytes]. */
function parseMultipart(body: Buffer, boundary: string): [string, string][] {
  const text = body.toString('latin1');
  assert.ok(text.startsWith(`--${boundary}\r\n`), 'starts with the first delimiter');
  assert.ok(text.endsWith(`\r\n--${boundary}--\r\n`), 'ends with the close delimiter');
  const inner = text.slice(`--${boundary}\r\n`.length, -`\r\n--${boundary}--\r\n`.length);
  return inner.split(`\r\n--${boundary}\r\n`).map((part) => {
    const [head, content] = part.split('\r\n\r\n', 2) as [string, string];
    const range = /^content-range: (.*)$/im.exec(head)?.[1] ?? '';
    return [range, content];
  });
}

for (const store of ['memory', 'disk', 'redis'] as const) {
  describe(`proxy cache ranges from a stored 200 (${store} store)`, () => {
    let up: Origin;
    let redis: TestRedis | undefined;
    let site: string;
    let gh: TestServer;
    /** Range fields the origin saw on revalidations of /stale. */
    const staleRanges: (string | undefined)[] = [];
    before(async () => {
      up = await origin({
        '/doc': (_q, s) => {
          s.writeHead(200, {
            'content-type': 'text/plain',
            'cache-control': 'max-age=3600',
            etag: '"d1"',
            'last-modified': LAST_MODIFIED,
          });
          s.end(BODY);
        },
        // obs-text in Content-Type (RFC 9110 §5.5): latin1 on the wire.
        '/odd': (_q, s) => {
          s.writeHead(200, { 'content-type': 'text/plain; x=\u00e9', 'cache-control': 'max-age=3600' });
          s.end(BODY);
        },
        '/weak': (_q, s, n) => {
          s.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'max-age=3600', etag: 'W/"w"' });
          s.end(`weak-${n}-0123456789`);
        },
        '/stale': (q, s, n) => {
          staleRanges.push(q.headers.range);
          const h = { 'content-type': 'text/plain', 'cache-control': 'max-age=0', etag: '"s"' };
          if (q.headers['if-none-match'] === '"s"') {
            s.writeHead(304, h);
            s.end();
            return;
          }
          s.writeHead(200, h);
          s.end(`stale-${n}-0123456789`);
        },
      });
      site = makeSite({ 'index.html': 'static' });
      let extra = {};
      if (store === 'redis') {
        redis = await startRedis();
        extra = { redis: { url: redis.url, keyPrefix: 'gh-ranges-test:' } };
      }
      gh = await startServer(site, {
        ...extra,
        proxy: [{ prefix: '/', upstream: up.url, cacheControl: null, cache: { enabled: true, store } }],
      });
      assert.equal((await get(gh.url, '/doc')).status, 200);
      await waitUntilStored(gh.url, '/doc');
    });
    after(async () => {
      await gh.close();
      await up.close();
      await redis?.close();
      removeSite(site);
    });

    it('one range, a suffix range and an open range: 206 from the store', async () => {
      const one = await get(gh.url, '/doc', { headers: { range: 'bytes=2-4' } });
      assert.equal(one.status, 206);
      assert.equal(one.text, '234');
      assert.equal(one.headers['content-range'], 'bytes 2-4/64');
      assert.equal(one.headers['content-length'], '3');
      assert.equal(one.headers.etag, '"d1"');
      assert.match(String(one.headers['cache-status']), /^gatehouse; hit/);
      assert.equal((await get(gh.url, '/doc', { headers: { range: 'bytes=-5' } })).text, 'ABCDE');
      assert.equal((await get(gh.url, '/doc', { headers: { range: 'bytes=60-' } })).text, 'BCDE');
      assert.equal(up.count('/doc'), 1);
    });

    it('several ranges: multipart/byteranges with a boundary found in no part (RFC 9110 §14.6)', async () => {
      const r = await get(gh.url, '/doc', { headers: { range: 'bytes=0-1, 11-40' } });
      assert.equal(r.status, 206);
      const m = /^multipart\/byteranges; boundary=(.+)$/.exec(String(r.headers['content-type']));
      assert.ok(m, String(r.headers['content-type']));
      const boundary = m[1]!;
      assert.ok(!BODY.includes(boundary), `boundary ${boundary} occurs in the content`);
      assert.equal(r.headers['content-length'], String(r.body.length));
      assert.deepEqual(parseMultipart(r.body, boundary), [
        ['bytes 0-1/64', '01'],
        ['bytes 11-40/64', BODY.subarray(11, 41).toString('latin1')],
      ]);
      assert.equal(up.count('/doc'), 1);
    });

    it('several ranges of a response whose Content-Type has obs-text: parts without it, no reset', async () => {
      await get(gh.url, '/odd');
      await waitUntilStored(gh.url, '/odd');
      const r = await get(gh.url, '/odd', { headers: { range: 'bytes=0-1,4-5' } });
      assert.equal(r.status, 206);
      const boundary = /boundary=(.+)$/.exec(String(r.headers['content-type']))![1]!;
      assert.deepEqual(parseMultipart(r.body, boundary), [
        ['bytes 0-1/64', '01'],
        ['bytes 4-5/64', '45'],
      ]);
      assert.equal(up.count('/odd'), 1);
    });

    it('If-Range: a strong match or the Last-Modified date ranges; a weak or other validator gets the 200', async () => {
      const strong = await get(gh.url, '/doc', { headers: { range: 'bytes=0-3', 'if-range': '"d1"' } });
      assert.equal(strong.status, 206);
      assert.equal(strong.text, '0123');
      const date = await get(gh.url, '/doc', { headers: { range: 'bytes=0-3', 'if-range': LAST_MODIFIED } });
      assert.equal(date.status, 206);
      for (const ifRange of ['W/"d1"', '"d2"', 'Mon, 02 Jan 2023 03:04:06 GMT']) {
        const r = await get(gh.url, '/doc', { headers: { range: 'bytes=0-3', 'if-range': ifRange } });
        assert.equal(r.status, 200, ifRange);
        assert.equal(r.text, BODY.toString(), ifRange);
        assert.match(String(r.headers['cache-status']), /^gatehouse; hit/, ifRange);
      }
      assert.equal(up.count('/doc'), 1);
    });

    it('a weak stored ETag never satisfies If-Range: the whole response from the store', async () => {
      await get(gh.url, '/weak');
      await waitUntilStored(gh.url, '/weak');
      const r = await get(gh.url, '/weak', { headers: { range: 'bytes=0-3', 'if-range': 'W/"w"' } });
      assert.equal(r.status, 200);
      assert.equal(r.text, 'weak-1-0123456789');
      const plain = await get(gh.url, '/weak', { headers: { range: 'bytes=0-3' } });
      assert.equal(plain.status, 206);
      assert.equal(plain.text, 'weak');
      assert.equal(up.count('/weak'), 1);
    });

    it('an unsatisfiable range: 416 with Content-Range bytes */64; HEAD ignores Range', async () => {
      const r = await get(gh.url, '/doc', { headers: { range: 'bytes=64-' } });
      assert.equal(r.status, 416);
      assert.equal(r.headers['content-range'], 'bytes */64');
      const head = await get(gh.url, '/doc', { method: 'HEAD', headers: { range: 'bytes=0-1' } });
      assert.equal(head.status, 200);
      assert.equal(head.headers['content-length'], '64');
      assert.equal(up.count('/doc'), 1);
    });

    it('a stale entry is revalidated without Range and the 304 lets the store answer 206', async () => {
      assert.equal((await get(gh.url, '/stale')).text, 'stale-1-0123456789');
      await waitUntilStored(gh.url, '/stale');
      const r = await get(gh.url, '/stale', { headers: { range: 'bytes=6-6' } });
      assert.equal(r.status, 206);
      assert.equal(r.text, '1');
      assert.equal(r.headers['content-range'], 'bytes 6-6/18');
      assert.equal(up.count('/stale'), 2);
      assert.deepEqual(staleRanges, [undefined, undefined]);
    });
  });
}
