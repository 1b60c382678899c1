// Real filesystem faults under the disk store (tests run as root, so no chmod): a meta file replaced
// by a directory (its removal fails with EISDIR) and the store folder replaced by a plain file (every
// write fails with ENOTDIR). PURGE still removes entries from the index and answers 200 with the
// count of failures; Cache-Status stops saying `stored` once writes fail.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { get, makeSite, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { type Handler, type Origin, origin, text } from '../helpers/origin.js';

describe('disk store faults', () => {
  let up: Origin;
  let site: string;
  let base: string;
  let dir: string;
  let gh: TestServer;
  before(async () => {
    const page: Handler = (_q, s, n) => text(s, 200, { 'cache-control': 'max-age=3600' }, `page ${n}`);
    up = await origin({ '/a': page, '/b': page, '/c': page, '/d': page, '/e': page });
    site = makeSite({});
    base = await mkdtemp(join(tmpdir(), 'gatehouse-faults-'));
    dir = join(base, 'store');
    gh = await startServer(site, {
      proxy: [
        {
          prefix: '/',
          upstream: up.url,
          cacheControl: null,
          cache: { enabled: true, store: 'disk', dir, memoryCacheBytes: 0 },
        },
      ],
    });
  });
  after(async () => {
    await gh.close();
    await up.close();
    removeSite(site);
    await rm(base, { recursive: true, force: true });
  });

  async function untilHit(path: string): Promise<void> {
    const deadline = Date.now() + 5000;
    for (;;) {
      const r = await get(gh.url, path);
      if (/^gatehouse; hit/.test(String(r.headers['cache-status']))) return;
      assert.ok(Date.now() < deadline, `${path} never stored`);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** The meta file of the entry stored for `path`. */
  async function metaFileOf(path: string): Promise<string> {
    for (const name of await readdir(dir)) {
      if (!name.endsWith('.json')) continue;
      const text = await readFile(join(dir, name), 'utf8').catch(() => '{"key":""}'); // an earlier test's directory
      const meta = JSON.parse(text) as { key: string };
      if (meta.key.endsWith(path)) return join(dir, name);
    }
    throw new Error(`no meta file for ${path}`);
  }

  it('attack: PURGE while the entry files cannot be deleted (meta file is a directory) -> 200 with errors, never served again', async () => {
    await get(gh.url, '/a');
    await untilHit('/a');
    const metaFile = await metaFileOf('/a');
    await rm(metaFile);
    await mkdir(metaFile);
    await writeFile(join(metaFile, 'pin'), 'x'); // a non-empty directory: rm without recursive fails
    const purge = await get(gh.url, '/a', { method: 'PURGE' });
    assert.equal(purge.status, 200);
    assert.deepEqual(JSON.parse(purge.text), { purged: 1, errors: 1 });
    const before = up.count('/a');
    const again = await get(gh.url, '/a');
    assert.equal(again.text, `page ${before + 1}`, 'the purged entry is not served');
    assert.equal(up.count('/a'), before + 1);
  });

  it('attack: PURGE by prefix over a broken entry -> 200, counts purged and errors', async () => {
    await get(gh.url, '/b');
    await untilHit('/b');
    const metaFile = await metaFileOf('/b');
    await rm(metaFile);
    await mkdir(metaFile);
    await writeFile(join(metaFile, 'pin'), 'x');
    const purge = await get(gh.url, '/b*', { method: 'PURGE' });
    assert.equal(purge.status, 200);
    assert.deepEqual(JSON.parse(purge.text), { purged: 1, errors: 1 });
  });

  it('attack: store folder replaced by a file (every write fails) -> Cache-Status stops saying stored', async () => {
    await rm(dir, { recursive: true, force: true });
    await writeFile(dir, 'not a folder');
    // The first failing write is only known after its head went out; wait until it has failed.
    const deadline = Date.now() + 5000;
    let r = await get(gh.url, '/c');
    for (let i = 0; /; stored/.test(String(r.headers['cache-status'])); i++) {
      assert.ok(Date.now() < deadline, 'writes never reported as failing');
      await new Promise((resolve) => setImmediate(resolve));
      r = await get(gh.url, i % 2 === 0 ? '/d' : '/e');
    }
    for (const path of ['/c', '/d', '/e']) {
      const again = await get(gh.url, path);
      assert.equal(again.status, 200);
      assert.doesNotMatch(String(again.headers['cache-status']), /stored|hit/, path);
    }
  });
});
