#!/usr/bin/env node
// Several Gatehouse builds side by side on one static scenario (issue 27 §1: bisecting a regression with
// paired rounds). Every build (a checkout with dist/ built) serves the bench fixture, all pinned to the
// server CPU; each round times every build once in a rotating order with wrk on the other CPU, and the
// report gives each build's median requests per server CPU-second and req/s, and the median over rounds
// of its per-round ratio to the first build (measured minutes apart at most, so load changes between
// rounds cancel out).
//
//   node bench/builds.mjs [--scenario 1k|304|150k] [--rounds 5] [--seconds 3] CHECKOUT...
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { readCpuSec } from './lib/cpu.mjs';
import { createFixture, FIXTURE } from './lib/fixture.mjs';
import { probe } from './lib/http-probe.mjs';
import { freePort, startServerProcess, stopAll } from './lib/proc.mjs';
import { ensureWrk, runWrk } from './lib/wrk.mjs';

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    scenario: { type: 'string', default: '1k' },
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '3' },
  },
});
if (positionals.length < 2) {
  console.error(
    'usage: node bench/builds.mjs [--scenario 1k|304|150k] [--rounds N] [--seconds S] CHECKOUT CHECKOUT...',
  );
  process.exit(2);
}
const PATHS = { '1k': FIXTURE.small.path, 304: FIXTURE.html.path, '150k': FIXTURE.large.path };
if (!(opts.scenario in PATHS)) {
  console.error(`builds: --scenario is one of ${Object.keys(PATHS).join(', ')}`);
  process.exit(2);
}
const conditional = opts.scenario === '304';
const path = PATHS[opts.scenario];
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

ensureWrk();
const fixture = createFixture();
try {
  const builds = [];
  for (const dir of positionals) {
    const port = await freePort();
    const server = await startServerProcess({
      cmd: process.execPath,
      args: [
        resolve(dir, 'bin/gatehouse.js'),
        'serve',
        fixture.dir,
        '--port',
        String(port),
        '--host',
        '127.0.0.1',
        '--log',
        'off',
      ],
      env: { NODE_ENV: 'production' },
      port,
    });
    const headers = conditional ? { 'If-None-Match': (await probe({ port, path })).headers.etag } : {};
    const check = await probe({ port, path, headers });
    if (check.status !== (conditional ? 304 : 200))
      throw new Error(`${dir}: GET ${path} gave ${check.status}`);
    builds.push({ dir, port, pid: server.pid, headers, perCpu: [], rps: [], ratio: [] });
  }
  for (const b of builds) await runWrk({ port: b.port, path, headers: b.headers, durationSec: 1 });
  for (let round = 0; round < Number(opts.rounds); round++) {
    const k = round % builds.length;
    const order = [...builds.slice(k), ...builds.slice(0, k)];
    if (round % 2 === 1) order.reverse();
    for (const b of order) {
      const before = readCpuSec(b.pid);
      const r = await runWrk({ port: b.port, path, headers: b.headers, durationSec: Number(opts.seconds) });
      const cpu = readCpuSec(b.pid) - before;
      b.perCpu.push(r.requests / cpu);
      b.rps.push(r.requestsPerSec);
    }
    for (const b of builds) b.ratio.push(b.perCpu.at(-1) / builds[0].perCpu.at(-1));
    process.stderr.write(`round ${round + 1}: ${builds.map((b) => Math.round(b.perCpu.at(-1))).join(' ')}\n`);
  }
  console.log(
    `GET ${path}${conditional ? ' + If-None-Match' : ''}, ${opts.rounds} rounds of ${opts.seconds} s\n`,
  );
  console.log('| build | req/s | per CPU-s | / first, paired by round (range) |');
  console.log('| --- | ---: | ---: | ---: |');
  for (const b of builds) {
    const lo = Math.min(...b.ratio).toFixed(2);
    const hi = Math.max(...b.ratio).toFixed(2);
    console.log(
      `| ${b.dir} | ${Math.round(median(b.rps))} | ${Math.round(median(b.perCpu))} | ${median(b.ratio).toFixed(2)}x (${lo}-${hi}) |`,
    );
  }
} finally {
  await stopAll();
  fixture.cleanup();
}
