// Servers of the ws-flood group: Gatehouse serving the fixture site with a WebSocket echo endpoint on /ws
// (`websocket: [{ path: '/ws', mode: 'echo' }]`, defaults otherwise), and the same with the per-connection
// message rate limit on (`websocket[].rateLimit`). A build whose config schema does not know `rateLimit`
// exits with a config error naming it: the harness then shows gatehouse-ws-ratelimit as `unavailable`
// with a note instead of timing it, so the column appears once the key exists.
import { currentBuild, define as defineGatehouse, nameFor, startGatehouse } from './gatehouse.mjs';

export const WS_PATH = '/ws';
/** Per connection: 200 messages at once, then 100/s; over it the server closes with 1008. */
export const RATE_LIMIT = { messagesPerSec: 100, burst: 200 };

const wsConfig = (extra = {}) => ({ websocket: [{ path: WS_PATH, mode: 'echo', ...extra }] });

export function define(build) {
  return {
    ...defineGatehouse(build),
    name: nameFor('gatehouse-ws', build),
    groups: ['ws-flood'],
    baselineOf: build.suffix ? 'gatehouse-ws' : undefined,
    wsPath: WS_PATH,
    start: (dir) => startGatehouse({ build, root: dir, config: wsConfig() }),
  };
}

/** The rate-limited variant (this build only: a baseline without the key would run the plain config). */
export const rateLimited = {
  ...define(currentBuild),
  name: 'gatehouse-ws-ratelimit',
  baselineOf: undefined,
  /** A start-up error that means "this build has no such config key yet": shown as unavailable. */
  notSupported: (message) =>
    /\brateLimit\b/.test(message) && /unknown|unrecognized/i.test(message)
      ? 'this build does not accept websocket[].rateLimit yet (the column lights up once it does)'
      : undefined,
  start: (dir) => startGatehouse({ root: dir, config: wsConfig({ rateLimit: RATE_LIMIT }) }),
};

export default define(currentBuild);
