// Server: nginx (when on PATH) as a reverse proxy, same process settings as the static nginx: location /api/
// -> the upstream with the /api prefix stripped, HTTP/1.1 to a keep-alive pool (upstream {} keepalive 64,
// more than wrk's connections), proxy buffering at its default (on).
import { nginxUnavailable, startNginx } from './nginx.mjs';

export default {
  name: 'nginx-proxy',
  groups: ['proxy'],
  unavailable: nginxUnavailable,
  async start(_dir, { upstream }) {
    const { port: upstreamPort } = await upstream();
    return startNginx(
      (port) => `  upstream bench_upstream {
    server 127.0.0.1:${upstreamPort};
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${port};
    location /api/ {
      proxy_pass http://bench_upstream/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }`,
    );
  },
};
