// The ACME storage folder: keys and the certificate as 0600 files in a 0700 folder, each written to a
// temp file and renamed into place (a reader sees the old file or the new one, never half of one), and
// the ordering lock that lets one process of several order at a time.
import { randomBytes } from 'node:crypto';
import { chmod, link, mkdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

/** File names inside the storage folder. */
export const STORE_FILES = {
  accountKey: 'account-key.pem',
  certificateKey: 'certificate-key.pem',
  certificate: 'certificate.pem',
  lock: 'order.lock',
} as const;

/** A lock left by a process that is gone, or older than this, is taken over (brief: 10 min). */
export const LOCK_STALE_MS = 10 * 60_000;

/** A taker of a stale lock holds `order.lock.break` for a few file operations; older is a crash. */
const BREAK_STALE_MS = 60_000;

/** What a lock file holds: who ordered, and when. */
export interface LockHolder {
  pid: number;
  host: string;
  atMs: number;
  /** Random, so a holder releases only its own lock. */
  token: string;
}

export interface LockFacts {
  nowMs: number;
  host: string;
  staleMs: number;
  pidAlive(pid: number): boolean;
}

/**
 * Whether a lock may be taken over: unreadable, older than `staleMs`, or left by a pid on this host
 * that no longer runs. A pid on another host (a shared folder) cannot be checked: only age counts.
 */
export function isLockStale(holder: LockHolder | undefined, f: LockFacts): boolean {
  if (holder === undefined) return true;
  if (f.nowMs - holder.atMs > f.staleMs) return true;
  return holder.host === f.host && !f.pidAlive(holder.pid);
}

/** `kill(pid, 0)`: ESRCH means gone; EPERM means it runs under another user. */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    const v = JSON.parse(text) as Partial<LockHolder>;
    if (
      Number.isSafeInteger(v.pid) &&
      typeof v.host === 'string' &&
      Number.isFinite(v.atMs) &&
      typeof v.token === 'string'
    )
      return v as LockHolder;
  } catch {
    // garbage: treated as stale
  }
  return undefined;
}

export type LockAttempt =
  | {
      kind: 'acquired';
      release(): Promise<void>;
      /** Re-stamps the lock with `nowMs` (while an order runs longer than a fraction of staleMs). */
      refresh(nowMs: number): Promise<void>;
    }
  | { kind: 'busy'; holder: LockHolder | undefined };

export interface AcmeStore {
  readonly dir: string;
  /** Creates the folder (0700) or narrows an existing one to 0700. */
  ensureDir(): Promise<void>;
  /** The file's text, or undefined when it does not exist. */
  read(name: string): Promise<string | undefined>;
  /** Writes a 0600 file atomically (temp file + rename). */
  write(name: string, text: string): Promise<void>;
  /** Tries to take the ordering lock once; never waits. */
  tryLock(nowMs: number): Promise<LockAttempt>;
}

const isCode = (err: unknown, code: string) => (err as NodeJS.ErrnoException | null)?.code === code;

async function readOrUndefined(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if (isCode(err, 'ENOENT')) return undefined;
    throw err;
  }
}

export function createAcmeStore(
  dir: string,
  o: { staleMs?: number; pidAlive?: (pid: number) => boolean } = {},
): AcmeStore {
  const staleMs = o.staleMs ?? LOCK_STALE_MS;
  const alive = o.pidAlive ?? pidAlive;
  const host = hostname();
  const lockPath = join(dir, STORE_FILES.lock);
  const breakPath = join(dir, `${STORE_FILES.lock}.break`);
  const tempName = (name: string) => join(dir, `.${name}.${process.pid}.${randomBytes(6).toString('hex')}`);

  async function write(name: string, text: string): Promise<void> {
    const tmp = tempName(name);
    // 'wx': never follow or reuse a file someone else put there.
    await writeFile(tmp, text, { mode: 0o600, flag: 'wx' });
    try {
      await chmod(tmp, 0o600); // the mode above is narrowed by the umask, never widened; be exact
      await rename(tmp, join(dir, name));
    } catch (err) {
      await unlink(tmp).catch(() => {});
      throw err;
    }
  }

  /**
   * Removes a stale lock, holding a second exclusive file while it does (removing and re-creating
   * in one step is not atomic): only the holder of `order.lock.break` removes, and only the very
   * lock it judged stale, so two takers of one stale lock never both win.
   */
  async function breakStale(seenText: string, nowMs: number): Promise<'retry' | 'busy'> {
    const tmp = tempName('break');
    const me: LockHolder = { pid: process.pid, host, atMs: nowMs, token: randomBytes(12).toString('hex') };
    await writeFile(tmp, JSON.stringify(me), { mode: 0o600, flag: 'wx' });
    try {
      try {
        await link(tmp, breakPath);
      } catch (err) {
        if (!isCode(err, 'EEXIST')) throw err;
        const other = parseHolder((await readOrUndefined(breakPath)) ?? '');
        // A taker that died within these few steps: its breaker is short-lived by nature.
        const facts = { nowMs, host, staleMs: BREAK_STALE_MS, pidAlive: alive };
        if (!isLockStale(other, facts)) return 'busy';
        await unlink(breakPath).catch(() => {});
        return 'retry';
      }
      try {
        if ((await readOrUndefined(lockPath)) === seenText) await unlink(lockPath).catch(() => {});
        return 'retry';
      } finally {
        await unlink(breakPath).catch(() => {});
      }
    } finally {
      await unlink(tmp).catch(() => {});
    }
  }

  async function tryLock(nowMs: number): Promise<LockAttempt> {
    const me: LockHolder = { pid: process.pid, host, atMs: nowMs, token: randomBytes(12).toString('hex') };
    const tmp = tempName('lock');
    await writeFile(tmp, JSON.stringify(me), { mode: 0o600, flag: 'wx' });
    try {
      for (let round = 0; round < 4; round++) {
        try {
          // link() fails with EEXIST when the lock exists: an exclusive create of a complete file.
          await link(tmp, lockPath);
          return {
            kind: 'acquired',
            release: () => release(me.token),
            refresh: (atMs) => refresh({ ...me, atMs }),
          };
        } catch (err) {
          if (!isCode(err, 'EEXIST')) throw err;
        }
        const text = await readOrUndefined(lockPath);
        if (text === undefined) continue; // released meanwhile
        const holder = parseHolder(text);
        if (!isLockStale(holder, { nowMs, host, staleMs, pidAlive: alive })) return { kind: 'busy', holder };
        if ((await breakStale(text, nowMs)) === 'busy') return { kind: 'busy', holder: undefined };
      }
      return { kind: 'busy', holder: undefined };
    } finally {
      await unlink(tmp).catch(() => {});
    }
  }

  async function refresh(me: LockHolder): Promise<void> {
    const holder = parseHolder((await readOrUndefined(lockPath)) ?? '');
    if (holder?.token === me.token) await write(STORE_FILES.lock, JSON.stringify(me));
  }

  async function release(token: string): Promise<void> {
    const holder = parseHolder((await readOrUndefined(lockPath)) ?? '');
    if (holder?.token === token) await unlink(lockPath).catch(() => {});
  }

  return {
    dir,
    async ensureDir() {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      if (((await stat(dir)).mode & 0o077) !== 0) await chmod(dir, 0o700);
    },
    read: (name) => readOrUndefined(join(dir, name)),
    write,
    tryLock,
  };
}
