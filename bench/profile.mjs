#!/usr/bin/env node
// Where a request's CPU goes (issue 27 §1): Gatehouse and its same-fields reference each run under
// `node --cpu-prof`, pinned to the server CPU, with wrk on the other; only the samples of the timed run
// count (the last `--seconds` of each profile, which ends when wrk does), divided by wrk's request count.
// Prints, per server, microseconds per request by kind (Gatehouse's own JavaScript, Node's JavaScript,
// native code and syscalls, GC) and the functions whose self time differs most between the two.
//
//   node bench/profile.mjs [--scenario 1k|304] [--seconds 10]
//
// The profiler's own overhead inflates every figure alike; the differences are what counts.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createFixture } from './lib/fixture.mjs';
import { probe } from './lib/http-probe.mjs';
import { freePort, startServerProcess } from './lib/proc.mjs';
import { ensureWrk, runWrk } from './lib/wrk.mjs';
import { gatehouseFields } from './servers/node-fields.mjs';

const { values: opts } = parseArgs({
  options: { scenario: { type: 'string', default: '1k' }, seconds: { type: 'string', default: '10' } },
});
const seconds = Number(opts.seconds);
const conditional = opts.scenario === '304';
const path = conditional ? '/index.html' : '/1k.txt';
const bin = fileURLToPath(new URL('../bin/gatehouse.js', import.meta.url));
const child = fileURLToPath(new URL('children/node-fields.mjs', import.meta.url));

/** The kind of a profile node: our code, Node's JavaScript, a dependency, native/syscall, or V8's own. */
function kind(cf) {
  if (/\/dist\//.test(cf.url)) return 'gatehouse';
  if (/node_modules/.test(cf.url)) return 'dependencies';
  if (cf.url.startsWith('node:')) return 'node (JavaScript)';
  if (cf.functionName === '(garbage collector)') return 'GC';
  if (cf.functionName === '(program)') return 'V8 (program)';
  return 'native and syscalls';
}

/** Self time per request (µs) by function and by kind over the profile's last `seconds`. */
function summarise(file, requests) {
  const p = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  let t = p.startTime;
  const times = p.timeDeltas.map((d) => {
    t += d;
    return t;
  });
  const from = p.endTime - seconds * 1e6;
  const fns = new Map();
  const kinds = new Map();
  for (let i = 0; i < p.samples.length; i++) {
    if (times[i] < from) continue;
    const cf = byId.get(p.samples[i]).callFrame;
    if (cf.functionName === '(idle)') continue;
    const us = (p.timeDeltas[i + 1] ?? 0) / requests;
    const name = `${cf.functionName || '(anonymous)'} ${cf.url.replace(/.*\/(dist|node_modules)\//, '$1/')}:${cf.lineNumber + 1}`;
    fns.set(name, (fns.get(name) ?? 0) + us);
    kinds.set(kind(cf), (kinds.get(kind(cf)) ?? 0) + us);
  }
  return { fns, kinds };
}

async function profileOne(name, cmdArgs, env, port) {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-profile-'));
  const server = await startServerProcess({
    cmd: process.execPath,
    args: ['--cpu-prof', '--cpu-prof-dir', dir, ...cmdArgs],
    env: { NODE_ENV: 'production', ...env },
    port,
  });
  try {
    const headers = {};
    if (conditional) headers['If-None-Match'] = (await probe({ port, path })).headers.etag;
    await runWrk({ port, path, headers, durationSec: 2 });
    const r = await runWrk({ port, path, headers, durationSec: seconds });
    // SIGTERM right after wrk: the profile ends with the timed run.
    await server.stop();
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) throw new Error(`${name}: no profile written`);
    return { name, requests: r.requests, ...summarise(join(dir, file), r.requests) };
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

ensureWrk();
const fixture = createFixture();
try {
  const fields = await gatehouseFields(fixture.dir);
  const gPort = await freePort();
  const fPort = await freePort();
  const reference = conditional ? 'node-fields-304' : 'node-fields-ceiling';
  const runs = [
    await profileOne(
      reference,
      [child, fixture.dir, String(fPort)],
      { BENCH_FIELDS: JSON.stringify(fields), BENCH_MODE: conditional ? '304' : 'ceiling' },
      fPort,
    ),
    await profileOne(
      'gatehouse',
      [bin, 'serve', fixture.dir, '--port', String(gPort), '--host', '127.0.0.1', '--log', 'off'],
      {},
      gPort,
    ),
  ];
  const [a, b] = runs;
  const total = (r) => [...r.kinds.values()].reduce((x, y) => x + y, 0);
  console.log(
    `GET ${path}${conditional ? ' + If-None-Match (304)' : ''}: µs of server CPU per request (self time)\n`,
  );
  console.log(`| kind | ${a.name} | ${b.name} | difference |`);
  console.log('| --- | ---: | ---: | ---: |');
  const kinds = new Set([...a.kinds.keys(), ...b.kinds.keys()]);
  for (const k of [...kinds].sort()) {
    const x = a.kinds.get(k) ?? 0;
    const y = b.kinds.get(k) ?? 0;
    console.log(`| ${k} | ${x.toFixed(2)} | ${y.toFixed(2)} | ${(y - x).toFixed(2)} |`);
  }
  console.log(
    `| **total** | ${total(a).toFixed(2)} | ${total(b).toFixed(2)} | ${(total(b) - total(a)).toFixed(2)} |`,
  );
  console.log(`\n(${a.requests} and ${b.requests} requests profiled)\n`);
  console.log(`| function (self time) | ${a.name} | ${b.name} | difference |`);
  console.log('| --- | ---: | ---: | ---: |');
  const names = new Set([...a.fns.keys(), ...b.fns.keys()]);
  const rows = [...names]
    .map((n) => [n, a.fns.get(n) ?? 0, b.fns.get(n) ?? 0])
    .sort((x, y) => Math.abs(y[2] - y[1]) - Math.abs(x[2] - x[1]))
    .slice(0, 20);
  for (const [n, x, y] of rows)
    console.log(`| \`${n}\` | ${x.toFixed(2)} | ${y.toFixed(2)} | ${(y - x).toFixed(2)} |`);
} finally {
  fixture.cleanup();
}
