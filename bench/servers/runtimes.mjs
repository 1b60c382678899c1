// Servers of the `runtimes` group (issue 39): Gatehouse served natively by Bun (Bun.serve) and by Deno
// (Deno.serve), each against its runtime's same-fields ceiling (children/runtime-fields.mjs) and nginx.
// The runtimes come from npm (devDependencies `bun` and `deno`, node_modules/.bin).

import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServerProcess, tempDir, withCleanup } from '../lib/proc.mjs';
import { currentBuild, startGatehouse } from './gatehouse.mjs';
import { cacheConfig } from './gatehouse-cache.mjs';
import { gatehouseFields } from './node-fields.mjs';

const READY = /listening on http:\/\/127\.0\.0\.1:(\d+)/;
const binOf = (name) => fileURLToPath(new URL(`../../node_modules/.bin/${name}`, import.meta.url));

/** How to run a script on each runtime, and the process name it shows. */
export const RUNTIMES = {
  bun: { bin: binOf('bun'), args: [], comm: 'bun' },
  deno: { bin: binOf('deno'), args: ['run', '-A'], comm: 'deno' },
};

const missing = (runtime) => () =>
  existsSync(RUNTIMES[runtime].bin) ? currentBuild.missing() : `${RUNTIMES[runtime].bin} not found (npm ci)`;

/** `gatehouse serve` run by the runtime itself: Bun.serve / Deno.serve (app/native.ts). */
const gatehouseOn = (runtime) => ({
  name: `gatehouse-${runtime}`,
  groups: ['runtimes'],
  unavailable: missing(runtime),
  start: (dir) => startGatehouse({ root: dir, runtime: RUNTIMES[runtime] }),
});

/** The runtime's own server with Gatehouse's fields: `ceiling` (every request, 1 KB) or `304`. */
const fieldsOn = (runtime, mode, scenario) => ({
  name: `${runtime}-fields-${mode === 'ceiling' ? 'ceiling' : '304'}`,
  groups: ['runtimes'],
  scenarios: [scenario],
  reference: mode === 'ceiling' ? true : undefined,
  unavailable: missing(runtime),
  async start(dir) {
    const fields = await gatehouseFields(dir);
    const r = RUNTIMES[runtime];
    const script = fileURLToPath(new URL('../children/runtime-fields.mjs', import.meta.url));
    return startServerProcess({
      cmd: r.bin,
      args: [...r.args, script, dir],
      env: { BENCH_FIELDS: JSON.stringify(fields), BENCH_MODE: mode },
      readyLine: READY,
      expectComm: r.comm,
    });
  },
});

/**
 * The reverse proxy (proxy-1k) and its cache (cache-hit-1k) run by the runtime, beside gatehouse-proxy and
 * gatehouse-cache on Node in the same groups: the same config as theirs (gatehouse-proxy.mjs,
 * gatehouse-cache.mjs).
 */
const proxyOn = (runtime, cached) => ({
  name: `gatehouse-${cached ? 'cache' : 'proxy'}-${runtime}`,
  groups: [cached ? 'cache' : 'proxy'],
  unavailable: missing(runtime),
  ...(cached ? { hitHeaders: { 'cache-status': /;\s*hit\s*(?:[;,]|$)/i } } : {}),
  async start(_dir, { upstream }) {
    const { url } = await upstream();
    const tmp = tempDir('gatehouse-bench-rt-proxy-');
    const root = join(tmp.path, 'www');
    mkdirSync(root);
    return withCleanup(
      () =>
        startGatehouse({
          root,
          runtime: RUNTIMES[runtime],
          ...(cached ? { config: cacheConfig(url) } : { extraArgs: ['--proxy', `/api=${url}`] }),
        }),
      tmp.remove,
    );
  },
});

export const runtimeServers = [
  gatehouseOn('bun'),
  fieldsOn('bun', 'ceiling', 'rt-1k'),
  fieldsOn('bun', '304', 'rt-304'),
  gatehouseOn('deno'),
  fieldsOn('deno', 'ceiling', 'rt-1k'),
  fieldsOn('deno', '304', 'rt-304'),
  proxyOn('bun', false),
  proxyOn('deno', false),
  proxyOn('bun', true),
  proxyOn('deno', true),
];
