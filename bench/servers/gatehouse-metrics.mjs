// Server: Gatehouse with Prometheus metrics on (`metrics: {}`), the same CLI as `gatehouse` plus
// `--config FILE`. In the static group beside plain `gatehouse`: the 1k row is the per-request cost of
// the metrics hooks (one 'close' listener and a route-kind tag), target >= 0.95x (targets.mjs).
import { currentBuild, define as defineGatehouse, nameFor, startGatehouse } from './gatehouse.mjs';

export const METRICS_CONFIG = { metrics: {} };

export function define(build) {
  return {
    ...defineGatehouse(build),
    name: nameFor('gatehouse-metrics', build),
    groups: ['static'],
    baselineOf: undefined,
    start: (dir) => startGatehouse({ build, root: dir, config: METRICS_CONFIG }),
  };
}

export default define(currentBuild);
