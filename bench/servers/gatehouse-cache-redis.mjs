// Server: gatehouse-cache with the Redis store (issue 17) on a redis-server of its own, pinned to the
// server CPU like the upstream (its CPU time is not counted as Gatehouse's). Two columns:
// gatehouse-cache-redis (the default: a memory tier in front, so a repeated hit is answered in process)
// and gatehouse-cache-redis-direct (memoryCacheBytes 0: every hit is one Redis round trip, the cost of
// a hit that the tier does not hold, e.g. the first hit on an instance after another stored it).
import { spawnSync } from 'node:child_process';
import { freePort, startServerProcess } from '../lib/proc.mjs';
import { currentBuild } from './gatehouse.mjs';
import { cacheServer } from './gatehouse-cache.mjs';

const hasRedis = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;

/** Starts redis-server (no persistence) in `dir` and points the config at it; resolves its stop(). */
async function startRedis(dir, config) {
  const port = await freePort();
  const redis = await startServerProcess({
    cmd: 'redis-server',
    args: ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    port,
    expectComm: 'redis-server',
  });
  config.redis = { url: `redis://127.0.0.1:${port}`, keyPrefix: 'gatehouse-bench:' };
  return () => redis.stop();
}

function redisServer(name, build, memoryCacheBytes) {
  const server = cacheServer(name, 'redis', build, async (dir, config) => {
    if (memoryCacheBytes !== undefined) config.proxy[0].cache.memoryCacheBytes = memoryCacheBytes;
    return startRedis(dir, config);
  });
  const unavailable = server.unavailable;
  return { ...server, unavailable: () => (hasRedis ? unavailable?.() : 'redis-server not found') };
}

export const define = (build) => redisServer('gatehouse-cache-redis', build, undefined);
export const defineDirect = (build) => redisServer('gatehouse-cache-redis-direct', build, 0);

export default define(currentBuild);
