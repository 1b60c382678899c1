// Server: Gatehouse itself, `node bin/gatehouse.js serve <dir> --port <p> --host 127.0.0.1 --log off`, ready
// when it prints `listening on http://127.0.0.1:<p>`. Needs `npm run build` (dist/) first.
// BENCH_GATEHOUSE_BIN=/path/to/gatehouse.js benchmarks another build (e.g. a stash of the previous one).
// BENCH_BASELINE=/path/to/checkout adds a `<name>-baseline` twin of every Gatehouse server, running that
// checkout's bin/gatehouse.js with the same arguments and config (lib/baseline.mjs), for the "no regression"
// ratios. `startGatehouse` is shared with the gatehouse-cors, -proxy, -cache and -ws variants; each of them
// exports `define(build)` and servers/index.mjs lists one per build. In the cache group the plain
// `gatehouse` is the reference: the same 1 KB from its static handler (the scenario's `pathFor`).
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { baselineBuild, forBuild } from '../lib/baseline.mjs';
import { freePort, startServerProcess, tempDir, withCleanup } from '../lib/proc.mjs';

const defaultBin = fileURLToPath(new URL('../../bin/gatehouse.js', import.meta.url));
const builtCli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/**
 * A Gatehouse build the bench can run: `bin` (its bin/gatehouse.js), `suffix` for its server names,
 * `missing()` (why it cannot run, or undefined) and, for the baseline, `schemaFile` (its schema.json, which
 * configs are trimmed to).
 */
export const currentBuild = {
  suffix: '',
  bin: process.env.BENCH_GATEHOUSE_BIN ? resolve(process.env.BENCH_GATEHOUSE_BIN) : defaultBin,
  missing() {
    if (!existsSync(this.bin)) return `${this.bin} not found`;
    if (this.bin === defaultBin && !existsSync(builtCli)) {
      return 'dist/cli/main.js is missing: run `npm run build` first (npm run bench does)';
    }
    return undefined;
  },
};

/** The builds to run: this checkout's, plus BENCH_BASELINE's when set. */
export const builds = [currentBuild, ...(baselineBuild ? [baselineBuild] : [])];

/**
 * `gatehouse serve ROOT --port P --host 127.0.0.1 --log off ...extraArgs [--config FILE]`, run in `cwd` (a
 * folder without a gatehouse.config.json, so none from the repo is picked up). `config` (an object) is written
 * to a temp file, trimmed to the build's schema for a baseline build. A config Gatehouse rejects makes it exit
 * before the ready line, which start-up reports as 'failed to start' with its message. `scheme` is the one
 * of the ready line (`https` when the config has `tls`); `runtime` runs it on Bun or Deno; `env` is added to
 * its environment (e.g. GATEHOUSE_CGROUP_ROOT).
 */
export async function startGatehouse({
  build = currentBuild,
  root,
  cwd = root,
  extraArgs = [],
  config,
  scheme = 'http',
  cpus,
  runtime,
  env = {},
}) {
  const missing = build.missing();
  if (missing) throw new Error(missing);
  const args = [...extraArgs];
  let tmp;
  if (config) {
    tmp = tempDir('gatehouse-bench-config-');
    const file = join(tmp.path, 'gatehouse.config.json');
    writeFileSync(file, `${JSON.stringify(forBuild(build, config), null, 2)}\n`);
    args.push('--config', file);
  }
  const port = await freePort();
  const start = () =>
    startServerProcess({
      // `runtime` ({ bin, args, comm }): run by Bun or Deno instead of Node (servers/runtimes.mjs).
      cmd: runtime?.bin ?? process.execPath,
      args: [
        ...(runtime?.args ?? []),
        build.bin,
        'serve',
        root,
        '--port',
        String(port),
        '--host',
        '127.0.0.1',
        '--log',
        'off',
        ...args,
      ],
      cwd,
      env: { NODE_ENV: 'production', ...env },
      readyLine: new RegExp(`listening on ${scheme}://127\\.0\\.0\\.1:(${port})\\b`),
      expectComm: runtime?.comm ?? 'node',
      ...(cpus === undefined ? {} : { cpus }),
    });
  return tmp ? withCleanup(start, tmp.remove) : start();
}

/** The `name` of a Gatehouse server for a build: `gatehouse-cache` or `gatehouse-cache-baseline`. */
export const nameFor = (name, build) => `${name}${build.suffix}`;

/** `unavailable()` for a server of `build`. */
export const unavailableFor = (build) => () => build.missing();

export function define(build) {
  return {
    name: nameFor('gatehouse', build),
    // The baseline twin only in the static group: in policy and cache plain gatehouse is the reference
    // for the cost of a layer, whose own twins (gatehouse-cors-baseline, ...) give the regression ratio.
    // In adapters it is the subject: the adapters' ratios to it are their cost over standalone.
    groups: build.suffix ? ['static', 'coding'] : ['static', 'policy', 'cache', 'adapters', 'coding'],
    baselineOf: build.suffix ? 'gatehouse' : undefined,
    unavailable: unavailableFor(build),
    start: (dir) => startGatehouse({ build, root: dir }),
  };
}

export default define(currentBuild);
