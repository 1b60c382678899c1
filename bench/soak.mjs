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
// the proxy route. The bar of the issue: RSS within twice those bounds plus 100 MB for the whole run. The
// bounds are computed from the config actually run (this checkout's dist/config: memoryBounds), so a config
// that raises them raises the bar. The memory budget line `gatehouse serve` prints at start is printed too,
// and each serving process's peak is compared with that budget.
//
// The RSS is that of the server's whole process tree (/proc/<pid>/task/*/children): with --workers, the
// primary and each worker are also reported on their own, each worker against its budget (the start-up
// line's `per worker (N)`) and against the bar, which is per serving process. A worker that dies and is
// replaced shows as one more worker.
//
// Usage: node bench/soak.mjs   (SOAK_SEC=60 for a short look; SOAK_SERVERS=gatehouse to skip nginx)
//   SOAK_NODE_ARGS='--max-old-space-size=96'  Node flags for Gatehouse's node (on a Node before 22.15, which
//                                             cannot restart in place, the budget's heap flags by default)
//   SOAK_ARGS='--workers 2 --memory 600M'     more arguments for `gatehouse serve`
//   SOAK_CONFIG=file.json                     a config merged over the soak's (objects deeply, arrays
//                                             replaced); its proxy route with prefix /api, if any, is
//                                             merged into the soak's /api route (the upstream stays the
//                                             soak's), other routes are added; a /ws echo is kept
//   SOAK_STATIC_BYTES=N, SOAK_CACHE_BYTES=N   static.memoryCacheBytes and the /api route's cache
//                                             maxSizeBytes (and nginx's max_size), over SOAK_CONFIG
//   SOAK_CGROUP_MAX=N                         a container of N bytes: a temp folder with `memory.max`
//                                             holding N, as GATEHOUSE_CGROUP_ROOT
// Sizes take a K, M or G suffix (binary: 400M is 400 MiB). With --workers the workers share the server CPU.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { createFixture, FIXTURE } from './lib/fixture.mjs';
import { CPU, pinned, stopAll, tempDir } from './lib/proc.mjs';
import { readTreeRssKb } from './lib/rss.mjs';
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
/** More arguments for `gatehouse serve` (--workers 2, --memory 600M). */
const SERVE_ARGS = (process.env.SOAK_ARGS ?? '').split(' ').filter(Boolean);
const CONFIG_FILE = process.env.SOAK_CONFIG || undefined;

/** A byte count, or one with a binary K/M/G suffix (400M); undefined when `name` is unset. */
function sizeEnv(name) {
  const v = process.env[name];
  if (v === undefined || v === '') return undefined;
  const m = /^(\d+)\s*([KMG])?(?:i?B)?$/i.exec(v.trim());
  if (m === null) throw new Error(`${name}: expected a byte count such as 400000000 or 400M, got ${v}`);
  return Number(m[1]) * { '': 1, K: 1024, M: MiB, G: 1024 * MiB }[(m[2] ?? '').toUpperCase()];
}
const STATIC_BYTES = sizeEnv('SOAK_STATIC_BYTES');
const CACHE_BYTES = sizeEnv('SOAK_CACHE_BYTES');
const CGROUP_MAX = sizeEnv('SOAK_CGROUP_MAX');

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

/**
 * Samples the RSS of `pid`'s process tree every second until the returned `stop()`, which gives one Map
 * (pid -> bytes) a second; sample i is taken about i seconds after the start.
 */
function sampleEverySecond(pid) {
  const samples = [];
  const take = () => {
    const kb = readTreeRssKb(pid);
    if (kb.size > 0) samples.push(new Map([...kb].map(([p, k]) => [p, k * 1024])));
  };
  take();
  const timer = setInterval(take, 1000);
  return () => {
    clearInterval(timer);
    take();
    return samples;
  };
}

/** RSS at start, at 60 s and 180 s, the plateau (highest of the last third) and the peak of a series. */
function summary(series) {
  const present = series.filter((v) => v !== undefined);
  const third = series.slice(Math.floor((series.length * 2) / 3)).filter((v) => v !== undefined);
  return {
    startRss: present[0],
    at60: series[60],
    at180: series[180],
    plateauRss: third.length > 0 ? Math.max(...third) : undefined,
    peakRss: present.length > 0 ? Math.max(...present) : undefined,
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
  const total = samples.map((m) => [...m.values()].reduce((a, b) => a + b, 0));
  // Each process of the tree on its own: the root (a cluster primary, or the only process), then the
  // others in the order they were first seen (workers; a replaced worker is a new one).
  const pids = [];
  for (const m of samples) for (const p of m.keys()) if (!pids.includes(p)) pids.push(p);
  const processes = pids.map((pid) => ({ pid, ...summary(samples.map((m) => m.get(pid))) }));
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
    ...summary(total),
    processes,
  };
  return row;
}

const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Deep merge of plain objects; arrays and scalars from `over` replace those in `base` (as the CLI's). */
const merge = (base, over) => {
  if (!isObject(base) || !isObject(over)) return over === undefined ? base : over;
  const out = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = merge(base[k], v);
  return out;
};

/**
 * Gatehouse's config for the soak: the /api proxy route to `url` with a memory cache and the /ws echo,
 * with SOAK_CONFIG merged over it and SOAK_STATIC_BYTES / SOAK_CACHE_BYTES over that.
 */
function soakConfig(url) {
  const user = CONFIG_FILE === undefined ? {} : JSON.parse(readFileSync(CONFIG_FILE, 'utf8'));
  if (!isObject(user)) throw new Error(`${CONFIG_FILE}: the config must be a JSON object`);
  const { proxy: userRoutes = [], websocket: userWs, ...rest } = user;
  let route = merge(
    { prefix: '/api', upstream: url, cache: { enabled: true } },
    userRoutes.find((r) => r.prefix === '/api') ?? {},
  );
  route = { ...route, prefix: '/api', upstream: url };
  delete route.upstreams;
  if (CACHE_BYTES !== undefined) {
    route.cache = { ...route.cache, maxSizeBytes: CACHE_BYTES };
    // maxEntryBytes (default 8 MiB) must not exceed the bound.
    if ((route.cache.maxEntryBytes ?? 8 * MiB) > CACHE_BYTES) route.cache.maxEntryBytes = CACHE_BYTES;
  }
  const websocket = userWs ?? [];
  const config = {
    ...rest,
    proxy: [route, ...userRoutes.filter((r) => r.prefix !== '/api')],
    websocket: websocket.some((w) => w.path === '/ws')
      ? websocket
      : [...websocket, { path: '/ws', mode: 'echo' }],
  };
  if (STATIC_BYTES !== undefined) config.static = { ...config.static, memoryCacheBytes: STATIC_BYTES };
  return config;
}

/** The bounds `config` sets on a serving process, as `gatehouse serve` counts them (dist/config). */
async function boundsOf(config) {
  const { parseConfig } = await import('../dist/config/load.js');
  const { memoryBounds } = await import('../dist/config/memory.js');
  return memoryBounds(parseConfig(config, 'the soak config'));
}

/**
 * On a Node that cannot restart itself in place (before 22.15), the heap flags `gatehouse serve` prints for
 * it, as docs/deploy.md tells an operator to pass them; none where it applies them itself, with workers
 * (node:cluster starts them with the flags), with --memory, or with SOAK_NODE_ARGS.
 */
async function operatorFlags(config, cgroupRoot) {
  if (typeof process.execve === 'function' || NODE_ARGS.length > 0) return [];
  if (SERVE_ARGS.some((a) => a === '--workers' || a === '--memory')) return [];
  const { parseConfig } = await import('../dist/config/load.js');
  const { budgetOf, heapFlags } = await import('../dist/cli/memory.js');
  const before = process.env.GATEHOUSE_CGROUP_ROOT;
  if (cgroupRoot !== undefined) process.env.GATEHOUSE_CGROUP_ROOT = cgroupRoot;
  try {
    const b = budgetOf(parseConfig(config, 'the soak config'), 1);
    return 'error' in b ? [] : heapFlags(b);
  } finally {
    if (before === undefined) delete process.env.GATEHOUSE_CGROUP_ROOT;
    else process.env.GATEHOUSE_CGROUP_ROOT = before;
  }
}

/** The start-up line `memory budget N MiB[ per worker (W)], ...` from the server's output. */
function budgetOfLogs(logs) {
  const line = /^memory budget .*$/m.exec(logs)?.[0];
  const m = line && /^memory budget (\d+) MiB(?: per worker \((\d+)\))?/.exec(line);
  return line === undefined
    ? undefined
    : { line, bytes: m ? Number(m[1]) * MiB : undefined, workers: m?.[2] ? Number(m[2]) : 1 };
}

const fixture = createFixture();
const upstream = createUpstream({ dir: fixture.dir, log: console.log });
const rows = [];
let bounds;
let budget;
let cgroup;
try {
  const { url } = await upstream.get();
  const config = soakConfig(url);
  if (SERVERS.includes('gatehouse')) {
    bounds = await boundsOf(config);
    if (CGROUP_MAX !== undefined) {
      cgroup = tempDir('gatehouse-soak-cgroup-');
      writeFileSync(join(cgroup.path, 'memory.max'), `${CGROUP_MAX}\n`);
    }
    const nodeArgs = NODE_ARGS.length > 0 ? NODE_ARGS : await operatorFlags(config, cgroup?.path);
    if (nodeArgs !== NODE_ARGS && nodeArgs.length > 0)
      console.log(
        `soak: Node ${process.version} cannot restart in place: gatehouse started with ${nodeArgs.join(' ')}`,
      );
    const h = await startGatehouse({
      root: fixture.dir,
      ...(nodeArgs.length > 0 && { runtime: { bin: process.execPath, args: nodeArgs, comm: 'node' } }),
      extraArgs: SERVE_ARGS,
      config,
      ...(cgroup && { env: { GATEHOUSE_CGROUP_ROOT: cgroup.path } }),
    });
    budget = budgetOfLogs(h.logs());
    console.log(`soak: gatehouse (pid ${h.pid}) for ${SOAK_SEC} s...`);
    console.log(`  ${budget?.line ?? 'no memory budget line in its output'}`);
    rows.push(await soak('gatehouse', h, { ws: true }));
    await h.stop();
  }
  const nginxMissing = nginxUnavailable();
  if (SERVERS.includes('nginx-cache') && !nginxMissing) {
    const upstreamPort = new URL(url).port;
    const cacheBytes = config.proxy[0].cache.maxSizeBytes;
    const maxSize = cacheBytes === undefined ? '64m' : `${Math.ceil(cacheBytes / 1024)}k`;
    const h = await startNginx(
      (port, prefix) => `  proxy_cache_path ${join(prefix, 'cache')} keys_zone=soak:10m max_size=${maxSize};
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
  cgroup?.remove();
  fixture.cleanup();
}

const mib = (bytes) => `${Math.floor(bytes / MiB)} MiB`;
const boundsBytes = bounds?.reduce((n, b) => n + b.bytes, 0);
/** The issue's bar, for each serving process: twice its bounds plus 100 MB. */
const barBytes = boundsBytes === undefined ? undefined : 2 * boundsBytes + 100 * 1e6;
const withinBar = (bytes) => (bytes <= barBytes ? 'yes' : 'NO');
const extras = [
  SERVE_ARGS.length > 0 && `args ${SERVE_ARGS.join(' ')}`,
  CONFIG_FILE && `config ${CONFIG_FILE}`,
  CGROUP_MAX !== undefined && `a container of ${mb(CGROUP_MAX)} (memory.max ${CGROUP_MAX})`,
].filter(Boolean);

console.log(
  `\nsoak: ${SOAK_SEC} s of mixed load${extras.length > 0 ? `; Gatehouse with ${extras.join(', ')}` : ''}`,
);
if (bounds !== undefined)
  console.log(
    `gatehouse: bounds of its config ${mb(boundsBytes)} (${bounds.map((b) => `${b.key} ${mib(b.bytes)}`).join(' + ')}), the issue's bar ${mb(barBytes)} (2x bounds + 100 MB) for each serving process`,
  );
if (budget !== undefined) console.log(`gatehouse: ${budget.line}`);
console.log(
  '\n| server | static | proxied | WebSocket cycles | failed | RSS at start | at 60 s | at 180 s | plateau (last third) | peak | within the bar |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
const cell = (v) => (v === undefined ? '-' : mb(v));
for (const r of rows) {
  const serving = r.processes.length > 1 ? r.processes.slice(1) : r.processes;
  const bar =
    r.name !== 'gatehouse'
      ? '-'
      : r.processes.length > 1
        ? `${serving.every((p) => p.peakRss <= barBytes) ? 'yes' : 'NO'}, each worker (below)`
        : withinBar(r.peakRss);
  console.log(
    `| ${r.name}${r.processes.length > 1 ? `, all ${r.processes.length} processes` : ''} | ${r.static.toLocaleString('en')} | ${r.proxied.toLocaleString('en')} | ${r.ws?.toLocaleString('en') ?? '-'} | ${r.failed} | ${cell(r.startRss)} | ${cell(r.at60)} | ${cell(r.at180)} | ${cell(r.plateauRss)} | ${cell(r.peakRss)} | ${bar} |`,
  );
}

const g = rows.find((r) => r.name === 'gatehouse');
const budgetBytes = budget?.bytes;
const withinBudget = (bytes) => (budgetBytes === undefined ? '-' : bytes <= budgetBytes ? 'yes' : 'NO');
if (g !== undefined && g.processes.length > 1) {
  // The primary serves nothing and holds none of the bounds: no budget, no bar of its own.
  const workers = g.processes.length - 1;
  console.log(
    `\ngatehouse, each process (${workers} worker${workers === 1 ? '' : 's'} seen${budget && workers > budget.workers ? `: ${workers - budget.workers} replaced a dead one` : ''}); budget ${budgetBytes === undefined ? '-' : `${mb(budgetBytes)} (${mib(budgetBytes)})`} per worker, bar ${mb(barBytes)}\n`,
  );
  console.log(
    '| process | pid | RSS at start | at 60 s | at 180 s | plateau (last third) | peak | within its budget | within the bar |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |');
  g.processes.forEach((p, i) => {
    const serving = i > 0;
    console.log(
      `| ${serving ? `worker ${i}` : 'primary'} | ${p.pid} | ${cell(p.startRss)} | ${cell(p.at60)} | ${cell(p.at180)} | ${cell(p.plateauRss)} | ${cell(p.peakRss)} | ${serving ? withinBudget(p.peakRss) : '-'} | ${serving ? withinBar(p.peakRss) : '-'} |`,
    );
  });
} else if (g !== undefined && budgetBytes !== undefined) {
  console.log(
    `\ngatehouse: peak ${mb(g.peakRss)} against its budget ${mb(budgetBytes)} (${mib(budgetBytes)}): ${withinBudget(g.peakRss) === 'yes' ? 'within' : 'OVER'}`,
  );
}
if (g !== undefined && CGROUP_MAX !== undefined)
  console.log(
    `gatehouse: all its processes together peaked at ${mb(g.peakRss)} in a container of ${mb(CGROUP_MAX)}: ${g.peakRss <= CGROUP_MAX ? 'within' : 'OVER'}`,
  );
