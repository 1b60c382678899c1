// createCachingFetch stores partial responses (RFC 9111 §3.3, §3.4): a 206 is kept as its piece, a
// held range is answered from it, a request for more asks the network for the missing bytes only (with
// If-Range), pieces with the same strong validator are combined and a complete set is a 200; another
// representation is never mixed in; a 206 that lies about its length is not kept. A real origin on
// 127.0.0.1 that honours Range counts what reaches it.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createCachingFetch } from '../../src/client/index.js';
import { type Origin, origin } from '../helpers/origin.js';
import { pattern, type RangeRoute, rangeRoute } from '../helpers/range-origin.js';

const BODY = pattern(100);
const NEW_BODY = pattern(100, 7);
const routes: Record<string, RangeRoute> = {
  '/doc': rangeRoute(() => ({ body: BODY, etag: '"v1"' })),
  '/changed': rangeRoute((n) => (n === 1 ? { body: BODY, etag: '"v1"' } : { body: NEW_BODY, etag: '"v2"' })),
  '/switch': rangeRoute(() => ({ body: BODY, etag: '"v1"' })),
};
let o: Origin;
before(async () => {
  o = await origin({
    ...Object.fromEntries(Object.entries(routes).map(([p, r]) => [p, r.handler])),
    // Content-Range 4-9/10 (6 bytes) over a 5-byte body: the suite's inconsistent 206.
    '/short': (_q, s) => {
      s.writeHead(206, { 'cache-control': 'max-age=3600', etag: '"s"', 'content-range': 'bytes 4-9/10' });
      s.end('01234');
    },
    // A 206 under another strong ETag for every request after the first (ignoring If-Range).
    '/other': (q, s, n) => {
      const m = /^bytes=(\d+)-(\d+)$/.exec(q.headers.range ?? '')!;
      const [a, b] = [Number(m[1]), Number(m[2])];
      const rep = n === 1 ? BODY : NEW_BODY;
      s.writeHead(206, {
        'cache-control': 'max-age=3600',
        etag: n === 1 ? '"a"' : '"b"',
        'content-range': `bytes ${a}-${b}/100`,
      });
      s.end(rep.subarray(a, b + 1));
    },
  });
});
after(() => o.close());
beforeEach(() => {
  o.seen.length = 0;
  for (const r of Object.values(routes)) r.seen.length = 0;
});

const range = (r: string): RequestInit => ({ headers: { range: r } });
const cs = (r: Response) => r.headers.get('cache-status') ?? '';

describe('createCachingFetch: partial responses', () => {
  it('a 206 is kept as its piece; a range inside it comes from the store', async () => {
    const f = createCachingFetch();
    const first = await f(`${o.url}/doc`, range('bytes=10-29'));
    assert.equal(first.status, 206);
    assert.equal(await first.text(), BODY.subarray(10, 30).toString());
    await f.idle();
    const r = await f(`${o.url}/doc`, range('bytes=12-15'));
    assert.equal(r.status, 206);
    assert.equal(r.headers.get('content-range'), 'bytes 12-15/100');
    assert.equal(await r.text(), BODY.subarray(12, 16).toString());
    assert.match(cs(r), /; hit/);
    const cached = await f(`${o.url}/doc`, {
      ...range('bytes=9-12'),
      cache: 'only-if-cached',
      mode: 'same-origin',
    });
    assert.equal(cached.status, 504, 'byte 9 is not held');
    assert.equal(o.count('/doc'), 1);
  });

  it('more than is held: the network is asked for the missing bytes only; complete pieces become a 200', async () => {
    const f = createCachingFetch();
    await (await f(`${o.url}/doc`, range('bytes=0-29'))).arrayBuffer();
    await f.idle();
    const more = await f(`${o.url}/doc`, range('bytes=20-59'));
    assert.equal(more.status, 206);
    assert.equal(more.headers.get('content-range'), 'bytes 20-59/100');
    assert.equal(await more.text(), BODY.subarray(20, 60).toString());
    const whole = await f(`${o.url}/doc`);
    assert.equal(whole.status, 200);
    assert.equal(await whole.text(), BODY.toString());
    assert.deepEqual(routes['/doc']!.seen, [
      { range: 'bytes=0-29', ifRange: undefined },
      { range: 'bytes=30-59', ifRange: '"v1"' },
      { range: 'bytes=60-', ifRange: '"v1"' },
    ]);
    // Stored as the complete 200: a plain GET and any range come from the store.
    const hit = await f(`${o.url}/doc`);
    assert.match(cs(hit), /; hit/);
    assert.equal(await hit.text(), BODY.toString());
    assert.equal(await (await f(`${o.url}/doc`, range('bytes=-3'))).text(), BODY.subarray(97).toString());
    assert.equal(o.count('/doc'), 3);
  });

  it('another representation: If-Range brings the whole new 200; nothing is mixed', async () => {
    const f = createCachingFetch();
    await (await f(`${o.url}/changed`, range('bytes=0-9'))).arrayBuffer();
    await f.idle();
    const r = await f(`${o.url}/changed`, range('bytes=5-14'));
    assert.equal(r.status, 200);
    assert.equal(await r.text(), NEW_BODY.toString());
    await f.idle();
    const later = await f(`${o.url}/changed`, range('bytes=0-9'));
    assert.equal(await later.text(), NEW_BODY.subarray(0, 10).toString());
    assert.equal(o.count('/changed'), 2);
  });

  it('a completion under another strong validator is not combined: the range is asked for again', async () => {
    const f = createCachingFetch();
    await (await f(`${o.url}/other`, range('bytes=0-9'))).arrayBuffer();
    await f.idle();
    const r = await f(`${o.url}/other`, range('bytes=0-19'));
    assert.equal(r.status, 206);
    assert.equal(await r.text(), NEW_BODY.subarray(0, 20).toString(), 'all of one representation');
    assert.deepEqual(
      o.seen.map((q) => [q.headers.range, q.headers['if-range']]),
      [
        ['bytes=0-9', undefined],
        ['bytes=10-19', '"a"'],
        ['bytes=0-19', undefined],
      ],
    );
  });

  it('a 206 whose body disagrees with its Content-Range is not kept', async () => {
    const f = createCachingFetch();
    for (let i = 0; i < 2; i++) {
      const r = await f(`${o.url}/short`, range('bytes=-5'));
      assert.equal(await r.text(), '01234');
      await f.idle();
    }
    assert.equal(o.count('/short'), 2);
    assert.equal((await f.stats()).stored, 0);
  });

  it('HEAD is never answered from pieces', async () => {
    const f = createCachingFetch();
    await (await f(`${o.url}/switch`, range('bytes=0-9'))).arrayBuffer();
    await f.idle();
    const head = await f(`${o.url}/switch`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(o.count('/switch'), 2);
  });
});

describe('createCachingFetch: partial responses in the disk tier', () => {
  it('pieces stored on disk are served by a new caching fetch; damaged pieces are a miss', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { diskTier } = await import('../../src/index.js');
    const dir = mkdtempSync(join(tmpdir(), 'gh-partial-tier-'));
    try {
      const disk1 = await diskTier(dir);
      const f1 = createCachingFetch({ stores: [disk1] });
      await (await f1(`${o.url}/doc`, range('bytes=40-49'))).arrayBuffer();
      await f1.idle();
      await disk1.close();
      const disk2 = await diskTier(dir);
      const f2 = createCachingFetch({ stores: [disk2] });
      const r = await f2(`${o.url}/doc`, range('bytes=41-43'));
      assert.equal(r.status, 206);
      assert.equal(r.headers.get('content-range'), 'bytes 41-43/100');
      assert.equal(await r.text(), BODY.subarray(41, 44).toString());
      assert.match(cs(r), /; hit/);
      assert.equal(o.count('/doc'), 1);
      await disk2.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // A tier whose copy claims more bytes than its body holds: not served, the network is asked.
    const entries = new Map<string, import('../../src/client/cache-tier.js').CachedVariants>();
    const damaged: import('../../src/client/cache-tier.js').CacheTier = {
      name: 'damaged',
      get: (key) => entries.get(key),
      put: (key, v) => {
        entries.set(
          key,
          v.map((e) => ('partial' in e ? { ...e, body: e.body.subarray(0, 3) } : e)),
        );
      },
      delete: (key) => void entries.delete(key),
      keys: () => entries.keys(),
      clear: () => entries.clear(),
    };
    const f3 = createCachingFetch({ stores: [damaged], maxMemoryBytes: 0 });
    await (await f3(`${o.url}/doc`, range('bytes=60-69'))).arrayBuffer();
    await f3.idle();
    const again = await f3(`${o.url}/doc`, range('bytes=65-68'));
    assert.equal(await again.text(), BODY.subarray(65, 69).toString());
    assert.equal(o.count('/doc'), 3, 'the damaged copy was a miss');
  });
});
