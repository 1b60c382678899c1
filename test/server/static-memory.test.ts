// The static file view's memory bound (issue 27): static.memoryCacheBytes bounds what the cache
// really holds, not only its bodies. 100,000 distinct 200-byte files served once each grew the
// server's RSS by 210 MB with a 64 MiB bound: each entry was counted as its body plus 1 KB, but its
// objects, frozen header records, ETag, dates and fingerprints take about 1.8 KB of heap
// (src/server/static/files.ts, FILE_ENTRY_BYTES). The server runs in a child process; its GC'd memory
// after N distinct files is compared with the same server after N requests to ONE file.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { getEach, liveBytes, type MemoryServer, startMemoryServer } from '../helpers/static-memory.js';

const MiB = 1024 * 1024;
const CACHE_BYTES = 4 * MiB;
/** Three times what the old accounting let the cache hold (4 MiB / (1 KB + body)). */
const FILES = 12_000;
const PER_DIR = 1000;
/** Tiny bodies: the entries' own cost, not their bytes, is what the old accounting missed. */
const BODY = Buffer.from('0123456789abcdef');
/** What else N requests may leave behind (JIT code, Node's pools) beyond the reference run. */
const MARGIN_BYTES = 1 * MiB;

const pathOf = (i: number) => `/d${Math.floor(i / PER_DIR)}/f${i}.txt`;

describe('static file cache: memoryCacheBytes bounds the whole entries', () => {
  let root: string;
  let server: MemoryServer;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'gatehouse-static-memory-'));
    for (let d = 0; d < FILES / PER_DIR; d++) mkdirSync(join(root, `d${d}`));
    for (let i = 0; i < FILES; i++) writeFileSync(join(root, pathOf(i)), BODY);
    server = await startMemoryServer(root, CACHE_BYTES);
  });
  after(() => {
    server?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it(`${FILES} distinct 16-byte files once each, 4 MiB bound -> live memory grows <= 4 MiB + 1 MiB more than ${FILES} GETs of one file`, async (t) => {
    await getEach(server.port, 1, pathOf, 200);
    const start = await server.stats();
    // The reference: as many requests, all to one file (one cache entry).
    await getEach(server.port, FILES, () => pathOf(0), 200);
    const one = await server.stats();
    await getEach(server.port, FILES, pathOf, 200);
    const distinct = await server.stats();
    // Every request reached the server.
    assert.equal(distinct.requests - start.requests, 2 * FILES);
    const growth = liveBytes(distinct) - liveBytes(one);
    const mb = (b: number) => `${(b / MiB).toFixed(2)} MiB`;
    const report = `distinct files: +${mb(growth)} (reference, one file: +${mb(liveBytes(one) - liveBytes(start))})`;
    t.diagnostic(report);
    assert.ok(growth <= CACHE_BYTES + MARGIN_BYTES, report);
    // The cache did fill up: the bound is what held the growth, not an empty cache.
    assert.ok(growth >= CACHE_BYTES / 2, report);
  });
});
