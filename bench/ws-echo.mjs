#!/usr/bin/env node
// WebSocket echo: messages/s through Gatehouse's endpoint (createWebSocketEndpoints from the build, echo mode,
// config defaults) against a bare `ws` WebSocketServer echo, measured side by side in one run and reported as
// medians and the gatehouse / bare-ws ratios (target >= 0.9x). Only the ratios mean anything.
//
//   npm run build && node bench/ws-echo.mjs [--rounds 5] [--duration 3] [--warmup 1] [--connections 50]
//                                           [--window 8] [--size 64] [--binary] [--dist DIR] [--json FILE]
//
// Each server is a child process pinned to CPU 0 (taskset -c 0); the load generator (bench/ws/load.mjs,
// raw-TCP clients, each keeping `window` messages in flight) runs pinned to CPU 1, one process per
// measurement. Rounds interleave the servers and rotate their order. Two figures per server: messages/s,
// and messages per CPU-second of the server process (its utime + stime over the timed window), which is the
// steadier one on a shared machine where other work takes CPU 0 away from the servers now and then.
// Everything listens on 127.0.0.1 only, every run has a deadline, and all children are stopped on exit,
// Ctrl-C and errors.
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { version as nodeVersion } from 'node:process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';
import {
  CPU,
  cpuCount,
  hasTaskset,
  killAllSync,
  pinned,
  spawnTracked,
  startServerProcess,
  stopAll,
  stopChild,
} from './lib/proc.mjs';
import { median } from './lib/report.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const log = (msg) => process.stderr.write(`${msg}\n`);
const TARGET = 0.9;
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

function cli() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        rounds: { type: 'string', default: '5' },
        duration: { type: 'string', default: '3' },
        warmup: { type: 'string', default: '1' },
        connections: { type: 'string', default: '50' },
        window: { type: 'string', default: '8' },
        size: { type: 'string', default: '64' },
        binary: { type: 'boolean', default: false },
        dist: { type: 'string', default: here('../dist') },
        json: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    log(`ws-echo: ${err.message}`);
    process.exit(2);
  }
  if (values.help) {
    log(
      'usage: node bench/ws-echo.mjs [--rounds N] [--duration S] [--warmup S] [--connections N] [--window N]\n' +
        '                              [--size BYTES] [--binary] [--dist DIR] [--json FILE]',
    );
    process.exit(0);
  }
  const int = (name, min, max) => {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n < min || n > max) {
      log(`ws-echo: --${name} must be an integer from ${min} to ${max}, got '${values[name]}'`);
      process.exit(2);
    }
    return n;
  };
  return {
    rounds: int('rounds', 1, 20),
    durationSec: int('duration', 1, 60),
    warmupSec: int('warmup', 0, 30),
    connections: int('connections', 1, 1000),
    window: int('window', 1, 256),
    size: int('size', 1, 1024 * 1024),
    binary: values.binary,
    dist: resolve(values.dist),
    json: values.json,
  };
}

const config = cli();
const servers = [
  {
    name: 'gatehouse',
    title: 'Gatehouse createWebSocketEndpoints, echo mode',
    args: [here('./ws/gatehouse-echo.mjs'), config.dist],
  },
  { name: 'bare-ws', title: 'bare ws WebSocketServer echo', args: [here('./ws/bare-echo.mjs')] },
];

// ---------- lifetime: nothing we start may outlive us ----------
let shuttingDown = false;
async function shutdown(code, reason) {
  if (shuttingDown) return;
  shuttingDown = true;
  if (reason) log(`\nws-echo: ${reason}; stopping children...`);
  const hardStop = setTimeout(() => {
    killAllSync();
    process.exit(code);
  }, 5000);
  await stopAll(1000);
  clearTimeout(hardStop);
  process.exit(code);
}
process.on('SIGINT', () => shutdown(130, 'interrupted'));
process.on('SIGTERM', () => shutdown(143, 'terminated'));
process.on('SIGHUP', () => shutdown(129, 'hang-up'));
process.on('uncaughtException', (err) => {
  log(`ws-echo: ${err?.stack ?? err}`);
  shutdown(1);
});
process.on('unhandledRejection', (err) => {
  log(`ws-echo: ${err?.stack ?? err}`);
  shutdown(1);
});
process.on('exit', () => killAllSync());

// ---------- steps ----------

/** One real echo (text and the app-level ping) before anything is timed. */
async function check(port) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/echo`);
  try {
    await new Promise((res, rej) => {
      const timer = setTimeout(() => rej(new Error('no echo within 3 s')), 3000);
      ws.once('error', rej);
      ws.once('open', () => ws.send('probe'));
      ws.once('message', (data) => {
        clearTimeout(timer);
        if (String(data) === 'probe') res();
        else rej(new Error(`echoed '${String(data).slice(0, 40)}', expected 'probe'`));
      });
    });
  } finally {
    ws.terminate();
  }
}

/** One measurement: a load generator process pinned to the load CPU; resolves with its JSON result. */
function measure(handle) {
  const args = [
    here('./ws/load.mjs'),
    ...['--port', String(handle.port), '--connections', String(config.connections)],
    ...['--server-pid', String(handle.pid), '--clk-tck', String(CLK_TCK)],
    ...['--window', String(config.window), '--size', String(config.size)],
    ...['--warmup', String(config.warmupSec), '--duration', String(config.durationSec)],
    ...(config.binary ? ['--binary'] : []),
  ];
  const [cmd, argv] = pinned(CPU.load, process.execPath, args);
  const child = spawnTracked(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (err += c));
  const deadlineMs = (config.warmupSec + config.durationSec + 15) * 1000;
  return new Promise((res, rej) => {
    const timer = setTimeout(() => {
      stopChild(child, 500);
      rej(new Error(`load generator still running after ${deadlineMs} ms`));
    }, deadlineMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      try {
        const r = JSON.parse(out.trim().split('\n').pop() ?? '');
        if (r.error) rej(new Error(r.error));
        else if (code !== 0) rej(new Error(`load generator exited ${code}: ${err.trim()}`));
        else res(r);
      } catch {
        rej(new Error(`load generator exited ${code} without a result: ${err.trim() || out.trim()}`));
      }
    });
  });
}

const fmt = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

async function main() {
  // Where the build keeps the endpoints: server/websocket/index.js since issue 28 §3, before it server/websocket.js.
  if (
    !['server/websocket/index.js', 'server/websocket.js'].some((f) => existsSync(resolve(config.dist, f)))
  ) {
    log(`ws-echo: ${resolve(config.dist, 'server/websocket/index.js')} is missing; run npm run build first`);
    process.exitCode = 2;
    return;
  }
  if (!hasTaskset) log('ws-echo: taskset not found; server and load generator are NOT pinned');
  else if (cpuCount < 2) log('ws-echo: only one CPU; server and load generator are NOT pinned apart');
  const loadBefore = loadavg()[0];
  if (loadBefore > 0.5) log(`ws-echo: load average ${loadBefore.toFixed(2)} before starting; expect noise`);

  const running = [];
  for (const s of servers) {
    const handle = await startServerProcess({
      cmd: process.execPath,
      args: s.args,
      env: { NODE_ENV: 'production' },
      readyLine: /listening on http:\/\/127\.0\.0\.1:(\d+)/,
      expectComm: 'node',
    });
    await check(handle.port);
    log(
      `  ${s.name}: pid ${handle.pid} on 127.0.0.1:${handle.port}${handle.cpus ? `, CPUs ${handle.cpus}` : ''}`,
    );
    running.push({ server: s, handle, rates: [], cpuRates: [], errors: [] });
  }

  const perRun = config.warmupSec + config.durationSec;
  log(`ws-echo: ${running.length * config.rounds} measurements of ~${perRun} s each`);
  for (let round = 0; round < config.rounds; round++) {
    const order = running.map((_, i) => running[(i + round) % running.length]);
    for (const r of order) {
      if (shuttingDown) return;
      if (r.handle.child.exitCode !== null || r.handle.child.signalCode !== null) {
        throw new Error(`${r.server.name} exited during the run\n${r.handle.logs()}`);
      }
      const result = await measure(r.handle);
      r.rates.push(result.messagesPerSec);
      if (result.messagesPerCpuSec) r.cpuRates.push(result.messagesPerCpuSec);
      for (const e of result.errors) r.errors.push(`round ${round + 1}: ${e}`);
      const cpu =
        result.serverCpuSec === undefined
          ? ''
          : `, server CPU ${(result.serverCpuSec / result.seconds).toFixed(2)}`;
      log(
        `  round ${round + 1}/${config.rounds}  ${r.server.name.padEnd(10)} ${fmt.format(result.messagesPerSec).padStart(9)} msg/s` +
          `  ${fmt.format(result.messagesPerCpuSec ?? 0).padStart(9)} msg/CPU-s${cpu}` +
          (result.errors.length ? `  (${result.errors.join('; ')})` : ''),
      );
    }
  }
  for (const r of running) await r.handle.stop();

  const byName = Object.fromEntries(running.map((r) => [r.server.name, r]));
  const bare = byName['bare-ws'];
  const ratio = median(byName.gatehouse.rates) / median(bare.rates);
  const cpuRatio = median(byName.gatehouse.cpuRates) / median(bare.cpuRates);
  const pin = CPU.server === undefined ? 'unpinned' : `servers on CPU ${CPU.server}, load on CPU ${CPU.load}`;
  const kind = config.binary ? 'binary' : 'text (JSON)';
  const cellOf = (values, ref) => {
    if (values.length === 0) return ['n/a', 'n/a'];
    const m = median(values);
    const spread = (Math.max(...values) - Math.min(...values)) / 2;
    return [`${fmt.format(m)} ± ${fmt.format(spread)}`, `${(m / median(ref)).toFixed(2)}x`];
  };
  const rows = running.map((r) => {
    const [rate, vs] = cellOf(r.rates, bare.rates);
    const [cpuRate, cpuVs] = cellOf(r.cpuRates, bare.cpuRates);
    return `| ${r.server.name}${r.errors.length ? ' (!)' : ''} | ${rate} | ${vs} | ${cpuRate} | ${cpuVs} |`;
  });
  const loadAfter = loadavg()[0];
  console.log(
    `\n## WebSocket echo benchmark\n\nnode ${nodeVersion}, ${cpuCount} CPUs (${pin}); ${config.connections} ` +
      `connections x ${config.window} in flight, ${config.size}-byte ${kind} messages; ${config.durationSec} s ` +
      `after a ${config.warmupSec} s warm-up; median of ${config.rounds} interleaved round(s), ± is half the ` +
      `min-max spread; load average ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after.\n`,
  );
  console.log(
    [
      '| server | messages/s | vs bare ws | messages per server CPU-s | vs bare ws |',
      '| --- | ---: | ---: | ---: | ---: |',
      ...rows,
    ].join('\n'),
  );
  const verdict = (r) => `${r.toFixed(2)}x (${r >= TARGET ? 'met' : 'MISSED'})`;
  console.log(
    `\ngatehouse / bare ws, target >= ${TARGET}x: messages/s ${verdict(ratio)}, ` +
      `per server CPU-second ${Number.isFinite(cpuRatio) ? verdict(cpuRatio) : 'n/a'}`,
  );
  const errors = running.flatMap((r) => r.errors.map((e) => `${r.server.name} ${e}`));
  if (errors.length) console.log(`\n(!) errors during the run:\n${errors.map((e) => `- ${e}`).join('\n')}`);

  if (config.json) {
    const results = running.map((r) => ({
      server: r.server.name,
      title: r.server.title,
      medianMessagesPerSec: median(r.rates),
      medianMessagesPerCpuSec: median(r.cpuRates),
      messagesPerSec: r.rates,
      messagesPerCpuSec: r.cpuRates,
      errors: r.errors,
    }));
    const meta = {
      date: new Date().toISOString(),
      node: nodeVersion,
      cpus: cpuCount,
      pinning: pin,
      ...config,
    };
    writeFileSync(
      config.json,
      `${JSON.stringify({ meta, results, ratio, cpuRatio, target: TARGET }, null, 2)}\n`,
    );
    log(`ws-echo: wrote ${config.json}`);
  }
}

main().then(
  () => shutdown(process.exitCode ?? 0),
  (err) => {
    log(`ws-echo: ${err?.stack ?? err}`);
    shutdown(1);
  },
);
