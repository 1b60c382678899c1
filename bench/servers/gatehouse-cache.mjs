// Server: Gatehouse as a caching reverse proxy, `gatehouse serve <empty dir> --config FILE` with one proxy
// route, /api -> the shared upstream (prefix stripped: /api/cached/1k -> upstream /cached/1k), and its
// shared RFC 9111 cache on (memory store, defaults otherwise). The upstream marks /cached/1k
// `public, max-age=3600`, so after the first request every answer comes from the cache; the harness checks
// that with Cache-Status (RFC 9211) before timing. gatehouse-cache-disk.mjs is the same with the disk store.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, withCleanup } from '../lib/proc.mjs';
import { currentBuild, define as defineGatehouse, nameFor, startGatehouse } from './gatehouse.mjs';

/** The config file's content for an upstream base URL and a store. */
export const cacheConfig = (upstreamUrl, store = 'memory') => ({
  proxy: [{ prefix: '/api', upstream: upstreamUrl, cache: { enabled: true, store } }],
});

/**
 * A caching Gatehouse server of `build` for the bench with the given store. `prepare(tmpPath, config)`,
 * when given, starts what the store needs (a redis-server) and returns its stop function.
 */
export function cacheServer(name, store, build = currentBuild, prepare = undefined) {
  return {
    ...defineGatehouse(build),
    name: nameFor(name, build),
    groups: ['cache'],
    baselineOf: build.suffix ? name : undefined,
    /** A Cache-Status (RFC 9211 §2.1) whose entry has the `hit` parameter: served from the cache. */
    hitHeaders: { 'cache-status': /;\s*hit\s*(?:[;,]|$)/i },
    async start(_dir, { upstream }) {
      const { url } = await upstream();
      const tmp = tempDir('gatehouse-bench-cache-');
      const root = join(tmp.path, 'www');
      mkdirSync(root);
      const config = cacheConfig(url, store);
      // The disk store's folder lives with the rest of the run's temp files.
      if (store === 'disk') config.proxy[0].cache.dir = join(tmp.path, 'cache');
      let stopPrepared = async () => {};
      const cleanup = () => {
        void stopPrepared().finally(tmp.remove);
      };
      return withCleanup(async () => {
        if (prepare) stopPrepared = await prepare(tmp.path, config);
        return startGatehouse({ build, root, config });
      }, cleanup);
    },
  };
}

export const define = (build) => cacheServer('gatehouse-cache', 'memory', build);

export default define(currentBuild);
