// Prometheus metrics (issue 17 §5): the pure helpers table-style, then a real server on 127.0.0.1:0
// with a real origin, a WebSocket client and the rate limit, read back through /metrics.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { cacheOutcome, statusClassIndex } from '../../../src/server/ops/metrics.js';
import { get, makeSite, removeSite, startServer, type TestServer } from '../../helpers/http.js';
import { type Origin, origin, text } from '../../helpers/origin.js';
import { waitUntil } from '../../helpers/wait.js';

describe('cacheOutcome', () => {
  const cases: [string, string, string][] = [
    ['fresh hit', 'hit', 'hit'],
    ['hit with the cache name and ttl (the header value)', 'gatehouse; hit; ttl=600', 'hit'],
    ['miss with the cache name', 'gatehouse; fwd=uri-miss; fwd-status=200', 'miss'],
    ['hit served stale (RFC 5861 detail)', 'hit; detail=stale-while-revalidate', 'stale'],
    ['background revalidation of a hit', 'hit; fwd=stale; fwd-status=200', 'hit'],
    ['uri miss', 'fwd=uri-miss; fwd-status=200', 'miss'],
    ['vary miss', 'fwd=vary-miss; fwd-status=200', 'miss'],
    ['stale entry revalidated upstream', 'fwd=stale; fwd-status=304', 'revalidate'],
    ['client asked to revalidate', 'fwd=request; fwd-status=200', 'revalidate'],
    ['not cacheable', 'fwd=bypass; fwd-status=200', 'bypass'],
    ['unsafe method', 'fwd=method; fwd-status=204', 'bypass'],
  ];
  for (const [name, status, want] of cases)
    it(`${name} -> ${want}`, () => assert.equal(cacheOutcome(status), want));
});

describe('statusClassIndex', () => {
  const cases: [number, number][] = [
    [101, 0],
    [200, 1],
    [304, 2],
    [404, 3],
    [499, 3],
    [503, 4],
    [600, 4],
    [99, 4],
  ];
  for (const [status, want] of cases)
    it(`${status} -> ${want + 1}xx`, () => assert.equal(statusClassIndex(status), want));
});

/** The value of one sample line (`name{labels} value`), or undefined when absent. */
function sample(body: string, name: string, labels = ''): number | undefined {
  const line = body.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('metrics', () => {
  let dir: string;
  let up: Origin;
  let s: TestServer;
  const scrape = async () => {
    const r = await get(s.url, '/metrics');
    assert.equal(r.status, 200);
    return r;
  };
  before(async () => {
    dir = makeSite({ 'a.txt': 'a'.repeat(1024), 'data.json': '{"a":1}' });
    up = await origin({
      '/cached': (_req, res) => text(res, 200, { 'cache-control': 'max-age=600' }, 'cached'),
    });
    s = await startServer(dir, {
      metrics: {},
      jsonp: { paths: ['/data.json'] },
      websocket: [{ path: '/ws', mode: 'echo' }],
      proxy: [
        { prefix: '/api', upstream: up.url, cache: { enabled: true } },
        // A port nothing listens on: 502 (tried once: no retry to count twice).
        { prefix: '/down', upstream: 'http://127.0.0.1:9', retry: false },
      ],
      limits: { rateLimit: { requestsPerSec: 0.01, burst: 1, paths: ['/limited/**'] } },
    });
  });
  after(async () => {
    await s.close();
    await up.close();
    removeSite(dir);
  });

  it('serves the Prometheus text format with the default process metrics, no-store', async () => {
    const r = await scrape();
    assert.match(String(r.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    assert.equal(r.headers['cache-control'], 'no-store');
    assert.ok(sample(r.text, 'process_cpu_user_seconds_total') !== undefined, r.text);
    assert.match(r.text, /# TYPE gatehouse_request_duration_seconds histogram/);
  });

  it('reports the memory pressure: none, nothing shed (test/security/memory-pressure.test.ts sheds)', async () => {
    const r = await scrape();
    assert.equal(sample(r.text, 'gatehouse_memory_pressure'), 0);
    assert.equal(sample(r.text, 'gatehouse_memory_shed_bytes_total'), 0);
  });

  it('counts requests by status class and route kind, with durations and bytes sent', async () => {
    const before = (await scrape()).text;
    const staticOk = sample(before, 'gatehouse_requests_total', '{class="2xx",kind="static"}') ?? 0;
    const bytes = sample(before, 'gatehouse_response_bytes_total', '{kind="static"}') ?? 0;
    for (let i = 0; i < 3; i++) assert.equal((await get(s.url, '/a.txt')).status, 200);
    assert.equal((await get(s.url, '/missing.txt')).status, 404);
    assert.equal((await get(s.url, '/data.json?callback=cb')).status, 200);
    const body = (
      await waitUntil('the last request is counted', async () => {
        const r = await scrape();
        return (sample(r.text, 'gatehouse_requests_total', '{class="2xx",kind="jsonp"}') ?? 0) >= 1 && r;
      })
    ).text;
    assert.equal(sample(body, 'gatehouse_requests_total', '{class="2xx",kind="static"}'), staticOk + 3);
    assert.ok((sample(body, 'gatehouse_requests_total', '{class="4xx",kind="static"}') ?? 0) >= 1);
    assert.ok((sample(body, 'gatehouse_response_bytes_total', '{kind="static"}') ?? 0) >= bytes + 3 * 1024);
    assert.ok(
      (sample(body, 'gatehouse_request_duration_seconds_count', '{kind="static"}') ?? 0) >= staticOk + 4,
    );
  });

  it('counts proxy cache misses and hits per store, and upstream failures', async () => {
    assert.equal((await get(s.url, '/api/cached')).text, 'cached');
    let sent = 1;
    await waitUntil('a request is a hit', async () => {
      const r = await get(s.url, '/api/cached');
      sent++;
      return /hit/.test(String(r.headers['cache-status']));
    });
    assert.equal((await get(s.url, '/down/x')).status, 502);
    const body = (
      await waitUntil('the failure is counted', async () => {
        const r = await scrape();
        return sample(r.text, 'gatehouse_upstream_failures_total', '{status="502"}') === 1 && r;
      })
    ).text;
    // Until the first response is stored, requests miss (the origin saw each of them).
    const misses = sample(body, 'gatehouse_cache_requests_total', '{store="memory",outcome="miss"}') ?? 0;
    const hits = sample(body, 'gatehouse_cache_requests_total', '{store="memory",outcome="hit"}') ?? 0;
    assert.equal(misses, up.count('/cached'));
    assert.ok(misses >= 1 && hits >= 1);
    assert.equal(misses + hits, sent);
    assert.ok((sample(body, 'gatehouse_requests_total', '{class="5xx",kind="proxy"}') ?? 0) >= 1);
  });

  it('counts rate-limit rejections', async () => {
    const statuses = [(await get(s.url, '/limited/a')).status, (await get(s.url, '/limited/a')).status];
    assert.deepEqual(statuses, [404, 429]);
    await waitUntil('the 429 is counted', async () => {
      return sample((await scrape()).text, 'gatehouse_rate_limit_rejections_total') === 1;
    });
  });

  it('reports open WebSockets', async () => {
    const ws = new WebSocket(`${s.url.replace(/^http/, 'ws')}/ws`, { rejectUnauthorized: false });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    try {
      assert.equal(sample((await scrape()).text, 'gatehouse_websockets_open'), 1);
    } finally {
      ws.close();
    }
    await waitUntil('the closed socket is no longer counted', async () => {
      return sample((await scrape()).text, 'gatehouse_websockets_open') === 0;
    });
  });

  it('counts WebSocket handshakes: a switch as ws 1xx, a refused one as ws 4xx', async () => {
    const before = (await scrape()).text;
    const switchedBefore = sample(before, 'gatehouse_requests_total', '{class="1xx",kind="ws"}') ?? 0;
    const refusedBefore = sample(before, 'gatehouse_requests_total', '{class="4xx",kind="ws"}') ?? 0;
    for (let i = 0; i < 2; i++) {
      const ws = new WebSocket(`${s.url.replace(/^http/, 'ws')}/ws`);
      await new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
      ws.close();
    }
    // A cross-site Origin is refused (403) before the switch.
    const refused = new WebSocket(`${s.url.replace(/^http/, 'ws')}/ws`, { origin: 'https://evil.example' });
    await new Promise((resolve) => refused.once('error', resolve));
    const body = (
      await waitUntil('the handshakes are counted', async () => {
        const r = await scrape();
        return (
          (sample(r.text, 'gatehouse_requests_total', '{class="4xx",kind="ws"}') ?? 0) > refusedBefore && r
        );
      })
    ).text;
    assert.equal(sample(body, 'gatehouse_requests_total', '{class="1xx",kind="ws"}'), switchedBefore + 2);
    assert.equal(sample(body, 'gatehouse_requests_total', '{class="4xx",kind="ws"}'), refusedBefore + 1);
    assert.ok((sample(body, 'gatehouse_response_bytes_total', '{kind="ws"}') ?? 0) > 0);
  });

  it('reports the bytes each cache store holds', async () => {
    assert.equal((await get(s.url, '/api/cached')).text, 'cached');
    const body = (await scrape()).text;
    const stored = sample(body, 'gatehouse_cache_stored_bytes', '{route="/api",store="memory"}') ?? 0;
    // The one stored response: its body and its metadata.
    assert.ok(stored > 'cached'.length && stored < 64 * 1024, String(stored));
    assert.equal(sample(body, 'gatehouse_cache_shared_stored_bytes', '{route="/api"}'), undefined);
  });

  it('reports each upstream: up, then out after its failures, with its error count', async () => {
    const down = '{route="/down",upstream="http://127.0.0.1:9"}';
    const live = `{route="/api",upstream="${up.url.replace(/\/$/, '')}"}`;
    const before = (await scrape()).text;
    assert.equal(sample(before, 'gatehouse_upstream_up', live), 1, before);
    assert.equal(sample(before, 'gatehouse_upstream_in_flight', live), 0);
    const errors = sample(before, 'gatehouse_upstream_errors_total', down) ?? 0;
    // health.failures (3) consecutive failures take it out for cooldownMs.
    for (let i = 0; i < 3; i++) assert.equal((await get(s.url, '/down/x')).status, 502);
    const after = (await scrape()).text;
    assert.equal(sample(after, 'gatehouse_upstream_up', down), 0, after);
    assert.equal(sample(after, 'gatehouse_upstream_errors_total', down), errors + 3);
    assert.equal(sample(after, 'gatehouse_upstream_up', live), 1);
  });

  it('without metrics configured, /metrics is an ordinary path (404)', async () => {
    const plain = await startServer(dir, {});
    try {
      assert.equal((await get(plain.url, '/metrics')).status, 404);
    } finally {
      await plain.close();
    }
  });
});

describe('metrics off', () => {
  it('a server without metrics (or health) never loads prom-client', () => {
    const dist = join(import.meta.dirname, '../../../dist');
    const script = `
      import { createRequire } from 'node:module';
      import { createGatehouse } from '${dist}/server/app/gatehouse.js';
      import { parseConfig, toServerOptions } from '${dist}/config/load.js';
      const app = createGatehouse(toServerOptions(parseConfig({ root: '.', log: { format: 'off' }, listen: { port: 0 } })));
      const { url } = await app.listen();
      await fetch(url + '/x');
      await app.close();
      const loaded = Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes('prom-client'));
      console.log(JSON.stringify(loaded));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout.trim()), []);
    // The same script with metrics on does load it (the check above can fail).
    const on = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', script.replace("format: 'off' }", "format: 'off' }, metrics: {}")],
      { encoding: 'utf8' },
    );
    assert.equal(on.status, 0, on.stderr);
    assert.ok(JSON.parse(on.stdout.trim()).length > 0, on.stdout);
  });
});
