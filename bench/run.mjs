#!/usr/bin/env node
// `npm run bench`: Gatehouse against its peers, measured side by side in one run on this machine, reported
// as medians and ratios (never compared with absolute numbers from elsewhere) of req/s and of requests per
// server CPU-second (wrk's request count over the server process's utime + stime during the same timed run,
// the steadier figure when other work takes the server's CPU), with each server's CPU utilisation.
//
//   node bench/run.mjs [--only 1k,proxy-1k,cache-hit-1k,ws-flood] [--servers gatehouse,sirv] [--json FILE]
//   BENCH_DURATION=5 (s per measurement) BENCH_ROUNDS=3 BENCH_CONNECTIONS=50 BENCH_WARMUP=1 (s)
//   BENCH_BASELINE=/path/to/other/checkout: `<name>-baseline` twins of the Gatehouse servers (no-regression)
//
// Every server runs as a child process pinned to CPU 0 and wrk runs pinned to CPU 1; the proxies' shared
// upstream runs on CPU 0 too. A scenario runs only on the servers of its group (static, policy, proxy,
// cache, ws-flood, adapters; --only takes group names too); servers that run none of the selected scenarios are not started. Servers are started once, checked
// with one real request per scenario, then measured interleaved (round-robin, rotating order each round). All
// children are stopped on exit, Ctrl-C and errors. Add scenarios in scenarios.mjs, servers in
// servers/index.mjs, targets in targets.mjs.
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { version as nodeVersion } from 'node:process';
import { parseArgs } from 'node:util';
import { baselineBuild, droppedKeys } from './lib/baseline.mjs';
import { CLK_TCK, cpuWindow } from './lib/cpu.mjs';
import { createFixture } from './lib/fixture.mjs';
import { FLOOD, startFlood } from './lib/flood.mjs';
import { probe } from './lib/http-probe.mjs';
import { log, positiveInt, runToEnd, stopping } from './lib/lifetime.mjs';
import { CPU, cpuCount, hasTaskset } from './lib/proc.mjs';
import { brief, CPU_BOUND, evaluateTargets, renderReport, summarize } from './lib/report.mjs';
import { sampleRss } from './lib/rss.mjs';
import { ensureWrk, runWrk } from './lib/wrk.mjs';
import { wsEcho } from './lib/ws-probe.mjs';
import { scenarios as allScenarios, groups, REFERENCE_EXPECT } from './scenarios.mjs';
import { servers as allServers } from './servers/index.mjs';
import { createUpstream } from './servers/upstream.mjs';
import { baselineTargets, rssTargets, throughputTargets } from './targets.mjs';

/** Whether `server` runs `scenario`: its groups include the scenario's group, and its `scenarios` (if any) the scenario. */
const applies = (server, scenario) =>
  server.groups.includes(scenario.group) && (server.scenarios?.includes(scenario.name) ?? true);
/** The path `server` is sent in `scenario`: its own from the scenario's `pathFor`, else the scenario's. */
const pathOf = (server, scenario) => scenario.pathFor?.[server.name] ?? scenario.path;

function parseCli() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        only: { type: 'string' },
        servers: { type: 'string' },
        json: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    log(`bench: ${err.message}`);
    process.exit(2);
  }
  if (values.help) {
    log(
      'usage: node bench/run.mjs [--only SCENARIO,...] [--servers NAME,...] [--json FILE]\n' +
        groups
          .map(
            (g) =>
              `  ${g.name}: scenarios ${allScenarios
                .filter((s) => s.group === g.name)
                .map((s) => s.name)
                .join(', ')}; servers ${allServers
                .filter((s) => s.groups.includes(g.name))
                .map((s) => s.name)
                .join(', ')}\n`,
          )
          .join('') +
        '  --only takes scenario and group names.\n' +
        '  env: BENCH_DURATION (s, default 5), BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (default 50),\n' +
        '       BENCH_WARMUP (s, default 1), BENCH_GATEHOUSE_BIN (another bin/gatehouse.js),\n' +
        '       BENCH_BASELINE (another checkout, built: adds <name>-baseline twins of the Gatehouse servers)',
    );
    process.exit(0);
  }
  const pick = (list, csv, what) => {
    if (!csv) return list;
    const names = csv
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      // A group name stands for its scenarios.
      .flatMap((n) =>
        what === 'scenario' && groups.some((g) => g.name === n)
          ? list.filter((x) => x.group === n).map((x) => x.name)
          : [n],
      );
    const unknown = names.filter((n) => !list.some((x) => x.name === n));
    if (unknown.length) {
      const known = [...list.map((x) => x.name), ...(what === 'scenario' ? groups.map((g) => g.name) : [])];
      log(`bench: unknown ${what} ${unknown.join(', ')} (known: ${known.join(', ')})`);
      process.exit(2);
    }
    return list.filter((x) => names.includes(x.name));
  };
  return {
    scenarios: pick(allScenarios, values.only, 'scenario'),
    servers: pick(allServers, values.servers, 'server'),
    json: values.json,
  };
}

const cli = parseCli();
const config = {
  durationSec: positiveInt('BENCH_DURATION', 5),
  rounds: positiveInt('BENCH_ROUNDS', 3),
  connections: positiveInt('BENCH_CONNECTIONS', 50),
  warmupSec: positiveInt('BENCH_WARMUP', 1),
};

// ---------- lifetime: nothing we start may outlive us ----------
let fixture;
let upstream; // the proxies' shared upstream, started when the first proxy starts
const usesUpstream = new Set(); // names of the servers that asked for it (ctx.upstream())
const running = []; // { server, handle }

// ---------- run ----------

/**
 * cells.get(server).get(scenario) = { state: 'ok'|..., detail?, headers?, rps: [], perCpu: [], util: [],
 * shares: [], runs: [], errors: [] } (per timed run: req/s, requests per server CPU-second, server CPU-s /
 * wall-s, how the server CPU's time split between server / idle / rest / steal), only for the
 * scenarios the server runs (`cell()` is undefined for the others).
 */
const cells = new Map();
const rssPeakKb = new Map();
const cell = (server, scenario) => cells.get(server)?.get(scenario);

/** Problems with `res` against a server's `expectHeaders` ({ name: exact string | RegExp }). */
function headerProblems(expectHeaders = {}, res) {
  const problems = [];
  for (const [name, want] of Object.entries(expectHeaders)) {
    const raw = res.headers[name];
    const got = Array.isArray(raw) ? raw.join(', ') : raw;
    const ok = got !== undefined && (want instanceof RegExp ? want.test(got) : got === want);
    if (!ok) problems.push(`${name}: ${got === undefined ? 'missing' : `'${got}'`}, expected ${want}`);
  }
  return problems;
}

function setState(server, state, detail) {
  for (const c of cells.get(server).values()) Object.assign(c, { state, detail });
}

async function checkScenario(server, handle, scenario) {
  const c = cell(server.name, scenario.name);
  const probeServer = (opts) => probe({ port: handle.port, ...opts });
  const path = pathOf(server, scenario);
  try {
    c.headers = server.reference
      ? (scenario.referenceHeaders ?? {})
      : ((await scenario.headers?.({ probe: probeServer })) ?? {});
    const expect = server.reference ? REFERENCE_EXPECT : scenario.expect;
    // A cache-hit scenario: this first request fills the cache, so the checked one (and every timed one)
    // must be answered from it.
    if (scenario.expectCacheHit) await probeServer({ path, headers: c.headers });
    // A flooded scenario: the endpoint the flood will use must echo.
    if (scenario.flood) {
      if (!server.wsPath) throw new Error(`${server.name} has no WebSocket endpoint to flood`);
      await wsEcho({ port: handle.port, path: server.wsPath });
    }
    const res = await probeServer({ path, headers: c.headers });
    const problems = [];
    if (res.status !== expect.status) problems.push(`status ${res.status}, expected ${expect.status}`);
    else if (expect.bodyLength !== undefined && res.bodyLength !== expect.bodyLength) {
      problems.push(`body ${res.bodyLength} bytes, expected ${expect.bodyLength}`);
    }
    const missing = [
      ...headerProblems(server.expectHeaders, res),
      ...(server.reference ? [] : headerProblems(scenario.expectHeaders, res)),
    ];
    const notHit = scenario.expectCacheHit ? headerProblems(server.hitHeaders, res) : [];
    if (problems.length) Object.assign(c, { state: 'wrong status', detail: problems.join(', ') });
    else if (missing.length) Object.assign(c, { state: 'wrong headers', detail: missing.join(', ') });
    else if (notHit.length) {
      Object.assign(c, { state: 'not a cache hit', detail: `second GET ${path}: ${notHit.join(', ')}` });
    }
  } catch (err) {
    Object.assign(c, { state: 'wrong status', detail: err.message });
  }
}

async function measure(server, handle, scenario, round) {
  const c = cell(server.name, scenario.name);
  if (handle.child.exitCode !== null || handle.child.signalCode !== null) {
    const how = handle.child.signalCode ?? `code ${handle.child.exitCode}`;
    setState(server.name, 'crashed', `exited (${how}) during the run\n${handle.logs()}`);
    return;
  }
  const upstreamProblem = usesUpstream.has(server.name) ? upstream?.problem() : undefined;
  if (upstreamProblem) {
    setState(server.name, 'crashed', upstreamProblem);
    return;
  }
  const rss = sampleRss(handle.pid, 250);
  const wrkOpts = {
    port: handle.port,
    path: pathOf(server, scenario),
    headers: c.headers,
    connections: config.connections,
    latency: Boolean(scenario.latency),
  };
  let flood;
  try {
    // The flood runs through the warm-up too, so the timed run starts with it at full speed.
    if (scenario.flood) flood = await startFlood({ port: handle.port, path: server.wsPath });
    await runWrk({ ...wrkOpts, durationSec: config.warmupSec });
    // The server's own CPU time (utime + stime; for proxies the proxy alone, not the upstream) over the
    // timed run only, read just before and after it.
    flood?.mark();
    // A server on more than the server CPU (gatehouse-workers2) has no one CPU to split: no shares.
    const cpuWin = server.cpuTree
      ? cpuWindow(handle.pid, undefined, { tree: true })
      : cpuWindow(handle.pid, CPU.server);
    const result = await runWrk({ ...wrkOpts, durationSec: config.durationSec });
    const cpu = cpuWin.stop();
    const flooding = flood;
    flood = undefined; // stopped here, not again in `finally`
    const floodStats = await flooding?.stop();
    c.rps.push(result.requestsPerSec);
    const run = { ...result, round };
    if (result.latencyMs) c.latency.push(result.latencyMs);
    else if (scenario.latency) c.errors.push(`round ${round + 1}: no latency distribution in wrk's output`);
    if (floodStats) {
      run.flood = floodStats;
      c.flood.push(floodStats);
      for (const e of floodStats.errors) c.errors.push(`round ${round + 1}: flood: ${e}`);
    }
    if (cpu && cpu.cpuSec > 0) {
      run.server = {
        cpuSec: cpu.cpuSec,
        wallSec: cpu.wallSec,
        cpuUtil: cpu.util,
        ...(cpu.cpuShares ? { serverCpuShares: cpu.cpuShares } : {}),
      };
      run.requestsPerCpuSec = result.requests / cpu.cpuSec;
      c.perCpu.push(run.requestsPerCpuSec);
      c.util.push(cpu.util);
      if (cpu.cpuShares) c.shares.push(cpu.cpuShares);
    } else {
      const why = cpu ? 'no measurable CPU time' : `CPU time not readable from /proc/${handle.pid}/stat`;
      log(`  (${server.name}: ${why}; no per CPU-s figure for this run)`);
    }
    c.runs.push(run);
    for (const e of result.errors) c.errors.push(`round ${round + 1}: ${e}`);
    const lat = result.latencyMs
      ? `  p50 ${result.latencyMs.p50?.toFixed(2)} ms p99 ${result.latencyMs.p99?.toFixed(2)} ms`
      : '';
    const floodText = run.flood
      ? `  flood ${Math.round(run.flood.echoes / run.flood.seconds)} echoes/s` +
        `, ${Object.values(run.flood.closes).reduce((a, b) => a + b, 0)} closed`
      : '';
    const cpuText = run.requestsPerCpuSec
      ? ` ${Math.round(run.requestsPerCpuSec).toString().padStart(8)} req/CPU-s  CPU ${cpu.util.toFixed(2)}` +
        (cpu.cpuShares
          ? ` (CPU ${CPU.server}: idle ${cpu.cpuShares.idle.toFixed(2)}, taken by others ` +
            `${cpu.cpuShares.rest.toFixed(2)})`
          : '')
      : '';
    log(
      `  round ${round + 1}/${config.rounds}  ${scenario.name.padEnd(12)} ${server.name.padEnd(21)}` +
        ` ${Math.round(result.requestsPerSec).toString().padStart(8)} req/s${cpuText}${lat}${floodText}` +
        (result.errors.length ? `  (${result.errors.join('; ')})` : ''),
    );
  } catch (err) {
    if (stopping()) return;
    c.errors.push(`round ${round + 1}: ${err.message}`);
    log(
      `  round ${round + 1}/${config.rounds}  ${scenario.name.padEnd(12)} ${server.name.padEnd(21)} failed: ${err.message}`,
    );
  } finally {
    await flood?.stop().catch(() => {});
    const peak = rss.stop();
    if (peak !== undefined) rssPeakKb.set(server.name, Math.max(rssPeakKb.get(server.name) ?? 0, peak));
  }
}

async function main() {
  let wrkVersion;
  try {
    wrkVersion = ensureWrk(log);
  } catch (err) {
    log(`bench: cannot run without wrk: ${err.message}`);
    process.exitCode = 1;
    return;
  }
  if (!hasTaskset)
    log('bench: taskset not found (util-linux); server and wrk are NOT pinned to separate CPUs');
  else if (cpuCount < 2) log('bench: only one CPU; server and wrk are NOT pinned to separate CPUs');

  const loadBefore = loadavg()[0];
  if (loadBefore > 0.5) {
    log(
      `bench: load average is ${loadBefore.toFixed(2)} before starting; expect noisy numbers (ratios still hold best)`,
    );
  }
  const { scenarios } = cli;
  const servers = cli.servers.filter((s) => scenarios.some((sc) => applies(s, sc)));
  const idle = cli.servers.filter((s) => !servers.includes(s));
  if (servers.length === 0) {
    log(
      `bench: none of the selected servers (${cli.servers.map((s) => s.name).join(', ')}) runs the selected ` +
        `scenarios (${scenarios.map((s) => s.name).join(', ')}); see --help for which servers run what`,
    );
    process.exitCode = 2;
    return;
  }
  if (idle.length) log(`bench: not starting ${idle.map((s) => s.name).join(', ')} (no selected scenario)`);
  fixture = createFixture();
  upstream = createUpstream({ dir: fixture.dir, log });
  for (const s of servers) {
    cells.set(
      s.name,
      new Map(
        scenarios
          .filter((sc) => applies(s, sc))
          .map((sc) => [
            sc.name,
            {
              state: 'ok',
              rps: [],
              perCpu: [],
              util: [],
              shares: [],
              runs: [],
              errors: [],
              latency: [],
              flood: [],
            },
          ]),
      ),
    );
  }

  log(`bench: fixture in ${fixture.dir}; starting ${servers.map((s) => s.name).join(', ')}`);
  for (const server of servers) {
    if (stopping()) return;
    const reason = server.unavailable?.();
    if (reason) {
      setState(server.name, 'unavailable', reason);
      log(`  ${server.name}: unavailable (${reason})`);
      continue;
    }
    try {
      const ctx = {
        upstream: () => {
          usesUpstream.add(server.name);
          return upstream.get();
        },
      };
      const handle = await server.start(fixture.dir, ctx);
      running.push({ server, handle });
      log(
        `  ${server.name}: pid ${handle.pid} on 127.0.0.1:${handle.port}${handle.cpus ? `, CPUs ${handle.cpus}` : ''}`,
      );
      for (const scenario of scenarios) {
        if (applies(server, scenario)) await checkScenario(server, handle, scenario);
      }
    } catch (err) {
      const missing = server.notSupported?.(err.message);
      if (missing) {
        setState(server.name, 'unavailable', missing);
        log(`  ${server.name}: skipped: ${missing}`);
      } else {
        setState(server.name, 'failed to start', err.message);
        log(`  ${server.name}: failed to start: ${brief(err.message)}`);
      }
    }
  }

  const perRun = config.warmupSec + config.durationSec;
  const pairs = scenarios.reduce((n, sc) => n + running.filter((r) => applies(r.server, sc)).length, 0);
  const jobs = pairs * config.rounds;
  log(`bench: ${jobs} measurements of ~${perRun} s each (~${Math.ceil((jobs * (perRun + 0.3)) / 60)} min)`);
  for (let round = 0; round < config.rounds; round++) {
    for (const scenario of scenarios) {
      // Rotate the order every other round so no server always runs first (or right after the same peer),
      // and run the odd rounds in reverse so that neighbours (a server and its -baseline twin) take turns
      // going first: a rotation alone keeps one of them first in every round until it wraps (and with two
      // servers, rotating and reversing in the same round would cancel out).
      const eligible = running.filter((r) => applies(r.server, scenario));
      const shift = Math.floor(round / 2);
      const rotated = eligible.map((_, i) => eligible[(i + shift) % eligible.length]);
      const order = round % 2 ? rotated.reverse() : rotated;
      for (const { server, handle } of order) {
        if (stopping()) return;
        if (cell(server.name, scenario.name).state !== 'ok') continue;
        await measure(server, handle, scenario, round);
      }
    }
  }

  const upstreamPid = upstream.pid;
  for (const r of running.splice(0)) await r.handle.stop();
  await upstream.stop();

  const targets = [...throughputTargets, ...(baselineBuild ? baselineTargets : [])];
  const report = renderReport({
    groups: groups.map((g) => ({
      ...g,
      serverNames: servers.filter((s) => s.groups.includes(g.name)).map((s) => s.name),
      scenarioNames: scenarios.filter((s) => s.group === g.name).map((s) => s.name),
    })),
    cell,
    peakRssKb: (name) => rssPeakKb.get(name),
    targets,
    rssTargets,
    baselinePairs: servers
      .filter((s) => s.baselineOf && servers.some((x) => x.name === s.baselineOf))
      .map((s) => ({ subject: s.baselineOf, baseline: s.name })),
  });
  const pin = CPU.server === undefined ? 'unpinned' : `server on CPU ${CPU.server}, wrk on CPU ${CPU.load}`;
  const meta = {
    date: new Date().toISOString(),
    node: nodeVersion,
    wrk: wrkVersion,
    cpus: cpuCount,
    pinning: pin,
    wrkArgs: `-t1 -c${config.connections} -d${config.durationSec}s`,
    clkTck: CLK_TCK,
    cpuBound: CPU_BOUND,
    warmupSec: config.warmupSec,
    rounds: config.rounds,
    loadavg1mBefore: loadBefore,
    loadavg1mAfter: loadavg()[0],
    ...(baselineBuild ? { baseline: baselineBuild.dir, baselineDroppedKeys: [...droppedKeys] } : {}),
    ...(upstreamPid ? { proxyUpstream: { pid: upstreamPid, cpus: CPU.server ?? null } } : {}),
  };
  const notesOnServers = [
    servers.some((s) => s.reference && scenarios.some((sc) => applies(s, sc)))
      ? 'The node ceiling answers its constant 200 + 1 KB in every static scenario.'
      : '',
    baselineBuild
      ? `The *-baseline servers run ${baselineBuild.dir}/bin/gatehouse.js (BENCH_BASELINE) with the same ` +
        `arguments and config${
          droppedKeys.size
            ? `, except the keys its schema.json does not define, which were left out of its config: ` +
              `${[...droppedKeys].join(', ')} (so those pairs do not run the same config)`
            : ''
        }.`
      : '',
    scenarios.some((sc) => sc.flood)
      ? `The WebSocket flood is ${FLOOD.clients} ws clients in one process pinned to the wrk CPU at nice 10, ` +
        `each keeping ${FLOOD.window} unflushed ${FLOOD.sizeBytes}-byte messages in the socket and reconnecting ` +
        `when the server closes it; p50/p99 are wrk's --latency percentiles, which at saturation (a closed loop ` +
        `of ${config.connections} connections) include queueing.`
      : '',
    upstreamPid
      ? `Proxies forward to one shared upstream (bare node:http, constant 1 KB, keep-alive) running on the ` +
        `server CPU next to them${CPU.server === undefined ? '' : ` (CPU ${CPU.server})`}; their RSS and CPU ` +
        `time exclude it (the upstream's CPU is shared by all proxies and not counted).`
      : '',
  ].filter(Boolean);
  const metrics =
    `req/s is wrk's; requests per server CPU-second is wrk's request count over the server process's own ` +
    `utime + stime (/proc/<pid>/stat, ${CLK_TCK} ticks/s) across the same timed run, so CPU that other work ` +
    `takes from the server does not lower it; server CPU utilisation is that CPU time over the wall time ` +
    `(< ${CPU_BOUND}: the server was not the bottleneck, or lost CPU to others; see the notes).`;
  console.log(
    `\n## Gatehouse benchmark\n\nnode ${nodeVersion}, wrk ${wrkVersion}, ${cpuCount} CPUs (${pin}); ` +
      `wrk -t1 -c${config.connections} -d${config.durationSec}s after a ${config.warmupSec} s warm-up; ` +
      `median of ${config.rounds} interleaved round(s), ± is half the min-max spread; ` +
      `load average ${loadBefore.toFixed(2)} before, ${meta.loadavg1mAfter.toFixed(2)} after.\n` +
      `Scenarios: ${scenarios.map((s) => `${s.name} = ${s.title}`).join('; ')}.` +
      `${notesOnServers.map((n) => ` ${n}`).join('')}\n${metrics}\n`,
  );
  console.log(report);

  if (cli.json) {
    const stat = summarize({ cell });
    const results = [];
    for (const server of servers.map((s) => s.name)) {
      for (const scenario of scenarios.map((s) => s.name)) {
        const c = cell(server, scenario);
        if (!c) continue;
        results.push({
          server,
          scenario,
          group: allScenarios.find((s) => s.name === scenario).group,
          path: pathOf(
            servers.find((s) => s.name === server),
            scenarios.find((s) => s.name === scenario),
          ),
          state: c.state,
          detail: c.detail,
          medianRps: stat.median(server, scenario),
          medianRequestsPerCpuSec: stat.perCpu(server, scenario),
          medianCpuUtil: stat.util(server, scenario),
          medianServerCpuShares: stat.shares(server, scenario),
          rps: c.rps,
          requestsPerCpuSec: c.perCpu,
          cpuUtil: c.util,
          ...(c.latency.length ? { latencyMs: c.latency } : {}),
          ...(c.flood.length ? { flood: c.flood } : {}),
          errors: c.errors,
          runs: c.runs,
        });
      }
    }
    const peakRssMb = Object.fromEntries([...rssPeakKb].map(([k, v]) => [k, Math.round(v / 102.4) / 10]));
    const verdicts = evaluateTargets({ cell, targets });
    writeFileSync(cli.json, `${JSON.stringify({ meta, results, peakRssMb, targets: verdicts }, null, 2)}\n`);
    log(`bench: wrote ${cli.json}`);
  }
}

runToEnd(main, {
  stop: () => Promise.allSettled([...running.map((r) => r.handle.stop()), upstream?.stop()]),
  cleanup: () => fixture?.cleanup(),
});
