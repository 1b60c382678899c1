// File faults for disk-store tests: the immutable attribute (chattr +i), which makes unlink fail even
// for root while the file stays readable.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { TestContext } from 'node:test';

/** Sets or clears the immutable attribute; false (the test skipped) where there is no chattr. */
export function immutable(t: TestContext, paths: readonly string[], on: boolean): boolean {
  try {
    execFileSync('chattr', [on ? '+i' : '-i', ...paths], { stdio: 'ignore' });
    return true;
  } catch (error) {
    if (!on) return false;
    immutable(t, paths, false); // whatever was set
    if (!existsSync('/usr/bin/chattr') && !existsSync('/bin/chattr')) {
      t.skip('no chattr here');
      return false;
    }
    throw error;
  }
}
