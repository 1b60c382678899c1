// Server: Gatehouse as a reverse proxy, `gatehouse serve <empty dir> ... --proxy /api=<upstream>` (prefix
// stripped: /api/1k -> upstream /1k, Gatehouse's defaults otherwise: X-Forwarded-*, Via, undici pool).
import { tempDir, withCleanup } from '../lib/proc.mjs';
import { gatehouseUnavailable, startGatehouse } from './gatehouse.mjs';

export default {
  name: 'gatehouse-proxy',
  groups: ['proxy'],
  unavailable: gatehouseUnavailable,
  async start(_dir, { upstream }) {
    const { url } = await upstream();
    const empty = tempDir('gatehouse-bench-proxy-');
    return withCleanup(
      () => startGatehouse({ root: empty.path, extraArgs: ['--proxy', `/api=${url}`] }),
      empty.remove,
    );
  },
};
