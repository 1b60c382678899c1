// The servers the benchmark knows, in table-column order. To add one, write bench/servers/<name>.mjs
// exporting default { name, groups, start(dir, ctx) -> Promise<{ port, pid, child, stop(), logs() }>,
// unavailable?() -> reason, reference?, expectHeaders?, hitHeaders? } and list it here.
// - `groups`: the scenario groups (scenarios.mjs) the server takes part in; it runs only those scenarios.
// - `ctx.upstream()`: starts (once) and resolves the shared proxy upstream { port, url }.
// - `reference: true` marks a server that answers every scenario with its constant 200 + 1 KB (the ceiling).
// - `expectHeaders`: { lowercase name: exact string | RegExp } its answers must carry to be timed.
// - `hitHeaders`: the same shape, what shows that an answer came from its cache; checked (after a first
//   request that fills the cache) in the scenarios marked `expectCacheHit`, else `not a cache hit`.
import fastifyHttpProxy from './fastify-http-proxy.mjs';
import fastifyStatic from './fastify-static.mjs';
import gatehouse from './gatehouse.mjs';
import gatehouseCache from './gatehouse-cache.mjs';
import gatehouseCacheDisk from './gatehouse-cache-disk.mjs';
import gatehouseCors from './gatehouse-cors.mjs';
import gatehouseProxy from './gatehouse-proxy.mjs';
import httpProxyMiddleware from './http-proxy-middleware.mjs';
import nginx from './nginx.mjs';
import nginxCache from './nginx-cache.mjs';
import nginxProxy from './nginx-proxy.mjs';
import nodeCeiling from './node-ceiling.mjs';
import serveStatic from './serve-static.mjs';
import sirv from './sirv.mjs';

export const servers = [
  nodeCeiling,
  gatehouse,
  sirv,
  serveStatic,
  fastifyStatic,
  nginx,
  gatehouseCors,
  gatehouseProxy,
  nginxProxy,
  fastifyHttpProxy,
  httpProxyMiddleware,
  gatehouseCache,
  gatehouseCacheDisk,
  nginxCache,
];
