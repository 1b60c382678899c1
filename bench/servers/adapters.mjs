// Servers of the adapters group (issue 28): 1 KB static through each Gatehouse adapter in its framework's
// app, against that framework's own static module (bench/children/adapters.mjs), with the standalone
// `gatehouse` as the group's subject so its ratios print each adapter's cost over it. @fastify/static
// (fastify-static.mjs) takes part too.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startNodeChild } from './node-child.mjs';
import { gatehouseFields } from './node-fields.mjs';

const built = fileURLToPath(new URL('../../dist/adapters/express.js', import.meta.url));

const define = (name, { gatehouse = false, fields = false } = {}) => ({
  name,
  groups: ['adapters'],
  ...(fields ? { reference: true } : {}),
  ...(gatehouse
    ? { unavailable: () => (existsSync(built) ? undefined : 'dist/adapters is missing: run `npm run build`') }
    : {}),
  start: async (dir) =>
    startNodeChild('adapters.mjs', dir, {
      BENCH_APP: name,
      ...(fields ? { BENCH_FIELDS: JSON.stringify(await gatehouseFields(dir)) } : {}),
    }),
});

export const adapterServers = [
  define('gatehouse-express', { gatehouse: true }),
  define('express-static'),
  // Express's own floor: a bare middleware sending Gatehouse's 1 KB answer (children/adapters.mjs).
  define('express-ceiling', { fields: true }),
  define('gatehouse-fastify', { gatehouse: true }),
  define('gatehouse-koa', { gatehouse: true }),
  define('koa-static'),
  define('gatehouse-hono', { gatehouse: true }),
  define('hono-serve-static'),
];
