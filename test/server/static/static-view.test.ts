// The static handler's file view on an injected clock (createStaticHandler on a node:http server of the
// test's own): how long a file view is trusted, and what it admits. In process by design, so off the
// runtimes matrix; the view against a real server on each runtime is in static.test.ts.
// matrix: http1 h2 h1-tls adapters (the static, policy, proxy and cache suites run on every protocol and adapter)
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseConfig, toServerOptions } from '../../../src/config/load.js';
import { createStaticHandler } from '../../../src/server/index.js';
import { get, makeSite, removeSite } from '../../helpers/http.js';

const BIG = Buffer.alloc(3 * 1024 * 1024, 'abcdefghij');

describe('freshness of the file view, on an injected clock', () => {
  it('a 304 never opens the file: it still answers within the window after the file is gone', async () => {
    // The handler on an injected clock: the window is the view's revalidateMs, whatever the machine.
    const dir = makeSite({ 'big.bin': BIG });
    const o = toServerOptions(
      parseConfig({ root: dir, static: { maxCachedFileBytes: 1024, revalidateMs: 1000 } }),
    );
    let nowMs = 1_000_000;
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
      // Two requests: a path is kept in the view from its second request on (admission, below).
      await get(url, '/big.bin', { method: 'HEAD' });
      const { etag } = (await get(url, '/big.bin', { method: 'HEAD' })).headers;
      removeSite(join(dir, 'big.bin'));
      nowMs += 999;
      assert.equal((await get(url, '/big.bin', { headers: { 'if-none-match': etag! } })).status, 304);
      // Past the window the view looks at the disk again: the file is gone (so the clock is the one used).
      nowMs += 1;
      assert.equal((await get(url, '/big.bin', { headers: { 'if-none-match': etag! } })).status, 404);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      removeSite(dir);
    }
  });

  it('admission on second use: a path asked for once is not kept; from its second request on it is', async () => {
    // Issue 27 §5: files served once (a crawl) never become entries, so they cannot churn the view.
    const dir = makeSite({ 'a.txt': 'a', 'b.txt': 'b' });
    const o = toServerOptions(parseConfig({ root: dir, static: { revalidateMs: 1000 } }));
    // A clock that stands still: the view's window never ends on its own in this test.
    const handler = createStaticHandler({
      root: o.root,
      static: o.static,
      cachePolicy: o.cachePolicy,
      nowMs: () => 1_000_000,
    });
    const server = createServer(handler);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      assert.equal((await get(url, '/a.txt')).text, 'a');
      assert.equal(handler.files.sizeBytes(), 0);
      // Nothing was kept, so a change right after the first request is seen at once...
      writeFileSync(join(dir, 'a.txt'), 'A2');
      assert.equal((await get(url, '/a.txt')).text, 'A2');
      const kept = handler.files.sizeBytes();
      assert.ok(kept > 0, 'the second request keeps the entry');
      // ...and from the second request on the view is trusted for revalidateMs, as before.
      writeFileSync(join(dir, 'a.txt'), 'A3!');
      assert.equal((await get(url, '/a.txt')).text, 'A2');
      assert.equal(handler.files.sizeBytes(), kept);
      // Another path is its own: its first request keeps nothing.
      assert.equal((await get(url, '/b.txt')).text, 'b');
      assert.equal(handler.files.sizeBytes(), kept);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      removeSite(dir);
    }
  });

  it('memory pressure: shed drops the least recently used entries, bodies and all; they come back from disk', async () => {
    const dir = makeSite({ 'a.txt': 'a'.repeat(1000), 'b.txt': 'b'.repeat(1000), 'c.txt': 'c'.repeat(1000) });
    const o = toServerOptions(parseConfig({ root: dir, static: { revalidateMs: 1000 } }));
    const handler = createStaticHandler({ root: o.root, static: o.static, cachePolicy: o.cachePolicy });
    const server = createServer(handler);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      // Twice each (admission on second use), then a again: b is the least recently used.
      for (const f of ['b', 'c', 'b', 'c', 'a', 'a']) await get(url, `/${f}.txt`);
      const all = handler.files.sizeBytes();
      const dropped = handler.files.shed(0.2);
      assert.ok(dropped > 0 && dropped < all / 2, `one entry of three: ${dropped} of ${all}`);
      assert.equal(handler.files.sizeBytes(), all - dropped);
      // b went: a change to it is seen at once (c, still kept, is trusted for revalidateMs).
      writeFileSync(join(dir, 'b.txt'), 'B2');
      writeFileSync(join(dir, 'c.txt'), 'C2');
      assert.equal((await get(url, '/b.txt')).text, 'B2');
      assert.equal((await get(url, '/c.txt')).text, 'c'.repeat(1000));
      const left = handler.files.sizeBytes();
      assert.equal(handler.files.shed(1), left, 'all of it');
      assert.equal(handler.files.sizeBytes(), 0);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      removeSite(dir);
    }
  });
});
