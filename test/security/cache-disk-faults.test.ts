// Real filesystem faults under the disk store (tests run as root, so no chmod): a meta file replaced
// by a directory (its removal fails with EISDIR), entry files made immutable with `chattr +i` (their
// removal fails with EPERM while they stay readable; skipped where the filesystem has no such
// attribute) and the store folder replaced by a plain file (every write fails with ENOTDIR). PURGE
// still removes entries from the index, answers 200 with the count of failures, and the purge
// survives a restart; Cache-Status never says `stored` for a write that failed.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { immutable } from '../helpers/chattr.js';
import { get, makeSite, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { type Handler, type Origin, origin, text } from '../helpers/origin.js';
import { waitUntil } from '../helpers/wait.js';

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
    await untilHit(gh, '/a');
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
    await untilHit(gh, '/b');
    const metaFile = await metaFileOf('/b');
    await rm(metaFile);
    await mkdir(metaFile);
    await writeFile(join(metaFile, 'pin'), 'x');
    const purge = await get(gh.url, '/b*', { method: 'PURGE' });
    assert.equal(purge.status, 200);
    assert.deepEqual(JSON.parse(purge.text), { purged: 1, errors: 1 });
  });

  it('attack: store folder replaced by a file (every write fails) -> not even the first failing write says stored', async () => {
    await rm(dir, { recursive: true, force: true });
    await writeFile(dir, 'not a folder');
    for (const path of ['/c', '/d', '/e', '/c']) {
      const r = await get(gh.url, path);
      assert.equal(r.status, 200);
      assert.match(String(r.headers['cache-status']), /^gatehouse; fwd=uri-miss; fwd-status=200/, path);
      assert.doesNotMatch(String(r.headers['cache-status']), /stored|hit/, path);
    }
  });
});

describe('disk store faults across a restart', () => {
  let up: Origin;
  let site: string;
  let base: string;
  before(async () => {
    const page: Handler = (_q, s, n) => text(s, 200, { 'cache-control': 'max-age=3600' }, `page ${n}`);
    up = await origin({ '/p': page, '/q': page });
    site = makeSite({});
    base = await mkdtemp(join(tmpdir(), 'gatehouse-faults-restart-'));
  });
  after(async () => {
    await up.close();
    removeSite(site);
    await rm(base, { recursive: true, force: true });
  });

  // The cache key holds the authority: one Host across the restart (the port changes).
  const HOST = { host: 'cache.test' };
  const serve = (dir: string) =>
    startServer(site, {
      proxy: [
        {
          prefix: '/',
          upstream: up.url,
          cacheControl: null,
          cache: { enabled: true, store: 'disk', dir, memoryCacheBytes: 0 },
        },
      ],
    });

  /** Stores `path`, breaks its files with `fault`, purges it (200, one error), restarts on the same folder. */
  async function purgeBrokenThenRestart(
    dir: string,
    path: string,
    fault: (files: readonly string[]) => Promise<boolean>,
  ): Promise<TestServer | undefined> {
    const first = await serve(dir);
    try {
      await get(first.url, path, { headers: HOST });
      await untilHit(first, path, HOST);
      const files = (await readdir(dir)).filter((f) => /^[0-9a-f]{64}\.(json|body)$/.test(f));
      assert.equal(files.length, 2);
      if (!(await fault(files.map((f) => join(dir, f))))) return undefined;
      const purge = await get(first.url, path, { method: 'PURGE', headers: HOST });
      assert.equal(purge.status, 200);
      assert.deepEqual(JSON.parse(purge.text), { purged: 1, errors: 1 });
    } finally {
      await first.close();
    }
    return serve(dir);
  }

  async function assertMissThenHit(gh: TestServer, path: string): Promise<void> {
    const before = up.count(path);
    const again = await get(gh.url, path, { headers: HOST });
    assert.equal(again.status, 200);
    assert.equal(again.text, `page ${before + 1}`, 'the purged entry came back after the restart');
    assert.match(String(again.headers['cache-status']), /fwd=uri-miss/);
    await untilHit(gh, path, HOST); // the store works after the restart
  }

  it('attack: PURGE while the entry files are immutable (unlink fails, files stay readable), then a restart -> still a miss', async (t) => {
    const dir = join(base, 'immutable');
    let pinned: readonly string[] = [];
    try {
      const gh = await purgeBrokenThenRestart(dir, '/p', async (files) => {
        pinned = files;
        return immutable(t, files, true);
      });
      if (gh === undefined) return;
      try {
        await assertMissThenHit(gh, '/p');
      } finally {
        await gh.close();
      }
    } finally {
      if (pinned.length > 0) immutable(t, pinned, false);
    }
  });

  it('attack: PURGE while the meta file is a directory, then a restart -> the store opens, still a miss', async () => {
    const dir = join(base, 'directory');
    const gh = await purgeBrokenThenRestart(dir, '/q', async (files) => {
      const metaFile = files.find((f) => f.endsWith('.json'))!;
      await rm(metaFile);
      await mkdir(metaFile);
      await writeFile(join(metaFile, 'pin'), 'x');
      return true;
    });
    try {
      await assertMissThenHit(gh!, '/q');
    } finally {
      await gh!.close();
    }
  });
});

async function untilHit(gh: TestServer, path: string, headers: Record<string, string> = {}): Promise<void> {
  await waitUntil(`${path} to be a hit`, async () =>
    /^gatehouse; hit/.test(String((await get(gh.url, path, { headers })).headers['cache-status'])),
  );
}
