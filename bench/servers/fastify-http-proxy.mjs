// Server: fastify@5 + @fastify/http-proxy@11, /api/... -> upstream /..., logger off.
import { startNodeChild } from './node-child.mjs';

export default {
  name: '@fastify/http-proxy',
  groups: ['proxy'],
  async start(dir, { upstream }) {
    const { url } = await upstream();
    return startNodeChild('fastify-http-proxy.mjs', dir, { BENCH_UPSTREAM: url });
  },
};
