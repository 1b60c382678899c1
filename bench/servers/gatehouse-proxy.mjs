// Server: Gatehouse as a reverse proxy, `gatehouse serve <empty dir> ... --proxy /api=<upstream>` (prefix
// stripped: /api/1k -> upstream /1k, Gatehouse's defaults otherwise: X-Forwarded-*, Via, undici pool).
import { tempDir, withCleanup } from '../lib/proc.mjs';
import { currentBuild, define as defineGatehouse, nameFor, startGatehouse } from './gatehouse.mjs';

export function define(build) {
  return {
    ...defineGatehouse(build),
    name: nameFor('gatehouse-proxy', build),
    groups: ['proxy'],
    baselineOf: build.suffix ? 'gatehouse-proxy' : undefined,
    async start(_dir, { upstream }) {
      const { url } = await upstream();
      const empty = tempDir('gatehouse-bench-proxy-');
      return withCleanup(
        () => startGatehouse({ build, root: empty.path, extraArgs: ['--proxy', `/api=${url}`] }),
        empty.remove,
      );
    },
  };
}

export default define(currentBuild);
