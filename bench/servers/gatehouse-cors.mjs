// Server: Gatehouse with a CORS + response-header policy, the same CLI as `gatehouse` plus `--config FILE`.
// The config enables credentialed CORS for one origin with an exposed header and the `security` header
// preset. The harness checks that a request with that Origin gets the CORS and preset headers before timing.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, withCleanup } from '../lib/proc.mjs';
import { gatehouseUnavailable, startGatehouse } from './gatehouse.mjs';

export const ORIGIN = 'https://app.example';

export const POLICY_CONFIG = {
  cors: { origins: [ORIGIN], credentials: true, exposeHeaders: ['X-Request-Id'] },
  headers: [{ preset: 'security' }],
};

export default {
  name: 'gatehouse-cors',
  groups: ['policy'],
  unavailable: gatehouseUnavailable,
  /** Response headers the policy must add (checked on the probe request; a mismatch is not timed). */
  expectHeaders: {
    'access-control-allow-origin': ORIGIN,
    'access-control-allow-credentials': 'true',
    'access-control-expose-headers': /(^|,)\s*x-request-id\s*(,|$)/i,
    'x-content-type-options': 'nosniff',
  },
  start(dir) {
    const tmp = tempDir('gatehouse-bench-cors-');
    const config = join(tmp.path, 'gatehouse.config.json');
    writeFileSync(config, `${JSON.stringify(POLICY_CONFIG, null, 2)}\n`);
    return withCleanup(() => startGatehouse({ root: dir, extraArgs: ['--config', config] }), tmp.remove);
  },
};
