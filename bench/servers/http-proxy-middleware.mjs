// Server: http-proxy-middleware@3 on node:http with a keep-alive agent, /api/... -> upstream /....
import { startNodeChild } from './node-child.mjs';

export default {
  name: 'http-proxy-middleware',
  groups: ['proxy'],
  async start(dir, { upstream }) {
    const { url } = await upstream();
    return startNodeChild('http-proxy-middleware.mjs', dir, { BENCH_UPSTREAM: url });
  },
};
