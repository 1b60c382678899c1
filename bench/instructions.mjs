// Instructions per request of a Gatehouse server, counted by valgrind's callgrind: unlike requests/s, the
// count does not move with the load of a shared machine. Each variant serves GET /1k.txt (the bench
// fixture) to CONNECTIONS keep-alive clients, each sending its next request when the previous answer is in
// (one request per read, the common case); the server runs twice, for N and 2N requests, and stops on
// SIGTERM. Instructions per request = (I(2N) - I(N)) / N, so start-up, JIT warm-up and shutdown cancel out.
//
//   node bench/instructions.mjs [--requests N] [--connections C] [--only a,b] [--node PATH]
//
// Variants: `node-ceiling` and `node-fields` (the bench's references, bare node:http and node:http with
// this build's fields; only when named in --only, static and 304 scenarios), `baseline` (BENCH_BASELINE, default /work/wt/baseline: bin/gatehouse.js of a checkout with dist/
// built), `gate` (this checkout, `limits.maxPipelinedRequests: 16`) and `gate-off` (this checkout with
// `limits.maxPipelinedRequests: 0`). Needs `npm run build` and valgrind. Takes a few minutes.
import { spawn } from 'node:child_process';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createFixture } from './lib/fixture.mjs';
import { gatehouseFields } from './servers/node-fields.mjs';

const { values: opts } = parseArgs({
  options: {
    requests: { type: 'string', default: '2000' },
    connections: { type: 'string', default: '8' },
    only: { type: 'string' },
    // static: GET /1k.txt from the folder; 304: GET /index.html + If-None-Match; proxy: GET /api/1k through a proxy route to an upstream in this
    // process (outside valgrind); cache: GET /api/cached/1k, a hit in that route's memory cache.
    scenario: { type: 'string', default: 'static' },
    // Keep the callgrind output of the larger run in this folder (for callgrind_annotate).
    keep: { type: 'string' },
    node: { type: 'string', default: process.execPath },
    // No concurrent JIT or GC threads: their work would land in varying amounts between the two runs.
    'v8-flags': { type: 'string', default: '--single-threaded --predictable-gc-schedule' },
  },
});
const N = Number(opts.requests);
const C = Number(opts.connections);
const here = fileURLToPath(new URL('..', import.meta.url));
const baseline = process.env.BENCH_BASELINE ?? '/work/wt/baseline';

const SCENARIOS = {
  static: { path: '/1k.txt' },
  // 304: GET /index.html with the ETag the server gave it in If-None-Match.
  304: { path: '/index.html', conditional: true },
  proxy: { path: '/api/1k', cache: false },
  cache: { path: '/api/cached/1k', cache: true },
};
const scenario = SCENARIOS[opts.scenario];
if (!scenario) throw new Error(`--scenario: one of ${Object.keys(SCENARIOS).join(', ')}`);

/** The upstream of the proxy scenarios: 1 KB from memory, `/cached/*` marked cacheable for an hour. */
function startUpstream() {
  const body = Buffer.alloc(1024, 'u');
  const server = http.createServer((req, res) => {
    const cc = req.url.startsWith('/cached/') ? { 'Cache-Control': 'public, max-age=3600' } : {};
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '1024', ...cc });
    res.end(body);
  });
  server.keepAliveTimeout = 65_000;
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}
const upstream = scenario.cache === undefined ? undefined : await startUpstream();
/** The scenario's config, merged into each variant's own. */
const scenarioConfig = upstream
  ? {
      proxy: [
        {
          prefix: '/api',
          upstream: `http://127.0.0.1:${upstream.address().port}`,
          ...(scenario.cache ? { cache: { enabled: true, store: 'memory' } } : {}),
        },
      ],
    }
  : {};

const child = (file) => fileURLToPath(new URL(`children/${file}`, import.meta.url));
const variants = [
  { name: 'baseline', bin: join(baseline, 'bin/gatehouse.js') },
  // References (static and 304 only): bare node:http, and node:http with exactly this build's fields.
  { name: 'node-ceiling', script: child('node-ceiling.mjs') },
  { name: 'node-fields', script: child('node-fields.mjs'), fields: true },
  // Reference of the proxy scenario: the naive node:http + undici proxy.
  { name: 'node-proxy', script: child('node-proxy-ceiling.mjs') },
  { name: 'gate', bin: join(here, 'bin/gatehouse.js'), config: { limits: { maxPipelinedRequests: 16 } } },
  { name: 'gate-off', bin: join(here, 'bin/gatehouse.js'), config: { limits: { maxPipelinedRequests: 0 } } },
].filter((v) => (opts.only ? opts.only.split(',').includes(v.name) : !v.script));

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** `total` GETs of the scenario's path over `C` keep-alive connections, one outstanding request per connection. */
async function load(port, total) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: C });
  let sent = 0;
  const get = (headers) =>
    new Promise((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: scenario.path, agent, headers }, (res) => {
          let bytes = 0;
          res.on('data', (b) => {
            bytes += b.length;
          });
          res.on('end', () => resolve({ status: res.statusCode, bytes, etag: res.headers.etag }));
        })
        .on('error', reject);
    });
  const headers = scenario.conditional ? { 'If-None-Match': (await get({})).etag } : {};
  const [status, size] = scenario.conditional ? [304, 0] : [200, 1024];
  const one = async () => {
    const r = await get(headers);
    if (r.status !== status || r.bytes !== size) throw new Error(`bad answer: ${r.status}, ${r.bytes} bytes`);
  };
  const worker = async () => {
    while (sent < total) {
      sent++;
      await one();
    }
  };
  await Promise.all(Array.from({ length: C }, worker));
  agent.destroy();
}

/** Runs one server under callgrind for `total` requests; returns the instructions it executed. */
async function count(variant, root, total) {
  const port = await freePort();
  const out = join(root, `callgrind.${variant.name}.${total}.out`);
  const args = variant.script
    ? [variant.script, root, String(port)]
    : [variant.bin, 'serve', root, '--port', String(port), '--host', '127.0.0.1', '--log', 'off'];
  const config = { ...scenarioConfig, ...variant.config };
  if (!variant.script && Object.keys(config).length > 0) {
    const file = join(root, `${variant.name}.config.json`);
    writeFileSync(file, JSON.stringify(config));
    args.push('--config', file);
  }
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      `--callgrind-out-file=${out}`,
      opts.node,
      ...opts['v8-flags'].split(' ').filter(Boolean),
      ...args,
    ],
    {
      cwd: root,
      env: {
        ...process.env,
        NODE_ENV: 'production',
        ...(upstream ? { BENCH_UPSTREAM: `http://127.0.0.1:${upstream.address().port}` } : {}),
        ...(variant.fields
          ? {
              BENCH_FIELDS: JSON.stringify(await gatehouseFields(root)),
              BENCH_MODE: scenario.conditional ? '304' : 'ceiling',
            }
          : {}),
      },
      // stdin a pipe: the reference children exit when it ends (children/runtime.mjs).
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (b) => {
      stdout += b;
      if (stdout.includes(`listening on http://127.0.0.1:${port}`)) resolve();
    });
    child.on('exit', (code) =>
      reject(new Error(`${variant.name} exited (${code}) before listening: ${stdout}`)),
    );
  });
  await load(port, total);
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  const m = /^summary: (\d+)/m.exec(readFileSync(out, 'utf8'));
  if (opts.keep && total > N)
    copyFileSync(out, join(opts.keep, `callgrind.${opts.scenario}.${variant.name}.out`));
  rmSync(out, { force: true });
  if (!m) throw new Error(`no summary in ${out}`);
  return Number(m[1]);
}

const fixture = createFixture();
try {
  console.log(`GET ${scenario.path}, ${C} keep-alive connections, runs of ${N} and ${2 * N} requests`);
  const rows = [];
  for (const v of variants) {
    const small = await count(v, fixture.dir, N);
    const large = await count(v, fixture.dir, 2 * N);
    rows.push({ name: v.name, perRequest: Math.round((large - small) / N) });
    console.log(`${v.name.padEnd(9)} ${String(rows.at(-1).perRequest).padStart(9)} instructions/request`);
  }
  const base = rows.find((r) => r.name === 'baseline');
  if (base) {
    for (const r of rows)
      console.log(`${r.name.padEnd(9)} ${(r.perRequest / base.perRequest).toFixed(3)} x baseline`);
  }
} finally {
  fixture.cleanup();
  upstream?.close();
}
