// Servers of the adapters group (issue 28): 1 KB static through each Gatehouse adapter in its framework's
// app, against that framework's own static module (bench/children/adapters.mjs), with the standalone
// `gatehouse` as the group's subject so its ratios print each adapter's cost over it. @fastify/static
// (fastify-static.mjs) takes part too.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startNodeChild } from './node-child.mjs';

const built = fileURLToPath(new URL('../../dist/adapters/express.js', import.meta.url));

const define = (name, { gatehouse = false } = {}) => ({
  name,
  groups: ['adapters'],
  ...(gatehouse
    ? { unavailable: () => (existsSync(built) ? undefined : 'dist/adapters is missing: run `npm run build`') }
    : {}),
  start: (dir) => startNodeChild('adapters.mjs', dir, { BENCH_APP: name }),
});

export const adapterServers = [
  define('gatehouse-express', { gatehouse: true }),
  define('express-static'),
  define('gatehouse-fastify', { gatehouse: true }),
  define('gatehouse-koa', { gatehouse: true }),
  define('koa-static'),
  define('gatehouse-hono', { gatehouse: true }),
  define('hono-serve-static'),
];
