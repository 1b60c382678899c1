// The HTTPS bench's servers (bench/https.mjs), all pinned to the server CPU and serving the run's one
// certificate (lib/tls-cert.mjs): Gatehouse with `tls: { cert, key }` (HTTP/2 and HTTP/1.1 by ALPN on
// one port), the Node ceilings (children/node-tls-ceiling.mjs: bare node:https for the HTTP/1.1 rows,
// node:http2 createSecureServer for the HTTP/2 row) and nginx (`listen ... ssl` + HTTP/2). Each
// `start(dir, tls)` gets the fixture dir and the certificate files.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startServerProcess } from '../lib/proc.mjs';
import { currentBuild, startGatehouse, unavailableFor } from './gatehouse.mjs';
import { nginxUnavailable, startNginx } from './nginx.mjs';

function startCeiling(mode, dir, tls, fields = 'minimal') {
  return startServerProcess({
    cmd: process.execPath,
    args: [fileURLToPath(new URL('../children/node-tls-ceiling.mjs', import.meta.url)), dir],
    env: {
      NODE_ENV: 'production',
      BENCH_TLS_MODE: mode,
      BENCH_TLS_CERT: tls.cert,
      BENCH_TLS_KEY: tls.key,
      BENCH_TLS_FIELDS: fields,
    },
    readyLine: /listening on https:\/\/127\.0\.0\.1:(\d+)/,
    expectComm: 'node',
  });
}

/** nginx >= 1.25.1 turns HTTP/2 on with `http2 on;`; older ones (Debian bookworm's 1.22) on `listen`. */
function nginxHttp2Syntax() {
  const res = spawnSync('nginx', ['-v'], { encoding: 'utf8' });
  const [major, minor, patch] = (/nginx\/(\d+)\.(\d+)\.(\d+)/.exec(res.stderr ?? '') ?? [])
    .slice(1)
    .map(Number);
  const newer = major > 1 || (major === 1 && (minor > 25 || (minor === 25 && patch >= 1)));
  return newer ? { listen: 'ssl', directive: '\n    http2 on;' } : { listen: 'ssl http2', directive: '' };
}

export const httpsServers = [
  {
    name: 'gatehouse',
    unavailable: unavailableFor(currentBuild),
    start: (dir, tls) =>
      startGatehouse({ root: dir, config: { tls: { cert: tls.cert, key: tls.key } }, scheme: 'https' }),
  },
  { name: 'node-https', reference: true, start: (dir, tls) => startCeiling('https', dir, tls) },
  { name: 'node-http2', reference: true, start: (dir, tls) => startCeiling('h2', dir, tls) },
  // The same servers sending Gatehouse's fields for 1k.txt: not a target, the part of the gap the
  // fields themselves cost in Node (header validation and encoding, HPACK, more bytes to encrypt).
  {
    name: 'node-https-fields',
    reference: true,
    start: (dir, tls) => startCeiling('https', dir, tls, 'gatehouse'),
  },
  {
    name: 'node-http2-fields',
    reference: true,
    start: (dir, tls) => startCeiling('h2', dir, tls, 'gatehouse'),
  },
  {
    name: 'nginx',
    unavailable: nginxUnavailable,
    start: (dir, tls) => {
      const h2 = nginxHttp2Syntax();
      // Its defaults otherwise (protocols, ciphers, session tickets on), like the Node servers'.
      return startNginx(
        (port) => `  server {
    listen 127.0.0.1:${port} ${h2.listen};${h2.directive}
    ssl_certificate ${tls.cert};
    ssl_certificate_key ${tls.key};
    root ${dir};
  }`,
      );
    },
  },
];
