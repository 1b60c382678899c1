// Peer: http-proxy-middleware@3 as the whole node:http handler, /api/... -> BENCH_UPSTREAM/..., through a
// keep-alive agent (its default is a new upstream connection per request, which would not be a fair fight).
import http from 'node:http';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { listen, upstream } from './runtime.mjs';

const proxy = createProxyMiddleware({
  target: upstream(),
  pathRewrite: { '^/api': '' },
  agent: new http.Agent({ keepAlive: true }),
});
listen(http.createServer(proxy));
