// Attack: distinct long URLs through a cached proxy route, for memory. The cache remembers the primary
// key it built for each Host and target (src/server/proxy/cache/keys.ts) so a hit does not rebuild it.
// That memo was bounded by count only (10,000 targets), but a target may be 8 KB and its key as long
// again: about 160 MB before it was cleared. It is now bounded by characters too. The upstream answers
// `no-store`, so the cache itself keeps nothing; the server runs in a child process and its GC'd memory
// after N distinct targets is compared with the same server after N requests to ONE target of the same
// length.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { getEach, liveBytes, type MemoryServer, startMemoryServer } from '../helpers/static-memory.js';

const MiB = 1024 * 1024;
/** Under the old count bound, so that memo never cleared itself in this test. */
const TARGETS = 9_000;
const PAD = 'a'.repeat(4000);
const GROWTH_LIMIT_BYTES = 8 * MiB;

const pathOf = (i: number) => `/api/${i}-${PAD}`;

describe('attack: distinct long URLs through a cached proxy route, for memory', () => {
  let root: string;
  let upstream: Server;
  let reached = 0;
  let server: MemoryServer;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'gatehouse-key-memory-'));
    upstream = createServer((_req, res) => {
      reached++;
      res.writeHead(200, { 'cache-control': 'no-store', 'content-type': 'text/plain' });
      res.end('ok');
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    server = await startMemoryServer(root, 4 * MiB, {
      proxy: [{ prefix: '/api', upstream: url, cache: { enabled: true } }],
    });
  });
  after(async () => {
    server?.close();
    upstream.closeAllConnections();
    await new Promise((r) => upstream.close(r));
    rmSync(root, { recursive: true, force: true });
  });

  it(`attack: ${TARGETS} distinct 4,000-character targets, answers not stored -> live memory grows < 8 MiB more than ${TARGETS} requests to one target`, async (t) => {
    await getEach(server.port, 1, () => '/api/warm-up', 200);
    const start = await server.stats();
    await getEach(server.port, TARGETS, () => pathOf(TARGETS), 200);
    const one = await server.stats();
    reached = 0;
    await getEach(server.port, TARGETS, pathOf, 200);
    const distinct = await server.stats();
    // The attack reached the server and went through the cache to the upstream.
    assert.equal(distinct.requests - start.requests, 2 * TARGETS);
    assert.equal(reached, TARGETS);
    const growth = liveBytes(distinct) - liveBytes(one);
    const mb = (b: number) => `${(b / MiB).toFixed(2)} MiB`;
    const report = `distinct targets: +${mb(growth)} (reference, one target: +${mb(liveBytes(one) - liveBytes(start))})`;
    t.diagnostic(report);
    assert.ok(growth < GROWTH_LIMIT_BYTES, report);
  });
});
