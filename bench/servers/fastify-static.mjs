// Server: fastify@5 + @fastify/static@8.
import { startNodeChild } from './node-child.mjs';

export default {
  name: '@fastify/static',
  groups: ['static', 'adapters'],
  start: (dir) => startNodeChild('fastify-static.mjs', dir),
};
