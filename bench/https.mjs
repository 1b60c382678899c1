#!/usr/bin/env node
// The HTTPS rows of `npm run bench` (issue 15 §7): Gatehouse with `tls` against the Node ceilings (bare
// node:https / node:http2 answering a constant 1 KB) and nginx, all serving the same certificate, measured
// side by side in one run with h2load (Debian's nghttp2-client) as the load:
//
//   tls-handshake  a new TLS connection per request (HTTP/1.1, `Connection: close`): connections/s
//   h1-tls-1k      GET /1k.txt over HTTP/1.1 + TLS, keep-alive, many connections
//   h2-1k          GET /1k.txt over HTTP/2, a few connections with many streams each
//   tls-resumed    a new TLS connection per request resuming a session ticket issued by the other of two
//                  instances that share a ticket key (gatehouse-pair: two processes with one
//                  tls.sessionTickets.keyFile; nginx-pair: two server blocks with one ssl_session_ticket_key),
//                  driven by lib/tls-resume.mjs (h2load keeps a session with its own server): connections/s
//
//   node bench/https.mjs [--quick] [--only tls-handshake,h1-tls-1k,h2-1k,tls-resumed] [--json FILE]
//   BENCH_DURATION=5 (s per measurement) BENCH_ROUNDS=3 BENCH_WARMUP=1 (s); --quick: 1 s, 1 round
//   BENCH_BASELINE=/path/to/checkout: `gatehouse-baseline`, that build on the same rows (no regression)
//
// Servers run pinned to CPU 0, h2load to CPU 1; rounds interleave the servers (rotating order), medians
// and ratios of req/s and of requests per server CPU-second are reported with the targets of
// targets.mjs (`httpsTargets`) by the same report code as bench/run.mjs.
import { writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import { loadavg } from 'node:os';
import { version as nodeVersion } from 'node:process';
import { parseArgs } from 'node:util';
import { CLK_TCK, cpuWindow } from './lib/cpu.mjs';
import { createFixture, FIXTURE } from './lib/fixture.mjs';
import { h2loadVersion, runH2load } from './lib/h2load.mjs';
import { log, positiveInt, runToEnd, stopping } from './lib/lifetime.mjs';
import { CPU, cpuCount, pinned, spawnTracked, stopChild } from './lib/proc.mjs';
import { brief, evaluateTargets, renderReport } from './lib/report.mjs';
import { sampleRss } from './lib/rss.mjs';
import { makeBenchCertificate } from './lib/tls-cert.mjs';
import { resumeOnce } from './lib/tls-resume.mjs';
import { httpsServers } from './servers/https.mjs';
import { httpsTargets } from './targets.mjs';

export const groups = [
  {
    name: 'https-h1',
    title: 'HTTPS over HTTP/1.1 (ALPN http/1.1): new connections and keep-alive 1 KB GETs',
    subject: 'gatehouse',
    servers: ['gatehouse', 'gatehouse-baseline', 'node-https', 'node-https-fields', 'nginx'],
  },
  {
    name: 'https-h2',
    title: 'HTTP/2 over TLS (ALPN h2): 1 KB GETs, many streams per connection',
    subject: 'gatehouse',
    servers: ['gatehouse', 'gatehouse-baseline', 'node-http2', 'node-http2-fields', 'nginx'],
  },
  {
    name: 'https-resume',
    title: 'Resumed TLS handshakes across two instances sharing a session ticket key',
    subject: 'gatehouse-pair',
    servers: ['gatehouse-pair', 'nginx-pair'],
  },
];

/** h2load arguments per row; `protocol` is the ALPN result every run must show. */
export const scenarios = [
  {
    name: 'tls-handshake',
    group: 'https-h1',
    title: `new TLS connection + one GET ${FIXTURE.small.path} each (h2load --h1 -c 32 -m 1, Connection: close), connections/s`,
    args: ['--h1', '-c', '32', '-m', '1', '-H', 'Connection: close'],
    protocol: 'http/1.1',
    closes: true,
    // h2load's timing mode (-D) hangs when the server closes connections: a request count sized from the
    // warm-up run's rate to last about BENCH_DURATION instead.
    byCount: { clients: 32 },
  },
  {
    name: 'h1-tls-1k',
    group: 'https-h1',
    title: `GET ${FIXTURE.small.path} over HTTP/1.1 + TLS, keep-alive (h2load --h1 -c 50 -m 1)`,
    args: ['--h1', '-c', '50', '-m', '1'],
    protocol: 'http/1.1',
  },
  {
    name: 'h2-1k',
    group: 'https-h2',
    title: `GET ${FIXTURE.small.path} over HTTP/2 (h2load -c 10 -m 32)`,
    args: ['-c', '10', '-m', '32'],
    protocol: 'h2',
  },
  {
    name: 'tls-resumed',
    group: 'https-resume',
    title:
      `new TLS 1.3 connection + one GET ${FIXTURE.small.path} each (Connection: close), resuming the ticket ` +
      'the other instance issued (lib/tls-resume.mjs, 16 loops alternating between the two ports), connections/s',
    driver: 'resume',
    concurrency: 16,
    protocol: 'http/1.1',
  },
];

/** At least this share of the connections that offered a ticket must resume, or the run is an error. */
const MIN_RESUMED = 0.99;

const EXPECT = { status: 200, bodyLength: FIXTURE.small.size };

function parseCli() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        only: { type: 'string' },
        json: { type: 'string' },
        quick: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    log(`bench: ${err.message}`);
    process.exit(2);
  }
  if (values.help) {
    log(
      'usage: node bench/https.mjs [--quick] [--only SCENARIO,...] [--json FILE]\n' +
        `  scenarios: ${scenarios.map((s) => s.name).join(', ')}\n` +
        '  --quick: 1 s runs, 1 round (a smoke run)\n' +
        '  env: BENCH_DURATION (s, default 5), BENCH_ROUNDS (default 3), BENCH_WARMUP (s, default 1)',
    );
    process.exit(0);
  }
  let selected = scenarios;
  if (values.only) {
    const names = values.only.split(',').map((s) => s.trim());
    const unknown = names.filter((n) => !scenarios.some((s) => s.name === n));
    if (unknown.length) {
      log(
        `bench: unknown scenario ${unknown.join(', ')} (known: ${scenarios.map((s) => s.name).join(', ')})`,
      );
      process.exit(2);
    }
    selected = scenarios.filter((s) => names.includes(s.name));
  }
  const quick = Boolean(values.quick);
  return {
    scenarios: selected,
    json: values.json,
    durationSec: positiveInt('BENCH_DURATION', quick ? 1 : 5),
    rounds: positiveInt('BENCH_ROUNDS', quick ? 1 : 3),
    warmupSec: positiveInt('BENCH_WARMUP', 1),
  };
}

/** One GET over HTTP/1.1 + TLS (ALPN http/1.1 only, the bench CA trusted, no connection reuse). */
function probeHttps({ port, ca, path }) {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path,
        ca,
        servername: 'localhost',
        ALPNProtocols: ['http/1.1'],
        agent: false,
      },
      (res) => {
        let bodyLength = 0;
        res.on('data', (chunk) => {
          bodyLength += chunk.length;
        });
        res.once('end', () =>
          resolve({
            status: res.statusCode,
            headers: res.headers,
            bodyLength,
            protocol: req.socket?.alpnProtocol || 'http/1.1',
          }),
        );
      },
    );
    req.setTimeout(5000, () => req.destroy(new Error('no response within 5000 ms')));
    req.once('error', reject);
    req.setHeader('Connection', 'close');
    req.end();
  });
}

/** One GET over HTTP/2 (ALPN h2). */
function probeHttp2({ port, ca, path }) {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`https://127.0.0.1:${port}`, { ca, servername: 'localhost' });
    const fail = (err) => {
      session.destroy();
      reject(err);
    };
    session.once('error', fail);
    session.setTimeout(5000, () => fail(new Error('no response within 5000 ms')));
    const stream = session.request({ ':path': path });
    let status;
    let bodyLength = 0;
    stream.once('response', (h) => {
      status = h[':status'];
    });
    stream.on('data', (chunk) => {
      bodyLength += chunk.length;
    });
    stream.once('error', fail);
    stream.once('end', () => {
      const protocol = session.alpnProtocol;
      session.close();
      resolve({ status, headers: {}, bodyLength, protocol });
    });
    stream.end();
  });
}

// ---------- lifetime: nothing we start may outlive us ----------
let fixture;
const running = []; // { server, handle }

// ---------- measurement ----------
const cells = new Map();
const rssPeakKb = new Map();
const cell = (server, scenario) => cells.get(server)?.get(scenario);
const applies = (server, scenario) =>
  groups.find((g) => g.name === scenario.group).servers.includes(server.name);

/** The resumed row's check: a ticket from the first port resumes on the second, and 1k.txt is served. */
async function checkResume(handle, ca) {
  const path = FIXTURE.small.path;
  const [a, b] = handle.ports;
  const first = await resumeOnce({ port: a, ca, path });
  const second = await resumeOnce({ port: b, ca, path, session: first.session });
  const problems = [];
  for (const r of [first, second]) {
    if (r.status !== EXPECT.status) problems.push(`status ${r.status}, expected ${EXPECT.status}`);
    else if (r.bodyBytes !== EXPECT.bodyLength)
      problems.push(`body ${r.bodyBytes} bytes, expected ${EXPECT.bodyLength}`);
  }
  if (!second.reused) problems.push(`a ticket from port ${a} was not resumed on port ${b}`);
  return problems;
}

async function check(server, handle, scenario, ca) {
  const c = cell(server.name, scenario.name);
  if (scenario.driver === 'resume') {
    const problems = await checkResume(handle, ca).catch((err) => [err.message]);
    if (problems.length) Object.assign(c, { state: 'wrong status', detail: problems.join(', ') });
    return;
  }
  try {
    const probe = scenario.protocol === 'h2' ? probeHttp2 : probeHttps;
    const res = await probe({ port: handle.port, ca, path: FIXTURE.small.path });
    const problems = [];
    if (res.status !== EXPECT.status) problems.push(`status ${res.status}, expected ${EXPECT.status}`);
    else if (res.bodyLength !== EXPECT.bodyLength) {
      problems.push(`body ${res.bodyLength} bytes, expected ${EXPECT.bodyLength}`);
    }
    if (res.protocol !== scenario.protocol) {
      problems.push(`ALPN ${res.protocol}, expected ${scenario.protocol}`);
    }
    // The handshake row counts connections only if the server closes each one after its answer.
    if (scenario.closes && res.headers.connection !== 'close') {
      problems.push(`Connection: ${res.headers.connection ?? 'missing'} after Connection: close`);
    }
    if (problems.length) Object.assign(c, { state: 'wrong status', detail: problems.join(', ') });
  } catch (err) {
    Object.assign(c, { state: 'wrong status', detail: err.message });
  }
}

/**
 * Runs the warm-up and returns the options of the timed run: `-D` for duration, or for a `byCount` row a
 * request count sized from the warm-up's rate (at least 20 per client; it stops after 10x the expected time).
 */
async function timedRuns(opts, scenario, config) {
  if (!scenario.byCount) {
    await runH2load({ ...opts, durationSec: config.warmupSec });
    return { ...opts, durationSec: config.durationSec };
  }
  const minimum = scenario.byCount.clients * 20;
  const warm = await runH2load({ ...opts, requests: minimum, timeoutSec: 30 + config.warmupSec * 10 });
  const rate = warm.requestsPerSec > 0 ? warm.requestsPerSec : minimum;
  // Warm up for about BENCH_WARMUP s in all: the short probe above, then the rest.
  const rest = Math.round(rate * config.warmupSec) - minimum;
  // h2load refuses fewer requests (-n) than clients (-c): a smaller rest is left out.
  if (rest >= scenario.byCount.clients)
    await runH2load({ ...opts, requests: rest, timeoutSec: 30 + config.warmupSec * 10 });
  const requests = Math.max(minimum, Math.round(rate * config.durationSec));
  return { ...opts, requests, timeoutSec: 30 + config.durationSec * 10 };
}

/** lib/tls-resume.mjs pinned to the load CPU for `seconds`; the result in runH2load's shape. */
async function runResume({ ports, caFile, concurrency, seconds }) {
  const script = new URL('./lib/tls-resume.mjs', import.meta.url).pathname;
  const args = [script, '--ports', ports.join(','), '--ca', caFile, '--path', FIXTURE.small.path];
  const [cmd, argv] = pinned(CPU.load, process.execPath, [
    ...args,
    '--seconds',
    String(seconds),
    '--concurrency',
    String(concurrency),
  ]);
  const child = spawnTracked(cmd, argv);
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    err += d;
  });
  const timer = setTimeout(() => void stopChild(child), (seconds + 30) * 1000);
  const code = await new Promise((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  if (code !== 0) throw new Error(`tls-resume.mjs exited ${code}: ${brief(err)}`);
  const r = JSON.parse(out);
  const errors = [...r.errors];
  if (r.statusOk < r.connections) errors.push(`${r.connections - r.statusOk} answers without status 200`);
  if (r.offered > 0 && r.resumed / r.offered < MIN_RESUMED)
    errors.push(`only ${r.resumed} of ${r.offered} offered tickets resumed`);
  if (r.connections === 0) errors.push('no connection done');
  return {
    requestsPerSec: r.requestsPerSec,
    requests: r.connections,
    resumed: r.resumed,
    offered: r.offered,
    errors,
  };
}

/** cpuWindow over every process of a handle (a pair of instances), summed; shares of the pinned CPU. */
function handleCpuWindow(handle) {
  const windows = (handle.pids ?? [handle.pid]).map((pid) => cpuWindow(pid, CPU.server));
  return {
    stop() {
      const parts = windows.map((w) => w.stop());
      if (parts.some((p) => p === undefined)) return undefined;
      const cpuSec = parts.reduce((n, p) => n + p.cpuSec, 0);
      const { wallSec } = parts[0];
      const result = { cpuSec, wallSec, util: cpuSec / wallSec };
      if (parts[0].cpuShares) {
        const server = Math.min(
          1,
          parts.reduce((n, p) => n + p.cpuShares.server, 0),
        );
        const { idle, steal } = parts[0].cpuShares;
        result.cpuShares = { server, idle, rest: Math.max(0, 1 - server - idle), steal };
      }
      return result;
    },
  };
}

async function measure(server, handle, scenario, round, config) {
  const c = cell(server.name, scenario.name);
  const dead = (handle.children ?? [handle.child]).find(
    (ch) => ch.exitCode !== null || ch.signalCode !== null,
  );
  if (dead !== undefined) {
    const how = dead.signalCode ?? `code ${dead.exitCode}`;
    for (const x of cells.get(server.name).values()) {
      Object.assign(x, { state: 'crashed', detail: `exited (${how}) during the run\n${handle.logs()}` });
    }
    return;
  }
  const rss = sampleRss(handle.pid, 250);
  const opts = {
    url: `https://127.0.0.1:${handle.port}${FIXTURE.small.path}`,
    args: scenario.args,
    expectProtocol: scenario.protocol,
  };
  try {
    let result;
    let cpuWin;
    if (scenario.driver === 'resume') {
      const run = { ports: handle.ports, caFile: config.caFile, concurrency: scenario.concurrency };
      await runResume({ ...run, seconds: config.warmupSec });
      cpuWin = handleCpuWindow(handle);
      result = await runResume({ ...run, seconds: config.durationSec });
    } else {
      const timed = await timedRuns(opts, scenario, config);
      cpuWin = handleCpuWindow(handle);
      result = await runH2load(timed);
    }
    const cpu = cpuWin.stop();
    c.rps.push(result.requestsPerSec);
    const run = { ...result, round };
    if (cpu && cpu.cpuSec > 0) {
      run.server = { cpuSec: cpu.cpuSec, wallSec: cpu.wallSec, cpuUtil: cpu.util };
      if (cpu.cpuShares) run.server.serverCpuShares = cpu.cpuShares;
      run.requestsPerCpuSec = result.requests / cpu.cpuSec;
      c.perCpu.push(run.requestsPerCpuSec);
      c.util.push(cpu.util);
      if (cpu.cpuShares) c.shares.push(cpu.cpuShares);
    }
    c.runs.push(run);
    for (const e of result.errors) c.errors.push(`round ${round + 1}: ${e}`);
    const cpuText = run.requestsPerCpuSec
      ? ` ${Math.round(run.requestsPerCpuSec).toString().padStart(8)} req/CPU-s  CPU ${cpu.util.toFixed(2)}` +
        (cpu.cpuShares
          ? ` (CPU ${CPU.server}: idle ${cpu.cpuShares.idle.toFixed(2)}, taken by others ` +
            `${cpu.cpuShares.rest.toFixed(2)})`
          : '')
      : '';
    log(
      `  round ${round + 1}/${config.rounds}  ${scenario.name.padEnd(14)} ${server.name.padEnd(11)}` +
        ` ${Math.round(result.requestsPerSec).toString().padStart(8)} req/s${cpuText}` +
        (result.errors.length ? `  (${result.errors.join('; ')})` : ''),
    );
  } catch (err) {
    if (stopping()) return;
    c.errors.push(`round ${round + 1}: ${err.message}`);
    log(
      `  round ${round + 1}/${config.rounds}  ${scenario.name} ${server.name} failed: ${brief(err.message)}`,
    );
  } finally {
    const peak = rss.stop();
    if (peak !== undefined) rssPeakKb.set(server.name, Math.max(rssPeakKb.get(server.name) ?? 0, peak));
  }
}

async function startAll(servers, scenarioList, tls, ca) {
  for (const server of servers) {
    if (stopping()) return;
    const reason = server.unavailable?.();
    const setAll = (state, detail) => {
      for (const x of cells.get(server.name).values()) Object.assign(x, { state, detail });
    };
    if (reason) {
      setAll('unavailable', reason);
      log(`  ${server.name}: unavailable (${reason})`);
      continue;
    }
    try {
      const handle = await server.start(fixture.dir, tls);
      running.push({ server, handle });
      log(
        `  ${server.name}: pid ${handle.pid} on 127.0.0.1:${handle.port}${handle.cpus ? `, CPUs ${handle.cpus}` : ''}`,
      );
      for (const scenario of scenarioList) {
        if (applies(server, scenario)) await check(server, handle, scenario, ca);
      }
    } catch (err) {
      setAll('failed to start', err.message);
      log(`  ${server.name}: failed to start: ${brief(err.message)}`);
    }
  }
}

async function main() {
  const config = parseCli();
  const h2load = h2loadVersion();
  if (!h2load) {
    log('bench: h2load not found: apt-get install nghttp2-client (the HTTPS rows need it)');
    process.exitCode = 1;
    return;
  }
  const loadBefore = loadavg()[0];
  const { scenarios: selected } = config;
  const servers = httpsServers.filter((s) => selected.some((sc) => applies(s, sc)));
  for (const s of servers) {
    const mine = selected.filter((sc) => applies(s, sc));
    cells.set(
      s.name,
      new Map(
        mine.map((sc) => [
          sc.name,
          { state: 'ok', rps: [], perCpu: [], util: [], shares: [], runs: [], errors: [] },
        ]),
      ),
    );
  }
  fixture = createFixture();
  const tls = await makeBenchCertificate(fixture.dir);
  const { readFileSync } = await import('node:fs');
  const ca = readFileSync(tls.ca);
  config.caFile = tls.ca;
  log(
    `bench: HTTPS rows; fixture and certificate in ${fixture.dir}; starting ${servers.map((s) => s.name).join(', ')}`,
  );
  await startAll(servers, selected, tls, ca);

  const perRun = config.warmupSec + config.durationSec;
  const jobs =
    selected.reduce((n, sc) => n + running.filter((r) => applies(r.server, sc)).length, 0) * config.rounds;
  log(`bench: ${jobs} measurements of ~${perRun} s each (~${Math.ceil((jobs * (perRun + 0.5)) / 60)} min)`);
  for (let round = 0; round < config.rounds; round++) {
    for (const scenario of selected) {
      // Same interleaving as run.mjs: rotate every other round, odd rounds reversed.
      const eligible = running.filter((r) => applies(r.server, scenario));
      const shift = Math.floor(round / 2);
      const rotated = eligible.map((_, i) => eligible[(i + shift) % eligible.length]);
      const order = round % 2 ? rotated.reverse() : rotated;
      for (const { server, handle } of order) {
        if (stopping()) return;
        if (cell(server.name, scenario.name).state !== 'ok') continue;
        await measure(server, handle, scenario, round, config);
      }
    }
  }
  for (const r of running.splice(0)) await r.handle.stop();

  const report = renderReport({
    groups: groups
      .map((g) => ({
        ...g,
        serverNames: g.servers.filter((n) => servers.some((s) => s.name === n)),
        scenarioNames: selected.filter((s) => s.group === g.name).map((s) => s.name),
      }))
      .filter((g) => g.scenarioNames.length),
    cell,
    peakRssKb: (name) => rssPeakKb.get(name),
    targets: httpsTargets,
    rssTargets: [],
  });
  const pin =
    CPU.server === undefined ? 'unpinned' : `servers on CPU ${CPU.server}, h2load on CPU ${CPU.load}`;
  console.log(
    `\n## Gatehouse HTTPS benchmark\n\nnode ${nodeVersion}, h2load ${h2load}, ${cpuCount} CPUs (${pin}); ` +
      `h2load -t1 -D ${config.durationSec}s (tls-handshake: -n sized from the warm-up's rate to last about as ` +
      `long) after a ${config.warmupSec} s warm-up run; median of ${config.rounds} ` +
      `interleaved round(s), ± is half the min-max spread; load average ${loadBefore.toFixed(2)} before, ` +
      `${loadavg()[0].toFixed(2)} after.\nScenarios: ${selected.map((s) => `${s.name} = ${s.title}`).join('; ')}.` +
      ` One certificate for all (ECDSA P-256 leaf signed by a CA made for the run); node-https and node-http2 ` +
      `are the Node ceilings (bare node:https / node:http2 answering a constant 1 KB); Gatehouse and nginx ` +
      `serve the fixture's 1k.txt. h2load resumes TLS sessions on reconnect (TLS 1.3 PSK with ECDHE), as ` +
      `returning browsers do, so tls-handshake measures mostly resumed handshakes on every server. ` +
      `tls-resumed: gatehouse-pair is two Gatehouse processes sharing tls.sessionTickets.keyFile, nginx-pair ` +
      `one nginx with two server blocks sharing ssl_session_ticket_key (the same 80-byte file), both on the ` +
      `server CPU; its CPU-seconds are both processes'; its load is a Node client (lib/tls-resume.mjs), so its ` +
      `req/s is bounded by the client and requests per server CPU-second is the comparison.\n` +
      `req/s is h2load's; requests per server CPU-second is h2load's done count over the server process's ` +
      `utime + stime (/proc/<pid>/stat, ${CLK_TCK} ticks/s) across the same timed run.\n`,
  );
  console.log(report);
  if (config.json) {
    const results = [];
    for (const [server, byScenario] of cells) {
      for (const [scenario, c] of byScenario) results.push({ server, scenario, ...c });
    }
    const verdicts = evaluateTargets({ cell, targets: httpsTargets });
    writeFileSync(config.json, `${JSON.stringify({ results, targets: verdicts }, null, 2)}\n`);
    log(`bench: wrote ${config.json}`);
  }
}

runToEnd(main, {
  stop: () => Promise.allSettled(running.map((r) => r.handle.stop())),
  cleanup: () => fixture?.cleanup(),
});
