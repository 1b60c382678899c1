// Attack: a flood of distinct cacheable responses, to fill the server's memory past its budget (issue 40
// §3). The proxy cache's own bound is set far above the budget here, as an operator who sized it for a
// bigger machine would, so only the pressure watch (src/server/ops/pressure.ts) stands between the flood
// and the OOM killer. Near the budget the caches shed their least recently used entries, readiness says
// so, and the server keeps answering. The server runs in a child process: its RSS is its own.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { get } from '../helpers/http.js';
import { getEach, type MemoryServer, startMemoryServer } from '../helpers/static-memory.js';

const MiB = 1024 * 1024;
const BUDGET_BYTES = 320 * MiB;
const BODY = Buffer.alloc(MiB, 'x');
/** The flood stops once the RSS is past this share of the budget (the watch sheds from 0.9). */
const STOP_SHARE = 0.93;

describe('attack: distinct cacheable responses flooding memory past the budget', () => {
  let root: string;
  let upstream: Server;
  const reached = new Map<string, number>();
  let server: MemoryServer;
  const base = () => `http://127.0.0.1:${server.port}`;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'gatehouse-pressure-'));
    writeFileSync(join(root, 'a.txt'), 'a');
    upstream = createServer((req, res) => {
      const n = /(\d+)$/.exec(req.url!)![1]!; // whatever the route strips, the number stays
      reached.set(n, (reached.get(n) ?? 0) + 1);
      res.writeHead(200, { 'cache-control': 'public, max-age=3600', 'content-type': 'text/plain' });
      res.end(BODY);
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    server = await startMemoryServer(root, MiB, {
      limits: { memoryBytes: BUDGET_BYTES },
      health: {},
      metrics: {},
      proxy: [
        {
          prefix: '/api',
          upstream: url,
          cache: { enabled: true, maxSizeBytes: 2048 * MiB, maxEntryBytes: 2 * MiB },
        },
      ],
    });
  });
  after(async () => {
    server?.close();
    upstream.closeAllConnections();
    await new Promise((r) => upstream.close(r));
    rmSync(root, { recursive: true, force: true });
  });

  it('attack: the caches shed their least recently used entries near the budget; readiness reports it; the server keeps answering', async (t) => {
    const start = await server.stats();
    assert.ok(start.rss < 0.7 * BUDGET_BYTES, `the idle server already holds ${start.rss} bytes`);
    // The flood, ten distinct 1 MiB responses at a time, until the RSS nears the budget.
    let sent = 0;
    while ((await server.stats()).rss < STOP_SHARE * BUDGET_BYTES) {
      assert.ok(sent < 1000, 'the RSS never neared the budget');
      await getEach(server.port, 10, (i) => `/api/${sent + i}`, 200, 4);
      sent += 10;
    }
    // It reached the server and the upstream, every response once (each was stored).
    assert.equal(reached.size, sent);
    assert.ok([...reached.values()].every((n) => n === 1));
    // Readiness reports the pressure within a window of samples (5 s): ready and shedding, or 503 when
    // the RSS passed the budget itself.
    let ready: Awaited<ReturnType<typeof get>> | undefined;
    for (let i = 0; i < 100; i++) {
      ready = await get(base(), '/readyz');
      if (ready.status === 503 || ready.text.includes('memory')) break;
      await new Promise((r) => setTimeout(r, 150));
    }
    t.diagnostic(`after ${sent} responses of 1 MiB: readiness ${ready!.status} ${ready!.text.trim()}`);
    const line = /Memory pressure: live heap \d+ of \d+ MiB, RSS \d+ of a 320 MiB budget\./;
    if (ready!.status === 200) assert.match(JSON.parse(ready!.text).memory, line);
    else assert.match(ready!.text, line);
    // The most recent response is still cached; the least recent ones were dropped first.
    const newest = `/api/${sent - 1}`;
    assert.match(String((await get(base(), newest)).headers['cache-status']), /^gatehouse; hit/);
    assert.equal(reached.get(String(sent - 1)), 1);
    const oldest = await get(base(), '/api/0');
    assert.equal(oldest.status, 200);
    assert.match(String(oldest.headers['cache-status']), /fwd=uri-miss/); // RFC 9211 §2.2
    assert.equal(reached.get('0'), 2, 'the oldest response went back to the upstream');
    // The metrics count what was shed.
    const metrics = (await get(base(), '/metrics')).text;
    const shed = Number(/^gatehouse_memory_shed_bytes_total (\d+)$/m.exec(metrics)?.[1]);
    assert.ok(shed >= MiB, `shed ${shed} bytes`);
    // The server keeps answering: liveness, a file.
    assert.equal((await get(base(), '/healthz')).status, 200);
    assert.equal((await get(base(), '/a.txt')).text, 'a');
  });
});
