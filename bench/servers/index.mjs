// The servers the benchmark knows, in table-column order. To add one, write bench/servers/<name>.mjs
// exporting default { name, groups, start(dir, ctx) -> Promise<{ port, pid, child, stop(), logs() }>,
// unavailable?() -> reason, reference?, expectHeaders?, hitHeaders? } and list it here.
// - `groups`: the scenario groups (scenarios.mjs) the server takes part in; it runs only those scenarios.
// - `scenarios`: optional, the names of the only scenarios of those groups it runs (the same-fields references).
// - `ctx.upstream()`: starts (once) and resolves the shared proxy upstream { port, url }.
// - `reference: true` marks a server that answers every scenario with its constant 200 + 1 KB (the ceiling).
// - `expectHeaders`: { lowercase name: exact string | RegExp } its answers must carry to be timed.
// - `hitHeaders`: the same shape, what shows that an answer came from its cache; checked (after a first
//   request that fills the cache) in the scenarios marked `expectCacheHit`, else `not a cache hit`.
// - `baselineOf`: on a BENCH_BASELINE twin, the name of the server it is the baseline of.
// - `wsPath`: a WebSocket echo endpoint, checked with one echo before a flooded scenario is timed.
// - `notSupported(startError) -> reason | undefined`: a start-up failure that means the build lacks a
//   feature; shown as `unavailable` with the reason.
// Gatehouse servers export `define(build)`; `gatehouse(define)` lists this build's and, with
// BENCH_BASELINE, the baseline's twin right after it.
import { adapterServers } from './adapters.mjs';
import fastifyHttpProxy from './fastify-http-proxy.mjs';
import fastifyStatic from './fastify-static.mjs';
import { builds, currentBuild, define as gatehousePlain } from './gatehouse.mjs';
import { define as gatehouseCache } from './gatehouse-cache.mjs';
import { define as gatehouseCacheDisk } from './gatehouse-cache-disk.mjs';
import {
  define as gatehouseCacheRedis,
  defineDirect as gatehouseCacheRedisDirect,
} from './gatehouse-cache-redis.mjs';
import { define as gatehouseCors } from './gatehouse-cors.mjs';
import { define as gatehouseMetrics } from './gatehouse-metrics.mjs';
import { define as gatehouseProxy } from './gatehouse-proxy.mjs';
import { define as gatehouseWorkers } from './gatehouse-workers.mjs';
import { define as gatehouseWs, rateLimited as gatehouseWsRateLimited } from './gatehouse-ws.mjs';
import httpProxyMiddleware from './http-proxy-middleware.mjs';
import nginx from './nginx.mjs';
import nginxCache from './nginx-cache.mjs';
import nginxProxy from './nginx-proxy.mjs';
import nodeCeiling from './node-ceiling.mjs';
import { nodeFields304, nodeFieldsCeiling } from './node-fields.mjs';
import nodeProxyCeiling from './node-proxy-ceiling.mjs';
import { runtimeServers } from './runtimes.mjs';
import serveStatic from './serve-static.mjs';
import sirv from './sirv.mjs';

/** A Gatehouse server for every build (this one, then the BENCH_BASELINE twin when set). */
const gatehouse = (define) => builds.map(define);

export const servers = [
  nodeCeiling,
  // Issue 27: node:http with exactly Gatehouse's fields (the 1k 200, the index.html 304).
  nodeFieldsCeiling,
  nodeFields304,
  ...gatehouse(gatehousePlain),
  // Issue 17: metrics on vs off, and --workers 2 vs one process (per server CPU-second).
  gatehouseMetrics(builds[0]),
  gatehouseWorkers(builds[0]),
  sirv,
  serveStatic,
  fastifyStatic,
  nginx,
  ...gatehouse(gatehouseCors),
  ...gatehouse(gatehouseProxy),
  // Issue 27: the naive node:http + undici proxy, as the Node limit.
  nodeProxyCeiling,
  nginxProxy,
  fastifyHttpProxy,
  httpProxyMiddleware,
  ...gatehouse(gatehouseCache),
  ...gatehouse(gatehouseCacheDisk),
  // This build only: a baseline build may predate the Redis store.
  gatehouseCacheRedis(currentBuild),
  gatehouseCacheRedisDirect(currentBuild),
  nginxCache,
  ...gatehouse(gatehouseWs),
  gatehouseWsRateLimited,
  // Issue 28: each adapter in its framework against the framework's own static module.
  ...adapterServers,
  // Issue 39: Gatehouse on Bun.serve and Deno.serve against each runtime's same-fields server.
  ...runtimeServers,
];
