// Coalescing in the proxy cache, watched from the gateway's side: every client has reached the
// in-process server (its 'request' events) before the origin answers. It counts arrivals on
// app.server, so it stays off the runtimes matrix; the rest of the cache's features run there
// (proxy-cache-features.test.ts).
// matrix: http1 h2 h1-tls adapters (the static, policy, proxy and cache suites run on every protocol and adapter)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { get, makeSite, removeSite, startServer, type TestServer } from '../../helpers/http.js';
import { type Origin, origin, text } from '../../helpers/origin.js';
import { waitUntil } from '../../helpers/wait.js';

describe('proxy cache: coalescing, counted at the gateway', () => {
  let up: Origin;
  let site: string;
  let gh: TestServer;
  /** Responses held back by the origin until released (coalescing). */
  const held: (() => void)[] = [];
  before(async () => {
    up = await origin({
      '/slow': (_q, s, n) => {
        held.push(() => text(s, 200, { 'cache-control': 'max-age=3600' }, `slow ${n}`));
      },
      '/slow-ranged': (_q, s, n) => {
        held.push(() => text(s, 200, { 'cache-control': 'max-age=3600' }, `abcdef-${n}`));
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

  /** Requests that reached the gateway so far (its server's 'request' events). */
  function arrivals(server: TestServer): () => number {
    let n = 0;
    server.app.server.on('request', () => n++);
    return () => n;
  }

  it('coalesces 100 concurrent misses into one origin request', async () => {
    const arrived = arrivals(gh);
    const all = Promise.all(Array.from({ length: 100 }, () => get(gh.url, '/slow')));
    // Every client is waiting on the one origin request before the origin answers it.
    await waitUntil('100 requests reached the gateway', () => arrived() === 100);
    await release(1);
    const rs = await all;
    assert.equal(up.count('/slow'), 1);
    for (const r of rs) {
      assert.equal(r.status, 200);
      assert.equal(r.text, 'slow 1');
    }
    const statuses = rs.map((r) => String(r.headers['cache-status']));
    assert.equal(statuses.filter((s) => s.includes('stored')).length, 1);
    assert.equal(statuses.filter((s) => s.startsWith('gatehouse; hit; ttl=')).length, 99);
  });

  it('a Range request during a miss of the same URL waits for it and is answered from the store', async () => {
    const full = get(gh.url, '/slow-ranged');
    await waitUntil('the origin holds the full request', () => held.length >= 1);
    const arrived = arrivals(gh);
    const part = get(gh.url, '/slow-ranged', { headers: { range: 'bytes=0-2' } });
    await waitUntil('the Range request reached the gateway', () => arrived() === 1);
    for (const r of held.splice(0)) r();
    assert.equal((await full).text, 'abcdef-1');
    const p = await part;
    assert.equal(p.status, 206);
    assert.equal(p.text, 'abc');
    assert.equal(up.count('/slow-ranged'), 1);
  });
});
