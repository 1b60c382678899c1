#!/usr/bin/env node
// Builds dist/ (npm run build) when it is missing or older than the source: `npm start` in a fresh clone.
// `npm ci` no longer builds it: the package builds in `prepack` (for `npm pack` and `npm publish`), since
// npm 11 warns about a `prepare` script in a tarball a user installs. With --missing-only, only a missing
// dist/ is built (the test runner: rebuilding while other test processes run the CLI would break them).
// With --run SCRIPT ARGS..., SCRIPT then runs in this process with ARGS (npm start: one process, so a
// signal sent to it, or a shell's `exec`, reaches the server).
// Usage: node scripts/build-if-stale.mjs [--missing-only] [--run SCRIPT [ARG...]]
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO = fileURLToPath(new URL('..', import.meta.url));
/** Written by every build (tsc emits every file each run); the CLI's entry, which npm start runs. */
const STAMP = 'dist/cli/main.js';
/** What the build reads. */
const INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json'];

/** The newest modification time under `path` (ms), 0 when it does not exist. */
function newest(path) {
  if (!existsSync(path)) return 0;
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  let t = 0;
  for (const name of readdirSync(path)) t = Math.max(t, newest(join(path, name)));
  return t;
}

/** Why dist/ of `repo` needs a build, or undefined when it is up to date. */
export function buildReason(repo = REPO, o = { missingOnly: false }) {
  const stamp = join(repo, STAMP);
  if (!existsSync(stamp)) return 'dist/ is missing';
  if (o.missingOnly) return undefined;
  const built = statSync(stamp).mtimeMs;
  const changed = INPUTS.find((p) => newest(join(repo, p)) > built);
  return changed === undefined ? undefined : `${changed} changed since dist/ was built`;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const run = args.indexOf('--run');
  const own = run === -1 ? args : args.slice(0, run);
  const reason = buildReason(REPO, { missingOnly: own.includes('--missing-only') });
  if (reason !== undefined) {
    console.error(`${reason}: npm run build`);
    // The build's output goes to stderr: stdout is the server's (its `listening on` line).
    const stdio = ['ignore', 2, 2];
    // npm_execpath: the npm running this script (npm start); else the npm on PATH.
    const npmCli = process.env.npm_execpath;
    const r = npmCli
      ? spawnSync(process.env.npm_node_execpath || process.execPath, [npmCli, 'run', 'build'], {
          cwd: REPO,
          stdio,
        })
      : spawnSync('npm', ['run', 'build'], { cwd: REPO, stdio });
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
  if (run !== -1) {
    const [script, ...rest] = args.slice(run + 1);
    if (script === undefined) {
      console.error('build-if-stale: --run needs a script');
      process.exit(2);
    }
    const path = resolve(script);
    process.argv = [process.argv[0], path, ...rest];
    await import(pathToFileURL(path).href);
  }
}
