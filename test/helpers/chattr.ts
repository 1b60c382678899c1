// File faults for disk-store tests: the immutable attribute (chattr +i), which makes unlink fail even
// for root while the file stays readable. It needs chattr (e2fsprogs), root (CAP_LINUX_IMMUTABLE) and a
// filesystem that keeps the attribute (ext4, xfs, btrfs; tmpfs since Linux 6.0). Where one is missing
// the case is skipped off CI, naming why; under CI it fails: .ci/run runs as root and installs chattr.
import { execFileSync } from 'node:child_process';
import type { TestContext } from 'node:test';
import { inCI } from './ci.js';

/** Why chattr cannot set the attribute here, or undefined when the error is something else. */
function cannotWork(error: unknown): string | undefined {
  const e = error as NodeJS.ErrnoException & { stderr?: Buffer };
  if (e.code === 'ENOENT') return 'no chattr on PATH (apt-get install e2fsprogs)';
  const said = e.stderr?.toString().trim() ?? '';
  // EPERM (not root), EOPNOTSUPP / ENOTTY (a filesystem without the attribute).
  if (/Operation not permitted|Operation not supported|Inappropriate ioctl/i.test(said))
    return `chattr said: ${said.split('\n')[0]} (run as root, with TMPDIR on ext4, xfs or btrfs)`;
  return undefined;
}

/**
 * Sets or clears the immutable attribute. False when it cannot be set here: the test is then skipped
 * with the reason (off CI) and should return; under CI that throws instead, so the case fails.
 */
export function immutable(t: TestContext, paths: readonly string[], on: boolean): boolean {
  try {
    execFileSync('chattr', [on ? '+i' : '-i', ...paths], { stdio: ['ignore', 'ignore', 'pipe'] });
    return true;
  } catch (error) {
    if (!on) return false;
    immutable(t, paths, false); // whatever was set
    const why = cannotWork(error);
    if (why === undefined) throw error;
    if (inCI)
      throw new Error(`chattr +i cannot work here, and CI must run this case: ${why}`, { cause: error });
    t.skip(`chattr +i cannot work here: ${why}`);
    return false;
  }
}
