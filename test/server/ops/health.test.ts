// Health endpoints (issue 17 §5): the decision table, then real servers on 127.0.0.1:0 (and a real
// redis-server for the required-store case).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig, toServerOptions } from '../../../src/config/load.js';
import type { GatehouseConfigInput } from '../../../src/config/schema.js';
import { createGatehouse } from '../../../src/server/app/gatehouse.js';
import { serveSteps } from '../../../src/server/index.js';
import { createHealth, decideHealth, type HealthState, type Probe } from '../../../src/server/ops/health.js';
import { createLogger } from '../../../src/server/ops/log.js';
import { needsBinary } from '../../helpers/ci.js';
import { get, makeSite, removeSite } from '../../helpers/http.js';
import { REDIS_SERVER, startRedis } from '../../helpers/redis.js';
import { waitUntil } from '../../helpers/wait.js';

const OK: HealthState = {
  eventLoopDelayMs: 2,
  maxEventLoopDelayMs: 1000,
  draining: false,
  redisUp: undefined,
};

const NO_PRESSURE = { level: 'none', reason: '', shedBytes: 0 } as const;

describe('decideHealth', () => {
  const cases: { name: string; probe: Probe; state: Partial<HealthState>; want: string }[] = [
    { name: 'live, loop in time -> ok', probe: 'live', state: {}, want: 'ok' },
    {
      name: 'live, loop delayed past the limit -> 503',
      probe: 'live',
      state: { eventLoopDelayMs: 1500 },
      want: 'blocked',
    },
    {
      name: 'live while draining -> ok (the process is alive)',
      probe: 'live',
      state: { draining: true },
      want: 'ok',
    },
    { name: 'live, required Redis down -> ok', probe: 'live', state: { redisUp: false }, want: 'ok' },
    { name: 'ready, all well -> ok', probe: 'ready', state: {}, want: 'ok' },
    { name: 'ready while draining -> 503', probe: 'ready', state: { draining: true }, want: 'draining' },
    { name: 'ready, required Redis down -> 503', probe: 'ready', state: { redisUp: false }, want: 'Redis' },
    { name: 'ready, required Redis up -> ok', probe: 'ready', state: { redisUp: true }, want: 'ok' },
    {
      name: 'ready, loop delayed -> 503',
      probe: 'ready',
      state: { eventLoopDelayMs: 5000 },
      want: 'blocked',
    },
    { name: 'ready, no memory pressure -> ok', probe: 'ready', state: { memory: NO_PRESSURE }, want: 'ok' },
    {
      name: 'ready, memory at its limit after shedding -> 503',
      probe: 'ready',
      state: {
        memory: { level: 'critical', reason: 'Memory pressure: RSS 400 of a 400 MiB budget.', shedBytes: 1 },
      },
      want: '^Memory pressure: RSS 400 of a 400 MiB budget\\.$',
    },
    {
      name: 'live, memory at its limit -> ok (the process answers)',
      probe: 'live',
      state: { memory: { level: 'critical', reason: 'x', shedBytes: 1 } },
      want: 'ok',
    },
  ];
  it('ready while the caches shed -> ok, and the pressure reported', () => {
    const memory = {
      level: 'shed',
      reason: 'Memory pressure: RSS 370 of a 400 MiB budget.',
      shedBytes: 9,
    } as const;
    assert.deepEqual(decideHealth('ready', { ...OK, memory }), {
      kind: 'ok',
      memory:
        'Memory pressure: RSS 370 of a 400 MiB budget. The caches shed their least recently used entries.',
    });
    assert.deepEqual(decideHealth('live', { ...OK, memory }), { kind: 'ok' });
  });
  for (const c of cases) {
    it(c.name, () => {
      const d = decideHealth(c.probe, { ...OK, ...c.state });
      if (c.want === 'ok') assert.deepEqual(d, { kind: 'ok' });
      else {
        assert.equal(d.kind, 'unavailable');
        assert.match(d.kind === 'unavailable' ? d.reason : '', new RegExp(c.want));
      }
    });
  }
});

/** A Gatehouse on 127.0.0.1:0 whose JSON log lines are collected. */
async function serve(root: string, config: GatehouseConfigInput) {
  const out = new PassThrough();
  let log = '';
  out.on('data', (d) => (log += d));
  const c = parseConfig({ ...config, root, listen: { host: '127.0.0.1', port: 0 } });
  const app = createGatehouse(toServerOptions(c), {
    logger: createLogger({ format: 'json', level: 'info' }, out),
  });
  const { url } = await app.listen();
  return {
    app,
    url,
    lines: () =>
      log
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
  };
}

describe('health endpoints', () => {
  it('GET and HEAD /healthz and /readyz answer 200, no-store; other methods pass on', async () => {
    const dir = makeSite({ 'a.txt': 'a' });
    const s = await serve(dir, { health: {} });
    try {
      for (const path of ['/healthz', '/readyz', '/healthz?probe=1']) {
        const r = await get(s.url, path);
        assert.equal(r.status, 200, path);
        assert.deepEqual(JSON.parse(r.text), { status: 'ok' });
        assert.equal(r.headers['cache-control'], 'no-store');
      }
      const head = await get(s.url, '/readyz', { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(head.text, '');
      assert.equal((await get(s.url, '/healthz', { method: 'POST' })).status, 405);
    } finally {
      await s.app.close();
      removeSite(dir);
    }
  });

  it('custom paths; without health the paths are ordinary (404)', async () => {
    const dir = makeSite({ 'a.txt': 'a' });
    const on = await serve(dir, { health: { path: '/live', readyPath: '/ready' } });
    const off = await serve(dir, {});
    try {
      assert.equal((await get(on.url, '/live')).status, 200);
      assert.equal((await get(on.url, '/ready')).status, 200);
      assert.equal((await get(on.url, '/healthz')).status, 404);
      assert.equal((await get(off.url, '/healthz')).status, 404);
    } finally {
      await on.app.close();
      await off.app.close();
      removeSite(dir);
    }
  });

  it('probes pass before auth and the rate limit, and stay out of the access log', async () => {
    const dir = makeSite({ 'a.txt': 'a' });
    const s = await serve(dir, {
      health: {},
      auth: [{ prefix: '/', allow: ['192.0.2.1'] }],
      limits: { rateLimit: { requestsPerSec: 0.01, burst: 1 } },
    });
    try {
      for (let i = 0; i < 3; i++) assert.equal((await get(s.url, '/healthz')).status, 200);
      assert.equal((await get(s.url, '/a.txt')).status, 403);
      assert.equal((await get(s.url, '/a.txt')).status, 429);
      await waitUntil(
        'the access log has the refused requests',
        () => s.lines().filter((l) => l.url).length >= 2,
      );
      assert.deepEqual(
        s
          .lines()
          .filter((l) => l.url !== undefined)
          .map((l) => l.url),
        ['/a.txt', '/a.txt'],
      );
    } finally {
      await s.app.close();
      removeSite(dir);
    }
  });

  it('liveness is 503 after the event loop was blocked past maxEventLoopDelayMs, then 200 again', async () => {
    const dir = makeSite({ 'a.txt': 'a' });
    const s = await serve(dir, { health: { maxEventLoopDelayMs: 50 } });
    try {
      assert.equal((await get(s.url, '/healthz')).status, 200);
      // The monitor samples every 10 ms from its first sample on (a block before that is not seen),
      // so: block this process's loop (the server runs in it) for 300 ms, probe, until it reports it.
      const r = await waitUntil('liveness reports the block', async () => {
        const until = performance.now() + 300;
        while (performance.now() < until) {
          // busy
        }
        const x = await get(s.url, '/healthz');
        return x.status === 503 && x;
      });
      assert.match(r.text, /event loop was blocked for \d+ ms \(limit 50 ms\)/);
      await waitUntil('liveness recovers', async () => (await get(s.url, '/healthz')).status === 200, {
        intervalMs: 100,
      });
    } finally {
      await s.app.close();
      removeSite(dir);
    }
  });

  it('readiness is 503 once the drain starts (health close), liveness stays 200', async () => {
    const health = createHealth(
      { path: '/healthz', readyPath: '/readyz', maxEventLoopDelayMs: 1000, requireRedis: false },
      { logger: createLogger({ format: 'off', level: 'info' }), clientAddress: () => '127.0.0.1' },
    )!;
    const server = createServer(serveSteps([health.step], (_req, res) => res.writeHead(404).end()));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      assert.equal((await get(url, '/readyz')).status, 200);
      health.close();
      const r = await get(url, '/readyz');
      assert.equal(r.status, 503);
      assert.match(r.text, /draining/);
      assert.equal((await get(url, '/healthz')).status, 200);
    } finally {
      server.close();
    }
  });

  it('health.requireRedis without the top-level redis is a config error naming the key', () => {
    assert.throws(
      () => parseConfig({ health: { requireRedis: true } }),
      (err: Error) => err instanceof ConfigError && /health\.requireRedis/.test(err.message),
    );
  });

  it(
    'readiness follows a required Redis: 503 while it is stopped, 200 when it is back',
    needsBinary(REDIS_SERVER),
    async () => {
      const redis = await startRedis();
      const dir = makeSite({ 'a.txt': 'a' });
      const s = await serve(dir, { health: { requireRedis: true }, redis: { url: redis.url } });
      try {
        await waitUntil('ready with Redis up', async () => (await get(s.url, '/readyz')).status === 200);
        await redis.stop();
        const down = await waitUntil('not ready with Redis down', async () => {
          const r = await get(s.url, '/readyz');
          return r.status === 503 && r;
        });
        assert.match(down.text, /Redis/);
        assert.equal((await get(s.url, '/healthz')).status, 200);
        await redis.start();
        await waitUntil('ready again', async () => (await get(s.url, '/readyz')).status === 200, {
          intervalMs: 50,
        });
      } finally {
        await s.app.close();
        await redis.close();
        removeSite(dir);
      }
    },
  );
});
