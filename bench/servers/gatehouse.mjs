// Server: Gatehouse itself, `node bin/gatehouse.js serve <dir> --port <p> --host 127.0.0.1 --log off`, ready
// when it prints `listening on http://127.0.0.1:<p>`. Needs `npm run build` (dist/) first.
// BENCH_GATEHOUSE_BIN=/path/to/gatehouse.js benchmarks another build (e.g. a stash of the previous one).
// `startGatehouse` is shared with the gatehouse-cors, gatehouse-proxy and gatehouse-cache variants. In the
// cache group it is the baseline: the same 1 KB from its static handler (the scenario's `pathFor`).
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startServerProcess } from '../lib/proc.mjs';

const defaultBin = fileURLToPath(new URL('../../bin/gatehouse.js', import.meta.url));
const builtCli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const bin = process.env.BENCH_GATEHOUSE_BIN ? resolve(process.env.BENCH_GATEHOUSE_BIN) : defaultBin;

export const gatehouseUnavailable = () => (existsSync(bin) ? undefined : `${bin} not found`);

/**
 * `gatehouse serve ROOT --port P --host 127.0.0.1 --log off ...extraArgs`, run in `cwd` (a folder without a
 * gatehouse.config.json, so none from the repo is picked up). A config Gatehouse rejects makes it exit before
 * the ready line, which start-up reports as 'failed to start' with its message.
 */
export async function startGatehouse({ root, cwd = root, extraArgs = [] }) {
  if (bin === defaultBin && !existsSync(builtCli)) {
    throw new Error('dist/cli/main.js is missing: run `npm run build` first (npm run bench does)');
  }
  const port = await freePort();
  return startServerProcess({
    cmd: process.execPath,
    args: [bin, 'serve', root, '--port', String(port), '--host', '127.0.0.1', '--log', 'off', ...extraArgs],
    cwd,
    env: { NODE_ENV: 'production' },
    readyLine: new RegExp(`listening on http://127\\.0\\.0\\.1:(${port})\\b`),
    expectComm: 'node',
  });
}

export default {
  name: 'gatehouse',
  groups: ['static', 'policy', 'cache'],
  unavailable: gatehouseUnavailable,
  start: (dir) => startGatehouse({ root: dir }),
};
