// What a request costs in memory under load (issue 40 §3): the heap and RSS `gatehouse serve` holds per
// request in flight, read from its own Prometheus metrics (`metrics: {}`; prom-client's default
// `nodejs_heap_size_used_bytes`, `nodejs_external_memory_bytes`, `process_resident_memory_bytes`).
//
// Two kinds of request, each held in flight N at a time for N in RM_COUNTS (default 0,250,500,1000,2000):
// - proxied: GET /api/hold/<i> through a proxy route without cache to an upstream in this process (plain
//   node:http on 127.0.0.1) that holds every request unanswered until released. Counted as in flight once
//   the upstream has all N.
// - static: GET of an RM_FILE_BYTES (default 8 MiB, more than static.maxCachedFileBytes, so streamed from
//   disk) file whose client reads the first bytes and then pauses its socket: what the server holds per
//   request is its send queue (what the kernel's socket buffers do not take). Counted once every client
//   has its first bytes.
// Each client is one raw TCP connection (`Connection: close`). Once all N are in, nothing is forced (no
// GC): 1 s of waiting, then three scrapes of /metrics 200 ms apart over fresh connections; heap used and
// external are the least of the three (garbage not collected yet only adds), RSS the median. Then the
// proxied ones are released (the upstream answers, the responses are awaited) and the static clients
// close their sockets. RM_ROUNDS (default 3) rounds at each N; the table gives the median of the rounds.
// The cost per request is (value(N) - value(0)) / N, against the idle server (N = 0: ROUNDS measures with
// nothing in flight), taken for each kind just before its counts, after a warm-up round of 50 requests of
// that kind. RSS seldom falls back after a round (the allocator keeps its pages), so the counts run in
// ascending order: RSS per request is the growth to that N (and the static kind starts from the RSS the
// proxied one left). Heap used moves by a few MB with garbage not yet collected: at small N that is more
// than the requests hold; the progress lines give every round's heap.
//
// Usage: node bench/request-memory.mjs   (RM_COUNTS=250,500; RM_ROUNDS=1; RM_FILE_BYTES=8M; RM_KINDS=proxied)
// Needs `npm run build` (dist/). The server runs on the server CPU; the clients and the upstream are this
// process.
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stopAll, tempDir } from './lib/proc.mjs';
import { startGatehouse } from './servers/gatehouse.mjs';

const MiB = 1024 * 1024;

/** A byte count, or one with a binary K/M/G suffix (8M). */
function sizeEnv(name, fallback) {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const m = /^(\d+)\s*([KMG])?(?:i?B)?$/i.exec(v.trim());
  if (m === null) throw new Error(`${name}: expected a byte count such as 8388608 or 8M, got ${v}`);
  return Number(m[1]) * { '': 1, K: 1024, M: MiB, G: 1024 * MiB }[(m[2] ?? '').toUpperCase()];
}

const COUNTS = [
  ...new Set([
    0,
    ...(process.env.RM_COUNTS ?? '0,250,500,1000,2000')
      .split(',')
      .filter((s) => s.trim() !== '')
      .map(Number),
  ]),
].sort((a, b) => a - b);
if (COUNTS.some((n) => !Number.isInteger(n) || n < 0)) throw new Error(`RM_COUNTS: ${process.env.RM_COUNTS}`);
const ROUNDS = Number(process.env.RM_ROUNDS ?? 3);
const FILE_BYTES = sizeEnv('RM_FILE_BYTES', 8 * MiB);
const KINDS = (process.env.RM_KINDS ?? 'proxied,static').split(',');
/** How long N requests may take to get in flight, and to finish once released. */
const PHASE_TIMEOUT_MS = 60_000;
/** Connections opened at once (the listen backlog is 511). */
const CONNECT_BATCH = 200;

/** The upstream: holds every request until `release()`, which answers them all. */
function holdingUpstream() {
  let held = [];
  const server = http.createServer((req, res) => {
    req.resume();
    held.push(res);
  });
  server.keepAliveTimeout = 65_000;
  return {
    server,
    get arrived() {
      return held.length;
    },
    release() {
      const all = held;
      held = [];
      for (const res of all) {
        res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '2' });
        res.end('ok');
      }
    },
    listen: () =>
      new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port))),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * One raw-socket client: sends `GET path` with Connection: close. `pause`: after the first bytes, stop
 * reading. `firstBytes` resolves on the first response bytes (with the status), `closed` when the
 * connection closes.
 */
function client(port, path, { pause }) {
  const socket = net.connect({ host: '127.0.0.1', port });
  let status;
  const c = { socket, status: () => status, error: undefined };
  c.connected = new Promise((resolve) => {
    socket.once('connect', resolve);
    socket.once('error', resolve);
  });
  c.firstBytes = new Promise((resolve) => {
    socket.once('data', (chunk) => {
      status = /^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1', 0, 16))?.[1];
      if (pause) socket.pause();
      resolve();
    });
    socket.once('close', resolve);
  });
  c.closed = new Promise((resolve) => socket.once('close', resolve));
  socket.on('error', (err) => {
    c.error = err.code ?? err.message;
  });
  socket.on('data', () => {});
  socket.once('connect', () =>
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`),
  );
  return c;
}

/** Opens `n` clients in batches of CONNECT_BATCH connections. */
async function openClients(port, n, pathOf, options) {
  const out = [];
  for (let i = 0; i < n; i += CONNECT_BATCH) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + CONNECT_BATCH); j++) batch.push(client(port, pathOf(j), options));
    await Promise.all(batch.map((c) => c.connected));
    out.push(...batch);
  }
  return out;
}

/** Polls `done()` every 20 ms until it is true; throws with `what()` after PHASE_TIMEOUT_MS. */
async function until(done, what) {
  const end = Date.now() + PHASE_TIMEOUT_MS;
  while (!done()) {
    if (Date.now() > end) throw new Error(`not within ${PHASE_TIMEOUT_MS / 1000} s: ${what()}`);
    await sleep(20);
  }
}

/** One scrape of /metrics over a fresh connection: { heap, external, rss } in bytes. */
function scrape(port) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/metrics', agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        text += c;
      });
      res.on('end', () => {
        const value = (name) => {
          const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)`, 'm').exec(text);
          if (m === null) throw new Error(`/metrics (${res.statusCode}) has no ${name}`);
          return Number(m[1]);
        };
        try {
          resolve({
            heap: value('nodejs_heap_size_used_bytes'),
            external: value('nodejs_external_memory_bytes'),
            rss: value('process_resident_memory_bytes'),
          });
        } catch (err) {
          reject(err);
        }
      });
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error('/metrics: no answer in 10 s')));
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** After 1 s, three scrapes 200 ms apart: the least heap and external, the median RSS. */
async function measure(port) {
  await sleep(1000);
  const xs = [];
  for (let i = 0; i < 3; i++) {
    if (i > 0) await sleep(200);
    xs.push(await scrape(port));
  }
  return {
    heap: Math.min(...xs.map((x) => x.heap)),
    external: Math.min(...xs.map((x) => x.external)),
    rss: median(xs.map((x) => x.rss)),
  };
}

/** One round: `n` (> 0) requests of `kind` in flight, measured, then finished. Returns the measure. */
async function round(kind, n, port, upstream) {
  if (kind === 'proxied') {
    const clients = await openClients(port, n, (i) => `/api/hold/${i}`, { pause: false });
    await until(
      () => upstream.arrived >= n,
      () => `${upstream.arrived} of ${n} proxied requests reached the upstream`,
    );
    const m = await measure(port);
    upstream.release();
    await Promise.race([
      Promise.all(clients.map((c) => c.closed)),
      sleep(PHASE_TIMEOUT_MS).then(() => {
        throw new Error(`the ${n} proxied responses did not all end within ${PHASE_TIMEOUT_MS / 1000} s`);
      }),
    ]);
    const bad = clients.filter((c) => c.status() !== '200');
    if (bad.length > 0)
      throw new Error(
        `${bad.length} of ${n} proxied requests failed (e.g. status ${bad[0].status()}, ${bad[0].error})`,
      );
    return m;
  }
  const clients = await openClients(port, n, () => '/big.bin', { pause: true });
  let started = 0;
  for (const c of clients) c.firstBytes.then(() => started++);
  await until(
    () => started >= n,
    () => `${started} of ${n} static responses started`,
  );
  const bad = clients.filter((c) => c.status() !== '200');
  if (bad.length > 0)
    throw new Error(
      `${bad.length} of ${n} static requests failed (e.g. status ${bad[0].status()}, ${bad[0].error})`,
    );
  const m = await measure(port);
  // Releasing them is closing them: reading n x the file would take the load CPU for a long while.
  for (const c of clients) c.socket.destroy();
  await Promise.all(clients.map((c) => c.closed));
  await sleep(500);
  return m;
}

const root = tempDir('gatehouse-request-memory-');
writeFileSync(join(root.path, 'big.bin'), Buffer.alloc(FILE_BYTES, 'x'));
const upstream = holdingUpstream();
const rows = [];
let atStart;
let budgetLine;
try {
  const upstreamPort = await upstream.listen();
  const h = await startGatehouse({
    root: root.path,
    config: {
      metrics: {},
      proxy: [{ prefix: '/api', upstream: `http://127.0.0.1:${upstreamPort}` }],
    },
  });
  budgetLine = /^memory budget .*$/m.exec(h.logs())?.[0];
  console.log(`request-memory: gatehouse (pid ${h.pid}); ${budgetLine ?? 'no memory budget line'}`);
  atStart = await measure(h.port);
  console.log(
    `  at start: heap ${mb(atStart.heap)}, external ${mb(atStart.external)}, RSS ${mb(atStart.rss)}`,
  );
  for (const kind of KINDS) {
    // Warm-up: one small round (code compiled, pools and buffers in use), then the idle baseline (N = 0).
    await round(kind, 50, h.port, upstream);
    const idles = [];
    for (let r = 0; r < ROUNDS; r++) idles.push(await measure(h.port));
    for (const n of COUNTS) {
      const ms = [];
      if (n === 0) ms.push(...idles);
      else for (let r = 0; r < ROUNDS; r++) ms.push(await round(kind, n, h.port, upstream));
      const row = {
        kind,
        n,
        heap: median(ms.map((m) => m.heap)),
        external: median(ms.map((m) => m.external)),
        rss: median(ms.map((m) => m.rss)),
        heaps: ms.map((m) => m.heap),
      };
      rows.push(row);
      console.log(
        `  ${kind} x ${n}: heap ${mb(row.heap)} (rounds ${row.heaps.map(mb).join(', ')}), external ${mb(row.external)}, RSS ${mb(row.rss)}`,
      );
    }
  }
  await h.stop();
} finally {
  await upstream.close();
  await stopAll();
  root.remove();
}

function mb(bytes) {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}
const perRequest = (bytes) => `${Math.round(bytes).toLocaleString('en')} B`;

console.log(
  `\nrequest-memory: ${ROUNDS} round(s) at each N, median; static file ${FILE_BYTES.toLocaleString('en')} B; Node ${process.version}`,
);
if (budgetLine) console.log(`gatehouse: ${budgetLine}`);
console.log(
  `at start (before any request): heap used ${mb(atStart.heap)}, external ${mb(atStart.external)}, RSS ${mb(atStart.rss)}; N = 0 is the idle server after a warm-up round of 50 requests of the kind\n`,
);
console.log(
  '| requests in flight | N | heap used | external | RSS | heap per request | external per request | RSS per request |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const r of rows) {
  const idle = rows.find((x) => x.kind === r.kind && x.n === 0);
  const per = (key) => (r.n === 0 ? '-' : perRequest((r[key] - idle[key]) / r.n));
  console.log(
    `| ${r.kind === 'proxied' ? 'proxied, waiting on the upstream' : 'static, client not reading'} | ${r.n.toLocaleString('en')} | ${mb(r.heap)} | ${mb(r.external)} | ${mb(r.rss)} | ${per('heap')} | ${per('external')} | ${per('rss')} |`,
  );
}
