// The proxy cache beyond lookups: coalescing without a count of arrivals, background revalidation, purge, ranges from the store,
// targeted fields (RFC 9213, Surrogate-Control), stale while disconnected, HEAD freshening, Age parsing.
// Every test counts what reaches a real origin on 127.0.0.1.
// Coalescing, which counts arrivals on the in-process server, is in proxy-cache-coalesce.test.ts.
// matrix: http1 h2 h1-tls adapters runtimes (the static, policy, proxy and cache suites run on every protocol, adapter and runtime)
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { get, makeSite, removeSite, scheme, startServer, type TestServer } from '../../helpers/http.js';
import { type Origin, origin, text } from '../../helpers/origin.js';
import { holdsFor, probeStore, waitUntil, waitUntilElapsed, waitUntilStored } from '../../helpers/wait.js';

describe('proxy cache features', () => {
  let up: Origin;
  let site: string;
  let gh: TestServer;
  let changingVersion = 1;
  /** Responses held back by the origin until released (coalescing). */
  const held: (() => void)[] = [];
  before(async () => {
    up = await origin({
      '/changing': (q, s) => {
        if (q.method === 'POST') {
          changingVersion++;
          s.writeHead(204);
          s.end();
          return;
        }
        const body = `version ${changingVersion}`; // read on arrival, answered when released
        held.push(() => text(s, 200, { 'cache-control': 'max-age=3600' }, body));
      },
      '/slow-nostore': (_q, s, n) => {
        held.push(() => text(s, 200, { 'cache-control': 'no-store' }, `nostore ${n}`));
      },
      '/swr': (_q, s, n) =>
        text(
          s,
          200,
          {
            'cache-control': n === 1 ? 'max-age=1, stale-while-revalidate=60' : 'max-age=3600',
            etag: `"s${n}"`,
          },
          `swr ${n}`,
        ),
      '/tagged/a': (_q, s, n) =>
        text(s, 200, { 'cache-control': 'max-age=3600', 'cache-tag': 'blue, Red' }, `a ${n}`),
      '/tagged/b': (_q, s, n) =>
        text(s, 200, { 'cache-control': 'max-age=3600', 'cache-tag': 'red' }, `b ${n}`),
      '/other': (_q, s, n) =>
        text(s, 200, { 'cache-control': 'max-age=3600', 'cache-tag': 'green' }, `o ${n}`),
      '/keyed': (_q, s, n) => text(s, 200, { 'cache-control': 'max-age=3600' }, `keyed ${n}`),
      '/digits': (_q, s, n) =>
        text(s, 200, { 'cache-control': 'max-age=3600', etag: '"d"' }, `0123456789-${n}`),
      // Honours Range like a file server: a 206 for one range, 200 without one.
      '/media': (q, s, n) => {
        const body = Buffer.from(`media-${n}-0123456789`);
        const h = { 'content-type': 'video/mp4', 'cache-control': 'max-age=3600', etag: `"m${n}"` };
        const m = /^bytes=(\d+)-(\d*)$/.exec(String(q.headers.range ?? ''));
        if (m === null) {
          s.writeHead(200, { ...h, 'content-length': body.length });
          s.end(body);
          return;
        }
        const start = Number(m[1]);
        const end = m[2] === '' ? body.length - 1 : Math.min(Number(m[2]), body.length - 1);
        s.writeHead(206, {
          ...h,
          'content-range': `bytes ${start}-${end}/${body.length}`,
          'content-length': end - start + 1,
        });
        s.end(body.subarray(start, end + 1));
      },
      '/surrogate': (q, s, n) =>
        text(
          s,
          200,
          {
            'cache-control': 'no-store',
            'surrogate-control': 'max-age=3600;gatehouse, foo;other',
            'x-capability': String(q.headers['surrogate-capability']),
          },
          `sur ${n}`,
        ),
      '/cdn': (_q, s, n) =>
        text(s, 200, { 'cache-control': 'max-age=3600', 'cdn-cache-control': 'no-store' }, `cdn ${n}`),
      '/badage': (_q, s, n) => text(s, 200, { 'cache-control': 'max-age=3600', age: '1, 2' }, `age ${n}`),
      '/headfresh': (q, s, n) => {
        const h = { 'cache-control': n === 1 ? 'max-age=0' : 'max-age=3600', etag: '"h"', 'x-n': String(n) };
        if (q.method === 'HEAD') {
          s.writeHead(200, { 'content-type': 'text/plain', ...h });
          s.end();
          return;
        }
        text(s, 200, h, 'head fresh');
      },
    });
    site = makeSite({ 'index.html': 'static' });
    gh = await startServer(site, {
      proxy: [{ prefix: '/', upstream: up.url, cacheControl: null, cache: { enabled: true } }],
    });
  });
  after(async () => {
    await gh.close();
    await up.close();
    removeSite(site);
  });

  /** Waits until the origin holds `n` responses, then releases them all. */
  async function release(n: number): Promise<void> {
    await waitUntil(`the origin holds ${n} responses`, () => held.length >= n);
    for (const r of held.splice(0)) r();
  }

  it('does not store an answer to a request sent before an invalidation of its URL (§4.4)', async () => {
    const early = get(gh.url, '/changing'); // reaches the origin while version 1 is current
    await waitUntil('the origin holds the early request', () => held.length >= 1);
    const change = await get(gh.url, '/changing', { method: 'POST', body: 'x' });
    assert.equal(change.status, 204);
    await release(1);
    assert.equal((await early).text, 'version 1');
    // Its put began before the invalidation; it must never land (watched, since a late put is the bug).
    await holdsFor(
      '/changing is not stored',
      async () => (await probeStore(gh.url, '/changing')).status === 504,
      200,
    );
    const later = get(gh.url, '/changing');
    await release(1);
    const r = await later;
    assert.equal(r.text, 'version 2');
    assert.match(String(r.headers['cache-status']), /fwd=uri-miss/);
  });

  it('lets waiters go upstream on their own when the response was not storable', async () => {
    let done = false;
    const all = Promise.all(Array.from({ length: 5 }, () => get(gh.url, '/slow-nostore'))).finally(() => {
      done = true;
    });
    // Release whatever the origin holds until every client has its answer.
    while (!done) {
      await waitUntil('a held response or every answer', () => done || held.length > 0);
      for (const r of held.splice(0)) r();
    }
    const rs = await all;
    assert.equal(up.count('/slow-nostore'), 5);
    assert.deepEqual(
      rs.map((r) => r.status),
      [200, 200, 200, 200, 200],
    );
  });

  it('serves stale within stale-while-revalidate and revalidates in the background (RFC 5861 §3)', async () => {
    const t0 = Date.now();
    assert.equal((await get(gh.url, '/swr')).text, 'swr 1');
    await waitUntilElapsed(t0, 1100); // max-age=1 passes
    const stale = await get(gh.url, '/swr');
    assert.equal(stale.text, 'swr 1');
    assert.match(
      String(stale.headers['cache-status']),
      /^gatehouse; hit; detail=stale-while-revalidate; ttl=-?\d+$/,
    );
    // The background request reaches the origin, and its answer replaces the stored one.
    await waitUntil(
      'the background answer is stored',
      async () => (await probeStore(gh.url, '/swr')).text === 'swr 2',
    );
    const fresh = await get(gh.url, '/swr');
    assert.equal(fresh.text, 'swr 2');
    assert.match(String(fresh.headers['cache-status']), /^gatehouse; hit; ttl=\d+$/);
    assert.equal(up.count('/swr'), 2);
    assert.equal(up.seen.filter((q) => q.url === '/swr').at(-1)!.headers['if-none-match'], '"s1"');
  });

  it('purges one URL, a prefix and tags, from loopback only', async () => {
    for (const p of ['/tagged/a', '/tagged/b', '/other']) await get(gh.url, p);
    for (const p of ['/tagged/a', '/tagged/b', '/other']) await waitUntilStored(gh.url, p);
    const one = await get(gh.url, '/other', { method: 'PURGE' });
    assert.equal(one.status, 200);
    assert.deepEqual(JSON.parse(one.text), { purged: 1 });
    assert.equal((await get(gh.url, '/other')).text, 'o 2');
    const byTag = await get(gh.url, '/', { method: 'PURGE', headers: { 'cache-tag': 'red' } });
    assert.deepEqual(JSON.parse(byTag.text), { purged: 2 });
    assert.equal((await get(gh.url, '/tagged/a')).text, 'a 2');
    assert.equal((await get(gh.url, '/tagged/b')).text, 'b 2');
    for (const p of ['/tagged/a', '/tagged/b']) await waitUntilStored(gh.url, p);
    const prefix = await get(gh.url, '/tagged/*', { method: 'PURGE' });
    assert.deepEqual(JSON.parse(prefix.text), { purged: 2 });
    assert.match(String((await get(gh.url, '/other')).headers['cache-status']), /^gatehouse; hit; ttl=\d+$/);
    // The tag header never reaches clients.
    assert.equal((await get(gh.url, '/tagged/a')).headers['cache-tag'], undefined);
  });

  it('refuses PURGE from addresses not allowed', async () => {
    const strict = await startServer(site, {
      proxy: [
        {
          prefix: '/',
          upstream: up.url,
          cacheControl: null,
          cache: { enabled: true, purge: { allow: ['10.0.0.0/8'] } },
        },
      ],
    });
    try {
      const r = await get(strict.url, '/other', { method: 'PURGE' });
      assert.equal(r.status, 403);
      assert.match(String(r.headers['content-type']), /problem\+json/);
    } finally {
      await strict.close();
    }
  });

  it('says ttl on hits, and the key when statusKey is set (RFC 9211 §2.6, §2.7)', async () => {
    const keyed = await startServer(site, {
      proxy: [
        { prefix: '/', upstream: up.url, cacheControl: null, cache: { enabled: true, statusKey: true } },
      ],
    });
    try {
      await get(keyed.url, '/keyed');
      await waitUntilStored(keyed.url, '/keyed');
      const r = await get(keyed.url, '/keyed?k');
      assert.match(String(r.headers['cache-status']), /^gatehouse; fwd=uri-miss/);
      const hit = String((await get(keyed.url, '/keyed')).headers['cache-status']);
      // the key names the scheme the request came in on (the suite runs on http and https)
      const m = new RegExp(
        `^gatehouse; hit; ttl=(\\d+); key="GET ${scheme(keyed)}://127\\.0\\.0\\.1:\\d+/keyed"$`,
      ).exec(hit);
      assert.ok(m, hit);
      assert.ok(Number(m[1]) > 3590 && Number(m[1]) <= 3600, hit);
    } finally {
      await keyed.close();
    }
  });

  it('answers Range requests from a complete stored response (RFC 9110 §14)', async () => {
    assert.equal((await get(gh.url, '/digits')).text, '0123456789-1');
    await waitUntilStored(gh.url, '/digits');
    const one = await get(gh.url, '/digits', { headers: { range: 'bytes=2-4' } });
    assert.equal(one.status, 206);
    assert.equal(one.text, '234');
    assert.equal(one.headers['content-range'], 'bytes 2-4/12');
    const suffix = await get(gh.url, '/digits', { headers: { range: 'bytes=-2' } });
    assert.equal(suffix.text, '-1');
    const multi = await get(gh.url, '/digits', { headers: { range: 'bytes=0-0,5-5' } });
    assert.equal(multi.status, 206);
    assert.match(String(multi.headers['content-type']), /^multipart\/byteranges; boundary=/);
    const none = await get(gh.url, '/digits', { headers: { range: 'bytes=50-' } });
    assert.equal(none.status, 416);
    assert.equal(none.headers['content-range'], 'bytes */12');
    const ifRangeOld = await get(gh.url, '/digits', { headers: { range: 'bytes=0-1', 'if-range': '"x"' } });
    assert.equal(ifRangeOld.status, 200);
    assert.equal(up.count('/digits'), 1);
  });

  it('stores a 206 that carries the whole representation (Range: bytes=0-) as the complete response (§3.3)', async () => {
    const first = await get(gh.url, '/media?a', { headers: { range: 'bytes=0-' } });
    assert.equal(first.status, 206);
    assert.equal(first.headers['content-range'], 'bytes 0-17/18');
    assert.equal(first.text, 'media-1-0123456789');
    assert.match(String(first.headers['cache-status']), /fwd=uri-miss; fwd-status=206; stored/);
    await waitUntilStored(gh.url, '/media?a');
    const part = await get(gh.url, '/media?a', { headers: { range: 'bytes=8-11' } });
    assert.equal(part.status, 206);
    assert.equal(part.text, '0123');
    assert.equal(part.headers['content-range'], 'bytes 8-11/18');
    assert.match(String(part.headers['cache-status']), /; hit/);
    const whole = await get(gh.url, '/media?a');
    assert.equal(whole.status, 200);
    assert.equal(whole.text, 'media-1-0123456789');
    assert.equal(whole.headers['content-length'], '18');
    assert.equal(whole.headers['content-range'], undefined);
    assert.equal(whole.headers['content-type'], 'video/mp4');
    assert.equal(up.count('/media'), 1);
  });

  it('stores a 206 for part of a representation as its piece (§3.3), one answering If-Range not', async () => {
    const first = await get(gh.url, '/media?b', { headers: { range: 'bytes=2-5' } });
    assert.equal(first.status, 206);
    assert.equal(first.text, 'dia-');
    await waitUntilStored(gh.url, '/media?b', { range: 'bytes=2-5' });
    const again = await get(gh.url, '/media?b', { headers: { range: 'bytes=2-5' } });
    assert.equal(again.text, 'dia-');
    assert.match(String(again.headers['cache-status']), /^gatehouse; hit/);
    const before = up.count('/media');
    for (let i = 1; i <= 2; i++) {
      const r = await get(gh.url, '/media?c', {
        headers: { range: 'bytes=0-', 'if-range': `"m${i + before}"` },
      });
      assert.equal(r.status, 206);
      assert.doesNotMatch(String(r.headers['cache-status']), /stored|hit/);
    }
    assert.equal(up.count('/media'), before + 2);
  });

  it('stores the 200 an origin sends for a Range request it ignores', async () => {
    const first = await get(gh.url, '/digits?r', { headers: { range: 'bytes=0-3' } });
    assert.equal(first.status, 200);
    assert.match(String(first.headers['cache-status']), /fwd-status=200; stored/);
    await waitUntilStored(gh.url, '/digits?r');
    const part = await get(gh.url, '/digits?r', { headers: { range: 'bytes=0-3' } });
    assert.equal(part.status, 206);
    assert.equal(part.text, first.text.slice(0, 4));
    assert.match(String(part.headers['cache-status']), /; hit/);
  });

  it('obeys Surrogate-Control targeted at it over Cache-Control, and announces itself', async () => {
    const a = await get(gh.url, '/surrogate');
    assert.equal(a.headers['x-capability'], 'gatehouse="Surrogate/1.0"');
    // Our directives are consumed; the ones for other devices go on.
    assert.equal(a.headers['surrogate-control'], 'foo;other');
    await waitUntilStored(gh.url, '/surrogate');
    const b = await get(gh.url, '/surrogate');
    assert.equal(b.text, 'sur 1');
    assert.match(String(b.headers['cache-status']), /^gatehouse; hit; ttl=\d+$/);
  });

  it('obeys CDN-Cache-Control over Cache-Control (RFC 9213)', async () => {
    // Decided before the head goes out: nothing stored, so nothing to wait for.
    assert.doesNotMatch(String((await get(gh.url, '/cdn')).headers['cache-status']), /stored/);
    assert.equal((await get(gh.url, '/cdn')).text, 'cdn 2');
  });

  it('reads the first member of a list-valued Age (RFC 9111 §5.1): Age 1, 2 with max-age=3600 is fresh', async () => {
    await get(gh.url, '/badage');
    await waitUntilStored(gh.url, '/badage');
    const hit = await get(gh.url, '/badage');
    assert.equal(hit.text, 'age 1');
    assert.match(String(hit.headers['cache-status']), /; hit/);
    assert.ok(Number(hit.headers.age) >= 1, `Age ${hit.headers.age} counts from the first member`);
  });

  it('freshens a stored GET with a 200 to HEAD (RFC 9111 §4.3.5)', async () => {
    assert.equal((await get(gh.url, '/headfresh')).headers['x-n'], '1');
    await waitUntilStored(gh.url, '/headfresh');
    const h = await get(gh.url, '/headfresh', { method: 'HEAD' });
    assert.equal(h.headers['x-n'], '2');
    await waitUntil(
      'the stored GET is freshened',
      async () => (await probeStore(gh.url, '/headfresh')).headers['x-n'] === '2',
    );
    const g = await get(gh.url, '/headfresh');
    assert.match(String(g.headers['cache-status']), /^gatehouse; hit; ttl=\d+$/);
    assert.equal(g.headers['x-n'], '2');
    assert.equal(g.text, 'head fresh');
    assert.equal(up.count('/headfresh'), 2);
  });
});

describe('proxy cache while the origin is unreachable (RFC 9111 §4.2.4)', () => {
  it('serves stale up to staleIfUnreachableSec, never past must-revalidate', async () => {
    let n = 0;
    const up = await origin({
      '/a': (_q, s: ServerResponse) => text(s, 200, { 'cache-control': 'max-age=1' }, `a ${++n}`),
      '/m': (_q, s: ServerResponse) => text(s, 200, { 'cache-control': 'max-age=1, must-revalidate' }, 'm'),
    });
    const site = makeSite({ 'index.html': 'x' });
    const gh = await startServer(site, {
      proxy: [{ prefix: '/', upstream: up.url, cacheControl: null, retry: false, cache: { enabled: true } }],
    });
    try {
      const t0 = Date.now();
      await get(gh.url, '/a');
      await get(gh.url, '/m');
      await waitUntilStored(gh.url, '/a');
      await waitUntilElapsed(t0, 1100); // max-age=1 passes
      await up.close();
      const a = await get(gh.url, '/a');
      assert.equal(a.status, 200);
      assert.equal(a.text, 'a 1');
      assert.match(String(a.headers['cache-status']), /detail=origin-unreachable/);
      const m = await get(gh.url, '/m');
      assert.equal(m.status, 502);
    } finally {
      await gh.close();
      removeSite(site);
    }
  });
});
