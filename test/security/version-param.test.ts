// Attacks on verified ?v= cache busting: a `v` that does not name the bytes being served must never
// earn `immutable, max-age=31536000` (a cache would keep the wrong content for a year).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseConfig, toServerOptions } from '../../src/config/load.js';
import { createStaticHandler } from '../../src/server/index.js';
import { assetUrl } from '../../src/server/static/asset-url.js';
import { get, makeSite, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { waitUntil } from '../helpers/wait.js';

const IMMUTABLE = 'public, max-age=31536000, immutable';
const OLD = `export const build = 1;\n${'x'.repeat(4000)}`;
const NEW = `export const build = 2;\n${'x'.repeat(4000)}`;

function hashOf(body: string): string {
  return createHash('sha256').update(body).digest('base64url').slice(0, 27);
}

function assertNotPinned(r: { headers: Record<string, unknown> }, what: string): void {
  assert.notEqual(r.headers['cache-control'], IMMUTABLE, what);
  assert.equal(r.headers['cache-control'], 'no-cache', what);
  assert.equal(r.headers.expires, undefined, what);
}

describe('?v= attacks', () => {
  let dir: string;
  let s: TestServer;
  before(async () => {
    dir = makeSite({ 'app.js': OLD, 'other.js': NEW, 'index.html': '<!doctype html>' });
    s = await startServer(dir);
  });
  after(async () => {
    await s.close();
    removeSite(dir);
  });

  /**
   * The positive control each "not pinned" attack on `s` runs first: on the same server, the file's own
   * ?v= is pinned for a year. Without it those tests would pass on a server that never pins anything.
   */
  async function pinnedControl(file = 'app.js', body = OLD): Promise<void> {
    const own = `/${file}?v=${hashOf(body).slice(0, 10)}`;
    assert.equal(own, await assetUrl(dir, file));
    const r = await get(s.url, own);
    assert.equal(r.text, body);
    assert.equal(r.headers['cache-control'], IMMUTABLE, `control: ${own} is pinned`);
  }

  it('attack: stale ?v= from an old build -> not pinned for a year', async () => {
    const d = makeSite({ 'app.js': OLD });
    const srv = await startServer(d);
    try {
      const oldUrl = await assetUrl(d, 'app.js');
      assert.equal((await get(srv.url, oldUrl)).headers['cache-control'], IMMUTABLE);
      // The deploy replaces the bytes; old HTML (or an attacker) still asks with the old v.
      writeFileSync(join(d, 'app.js'), NEW);
      await waitUntil(
        'the server serves the new bytes',
        async () => (await get(srv.url, '/app.js')).text === NEW,
      );
      const r = await get(srv.url, oldUrl);
      assert.equal(r.text, NEW);
      assertNotPinned(r, oldUrl);
      // The new build's URL is pinned again.
      assert.equal((await get(srv.url, await assetUrl(d, 'app.js'))).headers['cache-control'], IMMUTABLE);
    } finally {
      await srv.close();
      removeSite(d);
    }
  });

  it('attack: forged short ?v= -> not immutable', async () => {
    await pinnedControl();
    const h = hashOf(OLD);
    for (const v of [h.slice(0, 1), h.slice(0, 4), h.slice(0, 7)]) {
      assertNotPinned(await get(s.url, `/app.js?v=${v}`), v);
    }
  });

  it('attack: guessed ?v= values (hex, all-A, random base64url) -> not immutable', async () => {
    await pinnedControl();
    const hex = createHash('sha256').update(OLD).digest('hex').slice(0, 10);
    for (const v of [hex, 'AAAAAAAAAA', 'Zm9vYmFyYmF6', '__________']) {
      assertNotPinned(await get(s.url, `/app.js?v=${v}`), v);
    }
  });

  it("attack: another file's right ?v= -> not pinned", async () => {
    await pinnedControl();
    await pinnedControl('other.js', NEW);
    assertNotPinned(await get(s.url, `/app.js?v=${hashOf(NEW).slice(0, 10)}`), 'other.js v on app.js');
  });

  it('attack: ?v= repeated with one right and one wrong value -> not pinned (ambiguous)', async () => {
    await pinnedControl();
    const right = hashOf(OLD).slice(0, 10);
    for (const q of [`v=${right}&v=AAAAAAAAAA`, `v=AAAAAAAAAA&v=${right}`, `v=${right}&v=${right}`]) {
      assertNotPinned(await get(s.url, `/app.js?${q}`), q);
    }
  });

  it('attack: right ?v= with its case changed or percent-encoded -> not pinned', async () => {
    await pinnedControl();
    const right = hashOf(OLD).slice(0, 10);
    const swapped = right.replace(/[a-zA-Z]/g, (c) =>
      c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase(),
    );
    const encoded = `%${right.charCodeAt(0).toString(16)}${right.slice(1)}`;
    for (const v of [swapped, encoded]) assertNotPinned(await get(s.url, `/app.js?v=${v}`), v);
  });

  it('attack: right ?v= on HTML -> still no-cache (the entry page is always revalidated)', async () => {
    await pinnedControl();
    await pinnedControl('other.js', NEW);
    assertNotPinned(await get(s.url, `/index.html?v=${hashOf('<!doctype html>').slice(0, 10)}`), 'html');
  });

  it('attack: v smuggled in the path or the fragment -> not pinned', async () => {
    await pinnedControl();
    const right = hashOf(OLD).slice(0, 10);
    // `;v=` is part of the path (a different, missing file); `#v=` never reaches a server normally.
    const semi = await get(s.url, `/app.js;v=${right}`, { headers: { accept: 'application/json' } });
    assert.equal(semi.status, 404);
    assertNotPinned(await get(s.url, `/app.js?x=1#v=${right}`), 'fragment');
  });

  it('attack: old ?v= while a big streamed file is replaced inside the revalidation window -> not pinned', async () => {
    // The handler on a frozen clock: the file view (hash and all) stays trusted, but a streamed body
    // is read at send time, so the new bytes must not go out under the old v's year-long policy.
    const big = (c: string) => c.repeat(64 * 1024);
    const d = makeSite({ 'big.js': big('a'), 'moved.js': big('c') });
    const o = toServerOptions(
      parseConfig({ root: d, static: { maxCachedFileBytes: 1024, revalidateMs: 1000 } }),
    );
    const nowMs = 1_000_000;
    const handler = createStaticHandler({
      root: o.root,
      static: o.static,
      cachePolicy: o.cachePolicy,
      nowMs: () => nowMs,
    });
    const server = createServer(handler);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const oldV = hashOf(big('a')).slice(0, 10);
      const first = await get(url, `/big.js?v=${oldV}`);
      assert.equal(first.headers['cache-control'], IMMUTABLE);
      assert.equal(first.text, big('a'));
      // Overwritten in place (same inode, same size, new mtime), then replaced by rename (new inode).
      writeFileSync(join(d, 'big.js'), big('b'));
      const full = await get(url, `/big.js?v=${oldV}`);
      assert.equal(full.text, big('b'), 'the window serves the new bytes');
      assertNotPinned(full, 'full');
      const range = await get(url, `/big.js?v=${oldV}`, { headers: { range: 'bytes=0-9' } });
      assert.equal(range.status, 206);
      assert.equal(range.text, 'b'.repeat(10));
      assertNotPinned(range, 'range');
      const multi = await get(url, `/big.js?v=${oldV}`, { headers: { range: 'bytes=0-0,5-5' } });
      assert.equal(multi.status, 206);
      assertNotPinned(multi, 'multipart');
      renameSync(join(d, 'moved.js'), join(d, 'big.js'));
      const renamed = await get(url, `/big.js?v=${oldV}`);
      assert.equal(renamed.text, big('c'));
      assertNotPinned(renamed, 'renamed');
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      removeSite(d);
    }
  });
});
