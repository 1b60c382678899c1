// The soak row (issue 40): one server under a few minutes of mixed load, its RSS sampled every second and
// printed against the memory its config bounds, beside nginx with `proxy_cache` under the same HTTP load.
//
// The load, all at once, for SOAK_SEC (default 180) seconds:
// - static: wrk on /1k.txt of the bench fixture;
// - proxied: wrk on /api/cached/1k?...; three quarters of them over 1,000 URLs (hits), a quarter over
//   200,000 (misses), so the shared cache fills to its bound and evicts; the upstream marks every one
//   `public, max-age=3600` (children/upstream.mjs);
// - WebSocket (Gatehouse only: nginx has no echo endpoint): connect, one echo, close, SOAK_WS at a time.
// Gatehouse runs `gatehouse serve` with its defaults: a file view of 64 MiB and a memory cache of 64 MiB on
// the proxy route. The bar of the issue: RSS within twice those bounds plus 100 MB for the whole run.
//
// Usage: node bench/soak.mjs   (SOAK_SEC=60 for a short look; SOAK_SERVERS=gatehouse to skip nginx;
//        SOAK_NODE_ARGS='--max-old-space-size=96' for Gatehouse's node)
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { createFixture, FIXTURE } from './lib/fixture.mjs';
import { CPU, pinned, stopAll, tempDir } from './lib/proc.mjs';
import { readRssKb } from './lib/rss.mjs';
import { parseWrkOutput } from './lib/wrk.mjs';
import { startGatehouse } from './servers/gatehouse.mjs';
import { nginxUnavailable, startNginx } from './servers/nginx.mjs';
import { createUpstream } from './servers/upstream.mjs';

const MiB = 1024 * 1024;
const SOAK_SEC = Number(process.env.SOAK_SEC ?? 180);
const WS_AT_ONCE = Number(process.env.SOAK_WS ?? 8);
const SERVERS = (process.env.SOAK_SERVERS ?? 'gatehouse,nginx-cache').split(',');
/** Node flags for Gatehouse's process (e.g. --max-old-space-size=96), to compare heap limits by hand. */
const NODE_ARGS = (process.env.SOAK_NODE_ARGS ?? '').split(' ').filter(Boolean);
/** The bounds Gatehouse's defaults promise: the file view and the proxy route's memory cache. */
const BOUNDS_BYTES = 64 * MiB + 64 * MiB;
const BAR_BYTES = 2 * BOUNDS_BYTES + 100 * 1e6;

const WRK_PROXY_SCRIPT = `
local n = 0
request = function()
  n = n + 1
  if math.random() < 0.25 then
    return wrk.format("GET", "/api/cached/1k?miss=" .. math.random(200000))
  end
  return wrk.format("GET", "/api/cached/1k?hit=" .. math.random(1000))
end
`;

/** wrk for `sec` seconds on `path` (or with `script`), pinned to the load CPU; resolves with its summary. */
function wrk(port, path, sec, connections, script) {
  const args = ['-t1', `-c${connections}`, `-d${sec}s`, '--timeout', '5s'];
  if (script) args.push('-s', script);
  args.push(`http://127.0.0.1:${port}${path}`);
  const [file, argv] = pinned(CPU.load, 'wrk', args);
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
    });
    child.stderr.on('data', (c) => {
      out += c;
    });
    child.once('error', reject);
    child.once('exit', () => {
      const r = parseWrkOutput(out);
      if (r === undefined) reject(new Error(`wrk: ${out.trim().slice(-200)}`));
      else resolve(r);
    });
  });
}

/** WebSocket connect-echo-close cycles, `atOnce` in parallel, until `untilMs`: { cycles, failures }. */
async function wsCycles(port, atOnce, untilMs) {
  let cycles = 0;
  let failures = 0;
  const one = () =>
    new Promise((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { perMessageDeflate: false });
      const timer = setTimeout(() => {
        failures++;
        ws.terminate();
        resolve();
      }, 5000);
      ws.once('open', () => ws.send('soak'));
      ws.once('message', () => {
        clearTimeout(timer);
        cycles++;
        ws.close();
        resolve();
      });
      ws.once('error', () => {
        clearTimeout(timer);
        failures++;
        resolve();
      });
    });
  await Promise.all(
    Array.from({ length: atOnce }, async () => {
      while (Date.now() < untilMs) await one();
    }),
  );
  return { cycles, failures };
}

/** Samples `pid`'s RSS every second while `running` resolves; returns the samples in bytes. */
function sampleEverySecond(pid) {
  const samples = [];
  const take = () => {
    const kb = readRssKb(pid);
    if (kb !== undefined) samples.push(kb * 1024);
  };
  take();
  const timer = setInterval(take, 1000);
  return () => {
    clearInterval(timer);
    take();
    return samples;
  };
}

const mb = (bytes) => `${(bytes / 1e6).toFixed(0)} MB`;

async function soak(name, handle, { ws }) {
  const stop = sampleEverySecond(handle.pid);
  const untilMs = Date.now() + SOAK_SEC * 1000;
  const scriptDir = tempDir('gatehouse-soak-');
  const script = join(scriptDir.path, 'proxy.lua');
  writeFileSync(script, WRK_PROXY_SCRIPT);
  const [stat, proxied, sockets] = await Promise.all([
    wrk(handle.port, FIXTURE.small.path, SOAK_SEC, 32),
    wrk(handle.port, '/api/cached/1k', SOAK_SEC, 32, script),
    ws ? wsCycles(handle.port, WS_AT_ONCE, untilMs) : Promise.resolve(undefined),
  ]);
  scriptDir.remove();
  const samples = stop();
  const third = samples.slice(Math.floor((samples.length * 2) / 3));
  const row = {
    name,
    static: stat.requests,
    proxied: proxied.requests,
    failed:
      stat.non2xx3xx +
      proxied.non2xx3xx +
      Object.values(stat.socketErrors).reduce((a, b) => a + b, 0) +
      Object.values(proxied.socketErrors).reduce((a, b) => a + b, 0) +
      (sockets?.failures ?? 0),
    ws: sockets?.cycles,
    startRss: samples[0],
    at60: samples[60],
    at180: samples[180],
    plateauRss: Math.max(...third),
    peakRss: Math.max(...samples),
  };
  return row;
}

const fixture = createFixture();
const upstream = createUpstream({ dir: fixture.dir, log: console.log });
const rows = [];
try {
  const { url } = await upstream.get();
  if (SERVERS.includes('gatehouse')) {
    const h = await startGatehouse({
      root: fixture.dir,
      ...(NODE_ARGS.length > 0 && { runtime: { bin: process.execPath, args: NODE_ARGS, comm: 'node' } }),
      config: {
        proxy: [{ prefix: '/api', upstream: url, cache: { enabled: true } }],
        websocket: [{ path: '/ws', mode: 'echo' }],
      },
    });
    console.log(`soak: gatehouse (pid ${h.pid}) for ${SOAK_SEC} s...`);
    rows.push(await soak('gatehouse', h, { ws: true }));
    await h.stop();
  }
  const nginxMissing = nginxUnavailable();
  if (SERVERS.includes('nginx-cache') && !nginxMissing) {
    const upstreamPort = new URL(url).port;
    const h = await startNginx(
      (port, prefix) => `  proxy_cache_path ${join(prefix, 'cache')} keys_zone=soak:10m max_size=64m;
  upstream soak_upstream {
    server 127.0.0.1:${upstreamPort};
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${port};
    root ${fixture.dir};
    location /api/ {
      proxy_pass http://soak_upstream/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_cache soak;
    }
  }`,
    );
    console.log(`soak: nginx-cache (pid ${h.pid}) for ${SOAK_SEC} s...`);
    rows.push(await soak('nginx-cache', h, { ws: false }));
    await h.stop();
  } else if (SERVERS.includes('nginx-cache')) console.log(`soak: nginx-cache skipped: ${nginxMissing}`);
} finally {
  await upstream.stop();
  await stopAll();
  fixture.cleanup();
}

console.log(
  `\nsoak: ${SOAK_SEC} s of mixed load; bounds of Gatehouse's defaults ${mb(BOUNDS_BYTES)} (file view 64 MiB + proxy cache 64 MiB), the issue's bar ${mb(BAR_BYTES)} (2x bounds + 100 MB)\n`,
);
console.log(
  '| server | static | proxied | WebSocket cycles | failed | RSS at start | at 60 s | at 180 s | plateau (last third) | peak | within the bar |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
for (const r of rows) {
  const cell = (v) => (v === undefined ? '-' : mb(v));
  console.log(
    `| ${r.name} | ${r.static.toLocaleString('en')} | ${r.proxied.toLocaleString('en')} | ${r.ws?.toLocaleString('en') ?? '-'} | ${r.failed} | ${cell(r.startRss)} | ${cell(r.at60)} | ${cell(r.at180)} | ${cell(r.plateauRss)} | ${cell(r.peakRss)} | ${r.name === 'gatehouse' ? (r.peakRss <= BAR_BYTES ? 'yes' : 'NO') : '-'} |`,
  );
}
