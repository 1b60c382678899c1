// Server: nginx (when on PATH) as a caching reverse proxy, the nginx-proxy setup (location /api/ -> the
// upstream with /api stripped, HTTP/1.1 keep-alive pool) plus `proxy_cache` in a zone whose files live in
// nginx's temp dir. nginx honours the upstream's `Cache-Control: public, max-age=3600` by default (no
// proxy_cache_valid needed). `X-Cache-Status: $upstream_cache_status` lets the harness check for HIT.
import { join } from 'node:path';
import { nginxUnavailable, startNginx } from './nginx.mjs';

export default {
  name: 'nginx-cache',
  groups: ['cache'],
  unavailable: nginxUnavailable,
  hitHeaders: { 'x-cache-status': 'HIT' },
  async start(_dir, { upstream }) {
    const { port: upstreamPort } = await upstream();
    return startNginx(
      (port, prefix) => `  proxy_cache_path ${join(prefix, 'cache')} keys_zone=bench:10m;
  upstream bench_upstream {
    server 127.0.0.1:${upstreamPort};
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${port};
    location /api/ {
      proxy_pass http://bench_upstream/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_cache bench;
      add_header X-Cache-Status $upstream_cache_status;
    }
  }`,
    );
  },
};
