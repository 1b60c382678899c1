#!/usr/bin/env node
// The cold static path (issue 27): FILES distinct 200-byte files, each requested once, against fresh
// server processes: requests/s when every request is the first for its path (resolve, stat, read, build
// the headers: nothing cached yet), and how far each server's RSS grows while it serves them.
//
//   node bench/cold.mjs [--servers gatehouse,sirv,nginx] [--json FILE]
//   BENCH_COLD_FILES=100000 BENCH_COLD_ROUNDS=2 BENCH_COLD_CONNECTIONS=32
//
// Each round starts every server anew (rotating order) on the same fixture, pinned to the server CPU; the
// load is bench/cold/load.mjs, pinned to the load CPU, one request outstanding per connection. Peak RSS is
// sampled every 100 ms (lib/rss.mjs) and reported as growth over the RSS right after start-up (sirv
// indexes the folder at start-up: its start RSS is shown too). Gatehouse's growth is checked against
// static.memoryCacheBytes (default 64 MiB) + 30 MB.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readCpuSec } from './lib/cpu.mjs';
import { log, positiveInt, runToEnd, stopping } from './lib/lifetime.mjs';
import { CPU, pinned, tempDir } from './lib/proc.mjs';
import { readRssKb, sampleRss } from './lib/rss.mjs';
import { servers as allServers } from './servers/index.mjs';

const FILES = positiveInt('BENCH_COLD_FILES', 100_000);
const ROUNDS = positiveInt('BENCH_COLD_ROUNDS', 2);
const CONNECTIONS = positiveInt('BENCH_COLD_CONNECTIONS', 32);
const BODY_BYTES = 200;
/** Gatehouse's static.memoryCacheBytes default, plus what the issue allows beside it. */
const GATEHOUSE_RSS_GROWTH_MB = 64 * 1.048576 + 30;

const cli = parseArgs({
  options: { servers: { type: 'string', default: 'gatehouse,sirv,nginx' }, json: { type: 'string' } },
}).values;
const wanted = cli.servers.split(',');
const loadScript = fileURLToPath(new URL('./cold/load.mjs', import.meta.url));

function makeFixture() {
  const dir = tempDir('gatehouse-bench-cold-');
  const body = Buffer.alloc(BODY_BYTES, 'cold path payload\n');
  for (let d = 0; d * 1000 < FILES; d++) {
    mkdirSync(join(dir.path, `d${d}`));
    for (let i = d * 1000; i < Math.min(FILES, (d + 1) * 1000); i++)
      writeFileSync(join(dir.path, `d${d}`, `f${i}.txt`), body);
  }
  return dir;
}

/** One run of the load generator against `port`; resolves with its JSON line. */
function runLoad(port) {
  const [file, argv] = pinned(CPU.load, process.execPath, [
    loadScript,
    String(port),
    String(FILES),
    String(CONNECTIONS),
  ]);
  const child = spawn(file, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c) => {
    out += c;
  });
  return new Promise((resolve, reject) =>
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`load generator exited with ${code}`));
      else resolve(JSON.parse(out));
    }),
  );
}

/** One fresh server, FILES cold requests: req/s, requests per server CPU-s, RSS at start and peak. */
async function measure(server, dir) {
  const s = await server.start(dir.path, {});
  try {
    const startKb = readRssKb(s.pid);
    const sampler = sampleRss(s.pid, 100);
    const cpu0 = readCpuSec(s.pid);
    const r = await runLoad(s.port);
    const cpu1 = readCpuSec(s.pid);
    const peakKb = sampler.stop();
    if (r.errors.length > 0 || r.requests !== FILES)
      throw new Error(`${r.requests}/${FILES} answered; ${r.errors.join(', ')}`);
    return {
      rps: r.requests / (r.elapsedMs / 1000),
      perCpuSec: cpu0 !== undefined && cpu1 > cpu0 ? r.requests / (cpu1 - cpu0) : undefined,
      startMb: startKb / 1024,
      growthMb: (peakKb - startKb) / 1024,
    };
  } finally {
    await s.stop();
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? undefined : s[Math.floor((s.length - 1) / 2)];
};
const fmt = (x, digits = 0) => (x === undefined ? '-' : x.toFixed(digits));

async function main() {
  const servers = allServers.filter((s) => wanted.includes(s.name));
  const results = new Map(servers.map((s) => [s.name, { runs: [], error: s.unavailable?.() }]));
  log(`bench cold: writing ${FILES} files of ${BODY_BYTES} bytes...`);
  const dir = makeFixture();
  fixture = dir;
  for (let round = 0; round < ROUNDS && !stopping(); round++) {
    const order = servers.map((_, k) => servers[(k + round) % servers.length]);
    for (const server of order) {
      const res = results.get(server.name);
      if (res.error !== undefined || stopping()) continue;
      try {
        const m = await measure(server, dir);
        res.runs.push(m);
        log(
          `round ${round + 1}/${ROUNDS} ${server.name}: ${fmt(m.rps)} req/s, ${fmt(m.perCpuSec)} per CPU-s, ` +
            `RSS ${fmt(m.startMb)} MB at start, +${fmt(m.growthMb, 1)} MB peak`,
        );
      } catch (err) {
        res.error = err.message.split('\n')[0];
        log(`round ${round + 1}/${ROUNDS} ${server.name}: ${res.error}`);
      }
    }
  }
  const rows = servers.map((s) => {
    const { runs, error } = results.get(s.name);
    return {
      server: s.name,
      error,
      rps: median(runs.map((r) => r.rps)),
      perCpuSec: median(runs.map((r) => r.perCpuSec).filter((x) => x !== undefined)),
      startMb: median(runs.map((r) => r.startMb)),
      growthMb: runs.length ? Math.max(...runs.map((r) => r.growthMb)) : undefined,
    };
  });
  const gh = rows.find((r) => r.server === 'gatehouse');
  const lines = [
    `\n## Cold static path: ${FILES} distinct ${BODY_BYTES}-byte files, each requested once\n`,
    `${CONNECTIONS} keep-alive connections, one request outstanding each; medians of ${ROUNDS} round(s), ` +
      'each on a fresh server process; RSS growth is the largest peak over the RSS after start-up.\n',
    '| server | req/s | requests per server CPU-s | gatehouse / it (req/s) | RSS at start (MB) | peak RSS growth (MB) |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows.map((r) =>
      r.rps === undefined
        ? `| ${r.server} | ${r.error ?? 'no result'} | | | | |`
        : `| ${r.server} | ${fmt(r.rps)} | ${fmt(r.perCpuSec)} | ${gh?.rps ? `${(gh.rps / r.rps).toFixed(2)}x` : '-'} | ` +
          `${fmt(r.startMb)} | ${fmt(r.growthMb, 1)} |`,
    ),
  ];
  if (gh?.growthMb !== undefined) {
    const met = gh.growthMb <= GATEHOUSE_RSS_GROWTH_MB;
    lines.push(
      `\ngatehouse peak RSS growth ${fmt(gh.growthMb, 1)} MB <= ${fmt(GATEHOUSE_RSS_GROWTH_MB, 1)} MB ` +
        `(static.memoryCacheBytes 64 MiB + 30 MB): ${met ? 'met' : 'MISSED'}`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  if (cli.json)
    writeFileSync(cli.json, `${JSON.stringify({ files: FILES, rounds: ROUNDS, rows }, null, 2)}\n`);
}

let fixture;
runToEnd(main, { stop: async () => {}, cleanup: () => fixture?.remove() });
