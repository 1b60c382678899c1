// The proxy's shared cache decides on the Cache-Control the proxy sends: the upstream's own, or, when
// it sends none, the first matching cachePolicy rule, else the route's cacheControl (default
// no-store); an `override` rule replaces the upstream's. What clients are told is what the cache does.
// matrix: http1 h2 h1-tls adapters runtimes (the static, policy, proxy and cache suites run on every protocol, adapter and runtime)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { get, makeSite, removeSite, startServer, type TestServer } from '../../helpers/http.js';
import { type Origin, origin, text } from '../../helpers/origin.js';
import { waitUntilElapsed, waitUntilStored } from '../../helpers/wait.js';

const DAY_AGO = () => new Date(Date.now() - 86_400_000).toUTCString();

describe('proxy cache follows the proxy cache policy', () => {
  let up: Origin;
  let site: string;
  let gh: TestServer;
  before(async () => {
    up = await origin({
      // Heuristically cacheable (RFC 9111 §4.2.2) if the upstream's fields were taken as they are.
      '/api/plain': (_q, s, n) => text(s, 200, { 'last-modified': DAY_AGO() }, `plain ${n}`),
      '/api/own': (_q, s, n) => text(s, 200, { 'cache-control': 'public, max-age=3600' }, `own ${n}`),
      '/api/rule/a': (_q, s, n) => text(s, 200, { etag: '"r"' }, `rule ${n}`),
      '/api/forced/a': (_q, s, n) => text(s, 200, { 'cache-control': 'public, max-age=3600' }, `forced ${n}`),
      '/api/short/a': (q, s, n) => {
        if (q.headers['if-none-match'] === '"s"') {
          s.writeHead(304, { etag: '"s"' });
          s.end();
          return;
        }
        text(s, 200, { etag: '"s"' }, `short ${n}`);
      },
    });
    site = makeSite({ 'index.html': 'static' });
    gh = await startServer(site, {
      cachePolicy: [
        { glob: '/api/rule/**', cacheControl: 'public, max-age=60' },
        { glob: '/api/forced/**', cacheControl: 'no-store', override: true },
        { glob: '/api/short/**', cacheControl: 'public, max-age=1' },
      ],
      proxy: [{ prefix: '/api', upstream: up.url, stripPrefix: false, cache: { enabled: true } }],
    });
  });
  after(async () => {
    await gh.close();
    await up.close();
    removeSite(site);
  });

  it('an upstream response without Cache-Control gets the route default (no-store) and is not stored', async () => {
    for (let i = 1; i <= 2; i++) {
      const r = await get(gh.url, '/api/plain');
      assert.equal(String(r.body), `plain ${i}`);
      assert.equal(r.headers['cache-control'], 'no-store');
      assert.doesNotMatch(String(r.headers['cache-status']), /stored|hit/);
    }
    assert.equal(up.count('/api/plain'), 2);
  });

  it("the upstream's own Cache-Control is kept and followed", async () => {
    await get(gh.url, '/api/own');
    await waitUntilStored(gh.url, '/api/own');
    const r = await get(gh.url, '/api/own');
    assert.equal(String(r.body), 'own 1');
    assert.match(String(r.headers['cache-status']), /; hit/);
    assert.equal(up.count('/api/own'), 1);
  });

  it("a cachePolicy rule's Cache-Control makes the response cacheable here as well", async () => {
    const t0 = Date.now();
    const first = await get(gh.url, '/api/rule/a');
    assert.equal(first.headers['cache-control'], 'public, max-age=60');
    assert.match(String(first.headers['cache-status']), /stored/);
    await waitUntilStored(gh.url, '/api/rule/a');
    const hit = await get(gh.url, '/api/rule/a');
    assert.equal(String(hit.body), 'rule 1');
    assert.equal(hit.headers['cache-control'], 'public, max-age=60');
    // The rule's 60 s, less the whole seconds resident (rounded up, plus the Date's lost fraction).
    const ttl = Number(/; hit; ttl=(\d+)/.exec(String(hit.headers['cache-status']))?.[1]);
    assert.ok(
      ttl <= 60 && ttl >= 59 - Math.ceil((Date.now() - t0) / 1000),
      String(hit.headers['cache-status']),
    );
    assert.equal(up.count('/api/rule/a'), 1);
  });

  it("an override rule replaces the upstream's Cache-Control for the cache too", async () => {
    for (let i = 1; i <= 2; i++) {
      const r = await get(gh.url, '/api/forced/a');
      assert.equal(String(r.body), `forced ${i}`);
      assert.equal(r.headers['cache-control'], 'no-store');
    }
    assert.equal(up.count('/api/forced/a'), 2);
  });

  it("a 304 without Cache-Control freshens a rule-cached response with the rule's lifetime", async () => {
    const t0 = Date.now();
    assert.equal(String((await get(gh.url, '/api/short/a')).body), 'short 1');
    await waitUntilStored(gh.url, '/api/short/a');
    await waitUntilElapsed(t0, 1100); // time is the event: max-age=1 passes
    const revalidated = await get(gh.url, '/api/short/a');
    assert.equal(String(revalidated.body), 'short 1');
    assert.match(String(revalidated.headers['cache-status']), /fwd=stale; fwd-status=304/);
    assert.equal(revalidated.headers['cache-control'], 'public, max-age=1');
    const hit = await get(gh.url, '/api/short/a');
    // Freshened for max-age=1 from the 304's Date (whole seconds; RFC 9111 §4.3.4 takes it into the
    // stored head): a hit is owed only while less than 1 s has passed since that Date. Measured from
    // before the request instead, a revalidation late in a second was stale already (a flake under load).
    if (Date.now() - Date.parse(String(revalidated.headers.date)) < 1000) {
      assert.match(String(hit.headers['cache-status']), /; hit/);
      assert.equal(up.count('/api/short/a'), 2);
    }
  });
});
