// The HTTPS bench's servers (bench/https.mjs), all pinned to the server CPU and serving the run's one
// certificate (lib/tls-cert.mjs): Gatehouse with `tls: { cert, key }` (HTTP/2 and HTTP/1.1 by ALPN on
// one port), the Node ceilings (children/node-tls-ceiling.mjs: bare node:https for the HTTP/1.1 rows,
// node:http2 createSecureServer for the HTTP/2 row) and nginx (`listen ... ssl` + HTTP/2). Each
// `start(dir, tls)` gets the fixture dir and the certificate files. The tls-resumed row's pairs
// (gatehouse-pair, nginx-pair) share one 80-byte session ticket key file and report `ports` (two)
// and `pids` (the processes whose CPU time counts).
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { baselineBuild } from '../lib/baseline.mjs';
import { freePort, startServerProcess, tempDir } from '../lib/proc.mjs';
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

/** A fresh 80-byte ticket key file (mode 0600): nginx's ssl_session_ticket_key format, and a valid
 *  tls.sessionTickets.keyFile. */
function ticketKeyFile() {
  const tmp = tempDir('gatehouse-bench-ticket-key-');
  const file = join(tmp.path, 'ticket.key');
  writeFileSync(file, randomBytes(80), { mode: 0o600 });
  return { file, remove: tmp.remove };
}

/** Two Gatehouse processes (both on the server CPU) sharing one ticket key file. */
async function startGatehousePair(dir, tls) {
  const key = ticketKeyFile();
  const config = { tls: { cert: tls.cert, key: tls.key, sessionTickets: { keyFile: key.file } } };
  const started = [];
  try {
    for (let i = 0; i < 2; i++) started.push(await startGatehouse({ root: dir, config, scheme: 'https' }));
  } catch (err) {
    await Promise.all(started.map((h) => h.stop()));
    key.remove();
    throw err;
  }
  const [a, b] = started;
  return {
    pid: a.pid,
    pids: [a.pid, b.pid],
    port: a.port,
    ports: [a.port, b.port],
    child: a.child,
    children: [a.child, b.child],
    cpus: a.cpus,
    logs: () => started.map((h) => h.logs()).join('\n'),
    async stop() {
      await Promise.all(started.map((h) => h.stop()));
      key.remove();
    },
  };
}

/** One nginx with two server blocks (two ports) sharing one ssl_session_ticket_key file. */
async function startNginxPair(dir, tls) {
  const key = ticketKeyFile();
  const h2 = nginxHttp2Syntax();
  const second = await freePort();
  const block = (port) => `  server {
    listen 127.0.0.1:${port} ${h2.listen};${h2.directive}
    ssl_certificate ${tls.cert};
    ssl_certificate_key ${tls.key};
    ssl_session_ticket_key ${key.file};
    root ${dir};
  }`;
  let handle;
  try {
    handle = await startNginx((port) => `${block(port)}\n${block(second)}`);
  } catch (err) {
    key.remove();
    throw err;
  }
  return {
    ...handle,
    pids: [handle.pid],
    ports: [handle.port, second],
    async stop() {
      await handle.stop();
      key.remove();
    },
  };
}

/** `gatehouse` (this build) or, with BENCH_BASELINE, `gatehouse-baseline`: same config, same certificate. */
const gatehouseOver = (build) => ({
  name: `gatehouse${build.suffix}`,
  unavailable: unavailableFor(build),
  start: (dir, tls) =>
    startGatehouse({ build, root: dir, config: { tls: { cert: tls.cert, key: tls.key } }, scheme: 'https' }),
});

export const httpsServers = [
  gatehouseOver(currentBuild),
  // The "no regression" twin over TLS (run with BENCH_BASELINE, like npm run bench's).
  ...(baselineBuild ? [gatehouseOver(baselineBuild)] : []),
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
    name: 'gatehouse-pair',
    unavailable: unavailableFor(currentBuild),
    start: startGatehousePair,
  },
  { name: 'nginx-pair', unavailable: nginxUnavailable, start: startNginxPair },
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
