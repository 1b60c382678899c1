// Attack: a flood of distinct non-existent paths, for memory. The static file view remembers a 404
// per path (a negative entry, re-checked after revalidateMs), in the same LRU as the files. Each was
// counted as 1 KB whatever its path, but it holds the path twice (the key and the absolute path): with
// 2,000-character paths an entry is about 4.4 KB, and a 4 MiB bound let about 18 MB build up (64 MiB:
// 280 MB). Entries now count their path strings (src/server/static/files.ts, ENTRY_BYTES and
// PATH_CHAR_BYTES). The server runs in a child process; its GC'd memory after N distinct 404s is
// compared with the same server after N requests to ONE missing path of the same length.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { getEach, liveBytes, type MemoryServer, startMemoryServer } from '../helpers/static-memory.js';

const MiB = 1024 * 1024;
const CACHE_BYTES = 4 * MiB;
const PATHS = 12_000;
const PAD = 'a'.repeat(2000);
/** What else N requests may leave behind (JIT code, Node's pools) beyond the reference run. */
const MARGIN_BYTES = 1 * MiB;

const pathOf = (i: number) => `/missing/${i}-${PAD}`;

describe('attack: distinct non-existent paths, for memory', () => {
  let root: string;
  let server: MemoryServer;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'gatehouse-404-memory-'));
    writeFileSync(join(root, 'index.html'), '<!doctype html><title>x</title>');
    server = await startMemoryServer(root, CACHE_BYTES);
  });
  after(() => {
    server?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it(`attack: ${PATHS} distinct 2,000-character paths that do not exist, twice each, 4 MiB bound -> live memory grows <= 4 MiB + 1 MiB more than ${PATHS} 404s of one path`, async (t) => {
    await getEach(server.port, 1, () => '/missing/warm-up', 404);
    const start = await server.stats();
    await getEach(server.port, PATHS, () => pathOf(PATHS), 404);
    const one = await server.stats();
    // Each path twice: a path is kept from its second request on (static/doorkeeper.ts), and an attacker
    // can ask twice, so admission is not what this bound rests on.
    await getEach(server.port, PATHS, pathOf, 404);
    await getEach(server.port, PATHS, pathOf, 404);
    const distinct = await server.stats();
    // The attack reached the server: every request was answered by it (404s, checked by getEach).
    assert.equal(distinct.requests - start.requests, 3 * PATHS);
    const growth = liveBytes(distinct) - liveBytes(one);
    const mb = (b: number) => `${(b / MiB).toFixed(2)} MiB`;
    const report = `distinct 404s: +${mb(growth)} (reference, one path: +${mb(liveBytes(one) - liveBytes(start))})`;
    t.diagnostic(report);
    assert.ok(growth <= CACHE_BYTES + MARGIN_BYTES, report);
  });
});
