// The servers the benchmark knows, in table-column order. To add one, write bench/servers/<name>.mjs
// exporting default { name, start(dir) -> Promise<{ port, pid, stop() }>, unavailable?() -> reason,
// reference? } and list it here. `reference: true` marks a server that answers every scenario with its
// constant 200 + 1 KB (the ceiling).
import fastifyStatic from './fastify-static.mjs';
import gatehouse from './gatehouse.mjs';
import nginx from './nginx.mjs';
import nodeCeiling from './node-ceiling.mjs';
import serveStatic from './serve-static.mjs';
import sirv from './sirv.mjs';

export const SUBJECT = 'gatehouse';
export const servers = [nodeCeiling, gatehouse, sirv, serveStatic, fastifyStatic, nginx];
