// Several real Gatehouse processes behind Debian's HAProxy (round robin, health checks, retries),
// issue 17: what every instance must agree on, and an instance killed mid-load.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import WebSocket from 'ws';
import { connectRedis } from '../../../src/server/redis/connection.js';
import { needsBinary } from '../../helpers/ci.js';
import { HAPROXY, startHaproxy, type TestHaproxy } from '../../helpers/haproxy.js';
import { GATEHOUSE_BIN, REPO_ROOT } from '../../helpers/page-server.js';
import { freeLoopbackPort, startRedis, type TestRedis } from '../../helpers/redis.js';
import { waitUntil } from '../../helpers/wait.js';

const SITE = join(REPO_ROOT, 'examples/site');
const QUIET = { info() {}, warn() {}, error() {}, isLevelEnabled: () => false };

interface Instance {
  readonly name: string;
  readonly port: number;
  readonly child: ChildProcess;
  /** Access log lines so far. */
  readonly lines: string[];
}

async function startInstance(name: string, extra: string[] = []): Promise<Instance> {
  const port = await freeLoopbackPort();
  const child = spawn(
    process.execPath,
    [GATEHOUSE_BIN, 'serve', SITE, '--host', '127.0.0.1', '--port', String(port), ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const lines: string[] = [];
  let buf = '';
  child.stdout!.on('data', (b: Buffer) => {
    buf += b.toString();
    const parts = buf.split('\n');
    buf = parts.pop()!;
    lines.push(...parts);
  });
  child.stderr!.resume();
  await waitUntil(`${name} listening`, () => {
    if (child.exitCode !== null) throw new Error(`${name} exited ${child.exitCode}`);
    return lines.some((l) => l.startsWith('listening on http://'));
  });
  return { name, port, child, lines };
}

async function stopInstance(i: Instance): Promise<void> {
  if (i.child.exitCode !== null || i.child.signalCode !== null) return;
  const exited = new Promise((r) => i.child.once('exit', r));
  i.child.kill('SIGTERM');
  await exited;
}

describe('Gatehouse instances behind HAProxy', {
  // CI installs haproxy (.ci/run): there a missing one fails instead of leaving the cases out.
  ...needsBinary(HAPROXY),
}, () => {
  let instances: Instance[];
  let lb: TestHaproxy;
  const agent = new Agent({ connections: 32 });

  before(async () => {
    instances = await Promise.all(['g1', 'g2', 'g3'].map((n) => startInstance(n)));
    lb = await startHaproxy({
      servers: Object.fromEntries(instances.map((i) => [i.name, i.port])),
      checkPath: '/robots.txt',
    });
    await waitUntil('all UP', async () => Object.values(await lb.states()).every((s) => s === 'UP'));
  });

  after(async () => {
    await lb?.close();
    await Promise.all((instances ?? []).map(stopInstance));
    await agent.close();
  });

  it('static ETags and Last-Modified are identical on every instance (content hashes, not inodes)', async () => {
    for (const path of ['/', '/robots.txt', '/favicon.png']) {
      const seen = await Promise.all(
        instances.map(async (i) => {
          const r = await request(`http://127.0.0.1:${i.port}${path}`, { dispatcher: agent });
          await r.body.dump();
          return `${r.headers.etag} ${r.headers['last-modified']}`;
        }),
      );
      assert.equal(new Set(seen).size, 1, `${path}: ${seen.join(' | ')}`);
    }
  });

  it('round robin: requests through HAProxy reach every instance', async () => {
    const before = instances.map((i) => i.lines.filter((l) => l.includes('GET /robots.txt?rr')).length);
    for (let n = 0; n < 12; n++) {
      const r = await request(`${lb.url}/robots.txt?rr=${n}`, { dispatcher: agent });
      assert.equal(r.statusCode, 200);
      await r.body.dump();
    }
    await waitUntil('logged', () =>
      instances.every((i, k) => i.lines.filter((l) => l.includes('GET /robots.txt?rr')).length > before[k]!),
    );
  });

  it('an instance killed mid-load: no request fails (HAProxy retries elsewhere), the health check takes it out', async () => {
    let ok = 0;
    const failures: string[] = [];
    let stop = false;
    const worker = async () => {
      while (!stop) {
        try {
          const r = await request(`${lb.url}/index.html`, { dispatcher: agent });
          await r.body.dump();
          if (r.statusCode === 200) ok++;
          else failures.push(String(r.statusCode));
        } catch (err) {
          failures.push((err as Error).message);
        }
      }
    };
    const load = Promise.all(Array.from({ length: 8 }, worker));
    await waitUntil('some load', () => ok > 200);
    const victim = instances[1]!;
    victim.child.kill('SIGKILL');
    await waitUntil('g2 DOWN', async () => (await lb.states()).g2?.startsWith('DOWN'));
    const afterDown = ok;
    await waitUntil('more load after', () => ok > afterDown + 200);
    stop = true;
    await load;
    assert.deepEqual(failures, []);
  });
});

/** Two instances of one config sharing a real Redis, HAProxy in front checking /readyz. */
describe('Gatehouse instances sharing one Redis behind HAProxy', {
  ...needsBinary(HAPROXY),
}, () => {
  let redis: TestRedis;
  let upstream: Server;
  let upstreamHits = 0;
  let a: Instance;
  let b: Instance;
  let lb: TestHaproxy;
  let dir: string;
  const agent = new Agent({ connections: 16 });
  const direct = (i: Instance, path: string, o: { method?: string; headers?: Record<string, string> } = {}) =>
    request(`http://127.0.0.1:${i.port}${path}`, { dispatcher: agent, ...o } as Parameters<
      typeof request
    >[1]);

  before(async () => {
    redis = await startRedis();
    upstream = createHttpServer((req, res) => {
      upstreamHits++;
      res.writeHead(200, {
        'content-type': 'application/json',
        'cache-control': 'public, max-age=600',
        'cache-tag': 'shared',
      });
      res.end(JSON.stringify({ url: req.url, n: upstreamHits }));
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-scale-'));
    const config = join(dir, 'gatehouse.config.json');
    writeFileSync(
      config,
      JSON.stringify({
        redis: { url: redis.url, keyPrefix: 'scale-test:' },
        proxy: [
          {
            prefix: '/api',
            upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
            cache: { enabled: true, store: 'redis' },
          },
        ],
        limits: { rateLimit: { requestsPerSec: 0.01, burst: 3, store: 'redis', paths: ['/limited/**'] } },
        websocket: [{ path: '/ws', mode: 'broadcast', fanout: 'redis' }],
        health: { path: '/healthz', readyPath: '/readyz' },
      }),
    );
    [a, b] = await Promise.all([
      startInstance('a', ['--config', config]),
      startInstance('b', ['--config', config]),
    ]);
    lb = await startHaproxy({ servers: { a: a.port, b: b.port }, checkPath: '/readyz' });
    await waitUntil('both UP', async () => Object.values(await lb.states()).every((st) => st === 'UP'));
  });

  after(async () => {
    await lb?.close();
    await Promise.all([a, b].filter(Boolean).map(stopInstance));
    await agent.close();
    upstream?.close();
    await redis?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a response stored through A is a hit on B; a PURGE on B empties A', async () => {
    // One site name on both, as behind the load balancer: the cache key holds the authority.
    const site = { host: 'site.example' };
    // only-if-cached (RFC 9111 §5.2.1.7): B answers from the shared store or 504, never stores itself.
    const fromStore = { ...site, 'cache-control': 'only-if-cached' };
    const stored = await waitUntil('stored through A is a hit on B', async () => {
      const ra = await direct(a, '/api/item', { headers: site });
      const ta = await ra.body.text();
      const rb = await direct(b, '/api/item', { headers: fromStore });
      const tb = await rb.body.text();
      return rb.statusCode === 200 && tb === ta ? tb : undefined;
    });
    assert.match(stored, /"url":"\/item"/);
    const purge = await direct(b, '/api/item', { method: 'PURGE', headers: site });
    await purge.body.dump();
    assert.ok(purge.statusCode < 300, `PURGE ${purge.statusCode}`);
    await waitUntil('A has nothing stored after the purge on B (its memory tier included)', async () => {
      const r = await direct(a, '/api/item', { headers: fromStore });
      await r.body.dump();
      return r.statusCode === 504;
    });
  });

  it('the rate limit counts across instances', async () => {
    const statuses: number[] = [];
    for (const i of [a, b, a, b]) {
      const r = await direct(i, '/limited/x');
      await r.body.dump();
      statuses.push(r.statusCode);
    }
    // burst 3: the fourth request, whichever instance it reaches, is over the shared budget.
    assert.deepEqual(statuses.slice(3), [429]);
    assert.ok(
      statuses.slice(0, 3).every((st) => st !== 429),
      statuses.join(','),
    );
  });

  it('a WebSocket broadcast from a client on A reaches a client on B once', async () => {
    const open = (i: Instance) =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${i.port}/ws`, { origin: `http://127.0.0.1:${i.port}` });
        ws.once('open', () => resolve(ws));
        ws.once('error', reject);
      });
    // Both instances subscribe to the endpoint's channel when they start.
    const probe = connectRedis({ url: redis.url, keyPrefix: '', logger: QUIET });
    try {
      await waitUntil('both instances subscribed', async () => {
        if (!probe.isUp()) return false;
        const r = (await probe.client.pubsub('NUMSUB', 'scale-test:ws:/ws')) as [string, number];
        return Number(r[1]) >= 2;
      });
    } finally {
      await probe.close();
    }
    const [onA, onB] = [await open(a), await open(b)];
    const got: string[] = [];
    onB.on('message', (m) => got.push(String(m)));
    // A subscription is made when the endpoint starts; send until B's side has seen one.
    await waitUntil('delivered on B', async () => {
      if (got.length === 0) onA.send('hello from A');
      await new Promise((r) => setTimeout(r, 20));
      return got.length > 0;
    });
    const n = got.length;
    onA.send('second');
    await waitUntil('second on B', () => got.includes('second'));
    assert.equal(got.filter((m) => m === 'second').length, 1);
    assert.ok(n >= 1);
    onA.close();
    onB.close();
  });

  it('through HAProxy: /readyz keeps both in the pool, a drained instance leaves it', async () => {
    const r = await request(`${lb.url}/api/item`, { dispatcher: agent });
    await r.body.dump();
    assert.equal(r.statusCode, 200);
    await stopInstance(b);
    await waitUntil('b DOWN', async () => (await lb.states()).b?.startsWith('DOWN'));
    for (let k = 0; k < 5; k++) {
      const x = await request(`${lb.url}/robots.txt`, { dispatcher: agent });
      await x.body.dump();
      assert.equal(x.statusCode, 200);
    }
  });
});
