// The one "is this CI?" of the tests (scripts/ci.mjs decides it for the runner too), and the options a
// suite that needs an installed binary passes to describe()/it(): off CI a missing binary leaves the
// suite out with its path named; under CI the suite always runs, so the missing binary fails it.
import { existsSync } from 'node:fs';
import { isCI } from '../../scripts/ci.mjs';

export { isCI };

/** This process's verdict (read once: CI does not change mid-run). */
export const inCI = isCI();

/**
 * describe()/it() options for tests that need something of the machine (a file, a kernel feature):
 * off CI, when it is not `available`, skipped with `reason`; under CI never skipped, so the test runs
 * and must fail on its own when the thing is missing.
 */
export function needs(
  available: boolean,
  reason: string,
  env: Record<string, string | undefined> = process.env,
): { skip: string | false } {
  return available || isCI(env) ? { skip: false } : { skip: reason };
}

/** describe()/it() options for tests that run `path`: never skipped under CI. */
export function needsBinary(
  path: string,
  env: Record<string, string | undefined> = process.env,
): { skip: string | false } {
  return needs(existsSync(path), `no ${path}`, env);
}
