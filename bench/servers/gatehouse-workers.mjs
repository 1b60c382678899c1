// Server: Gatehouse with `--workers 2` (node:cluster), in the static group beside plain `gatehouse`
// (one process). The workers need both CPUs, so this server is pinned to CPUs 0 and 1 (wrk stays on
// CPU 1 and competes with the second worker): its req/s is not comparable with the one-CPU servers.
// The figure that is: requests per server CPU-second, where the CPU time is the primary's plus its
// workers' (/proc/<pid>/task/<pid>/children, summed over the timed run: `cpuTree`).
import { CPU } from '../lib/proc.mjs';
import { currentBuild, define as defineGatehouse, nameFor, startGatehouse } from './gatehouse.mjs';

export function define(build) {
  return {
    ...defineGatehouse(build),
    name: nameFor('gatehouse-workers2', build),
    groups: ['static'],
    baselineOf: undefined,
    cpuTree: true,
    start: (dir) =>
      startGatehouse({
        build,
        root: dir,
        extraArgs: ['--workers', '2'],
        ...(CPU.server === undefined ? {} : { cpus: `${CPU.server},${CPU.load}` }),
      }),
  };
}

export default define(currentBuild);
