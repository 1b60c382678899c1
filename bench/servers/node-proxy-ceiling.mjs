// Server: the Node proxy ceiling, the naive node:http + undici Pool.request proxy (children/node-proxy-ceiling.mjs).
import { startNodeChild } from './node-child.mjs';

export default {
  name: 'node-proxy-ceiling',
  groups: ['proxy'],
  async start(dir, { upstream }) {
    const { url } = await upstream();
    return startNodeChild('node-proxy-ceiling.mjs', dir, { BENCH_UPSTREAM: url });
  },
};
