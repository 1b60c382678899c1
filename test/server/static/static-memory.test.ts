// The static file view's memory bound (issue 27): static.memoryCacheBytes bounds what the cache
// really holds, not only its bodies. 100,000 distinct 200-byte files served once each grew the
// server's RSS by 210 MB with a 64 MiB bound: each entry was counted as its body plus 1 KB, but its
// objects, frozen header records, ETag, dates and fingerprints take about 1.8 KB of heap
// (src/server/static/files.ts, FILE_ENTRY_BYTES). The server runs in a child process; its GC'd memory
// after N distinct files is compared with the same server after N requests to ONE file.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseConfig, toServerOptions } from '../../../src/config/load.js';
import { createStaticHandler, serveSteps } from '../../../src/server/index.js';
import { createLogger } from '../../../src/server/ops/log.js';
import { createJsonp } from '../../../src/server/steps/jsonp.js';
import { get, makeSite, removeSite } from '../../helpers/http.js';
import { getEach, liveBytes, type MemoryServer, startMemoryServer } from '../../helpers/static-memory.js';
import { waitUntil, waitUntilEncoded } from '../../helpers/wait.js';

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

  it(`${FILES} distinct 16-byte files twice each, 4 MiB bound -> live memory grows <= 4 MiB + 1 MiB more than ${FILES} GETs of one file`, async (t) => {
    await getEach(server.port, 1, pathOf, 200);
    const start = await server.stats();
    // The reference: as many requests, all to one file (one cache entry).
    await getEach(server.port, FILES, () => pathOf(0), 200);
    const one = await server.stats();
    // Each file twice: a path is kept from its second request on (static/doorkeeper.ts), so every file
    // becomes an entry and the bound, not admission, is what holds the growth.
    await getEach(server.port, FILES, pathOf, 200);
    await getEach(server.port, FILES, pathOf, 200);
    const distinct = await server.stats();
    // Every request reached the server.
    assert.equal(distinct.requests - start.requests, 3 * FILES);
    const growth = liveBytes(distinct) - liveBytes(one);
    const mb = (b: number) => `${(b / MiB).toFixed(2)} MiB`;
    const report = `distinct files: +${mb(growth)} (reference, one file: +${mb(liveBytes(one) - liveBytes(start))})`;
    t.diagnostic(report);
    assert.ok(growth <= CACHE_BYTES + MARGIN_BYTES, report);
    // The cache did fill up: the bound is what held the growth, not an empty cache.
    assert.ok(growth >= CACHE_BYTES / 2, report);
  });
});

describe('static file cache: what is made later is counted when it is made', () => {
  it("a page's early hints and a compressed variant add to the view's size; serving it again adds nothing", async () => {
    const html = `<!doctype html><link rel="stylesheet" href="/assets/site-3f2a9c1b.css">${'<p>text</p>'.repeat(200)}`;
    const dir = makeSite({ 'page.html': html, 'assets/site-3f2a9c1b.css': 'body{}' });
    const o = toServerOptions(parseConfig({ root: dir }));
    const handler = createStaticHandler({ root: o.root, static: o.static, cachePolicy: o.cachePolicy });
    const server = createServer(handler);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const navigate = { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };
    try {
      await handler.files.get('/page.html');
      const resolved = handler.files.sizeBytes();
      const first = await get(url, '/page.html', { headers: navigate });
      assert.equal(first.status, 200);
      const hinted = handler.files.sizeBytes();
      // The hints (one Link value) are counted with the page's entry.
      assert.ok(hinted >= resolved + 256, `${resolved} -> ${hinted}`);
      // The variant is made in the background (fast, then the highest level): counted once it is kept.
      await waitUntilEncoded(url, '/page.html', 'gzip', { headers: navigate });
      await waitUntil('the highest level is made', () => {
        const c = handler.files.compressionStats();
        return c.done.best === 1 && c.queued.best + c.running.best === 0;
      });
      const gz = await get(url, '/page.html', { headers: { ...navigate, 'accept-encoding': 'gzip' } });
      assert.equal(gz.headers['content-encoding'], 'gzip');
      const compressed = handler.files.sizeBytes();
      // The variant's objects and its body (the asset's entry, resolved for the hints, is older).
      assert.ok(compressed >= hinted + 1536 + gz.body.length, `${hinted} -> ${compressed}`);
      await get(url, '/page.html', { headers: { ...navigate, 'accept-encoding': 'gzip' } });
      assert.equal(handler.files.sizeBytes(), compressed);
    } finally {
      handler.files.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      removeSite(dir);
    }
  });
});

describe('static file cache: a JSONP body is counted when it is made', () => {
  it("the escaped JSON of a file adds its bytes to the view's size once", async () => {
    const json = JSON.stringify({ items: Array.from({ length: 100 }, (_, i) => `item ${i}`) });
    const dir = makeSite({ 'data.json': json });
    const o = toServerOptions(parseConfig({ root: dir }));
    const st = createStaticHandler({ root: o.root, static: o.static, cachePolicy: o.cachePolicy });
    const ctx = { logger: createLogger({ format: 'off', level: 'info' }), clientAddress: () => '' };
    const step = createJsonp({ paths: ['/data.json'] }, st.files, ctx)!;
    const server = createServer(serveSteps([step], st.final, () => {}));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      await st.files.get('/data.json');
      const resolved = st.files.sizeBytes();
      const r = await get(url, '/data.json?callback=cb');
      assert.equal(r.status, 200);
      assert.match(r.text, /^\/\*\*\/ ?cb\(/);
      const wrapped = st.files.sizeBytes();
      assert.ok(wrapped >= resolved + json.length, `${resolved} -> ${wrapped}`);
      await get(url, '/data.json?callback=other');
      assert.equal(st.files.sizeBytes(), wrapped);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      removeSite(dir);
    }
  });
});
