#!/usr/bin/env node
import { fork } from 'node:child_process';
// Client fetch bench (issue 14 §4): a cached 1 KB GET through createCachingFetch (a memory hit) against a
// bare fetch to a local origin and against undici's cache interceptor, plus a disk-tier hit, measured side
// by side in ONE run: the four clients share this process, the origin (bare node:http) runs in a child
// process, so a bare fetch is not charged for the server's work. Clients are interleaved round by
// round (the order rotates: ABCD, BCDA, CDAB, ...), so machine noise hits every client alike. Reports the median ops/s of each and the median (and range) of
// the per-round ratios. Targets: caching-fetch >= 5x bare fetch and >= 1.5x undici-cache (on hits).
//
//   npm run build && node bench/client-fetch.mjs [--json]
//   BENCH_ROUNDS=7 (>= 5 used) BENCH_REQUESTS=2000 (sequential requests per client per round)
//   BENCH_CONCURRENCY=10 (a second pass with that many requests in flight; 0 or 1 turns it off)
//
// Prints, never fails on a target (exit 0 met or MISSED, like bench/run.mjs); exits 2 when dist/ is missing
// and 1 when a correctness check fails before timing (a cache that does not hit).
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Agent, cacheStores, interceptors, fetch as undiciFetch } from 'undici';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLIENT_ENTRY = resolve(REPO, 'dist/client/index.js');
const MAIN_ENTRY = resolve(REPO, 'dist/index.js');
const log = (msg) => process.stderr.write(`${msg}\n`);

/** Ratio targets on sequential hits (issue 14 §4). */
const TARGETS = [
  { subject: 'caching-fetch', peer: 'bare-fetch', min: 5 },
  { subject: 'caching-fetch', peer: 'undici-cache', min: 1.5 },
];

function envInt(name, fallback, min) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) {
    log(`client-fetch: ${name} must be an integer >= ${min}, got '${raw}'`);
    process.exit(2);
  }
  return n;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** The origin (in a child process): 1 KB, fresh for an hour, with an ETag; counts the requests it answers. */
async function serveOrigin() {
  const body = Buffer.alloc(1024, 'x');
  let count = 0;
  const server = createServer((req, res) => {
    count++;
    if (req.headers['if-none-match'] === '"1k"') {
      res.writeHead(304, { ETag: '"1k"', 'Cache-Control': 'max-age=3600' }).end();
      return;
    }
    res.writeHead(200, {
      'Content-Type': 'text/plain',
      'Content-Length': body.length,
      'Cache-Control': 'max-age=3600',
      ETag: '"1k"',
    });
    res.end(body);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  process.on('message', (m) => {
    if (m === 'count') process.send({ count });
  });
  process.on('disconnect', () => process.exit(0));
  process.send({ port: server.address().port });
}

/** Starts the origin child; `origin.count()` asks it how many requests it has answered. */
async function startOrigin() {
  const child = fork(fileURLToPath(import.meta.url), [], {
    env: { ...process.env, BENCH_CLIENT_FETCH_ORIGIN: '1' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let pending = null; // one IPC question at a time
  child.on('message', (m) => pending?.ok(m));
  child.on('exit', (code) => pending?.fail(new Error(`origin exited (${code})`)));
  const next = () => new Promise((ok, fail) => (pending = { ok, fail }));
  const { port } = await next();
  return {
    url: `http://127.0.0.1:${port}/1k`,
    count: async () => {
      const reply = next();
      child.send('count');
      return (await reply).count;
    },
    close: () => {
      pending = null;
      child.kill();
    },
  };
}

/** One request, body read fully; returns the response for checks. */
async function once(client, url) {
  const res = await client.fetch(url);
  const buf = await res.arrayBuffer();
  if (res.status !== 200 || buf.byteLength !== 1024)
    throw new Error(`${client.name}: status ${res.status}, ${buf.byteLength} bytes`);
  return res;
}

/** `count` requests, `concurrency` in flight at once; returns ops/s. */
async function timed(client, url, count, concurrency) {
  let left = count;
  const worker = async () => {
    while (left-- > 0) await once(client, url);
  };
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const sec = Number(process.hrtime.bigint() - t0) / 1e9;
  return count / sec;
}

async function makeClients(diskDir) {
  const { createCachingFetch } = await import(pathToFileURL(CLIENT_ENTRY).href);
  const { diskTier } = await import(pathToFileURL(MAIN_ENTRY).href);
  const memory = createCachingFetch();
  const disk = await diskTier(diskDir);
  // maxMemoryBytes 0 keeps nothing in memory, so every hit is read from the disk tier.
  const onDisk = createCachingFetch({ stores: [disk], maxMemoryBytes: 0 });
  const dispatcher = new Agent().compose(
    interceptors.cache({ store: new cacheStores.MemoryCacheStore(), type: 'private' }),
  );
  return {
    disk,
    dispatcher,
    clients: [
      { name: 'caching-fetch', fetch: memory, cached: true, stats: memory.stats },
      { name: 'bare-fetch', fetch: (u) => fetch(u), cached: false },
      { name: 'undici-cache', fetch: (u) => undiciFetch(u, { dispatcher }), cached: true },
      { name: 'caching-fetch-disk', fetch: onDisk, cached: true, stats: onDisk.stats },
    ],
  };
}

/** Warm-up and the checks before timing: the caches must hit and leave the origin alone. */
async function verify(clients, origin, warmup) {
  for (const c of clients) {
    for (let i = 0; i < warmup; i++) await once(c, origin.url);
    const before = await origin.count();
    const res = await once(c, origin.url);
    const hitsOrigin = (await origin.count()) !== before;
    c.ok = true;
    if (c.name.startsWith('caching-fetch') && !/\bhit\b/.test(res.headers.get('cache-status') ?? '')) {
      log(`client-fetch: ${c.name} answered without Cache-Status hit: ${res.headers.get('cache-status')}`);
      c.ok = false;
    }
    if (c.cached && hitsOrigin) {
      log(`client-fetch: ${c.name} went to the origin on a warm request: not caching`);
      c.ok = false;
    }
  }
  const disk = clients.find((c) => c.name === 'caching-fetch-disk');
  const st = await disk.stats();
  if (st.tiers[0].hits !== 0 || st.tiers[1].hits === 0) {
    log(`client-fetch: disk client's hits are not from the disk tier: ${JSON.stringify(st.tiers)}`);
    disk.ok = false;
  }
}

/** Rounds of every client in rotating order; per client per round: ops/s and the origin's count delta. */
async function measure(clients, origin, { rounds, requests, concurrency }) {
  const results = Object.fromEntries(clients.map((c) => [c.name, []]));
  for (let r = 0; r < rounds; r++) {
    const order = clients.map((_, i) => clients[(i + r) % clients.length]);
    for (const c of order) {
      const before = await origin.count();
      const opsPerSec = await timed(c, origin.url, requests, concurrency);
      results[c.name].push({ opsPerSec, originRequests: (await origin.count()) - before });
    }
    log(
      `  round ${r + 1}/${rounds} (c=${concurrency}): ` +
        order.map((c) => `${c.name} ${Math.round(results[c.name][r].opsPerSec)}`).join(', '),
    );
  }
  return results;
}

function summarize(clients, results) {
  const rows = clients.map((c) => {
    const rs = results[c.name];
    const originPerRound = rs.map((x) => x.originRequests);
    const leaked = c.cached && originPerRound.some((n) => n !== 0);
    return {
      name: c.name,
      ok: c.ok && !leaked,
      note: !c.ok ? 'not caching' : leaked ? `not caching (origin hit ${originPerRound.join('/')})` : '',
      medianOpsPerSec: median(rs.map((x) => x.opsPerSec)),
      originRequests: originPerRound.reduce((a, b) => a + b, 0),
    };
  });
  const ratio = (a, b) => {
    const ra = rows.find((x) => x.name === a);
    const rb = rows.find((x) => x.name === b);
    if (!ra.ok || !rb.ok) return null;
    const per = results[a].map((x, i) => x.opsPerSec / results[b][i].opsPerSec);
    return { subject: a, peer: b, median: median(per), min: Math.min(...per), max: Math.max(...per) };
  };
  const ratios = [
    ratio('caching-fetch', 'bare-fetch'),
    ratio('caching-fetch', 'undici-cache'),
    ratio('caching-fetch-disk', 'bare-fetch'),
    ratio('caching-fetch-disk', 'undici-cache'),
  ].filter(Boolean);
  return { rows, ratios };
}

function print(title, { rows, ratios }, withTargets) {
  console.log(`\n${title}`);
  const w = Math.max(...rows.map((r) => r.name.length));
  for (const r of rows)
    console.log(
      `  ${r.name.padEnd(w)}  ${String(Math.round(r.medianOpsPerSec)).padStart(8)} ops/s` +
        `  origin requests while timed: ${r.originRequests}${r.note ? `  ${r.note}` : ''}`,
    );
  for (const q of ratios) {
    const t = withTargets ? TARGETS.find((x) => x.subject === q.subject && x.peer === q.peer) : undefined;
    const verdict = t ? `  target >= ${t.min}x ${q.median >= t.min ? 'met' : 'MISSED'}` : '';
    console.log(
      `  ${`${q.subject} / ${q.peer}`.padEnd(w + 16)} ${q.median.toFixed(2)}x` +
        ` (rounds ${q.min.toFixed(2)}-${q.max.toFixed(2)})${verdict}`,
    );
  }
  if (withTargets)
    for (const t of TARGETS)
      if (!ratios.some((q) => q.subject === t.subject && q.peer === t.peer))
        console.log(`  ${t.subject} / ${t.peer}: not measured (not caching), target >= ${t.min}x MISSED`);
}

async function main() {
  for (const f of [CLIENT_ENTRY, MAIN_ENTRY])
    if (!existsSync(f)) {
      log(`client-fetch: ${f} is missing; run npm run build first`);
      return 2;
    }
  const rounds = Math.max(5, envInt('BENCH_ROUNDS', 7, 1));
  const requests = envInt('BENCH_REQUESTS', 2000, 1);
  const concurrency = envInt('BENCH_CONCURRENCY', 10, 0);
  const origin = await startOrigin();
  const diskDir = await mkdtemp(join(tmpdir(), 'gatehouse-bench-disk-'));
  const { clients, disk, dispatcher } = await makeClients(diskDir);
  try {
    await verify(clients, origin, Math.min(requests, 500));
    if (!clients.find((c) => c.name === 'caching-fetch').ok) return 1;
    log(
      `client-fetch: ${rounds} rounds x ${requests} requests per client (1 KB, body read), ` +
        `node ${process.version}, origin ${origin.url}`,
    );
    const seq = summarize(clients, await measure(clients, origin, { rounds, requests, concurrency: 1 }));
    const conc =
      concurrency > 1
        ? summarize(clients, await measure(clients, origin, { rounds, requests, concurrency }))
        : null;
    if (process.argv.includes('--json')) console.log(JSON.stringify({ sequential: seq, concurrent: conc }));
    else {
      console.log('client fetch: cached 1 KB GET (memory hit), disk-tier hit, bare fetch, undici cache');
      print('sequential (one request at a time)', seq, true);
      if (conc) print(`concurrency ${concurrency}`, conc, false);
    }
    return 0;
  } finally {
    await disk.close();
    await dispatcher.close();
    await origin.close();
    await rm(diskDir, { recursive: true, force: true });
  }
}

if (process.env.BENCH_CLIENT_FETCH_ORIGIN === '1') await serveOrigin();
else process.exitCode = await main();
