// Server: Gatehouse with a CORS + response-header policy, the same CLI as `gatehouse` plus `--config FILE`.
// The config enables credentialed CORS for one origin with an exposed header and the `security` header
// preset. The harness checks that a request with that Origin gets the CORS and preset headers before timing.
import { currentBuild, define as defineGatehouse, nameFor, startGatehouse } from './gatehouse.mjs';

export const ORIGIN = 'https://app.example';

export const POLICY_CONFIG = {
  cors: { origins: [ORIGIN], credentials: true, exposeHeaders: ['X-Request-Id'] },
  headers: [{ preset: 'security' }],
};

export function define(build) {
  return {
    ...defineGatehouse(build),
    name: nameFor('gatehouse-cors', build),
    groups: ['policy'],
    baselineOf: build.suffix ? 'gatehouse-cors' : undefined,
    /** Response headers the policy must add (checked on the probe request; a mismatch is not timed). */
    expectHeaders: {
      'access-control-allow-origin': ORIGIN,
      'access-control-allow-credentials': 'true',
      'access-control-expose-headers': /(^|,)\s*x-request-id\s*(,|$)/i,
      'x-content-type-options': 'nosniff',
    },
    start: (dir) => startGatehouse({ build, root: dir, config: POLICY_CONFIG }),
  };
}

export default define(currentBuild);
