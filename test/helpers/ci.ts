// The one "is this CI?" of the tests (scripts/ci.mjs decides it for the runner too), and the options a
// suite that needs an installed binary passes to describe()/it(): off CI a missing binary leaves the
// suite out with its path named; under CI the suite always runs, so the missing binary fails it.
import { existsSync } from 'node:fs';
import { isCI } from '../../scripts/ci.mjs';

export { isCI };

/** This process's verdict (read once: CI does not change mid-run). */
export const inCI = isCI();

/** describe()/it() options for tests that run `path`: never skipped under CI. */
export function needsBinary(
  path: string,
  env: Record<string, string | undefined> = process.env,
): { skip: string | false } {
  return existsSync(path) || isCI(env) ? { skip: false } : { skip: `no ${path}` };
}
