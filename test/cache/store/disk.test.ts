import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type DiskStoreOptions, openDiskCache } from '../../../src/cache/store/disk.js';
import { immutable } from '../../helpers/chattr.js';
import { WAIT_DEADLINE_MS } from '../../helpers/wait.js';
import { bytes, meta, readBody, storeContract, streamed, TestClock } from './contract.js';

async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'gatehouse-disk-store-'));
}

// Twice: with the memory tier (the default) and with every body read from its file.
for (const [label, extra] of [
  ['disk', {}],
  ['disk without memory tier', { memoryCacheBytes: 0 }],
] as const) {
  storeContract(label, async (options) => {
    const dir = await tempDir();
    try {
      return {
        store: await openDiskCache({ dir, ...options, ...extra }),
        cleanup: () => rm(dir, { recursive: true, force: true }),
      };
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
  });
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await tempDir();
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function options(dir: string, clock: TestClock, extra: Partial<DiskStoreOptions> = {}): DiskStoreOptions {
  return { dir, maxSizeBytes: 100_000, maxEntryBytes: 10_000, nowMs: clock.nowMs, ...extra };
}

async function files(dir: string): Promise<string[]> {
  return (await readdir(dir)).sort();
}

function entryName(key: string, id: string): string {
  return createHash('sha256').update(key).update('\0').update(id).digest('hex');
}

describe('disk store', () => {
  it('reopening after close keeps entries, meta, bodies and size', () =>
    withDir(async (dir) => {
      const clock = new TestClock();
      const first = await openDiskCache(options(dir, clock));
      const m = meta({ varyKey: 'gzip', discardAfterMs: clock.ms + 60_000 });
      const put = await first.put('GET /a', m, streamed([Buffer.from('hello '), Buffer.from('disk')]));
      assert.ok(put.stored);
      await first.put('GET /b', meta(), Buffer.from('b'));
      const size = first.sizeBytes();
      await first.close();

      const second = await openDiskCache(options(dir, clock));
      assert.equal(second.sizeBytes(), size);
      const [entry] = await second.getVariants('GET /a');
      assert.ok(entry);
      assert.equal(entry.id, put.entry.id);
      assert.deepEqual(entry.meta, m);
      assert.equal((await readBody(second, entry))?.toString(), 'hello disk');
      assert.equal((await second.getVariants('GET /b')).length, 1);
      await second.close();
    }));

  it('one body file and one meta file per entry, named by a hash of key and id', () =>
    withDir(async (dir) => {
      const store = await openDiskCache(options(dir, new TestClock()));
      const put = await store.put('GET /a', meta(), Buffer.from('x'));
      assert.ok(put.stored);
      const name = entryName('GET /a', put.entry.id);
      assert.deepEqual(await files(dir), [`${name}.body`, `${name}.json`]);
      await store.close();
    }));

  for (const [condition, damage] of [
    ['not JSON', (name: string) => writeFile(`${name}.json`, '{"version":1,')],
    [
      'wrong shape',
      (name: string) => writeFile(`${name}.json`, JSON.stringify({ version: 1, key: 'GET /a' })),
    ],
    ['unknown version', (name: string) => editMeta(name, (m) => ({ ...m, version: 2 }))],
    ['names another key', (name: string) => editMeta(name, (m) => ({ ...m, key: 'GET /other' }))],
    ['body shorter than stated', (name: string) => truncate(`${name}.body`, 2)],
    ['body missing', (name: string) => rm(`${name}.body`)],
    [
      'tags not a list of strings',
      (name: string) =>
        editMeta(name, (m) => ({ ...m, meta: { ...(m.meta as Record<string, unknown>), tags: ['a', 1] } })),
    ],
  ] as const) {
    it(`meta ${condition} -> a miss on reopen, and its files are removed`, () =>
      withDir(async (dir) => {
        const clock = new TestClock();
        const first = await openDiskCache(options(dir, clock));
        const put = await first.put('GET /a', meta(), Buffer.from('hello'));
        await first.put('GET /b', meta(), Buffer.from('kept'));
        assert.ok(put.stored);
        await first.close();
        await damage(join(dir, entryName('GET /a', put.entry.id)));

        const second = await openDiskCache(options(dir, clock));
        assert.deepEqual(await second.getVariants('GET /a'), []);
        assert.equal((await second.getVariants('GET /b')).length, 1);
        assert.equal((await files(dir)).length, 2, 'only the intact entry remains');
        await second.close();
      }));
  }

  it('a body file lost while open -> openBody null, the entry is dropped', () =>
    withDir(async (dir) => {
      const store = await openDiskCache(options(dir, new TestClock(), { memoryCacheBytes: 0 }));
      const put = await store.put('GET /a', meta(), Buffer.from('hello'));
      assert.ok(put.stored);
      await rm(join(dir, `${entryName('GET /a', put.entry.id)}.body`));
      assert.equal(await store.openBody(put.entry), null);
      assert.deepEqual(await store.getVariants('GET /a'), []);
      assert.equal(store.sizeBytes(), 0);
      assert.deepEqual(await files(dir), []);
      await store.close();
    }));

  describe('memory tier (memoryCacheBytes)', () => {
    const bodyFile = (dir: string, key: string, id: string) => join(dir, `${entryName(key, id)}.body`);

    it('a stored small body is served from memory, synchronously, without its file', () =>
      withDir(async (dir) => {
        const store = await openDiskCache(options(dir, new TestClock()));
        const put = await store.put('GET /a', meta(), streamed([Buffer.from('hel'), Buffer.from('lo')]));
        assert.ok(put.stored);
        await rm(bodyFile(dir, 'GET /a', put.entry.id)); // proves no file is read
        const sync = store.openBodySync(put.entry);
        assert.equal(Buffer.from(sync!.whole!).toString(), 'hello');
        assert.equal((await readBody(store, put.entry))?.toString(), 'hello');
        await store.close();
      }));

    it('after a reopen the first read fills it from the file; later reads need no file', () =>
      withDir(async (dir) => {
        const clock = new TestClock();
        const first = await openDiskCache(options(dir, clock));
        const put = await first.put('GET /a', meta(), Buffer.from('persisted'));
        assert.ok(put.stored);
        await first.close();
        const store = await openDiskCache(options(dir, clock));
        const [entry] = store.getVariantsSync('GET /a');
        assert.equal(store.openBodySync(entry!), undefined, 'not in memory yet: openBody must read the file');
        assert.equal((await readBody(store, entry!))?.toString(), 'persisted');
        await rm(bodyFile(dir, 'GET /a', entry!.id));
        assert.equal(Buffer.from(store.openBodySync(entry!)!.whole!).toString(), 'persisted');
        await store.close();
      }));

    it('holds at most memoryCacheBytes, least recently used out first; evicted bodies come from their file', () =>
      withDir(async (dir) => {
        const store = await openDiskCache(options(dir, new TestClock(), { memoryCacheBytes: 10 }));
        const a = await store.put('GET /a', meta(), Buffer.from('aaaa'));
        const b = await store.put('GET /b', meta(), Buffer.from('bbbb'));
        assert.ok(a.stored && b.stored);
        assert.ok(store.openBodySync(a.entry)); // a is now the most recent
        const c = await store.put('GET /c', meta(), Buffer.from('cccc')); // 12 bytes > 10: b goes
        assert.ok(c.stored);
        assert.ok(store.openBodySync(a.entry));
        assert.ok(store.openBodySync(c.entry));
        assert.equal(store.openBodySync(b.entry), undefined);
        assert.equal((await readBody(store, b.entry))?.toString(), 'bbbb');
        // A body over the bound never enters it.
        const big = await store.put('GET /big', meta(), Buffer.alloc(11, 'x'));
        assert.ok(big.stored);
        assert.equal(store.openBodySync(big.entry), undefined);
        assert.equal((await readBody(store, big.entry))?.length, 11);
        assert.equal(store.openBodySync(big.entry), undefined);
        await store.close();
      }));

    it('memory pressure: shed drops the least recently used bodies from memory; the files still serve them', () =>
      withDir(async (dir) => {
        const store = await openDiskCache(options(dir, new TestClock(), { memoryCacheBytes: 100 }));
        const put = async (k: string) => {
          const r = await store.put(`GET /${k}`, meta(), Buffer.from(k.repeat(10)));
          assert.ok(r.stored);
          return r.entry;
        };
        const [a, b, c, d] = [await put('a'), await put('b'), await put('c'), await put('d')];
        assert.ok(store.openBodySync(a)); // a is now the most recent: b, c, d, a
        assert.equal(store.shed(0.5), 20, 'half of 40 bytes: b and c');
        assert.equal(store.openBodySync(b), undefined);
        assert.equal(store.openBodySync(c), undefined);
        assert.ok(store.openBodySync(d));
        assert.ok(store.openBodySync(a));
        assert.equal((await readBody(store, b))?.toString(), 'b'.repeat(10), 'still on disk');
        assert.equal(store.shed(1), 30, 'all of it: d, a, and b, back with its read');
        assert.equal(store.openBodySync(a), undefined);
        assert.equal(store.shed(1), 0);
        await store.close();
        assert.equal(store.shed(1), 0, 'closed: nothing to drop');
      }));

    it('deleted, purged, replaced and evicted entries leave it at once', () =>
      withDir(async (dir) => {
        const store = await openDiskCache(
          options(dir, new TestClock(), { maxSizeBytes: 2_000, maxEntryBytes: 2_000 }),
        );
        const a = await store.put('GET /a', meta(), Buffer.from('a1'));
        const t = await store.put('GET /t', meta({ tags: ['x'] }), Buffer.from('t1'));
        assert.ok(a.stored && t.stored);
        const a2 = await store.put('GET /a', meta(), Buffer.from('a2')); // same variant: replaces a
        assert.ok(a2.stored);
        assert.equal(store.openBodySync(a.entry), undefined);
        assert.equal(await store.openBody(a.entry), null);
        await store.purge({ tag: 'x' });
        assert.equal(store.openBodySync(t.entry), undefined);
        assert.equal(await store.openBody(t.entry), null);
        await store.delete('GET /a');
        assert.equal(await store.openBody(a2.entry), null);
        // Size eviction: a body that fills the store pushes the others out of both tiers.
        const s1 = await store.put('GET /s1', meta(), Buffer.from('s1'));
        assert.ok(s1.stored);
        const filler = await store.put('GET /fill', meta(), Buffer.alloc(1_500, 'f'));
        assert.ok(filler.stored);
        assert.deepEqual(await store.getVariants('GET /s1'), []);
        assert.equal(store.openBodySync(s1.entry), undefined);
        assert.equal(await store.openBody(s1.entry), null);
        await store.close();
      }));
  });

  it('a folder that cannot be made rejects at once: under /proc, a dangling symlink, a file', () =>
    withDir(async (dir) => {
      await symlink(join(dir, 'missing-target'), join(dir, 'dangling'));
      await writeFile(join(dir, 'a-file'), 'x');
      for (const [where, code] of [
        // Linux procfs answers ENOENT for a child that cannot exist; Node's mkdir({ recursive: true })
        // then retries forever and never settles (the reason for makeDir).
        ['/proc/gatehouse-no-such-folder/cache', 'ENOENT'],
        [join(dir, 'dangling', 'cache'), 'ENOENT'],
        [join(dir, 'a-file', 'cache'), 'ENOTDIR'],
        [join(dir, 'a-file'), 'ENOTDIR'],
      ] as const) {
        const settled = await Promise.race([
          openDiskCache(options(where, new TestClock())).then(
            () => 'opened',
            (e: NodeJS.ErrnoException) => e.code,
          ),
          // A deadline for a hang (the bug), not a wait: a right answer comes at once.
          new Promise((r) =>
            setTimeout(() => r(`still pending after ${WAIT_DEADLINE_MS} ms`), WAIT_DEADLINE_MS).unref(),
          ),
        ]);
        assert.equal(settled, code, where);
      }
    }));

  it('makes missing parent folders', () =>
    withDir(async (dir) => {
      const store = await openDiskCache(options(join(dir, 'a', 'b', 'c'), new TestClock()));
      assert.ok((await stat(join(dir, 'a', 'b', 'c'))).isDirectory());
      await store.close();
    }));

  it('open removes temp files and bodies without meta, and leaves foreign files alone', () =>
    withDir(async (dir) => {
      const name = 'a'.repeat(64);
      await writeFile(join(dir, `${name}.0123456789ab.tmp`), 'partial');
      await writeFile(join(dir, `${name}.body`), 'orphan');
      await writeFile(join(dir, 'README.txt'), 'not ours');
      await writeFile(join(dir, 'notes.json'), '{}');
      const store = await openDiskCache(options(dir, new TestClock()));
      assert.deepEqual(await files(dir), ['README.txt', 'notes.json']);
      assert.equal(store.sizeBytes(), 0);
      await store.close();
    }));

  it('a streamed put over maxEntryBytes leaves no file behind', () =>
    withDir(async (dir) => {
      const store = await openDiskCache(options(dir, new TestClock(), { maxEntryBytes: 15 }));
      const result = await store.put('GET /a', meta(), streamed([bytes(10), bytes(10), bytes(10)]));
      assert.deepEqual(result, { stored: false, reason: 'too-large' });
      assert.deepEqual(await files(dir), []);
      await store.close();
    }));

  it('updateMeta rewrites the meta file only; the update survives reopen', () =>
    withDir(async (dir) => {
      const clock = new TestClock();
      const first = await openDiskCache(options(dir, clock));
      const put = await first.put('GET /a', meta({ timeMs: 1000 }), Buffer.from('body'));
      assert.ok(put.stored);
      const base = join(dir, entryName('GET /a', put.entry.id));
      const bodyBefore = await stat(`${base}.body`);
      const metaBefore = await readFile(`${base}.json`, 'utf8');
      assert.ok(await first.updateMeta('GET /a', put.entry.id, meta({ timeMs: 9000 })));
      const bodyAfter = await stat(`${base}.body`);
      assert.equal(bodyAfter.ino, bodyBefore.ino);
      assert.equal(bodyAfter.mtimeMs, bodyBefore.mtimeMs);
      assert.notEqual(await readFile(`${base}.json`, 'utf8'), metaBefore);
      await first.close();

      const second = await openDiskCache(options(dir, clock));
      const [entry] = await second.getVariants('GET /a');
      assert.equal(entry?.meta.response.responseTimeMs, 9000);
      assert.equal((await readBody(second, entry!))?.toString(), 'body');
      await second.close();
    }));

  it('concurrent updateMeta calls: the last call wins in memory and on disk', () =>
    withDir(async (dir) => {
      const clock = new TestClock();
      const first = await openDiskCache(options(dir, clock));
      const put = await first.put('GET /a', meta({ timeMs: 1 }), Buffer.from('body'));
      assert.ok(put.stored);
      await Promise.all(
        [2, 3, 4, 5].map((t) => first.updateMeta('GET /a', put.entry.id, meta({ timeMs: t }))),
      );
      assert.equal((await first.getVariants('GET /a'))[0]?.meta.response.responseTimeMs, 5);
      await first.close();
      const second = await openDiskCache(options(dir, clock));
      assert.equal((await second.getVariants('GET /a'))[0]?.meta.response.responseTimeMs, 5);
      await second.close();
    }));

  it('purged entries stay gone after reopen, including entries from before the last open', () =>
    withDir(async (dir) => {
      const clock = new TestClock();
      const first = await openDiskCache(options(dir, clock));
      await first.put('GET /old-tagged', meta({ tags: ['t'] }), bytes(10));
      await first.put('GET /blog/old', meta(), bytes(10));
      const kept = await first.put('GET /kept', meta({ tags: ['other'] }), bytes(10));
      assert.ok(kept.stored);
      await first.close();

      const second = await openDiskCache(options(dir, clock));
      await second.put('GET /new-tagged', meta({ tags: ['t'] }), bytes(10));
      await second.put('GET /blog/new', meta(), bytes(10));
      assert.equal(await second.purge({ tag: 't' }), 2);
      assert.equal(await second.purge({ keyPrefix: 'GET /blog/' }), 2);
      const size = second.sizeBytes();
      assert.equal((await files(dir)).length, 2, 'the purged files are deleted');
      await second.close();

      const third = await openDiskCache(options(dir, clock));
      assert.equal(third.sizeBytes(), size);
      for (const key of ['GET /old-tagged', 'GET /new-tagged', 'GET /blog/old', 'GET /blog/new']) {
        assert.deepEqual(await third.getVariants(key), [], key);
      }
      assert.equal((await third.getVariants('GET /kept'))[0]?.id, kept.entry.id);
      assert.equal(await third.purge({ all: true }), 1);
      await third.close();
      assert.deepEqual(await files(dir), []);
    }));

  // Faults real as root: `chattr +i` (unlink fails with EPERM, the file stays readable) and a meta
  // path that is a non-empty directory (unlink fails with EISDIR, reading it too).
  for (const healed of [false, true]) {
    it(`purge while neither file can be deleted (immutable), then a reopen ${healed ? 'after the fault healed' : 'with the fault still there'} -> still a miss`, (t) =>
      withDir(async (dir) => {
        const clock = new TestClock();
        const first = await openDiskCache(options(dir, clock));
        const put = await first.put('GET /a', meta({ tags: ['t'] }), Buffer.from('purged'));
        const kept = await first.put('GET /b', meta(), Buffer.from('kept'));
        assert.ok(put.stored && kept.stored);
        const base = join(dir, entryName('GET /a', put.entry.id));
        const pinned = [`${base}.json`, `${base}.body`];
        if (!immutable(t, pinned, true)) return;
        try {
          await assert.rejects(first.purge({ tag: 't' }), { code: 'purge_incomplete', purged: 1, errors: 1 });
          assert.deepEqual(await first.getVariants('GET /a'), []);
          await first.close();
          if (healed) immutable(t, pinned, false);

          const second = await openDiskCache(options(dir, clock));
          assert.deepEqual(await second.getVariants('GET /a'), [], 'the purged entry came back');
          assert.equal((await second.getVariants('GET /b'))[0]?.id, kept.entry.id);
          await second.close();
          const left = await files(dir);
          if (healed)
            assert.ok(!left.some((f) => f.startsWith(entryName('GET /a', put.entry.id))), 'files removed');
          assert.equal(left.includes(TOMBSTONES), !healed, 'tombstones kept only while needed');
        } finally {
          immutable(t, pinned, false);
        }
      }));
  }

  it('an old entry whose files cannot be deleted fails no lookup, put or updateMeta, and stays gone after reopen', (t) =>
    withDir(async (dir) => {
      const clock = new TestClock();
      const bound = { maxSizeBytes: 3_000, maxEntryBytes: 1_000 };
      const first = await openDiskCache(options(dir, clock, bound));
      const expiring = await first.put(
        'GET /exp',
        meta({ discardAfterMs: clock.ms + 1_000 }),
        Buffer.from('e'),
      );
      const replaced = await first.put('GET /rep', meta({ timeMs: 1 }), Buffer.from('old'));
      const evicted = await first.put('GET /lru', meta(), Buffer.from('lru'));
      const updated = await first.put('GET /upd', meta(), Buffer.from('upd'));
      assert.ok(expiring.stored && replaced.stored && evicted.stored && updated.stored);
      const pinned = [expiring, replaced, evicted].flatMap((p) => {
        const base = join(dir, entryName(p.entry.key, p.entry.id));
        return [`${base}.json`, `${base}.body`];
      });
      if (!immutable(t, pinned, true)) return;
      try {
        clock.ms += 2_000;
        assert.deepEqual(await first.getVariants('GET /exp'), [], 'past discardAfterMs');
        const newer = await first.put('GET /rep', meta({ timeMs: 2 }), Buffer.from('new'));
        assert.ok(newer.stored, 'the replacing put is stored');
        // Touch /upd, then grow its meta past the bound: /lru (least recently used) is evicted.
        assert.equal((await first.getVariants('GET /upd')).length, 1);
        const etag = `"${'x'.repeat(3_000 - first.sizeBytes() + 100)}"`;
        assert.ok(await first.updateMeta('GET /upd', updated.entry.id, meta({ etag })));
        assert.deepEqual(await first.getVariants('GET /lru'), [], 'evicted');
        await first.close();

        const second = await openDiskCache(options(dir, clock, bound));
        assert.deepEqual(await second.getVariants('GET /exp'), []);
        assert.deepEqual(
          (await second.getVariants('GET /rep')).map((e) => e.id),
          [newer.entry.id],
        );
        assert.deepEqual(await second.getVariants('GET /lru'), []);
        await second.close();
      } finally {
        immutable(t, pinned, false);
      }
    }));

  it('a meta path that is a directory (unreadable, undeletable) -> open still succeeds, the entry is a miss', () =>
    withDir(async (dir) => {
      const clock = new TestClock();
      const first = await openDiskCache(options(dir, clock));
      const put = await first.put('GET /a', meta(), Buffer.from('x'));
      const kept = await first.put('GET /b', meta(), Buffer.from('kept'));
      assert.ok(put.stored && kept.stored);
      await first.close();
      const metaPath = join(dir, `${entryName('GET /a', put.entry.id)}.json`);
      await rm(metaPath);
      await mkdir(metaPath);
      await writeFile(join(metaPath, 'pin'), 'x');

      const second = await openDiskCache(options(dir, clock));
      assert.deepEqual(await second.getVariants('GET /a'), []);
      assert.equal((await second.getVariants('GET /b'))[0]?.id, kept.entry.id);
      await second.close();
    }));

  it('the tag index is rebuilt on open, with the tags of the last updateMeta', () =>
    withDir(async (dir) => {
      const clock = new TestClock();
      const first = await openDiskCache(options(dir, clock));
      const put = await first.put('GET /a', meta({ tags: ['old'] }), bytes(10));
      assert.ok(put.stored);
      assert.ok(await first.updateMeta('GET /a', put.entry.id, meta({ tags: ['new'] })));
      await first.close();

      const second = await openDiskCache(options(dir, clock));
      assert.deepEqual((await second.getVariants('GET /a'))[0]?.meta.tags, ['new']);
      assert.equal(await second.purge({ tag: 'old' }), 0);
      assert.equal(await second.purge({ tag: 'new' }), 1);
      assert.equal(second.sizeBytes(), 0);
      await second.close();
    }));

  for (const turns of [0, 1, 3]) {
    it(`updateMeta racing a purge (${turns} turns apart) -> the entry is gone, and stays gone after reopen`, () =>
      withDir(async (dir) => {
        const clock = new TestClock();
        const first = await openDiskCache(options(dir, clock));
        const put = await first.put('GET /a', meta({ tags: ['t'] }), bytes(10));
        assert.ok(put.stored);
        const updating = first.updateMeta('GET /a', put.entry.id, meta({ tags: ['t'], timeMs: 2 }));
        for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
        assert.equal(await first.purge({ tag: 't' }), 1);
        await updating;
        assert.deepEqual(await first.getVariants('GET /a'), []);
        assert.equal(first.sizeBytes(), 0);
        await first.close();
        assert.deepEqual(await files(dir), []);

        const second = await openDiskCache(options(dir, clock));
        assert.deepEqual(await second.getVariants('GET /a'), []);
        await second.close();
      }));
  }

  it('eviction by size: access order survives a restart (persisted as meta mtimes)', () =>
    withDir(async (dir) => {
      const clock = new TestClock();
      const bound = { maxSizeBytes: 10_000, maxEntryBytes: 5_000 };
      const first = await openDiskCache(options(dir, clock, bound));
      await first.put('GET /1', meta(), bytes(4_000));
      clock.ms += 1000;
      await first.put('GET /2', meta(), bytes(4_000));
      clock.ms += 1000;
      assert.equal((await first.getVariants('GET /1')).length, 1); // /1 is now the most recent
      await first.close();

      clock.ms += 1000;
      const second = await openDiskCache(options(dir, clock, bound));
      await second.put('GET /3', meta(), bytes(4_000));
      assert.deepEqual(await second.getVariants('GET /2'), []);
      assert.equal((await second.getVariants('GET /1')).length, 1);
      assert.equal((await second.getVariants('GET /3')).length, 1);
      assert.equal((await files(dir)).length, 4, 'the evicted files are deleted');
      await second.close();
    }));

  it('reopening with a smaller bound evicts the least recently used down to it', () =>
    withDir(async (dir) => {
      const clock = new TestClock();
      const first = await openDiskCache(options(dir, clock));
      for (const path of ['1', '2', '3']) {
        clock.ms += 1000;
        await first.put(`GET /${path}`, meta(), bytes(4_000));
      }
      await first.close();
      const second = await openDiskCache(options(dir, clock, { maxSizeBytes: 10_000, maxEntryBytes: 5_000 }));
      assert.ok(second.sizeBytes() <= 10_000);
      assert.deepEqual(await second.getVariants('GET /1'), []);
      assert.equal((await second.getVariants('GET /3')).length, 1);
      await second.close();
    }));

  it('two entries for one variant on disk (crash before the old one was removed) -> the newer response is kept', () =>
    withDir(async (dir) => {
      const clock = new TestClock();
      const first = await openDiskCache(options(dir, clock));
      const put = await first.put('GET /a', meta({ timeMs: 1000 }), Buffer.from('old'));
      assert.ok(put.stored);
      await first.close();
      const id = 'f'.repeat(36);
      const name = join(dir, entryName('GET /a', id));
      await writeFile(`${name}.body`, 'new');
      const file = { version: 1, key: 'GET /a', id, bodyBytes: 3, meta: meta({ timeMs: 2000 }) };
      await writeFile(`${name}.json`, JSON.stringify(file));

      const second = await openDiskCache(options(dir, clock));
      const variants = await second.getVariants('GET /a');
      assert.deepEqual(
        variants.map((v) => v.id),
        [id],
      );
      assert.equal((await readBody(second, variants[0]!))?.toString(), 'new');
      await second.close();
      assert.equal((await files(dir)).length, 2);
    }));
});

/** The disk store's tombstone file (entries removed from the index whose files could not be deleted). */
const TOMBSTONES = 'purged.tombstones';

async function editMeta(
  base: string,
  edit: (file: Record<string, unknown>) => Record<string, unknown>,
): Promise<void> {
  const file = JSON.parse(await readFile(`${base}.json`, 'utf8')) as Record<string, unknown>;
  await writeFile(`${base}.json`, JSON.stringify(edit(file)));
}
