// The ACME storage folder: 0600 files written by temp file + rename in a 0700 folder, and the
// ordering lock (one process orders; a stale lock from a dead pid or older than 10 min is taken over).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  createAcmeStore,
  isLockStale,
  LOCK_STALE_MS,
  type LockFacts,
  type LockHolder,
  STORE_FILES,
} from '../../../src/server/tls/acme-store.js';
import { pebbleSuite, tempStorage } from '../../helpers/acme.js';
import { waitUntil } from '../../helpers/wait.js';

/** The pid of a process that has exited (and been reaped), for a lock left behind by a crash. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((r) => child.once('exit', r));
  assert.ok(child.pid !== undefined);
  return child.pid;
}

const lockFile = (dir: string, h: Partial<LockHolder>) =>
  writeFileSync(
    join(dir, STORE_FILES.lock),
    JSON.stringify({ pid: process.pid, host: hostname(), atMs: Date.now(), token: 'someone-else', ...h }),
    { mode: 0o600 },
  );

describe('isLockStale', () => {
  const facts: LockFacts = { nowMs: 1_000_000, host: 'here', staleMs: 600_000, pidAlive: (pid) => pid === 7 };
  const h = (o: Partial<LockHolder>): LockHolder => ({
    pid: 7,
    host: 'here',
    atMs: 1_000_000,
    token: 't',
    ...o,
  });
  const cases: [string, LockHolder | undefined, boolean][] = [
    ['unreadable lock file -> stale', undefined, true],
    ['live pid on this host, fresh -> held', h({}), false],
    ['dead pid on this host -> stale', h({ pid: 8 }), true],
    ['live pid, exactly 10 min old -> held', h({ atMs: 400_000 }), false],
    ['live pid, older than 10 min -> stale', h({ atMs: 399_999 }), true],
    ['pid on another host (cannot be checked), fresh -> held', h({ pid: 8, host: 'there' }), false],
    ['pid on another host, older than 10 min -> stale', h({ pid: 8, host: 'there', atMs: 0 }), true],
    ['time ahead of our clock (skew), live pid -> held', h({ atMs: 2_000_000 }), false],
  ];
  for (const [name, holder, want] of cases) it(name, () => assert.equal(isLockStale(holder, facts), want));
});

describe('acme store: files', () => {
  it('creates the folder 0700 and writes 0600 files, leaving no temp files', async () => {
    const dir = tempStorage();
    const store = createAcmeStore(dir);
    await store.ensureDir();
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    const old = process.umask(0o000); // even a permissive umask gives 0600
    try {
      await store.write(STORE_FILES.accountKey, 'key one');
      await store.write(STORE_FILES.accountKey, 'key two');
    } finally {
      process.umask(old);
    }
    assert.equal(statSync(join(dir, STORE_FILES.accountKey)).mode & 0o777, 0o600);
    assert.equal(await store.read(STORE_FILES.accountKey), 'key two');
    assert.deepEqual(readdirSync(dir), [STORE_FILES.accountKey]);
    assert.equal(await store.read(STORE_FILES.certificate), undefined);
  });

  it('an existing folder open to others is narrowed to 0700', async () => {
    const dir = tempStorage();
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    await createAcmeStore(dir).ensureDir();
    assert.equal(statSync(dir).mode & 0o777, 0o700);
  });
});

describe('acme store: the ordering lock', () => {
  const fresh = async () => {
    const dir = tempStorage();
    const store = createAcmeStore(dir);
    await store.ensureDir();
    return { dir, store };
  };

  it('one holder at a time; released, it can be taken again', async () => {
    const { dir, store } = await fresh();
    const a = await store.tryLock(Date.now());
    assert.equal(a.kind, 'acquired');
    const lock = JSON.parse(readFileSync(join(dir, STORE_FILES.lock), 'utf8')) as LockHolder;
    assert.equal(lock.pid, process.pid);
    assert.equal(statSync(join(dir, STORE_FILES.lock)).mode & 0o777, 0o600);
    const b = await createAcmeStore(dir).tryLock(Date.now());
    assert.equal(b.kind, 'busy');
    assert.equal(b.kind === 'busy' && b.holder?.pid, process.pid);
    if (a.kind === 'acquired') await a.release();
    assert.equal((await store.tryLock(Date.now())).kind, 'acquired');
    assert.deepEqual(readdirSync(dir), [STORE_FILES.lock], 'no temp files left');
  });

  it('a refreshed lock is not stale 10 min after it was first taken', async () => {
    const { dir, store } = await fresh();
    const t0 = Date.now();
    const a = await store.tryLock(t0);
    assert.equal(a.kind, 'acquired');
    if (a.kind === 'acquired') await a.refresh(t0 + LOCK_STALE_MS / 2);
    assert.equal((await createAcmeStore(dir).tryLock(t0 + LOCK_STALE_MS + 1000)).kind, 'busy');
    assert.equal(statSync(join(dir, STORE_FILES.lock)).mode & 0o777, 0o600);
    // Without the refresh the same moment takes it over.
    const { dir: dir2, store: store2 } = await fresh();
    await store2.tryLock(t0);
    assert.equal((await createAcmeStore(dir2).tryLock(t0 + LOCK_STALE_MS + 1000)).kind, 'acquired');
  });

  it("release removes only its own lock, never a successor's", async () => {
    const { dir, store } = await fresh();
    const a = await store.tryLock(Date.now());
    lockFile(dir, { token: 'successor' }); // a takeover happened meanwhile
    if (a.kind === 'acquired') await a.release();
    assert.match(readFileSync(join(dir, STORE_FILES.lock), 'utf8'), /successor/);
  });

  it('a lock left by a dead pid is taken over', async () => {
    const { dir, store } = await fresh();
    lockFile(dir, { pid: await deadPid() });
    assert.equal((await store.tryLock(Date.now())).kind, 'acquired');
    assert.equal(
      (JSON.parse(readFileSync(join(dir, STORE_FILES.lock), 'utf8')) as LockHolder).pid,
      process.pid,
    );
  });

  it('a lock older than 10 min is taken over even with a live pid', async () => {
    const { dir, store } = await fresh();
    lockFile(dir, { atMs: Date.now() - LOCK_STALE_MS - 1000 });
    assert.equal((await store.tryLock(Date.now())).kind, 'acquired');
  });

  it('a garbage lock file is taken over', async () => {
    const { dir, store } = await fresh();
    writeFileSync(join(dir, STORE_FILES.lock), 'not json');
    assert.equal((await store.tryLock(Date.now())).kind, 'acquired');
  });

  it('a fresh lock of a live process (our parent) is respected', async () => {
    const { dir, store } = await fresh();
    lockFile(dir, { pid: process.ppid });
    const r = await store.tryLock(Date.now());
    assert.equal(r.kind, 'busy');
    assert.match(readFileSync(join(dir, STORE_FILES.lock), 'utf8'), /someone-else/);
  });

  it('many takers of one stale lock: exactly one wins (100 rounds of 8)', async () => {
    const pid = await deadPid();
    for (let round = 0; round < 100; round++) {
      const { dir } = await fresh();
      lockFile(dir, { pid });
      const results = await Promise.all(
        Array.from({ length: 8 }, () => createAcmeStore(dir).tryLock(Date.now())),
      );
      assert.equal(results.filter((r) => r.kind === 'acquired').length, 1, `round ${round}`);
    }
  });

  it('a takeover marker left by a crashed taker (dead pid) does not block forever', async () => {
    const { dir, store } = await fresh();
    lockFile(dir, { pid: await deadPid() });
    writeFileSync(
      join(dir, `${STORE_FILES.lock}.break`),
      JSON.stringify({ pid: await deadPid(), host: hostname(), atMs: Date.now(), token: 'crashed' }),
    );
    assert.equal((await store.tryLock(Date.now())).kind, 'acquired');
    assert.deepEqual(readdirSync(dir), [STORE_FILES.lock]);
  });
});

describe('acme store: managers sharing one storage (pebble)', () => {
  const suite = pebbleSuite();
  const DOMAINS = ['shared.gatehouse.test'];
  const make = (storage: string, o: { recheckMs?: number } = {}) =>
    suite.make({ storage, domains: DOMAINS, ...o });

  it('two managers on one storage: only one orders, the other serves what it stored', async () => {
    const storage = tempStorage();
    const [a, b] = [make(storage), make(storage)];
    await Promise.all([a.manager.start(), b.manager.start()]);
    await waitUntil('both serve a certificate', () => a.pairs.length > 0 && b.pairs.length > 0);
    const ordered = [a, b].filter((m) => /acme: ordering a certificate/.test(m.logger.text('info')));
    assert.equal(ordered.length, 1, `${a.logger.text()}\n---\n${b.logger.text()}`);
    const waiter = ordered[0] === a ? b : a;
    assert.match(
      waiter.logger.text('info'),
      /acme: pid \d+ on .+ is ordering for shared\.gatehouse\.test; looking again in/,
    );
    assert.equal(a.pairs[0]!.cert, b.pairs[0]!.cert);
    assert.equal(a.pairs.length + b.pairs.length, 2);
  });

  it('a stale lock from a dead pid does not stop the order', async () => {
    const storage = tempStorage();
    mkdirSync(storage, { mode: 0o700 });
    lockFile(storage, { pid: await deadPid() });
    const m = make(storage);
    await m.manager.start();
    await waitUntil('a certificate', () => m.pairs.length > 0 || m.manager.status().lastError);
    assert.equal(m.pairs.length, 1, m.logger.text());
    await waitUntil(
      'the lock is released after the order',
      () => !readdirSync(storage).includes(STORE_FILES.lock),
    );
    assert.deepEqual(
      readdirSync(storage).sort(),
      [STORE_FILES.accountKey, STORE_FILES.certificate, STORE_FILES.certificateKey].sort(),
    );
  });

  it('a certificate another process stored is picked up at the next look at the storage', async () => {
    const [s1, s2] = [tempStorage(), tempStorage()];
    const a = make(s1);
    const b = make(s2, { recheckMs: 50 });
    await Promise.all([a.manager.start(), b.manager.start()]);
    await waitUntil('both have their own certificate', () => a.pairs.length > 0 && b.pairs.length > 0);
    assert.notEqual(a.pairs[0]!.cert, b.pairs[0]!.cert);
    // What a renewal by another process sharing s2 leaves there: its key and its certificate.
    const other = createAcmeStore(s2);
    await other.write(STORE_FILES.certificateKey, readFileSync(join(s1, STORE_FILES.certificateKey), 'utf8'));
    await other.write(STORE_FILES.certificate, readFileSync(join(s1, STORE_FILES.certificate), 'utf8'));
    await waitUntil('b serves the stored certificate', () => b.pairs.at(-1)?.cert === a.pairs[0]!.cert);
    assert.equal(b.pairs.at(-1)!.key, a.pairs[0]!.key);
  });
});
