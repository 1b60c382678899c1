// The servers the benchmark knows, in table-column order. To add one, write bench/servers/<name>.mjs
// exporting default { name, groups, start(dir, ctx) -> Promise<{ port, pid, child, stop(), logs() }>,
// unavailable?() -> reason, reference?, expectHeaders? } and list it here.
// - `groups`: the scenario groups (scenarios.mjs) the server takes part in; it runs only those scenarios.
// - `ctx.upstream()`: starts (once) and resolves the shared proxy upstream { port, url }.
// - `reference: true` marks a server that answers every scenario with its constant 200 + 1 KB (the ceiling).
// - `expectHeaders`: { lowercase name: exact string | RegExp } its answers must carry to be timed.
import fastifyHttpProxy from './fastify-http-proxy.mjs';
import fastifyStatic from './fastify-static.mjs';
import gatehouse from './gatehouse.mjs';
import gatehouseCors from './gatehouse-cors.mjs';
import gatehouseProxy from './gatehouse-proxy.mjs';
import httpProxyMiddleware from './http-proxy-middleware.mjs';
import nginx from './nginx.mjs';
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
];
