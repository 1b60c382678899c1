// Partial responses in the shared cache and in createCachingFetch (RFC 9111 §3.3, §3.4) against an upstream that lies: pieces of
// one strong validator with other bytes, a Content-Range claiming an absurd representation, a 206 whose
// length lies, thousands of one-byte pieces, and a validator that changes between a piece and its
// completion. Nothing is mixed, nothing inconsistent is stored, the pieces stay bounded. Each test
// counts the requests that reached the upstream.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createCachingFetch } from '../../src/client/index.js';
import { get, makeSite, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { type Origin, origin } from '../helpers/origin.js';
import { pattern } from '../helpers/range-origin.js';
import { waitUntilStored } from '../helpers/wait.js';

/** Two representations that differ at every byte. */
const A = pattern(2000);
const B = pattern(2000, 31);
const ONLY_CACHED = { 'cache-control': 'only-if-cached' };

function piece(s: ServerResponse, etag: string, range: string, body: Buffer | string, length?: number): void {
  s.writeHead(206, {
    'content-type': 'application/octet-stream',
    'cache-control': 'max-age=3600',
    etag,
    'content-range': range,
    ...(length === undefined ? {} : { 'content-length': String(length) }),
  });
  s.end(body);
}

/** Serves `rep` honestly: one range `bytes=a-b` / `a-` as a 206, anything else as a 200. */
function honest(s: ServerResponse, rangeHeader: string | undefined, rep: Buffer, etag: string): void {
  const m = /^bytes=(\d+)-(\d*)$/.exec(rangeHeader ?? '');
  if (m === null) {
    s.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'max-age=3600', etag });
    s.end(rep);
    return;
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? rep.length - 1 : Math.min(Number(m[2]), rep.length - 1);
  piece(s, etag, `bytes ${start}-${end}/${rep.length}`, rep.subarray(start, end + 1));
}

function invalidEntries(metrics: string): number {
  let n = 0;
  for (const line of metrics.split('\n'))
    if (line.startsWith('gatehouse_cache_invalid_entries_total{'))
      n += Number(line.slice(line.lastIndexOf(' ') + 1));
  return n;
}

/** An upstream that lies about partial content, one path per attack (see each test). */
function liar(): Promise<Origin> {
  return origin({
    // Request 1: A's bytes 0-9. Later: B's bytes 5-14 under the same strong ETag, whatever was asked.
    '/disagree': (q, s, n) =>
      n === 1
        ? honest(s, q.headers.range, A, '"same"')
        : piece(s, '"same"', 'bytes 5-14/2000', B.subarray(5, 15)),
    // One byte of a representation that claims to be a petabyte; then honest for a 10-byte body.
    '/absurd': (q, s, n) =>
      n === 1
        ? piece(s, '"p"', 'bytes 0-0/999999999999999', '0')
        : honest(s, q.headers.range, A.subarray(0, 10), '"p"'),
    // The suite's 206: Content-Range 4-9/10 (6 bytes) over a 5-byte body.
    '/short': (_q, s) => piece(s, '"s"', 'bytes 4-9/10', '01234', 5),
    // Content-Range 0-9/20 announced, the body stops after 5 bytes (no Content-Length, chunked).
    '/cut': (_q, s) => piece(s, '"c"', 'bytes 0-9/20', '01234'),
    '/many': (q, s) => honest(s, q.headers.range, A, '"m"'),
    // Request 1: A under "a". Then B under "b", ignoring If-Range (two versions behind one name).
    '/switch': (q, s, n) => {
      if (n === 1) return honest(s, q.headers.range, A, '"a"');
      const m = /^bytes=(\d+)-(\d*)$/.exec(q.headers.range ?? '')!;
      const start = Number(m[1]);
      const end = m[2] === '' ? B.length - 1 : Number(m[2]);
      piece(s, '"b"', `bytes ${start}-${end}/${B.length}`, B.subarray(start, end + 1));
    },
  });
}

describe('attack: partial responses in the shared cache', () => {
  let up: Origin;
  let site: string;
  let gh: TestServer;
  before(async () => {
    up = await liar();
    site = makeSite({ 'index.html': 'static' });
    gh = await startServer(site, {
      metrics: {},
      proxy: [
        {
          prefix: '/',
          upstream: up.url,
          cacheControl: null,
          cache: { enabled: true, maxEntryBytes: 100_000 },
        },
      ],
    });
  });
  after(async () => {
    await gh.close();
    await up.close();
    removeSite(site);
  });

  it('attack: range pieces that disagree (same strong ETag, other bytes) are never mixed', async () => {
    assert.equal((await get(gh.url, '/disagree', { headers: { range: 'bytes=0-9' } })).status, 206);
    await waitUntilStored(gh.url, '/disagree', { range: 'bytes=0-9' });
    // The upstream answers 12-14 with 5-14 of other bytes: overlapping 5-9 held from A.
    const lie = await get(gh.url, '/disagree', { headers: { range: 'bytes=12-14' } });
    assert.equal(lie.status, 206);
    assert.equal(up.count('/disagree'), 2, 'the lying piece reached the cache');
    await waitUntilStored(gh.url, '/disagree', { range: 'bytes=5-14' });
    // Never A's 0-4 beside B's 5-14: what is held now is the new piece alone.
    const mixed = await get(gh.url, '/disagree', { headers: { range: 'bytes=0-14', ...ONLY_CACHED } });
    assert.equal(mixed.status, 504, `served ${mixed.status} ${mixed.text}`);
    const held = await get(gh.url, '/disagree', { headers: { range: 'bytes=5-14', ...ONLY_CACHED } });
    assert.equal(held.text, B.subarray(5, 15).toString());
    assert.equal(up.count('/disagree'), 2);
  });

  it('attack: an absurd Content-Range (a petabyte representation) is never completed upstream', async () => {
    await get(gh.url, '/absurd', { headers: { range: 'bytes=0-0' } });
    await waitUntilStored(gh.url, '/absurd', { range: 'bytes=0-0' });
    const r = await get(gh.url, '/absurd');
    assert.equal(r.status, 200);
    assert.equal(up.count('/absurd'), 2);
    // The missing 999999999999998 bytes do not fit maxEntryBytes: the request went upstream whole.
    assert.equal(up.seen.filter((q) => q.url === '/absurd')[1]!.headers.range, undefined);
  });

  it('attack: a 206 whose length lies is not stored (and never reaches a store as an entry)', async () => {
    const before = invalidEntries((await get(gh.url, '/metrics')).text);
    for (const path of ['/short', '/cut']) {
      for (let i = 1; i <= 2; i++)
        await get(gh.url, path, { headers: { range: 'bytes=0-9' } }).catch(() => {});
      assert.equal(up.count(path), 2, `${path}: both reached the upstream`);
      const probe = await get(gh.url, path, { headers: { range: 'bytes=0-3', ...ONLY_CACHED } });
      assert.equal(probe.status, 504, `${path}: nothing held`);
    }
    assert.equal(
      invalidEntries((await get(gh.url, '/metrics')).text),
      before,
      'no inconsistent entry was put',
    );
  });

  it('attack: thousands of one-byte pieces stay within maxPiecesPerEntry (16)', async () => {
    const N = 1000;
    for (let i = 0; i < N; i++) {
      const r = await get(gh.url, '/many', { headers: { range: `bytes=${2 * i}-${2 * i}` } });
      assert.equal(r.text, A.subarray(2 * i, 2 * i + 1).toString());
    }
    assert.equal(up.count('/many'), N);
    await waitUntilStored(gh.url, '/many', { range: 'bytes=0-0' });
    let held = 0;
    for (let i = 0; i < N; i++) {
      const r = await get(gh.url, '/many', { headers: { range: `bytes=${2 * i}-${2 * i}`, ...ONLY_CACHED } });
      if (r.status === 206) held++;
    }
    // Pieces apart from each other: at most 16 of the 1000 are held, the others were refused.
    assert.ok(held >= 1 && held <= 16, `held ${held} of ${N} pieces`);
    assert.equal(up.count('/many'), N, 'the probes were answered by the store');
  });

  it('attack: a piece that changes validator mid-way is never combined with the old ones', async () => {
    await get(gh.url, '/switch', { headers: { range: 'bytes=0-9' } });
    await waitUntilStored(gh.url, '/switch', { range: 'bytes=0-9' });
    const r = await get(gh.url, '/switch', { headers: { range: 'bytes=0-19' } });
    assert.equal(r.status, 206);
    assert.equal(r.headers.etag, '"b"');
    assert.equal(r.text, B.subarray(0, 20).toString(), 'all of one representation, not A then B');
    // The completion (10-19, If-Range "a") came back under "b": the client's own range went upstream.
    assert.deepEqual(
      up.seen.filter((q) => q.url === '/switch').map((q) => [q.headers.range, q.headers['if-range']]),
      [
        ['bytes=0-9', undefined],
        ['bytes=10-19', '"a"'],
        ['bytes=0-19', undefined],
      ],
    );
  });
});

describe('attack: partial responses in createCachingFetch', () => {
  let up: Origin;
  before(async () => {
    up = await liar();
  });
  after(() => up.close());
  const at = (path: string) => `${up.url}${path}`;
  const ranged = (r: string, more: RequestInit = {}): RequestInit => ({ ...more, headers: { range: r } });
  const cachedOnly: RequestInit = { cache: 'only-if-cached', mode: 'same-origin' };

  it('attack: range pieces that disagree (same strong ETag, other bytes) are never mixed', async () => {
    const f = createCachingFetch();
    await (await f(at('/disagree'), ranged('bytes=0-9'))).arrayBuffer();
    await (await f(at('/disagree'), ranged('bytes=12-14'))).arrayBuffer();
    await f.idle();
    assert.equal(up.count('/disagree'), 2, 'the lying piece reached the cache');
    const mixed = await f(at('/disagree'), ranged('bytes=0-14', cachedOnly));
    assert.equal(mixed.status, 504, `served ${mixed.status} ${await mixed.text()}`);
    const held = await f(at('/disagree'), ranged('bytes=5-14', cachedOnly));
    assert.equal(await held.text(), B.subarray(5, 15).toString());
    assert.equal(up.count('/disagree'), 2);
  });

  it('attack: an absurd Content-Range (a petabyte representation) is never completed', async () => {
    const f = createCachingFetch();
    await (await f(at('/absurd'), ranged('bytes=0-0'))).arrayBuffer();
    await f.idle();
    const r = await f(at('/absurd'));
    assert.equal(r.status, 200);
    assert.equal(up.count('/absurd'), 2);
    assert.equal(up.seen.filter((q) => q.url === '/absurd')[1]!.headers.range, undefined);
  });

  it('attack: a 206 whose length lies is not stored', async () => {
    const f = createCachingFetch();
    for (const path of ['/short', '/cut']) {
      for (let i = 1; i <= 2; i++) {
        await (await f(at(path), ranged('bytes=0-9'))).arrayBuffer();
        await f.idle();
      }
      assert.equal(up.count(path), 2, `${path}: both reached the origin`);
    }
    assert.equal((await f.stats()).stored, 0);
  });

  it('attack: thousands of one-byte pieces stay within 16 pieces per entry', async () => {
    const f = createCachingFetch();
    const N = 1000;
    for (let i = 0; i < N; i++) {
      const r = await f(at('/many'), ranged(`bytes=${2 * i}-${2 * i}`));
      assert.equal(await r.text(), A.subarray(2 * i, 2 * i + 1).toString());
      await f.idle();
    }
    assert.equal(up.count('/many'), N);
    let held = 0;
    for (let i = 0; i < N; i++) {
      const r = await f(at('/many'), ranged(`bytes=${2 * i}-${2 * i}`, cachedOnly));
      if (r.status === 206) held++;
      await r.arrayBuffer();
    }
    assert.ok(held >= 1 && held <= 16, `held ${held} of ${N} pieces`);
    assert.equal(up.count('/many'), N);
  });

  it('attack: a piece that changes validator mid-way is never combined with the old ones', async () => {
    const f = createCachingFetch();
    await (await f(at('/switch'), ranged('bytes=0-9'))).arrayBuffer();
    await f.idle();
    const r = await f(at('/switch'), ranged('bytes=0-19'));
    assert.equal(r.status, 206);
    assert.equal(r.headers.get('etag'), '"b"');
    assert.equal(await r.text(), B.subarray(0, 20).toString(), 'all of one representation, not A then B');
    assert.deepEqual(
      up.seen.filter((q) => q.url === '/switch').map((q) => [q.headers.range, q.headers['if-range']]),
      [
        ['bytes=0-9', undefined],
        ['bytes=10-19', '"a"'],
        ['bytes=0-19', undefined],
      ],
    );
  });
});
