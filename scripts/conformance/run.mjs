#!/usr/bin/env node
// HTTP cache conformance: runs the public HTTP cache test suite (cache-tests.fyi, npm
// `http-cache-tests`) through Gatehouse as a reverse proxy and scores the result.
// See test/conformance/README.md.
//
//   node scripts/conformance/run.mjs [options]
//
//   --cache                 enable the proxy cache: route gets cache: { enabled: true, store }
//   --store memory|disk     cache store with --cache (default memory)
//   --list-failing          print every required/optimal test that did not pass, with its name
//   --json FILE             write the suite's raw results (JSON) to FILE
//   --floor-required N      exit 1 when fewer than N required tests pass
//   --floor-optimal N       exit 1 when fewer than N optimal tests pass
//   --id TEST_ID            run one test with the suite's request/response dumps (no score)
//   --keep-alive            let the suite's client reuse connections (default: one per request)
//   --origin-port N         port of the suite's origin server (default: a free one)
//   --proxy-port N          port of Gatehouse (default: a free one)
//   --timeout SECONDS       bound on the whole run (default 900)
//   --gatehouse DIR         the Gatehouse tree to test (bin/ + dist/; default: this repository)
//   -h, --help              this help
//
// Environment:
//   GATEHOUSE_CONFORMANCE_DIR      where the suite is installed (default $XDG_CACHE_HOME/gatehouse-conformance,
//                                  else <os tmpdir>/gatehouse-conformance)
//   GATEHOUSE_CONFORMANCE_CONFIG   JSON string, or path of a JSON file, merged into the proxy route
//   GATEHOUSE_CONFORMANCE_TIMEOUT  as --timeout
//
// Exit status: 0 done (and floors met), 1 run failed or a floor was missed, 2 usage error.

import { spawn } from 'node:child_process';
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const SUITE = 'http-cache-tests';
const SUITE_VERSION = '0.4.5';
const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../..');
const PRELOAD = path.join(HERE, 'one-connection.mjs');

// ---------- options ----------

function usage(code) {
  const text = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n');
  const end = text.findIndex((l) => l.startsWith('// Exit status'));
  console.log(
    text
      .slice(1, end + 1)
      .map((l) => l.replace(/^\/\/ ?/, ''))
      .join('\n'),
  );
  process.exit(code);
}

let args;
try {
  args = parseArgs({
    strict: true,
    options: {
      cache: { type: 'boolean', default: false },
      store: { type: 'string', default: 'memory' },
      'list-failing': { type: 'boolean', default: false },
      json: { type: 'string' },
      'floor-required': { type: 'string' },
      'floor-optimal': { type: 'string' },
      id: { type: 'string' },
      'keep-alive': { type: 'boolean', default: false },
      'origin-port': { type: 'string' },
      'proxy-port': { type: 'string' },
      timeout: { type: 'string' },
      gatehouse: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }).values;
} catch (err) {
  console.error(`conformance: ${err.message}`);
  usage(2);
}
if (args.help) usage(0);

function intOption(name, value, min, max) {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    console.error(`conformance: --${name}: expected an integer ${min}..${max}, got '${value}'`);
    process.exit(2);
  }
  return n;
}
if (!['memory', 'disk'].includes(args.store)) {
  console.error(`conformance: --store: expected memory or disk, got '${args.store}'`);
  process.exit(2);
}
const floorRequired = intOption('floor-required', args['floor-required'], 0, 10_000);
const floorOptimal = intOption('floor-optimal', args['floor-optimal'], 0, 10_000);
const originPortOpt = intOption('origin-port', args['origin-port'], 1, 65535);
const proxyPortOpt = intOption('proxy-port', args['proxy-port'], 1, 65535);
const timeoutSec = intOption(
  'timeout',
  args.timeout ?? process.env.GATEHOUSE_CONFORMANCE_TIMEOUT ?? '900',
  1,
  86_400,
);

const gatehouseDir = path.resolve(args.gatehouse ?? REPO);

const suiteDir = path.resolve(
  process.env.GATEHOUSE_CONFORMANCE_DIR ||
    path.join(process.env.XDG_CACHE_HOME || os.tmpdir(), 'gatehouse-conformance'),
);
const pkgDir = path.join(suiteDir, 'node_modules', SUITE);

// ---------- process bookkeeping: nothing outlives us ----------

const children = new Set();
let runDir;
let keepRunDir = false;

const log = (msg) => console.error(`* ${msg}`);

class RunError extends Error {}

function start(name, cmd, argv, opts) {
  const child = spawn(cmd, argv, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
  child.label = name;
  // Resolves on exit, or on a spawn failure (ENOENT...), which emits 'error' and no 'exit'.
  child.exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
  });
  children.add(child);
  child.exited.then(() => children.delete(child));
  return child;
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), 5000);
  await child.exited;
  clearTimeout(t);
}

async function cleanup() {
  const keep = keepRunDir; // decided before the children go (their exits are not failures)
  await Promise.all([...children].map(stop));
  if (runDir && !keep) rmSync(runDir, { recursive: true, force: true });
  keepRunDir = keep;
}

// Last resort (process.exit from anywhere): signal whatever is still running.
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

let finishing = false;
async function finish(code, message) {
  if (finishing) return;
  finishing = true;
  if (message) console.error(`conformance: ${message}`);
  await cleanup();
  if (keepRunDir && runDir) console.error(`conformance: logs kept in ${runDir}`);
  process.exit(code);
}

for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => finish(128 + os.constants.signals[sig], `${sig}: stopping`));
}

const deadline = setTimeout(() => {
  keepRunDir = true;
  finish(1, `timed out after ${timeoutSec} s (--timeout / GATEHOUSE_CONFORMANCE_TIMEOUT)`);
}, timeoutSec * 1000);
deadline.unref();

// ---------- helpers ----------

function tail(file, lines = 20) {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

function run(cmd, argv, opts) {
  const child = start(cmd, cmd, argv, opts);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return child.exited.then((r) => ({ ...r, out }));
}

/** A port that is free on all interfaces (the origin binds all of them). */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function canConnect(port) {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    sock.setTimeout(1000);
    const done = (ok) => {
      sock.destroy();
      resolve(ok);
    };
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
    sock.once('timeout', () => done(false));
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitForPort(child, port, logFile, seconds = 15) {
  for (let i = 0; i < seconds * 10; i++) {
    if (child.exitCode !== null || child.signalCode !== null) break;
    if (await canConnect(port)) return;
    await sleep(100);
  }
  keepRunDir = true;
  const why = child.exitCode !== null ? `exited with ${child.exitCode}` : `not listening on ${port}`;
  throw new RunError(`${child.label} ${why}\n${tail(logFile)}`);
}

function deepMerge(base, over) {
  const isObj = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObj(base) || !isObj(over)) return over;
  const out = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = deepMerge(base[k], v);
  return out;
}

function extraRouteConfig() {
  const raw = process.env.GATEHOUSE_CONFORMANCE_CONFIG;
  if (!raw) return {};
  const text = raw.trimStart().startsWith('{') ? raw : readFileSync(raw, 'utf8');
  let v;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new RunError(`GATEHOUSE_CONFORMANCE_CONFIG: not valid JSON: ${err.message}`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new RunError('GATEHOUSE_CONFORMANCE_CONFIG: expected a JSON object (proxy route settings)');
  }
  return v;
}

// ---------- 1. the suite ----------

function installedVersion() {
  try {
    return JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

async function ensureSuite() {
  if (installedVersion() === SUITE_VERSION) return;
  log(`installing ${SUITE}@${SUITE_VERSION} into ${suiteDir}`);
  mkdirSync(suiteDir, { recursive: true });
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = await run(
    npm,
    [
      'install',
      '--no-save',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      '--prefix',
      suiteDir,
      `${SUITE}@${SUITE_VERSION}`,
    ],
    { cwd: suiteDir },
  );
  if (r.code !== 0 || installedVersion() !== SUITE_VERSION) {
    const why = r.error?.message ?? r.code ?? r.signal;
    throw new RunError(`npm install ${SUITE}@${SUITE_VERSION} failed (${why})\n${r.out}`);
  }
}

/** Where the package keeps its entry points: 0.4.x at the top, later git trees under test-engine/. */
function suiteLayout() {
  const pick = (...c) => c.find((f) => existsSync(path.join(pkgDir, f)));
  const layout = {
    cli: pick('cli.mjs', 'test-engine/cli.mjs'),
    server: pick('server/server.mjs', 'test-engine/server/server.mjs'),
    tests: pick('tests/index.mjs'),
    results: pick('lib/display.mjs', 'test-engine/lib/results.mjs'),
  };
  for (const [k, v] of Object.entries(layout)) if (!v) throw new RunError(`${pkgDir}: no ${k} module found`);
  return layout;
}

// ---------- 2. origin, 3. Gatehouse ----------

async function startOrigin(layout, port) {
  const logFile = path.join(runDir, 'origin.log');
  const child = start('origin', process.execPath, [layout.server], {
    cwd: pkgDir,
    env: {
      ...process.env,
      npm_config_port: String(port),
      npm_config_protocol: 'http',
      npm_config_pidfile: path.join(runDir, 'origin.pid'),
    },
  });
  const out = createWriteStream(logFile);
  child.stdout.pipe(out);
  child.stderr.pipe(out);
  await waitForPort(child, port, logFile);
  return child;
}

function checkBuild() {
  const main = path.join(gatehouseDir, 'dist', 'cli', 'main.js');
  if (!existsSync(main)) throw new RunError(`${main} is missing: run \`npm run build\` first`);
  const built = statSync(main).mtimeMs;
  const newer = [];
  const walk = (dir) => {
    for (const e of readdirSafe(dir)) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts') && statSync(p).mtimeMs > built) newer.push(path.relative(gatehouseDir, p));
    }
  };
  walk(path.join(gatehouseDir, 'src'));
  if (newer.length)
    log(`warning: dist/ may be stale (newer: ${newer.slice(0, 3).join(', ')}); run npm run build`);
}

function readdirSafe(dir) {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/** The proxy route. `cacheControl: null` makes Gatehouse pass upstream responses without Cache-Control
 *  unchanged; builds without that option reject it, and then we run without it (and say so). */
async function buildConfig(originPort) {
  const { parseConfig } = await import(
    pathToFileURL(path.join(gatehouseDir, 'dist', 'config', 'load.js')).href
  );
  const extra = extraRouteConfig();
  const base = { prefix: '/', upstream: `http://127.0.0.1:${originPort}` };
  if (args.cache) base.cache = { enabled: true, store: args.store };
  const make = (passThrough) => ({
    proxy: [deepMerge(passThrough ? { ...base, cacheControl: null } : base, extra)],
  });
  let config = make(true);
  try {
    parseConfig(config, 'conformance config');
  } catch (err) {
    if (!('cacheControl' in extra) && /cacheControl/.test(err.message)) {
      log(
        'warning: this build has no `cacheControl: null` (pass-through) on proxy routes; running without it',
      );
      config = make(false);
      parseConfig(config, 'conformance config');
    } else {
      const hint =
        args.cache && /proxy\[0\]\.cache\b/.test(err.message) ? ' (this build has no proxy cache)' : '';
      throw new RunError(`${err.message}${hint}`);
    }
  }
  return config;
}

async function startGatehouse(config, port) {
  const siteDir = path.join(runDir, 'site');
  mkdirSync(siteDir);
  const configFile = path.join(runDir, 'gatehouse.conformance.json');
  writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`);
  const logFile = path.join(runDir, 'gatehouse.log');
  const child = start(
    'gatehouse',
    process.execPath,
    [
      path.join(gatehouseDir, 'bin', 'gatehouse.js'),
      'serve',
      siteDir,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--log',
      'off',
      '--config',
      configFile,
    ],
    { cwd: runDir },
  );
  const out = createWriteStream(logFile);
  child.stdout.pipe(out);
  child.stderr.pipe(out);
  await waitForPort(child, port, logFile);
  return child;
}

/** The client reads what the origin saw through GET /state/<id>; the origin answers an unknown id
 *  with 404 "State not found". That must come back through the proxy. */
async function probe(base) {
  let last = '';
  for (let i = 1; i <= 30; i++) {
    try {
      const r = await fetch(`${base}/state/gatehouse-conformance-probe-${process.pid}-${i}`, {
        signal: AbortSignal.timeout(5000),
      });
      const body = await r.text();
      if (r.status === 404 && body.includes('State not found')) {
        const cc = r.headers.get('cache-control');
        if (cc !== null) {
          log(`warning: the proxy adds 'Cache-Control: ${cc}' to origin responses that have none`);
        }
        return;
      }
      last = `${r.status} ${body.slice(0, 200)}`;
    } catch (err) {
      last = err.message;
    }
    await sleep(1000);
  }
  throw new RunError(`the proxy at ${base} does not forward GET /state/... to the origin (last: ${last})`);
}

// ---------- 4. the client ----------

async function runClient(layout, base) {
  const argv = ['--no-warnings'];
  if (!args['keep-alive']) argv.push('--import', pathToFileURL(PRELOAD).href);
  argv.push(layout.cli);
  const child = start('client', process.execPath, argv, {
    cwd: pkgDir,
    env: {
      ...process.env,
      npm_config_base: base,
      npm_package_config_base: '',
      // cli.mjs compares the id with '' and crashes when it is undefined
      npm_config_id: args.id ?? '',
      npm_package_config_id: '',
    },
  });
  if (args.id !== undefined) {
    child.stdout.pipe(process.stdout);
    child.stderr.pipe(process.stderr);
    await child.exited;
    return undefined;
  }
  const chunks = [];
  let stderr = '';
  child.stdout.on('data', (d) => chunks.push(d));
  child.stderr.on('data', (d) => (stderr += d));
  const { code, signal } = await child.exited;
  const out = Buffer.concat(chunks).toString('utf8');
  // The CLI exits 0 even when it crashes: insist on a non-empty JSON object.
  let results;
  try {
    results = JSON.parse(out);
  } catch {}
  const n = results && typeof results === 'object' ? Object.keys(results).length : 0;
  if (code !== 0 || n === 0) {
    keepRunDir = true;
    writeFileSync(path.join(runDir, 'client.out'), out);
    writeFileSync(path.join(runDir, 'client.err'), stderr);
    throw new RunError(
      `the suite's client failed (exit ${code ?? signal}, ${n} results)\n${stderr.trimEnd().split('\n').slice(-20).join('\n') || out.slice(0, 2000)}`,
    );
  }
  if (stderr.trim()) log(`client stderr: ${stderr.trim().split('\n').slice(0, 3).join(' | ')}`);
  return results;
}

// ---------- 5. score ----------

async function loadScorer(layout) {
  const imp = (f) => import(pathToFileURL(path.join(pkgDir, f)).href);
  const suites = [...(await imp(layout.tests)).default];
  // The 0.4.x CLI appends the Surrogate-Control tests to the list it runs; score what it ran.
  const cliSource = readFileSync(path.join(pkgDir, layout.cli), 'utf8');
  const sc = path.join(path.dirname(layout.tests), 'surrogate-control.mjs');
  if (/surrogate-control\.mjs/.test(cliSource) && existsSync(path.join(pkgDir, sc))) {
    const surrogate = (await imp(sc)).default;
    if (!suites.some((s) => s === surrogate || s.id === surrogate.id)) suites.push(surrogate);
  }
  const { determineTestResult } = await imp(layout.results);
  if (typeof determineTestResult !== 'function')
    throw new RunError(`${layout.results}: no determineTestResult`);

  // The package does not export its result types in every version, so learn them from the
  // function itself on a tiny synthetic suite.
  const syn = [
    {
      id: 'syn',
      tests: [
        { id: 'r', kind: 'required' },
        { id: 'o', kind: 'optimal' },
        { id: 'c', kind: 'check' },
        { id: 'd', kind: 'required', depends_on: ['r'] },
      ],
    },
  ];
  const fail = ['Assertion', 'x'];
  const key = (v) => JSON.stringify(v);
  const types = new Map(
    [
      ['pass', determineTestResult(syn, 'r', { r: true })],
      ['yes', determineTestResult(syn, 'c', { c: true })],
      ['fail', determineTestResult(syn, 'r', { r: fail })],
      ['optional_fail', determineTestResult(syn, 'o', { o: fail })],
      ['no', determineTestResult(syn, 'c', { c: fail })],
      ['setup_fail', determineTestResult(syn, 'r', { r: ['Setup', 'x'] })],
      ['retry', determineTestResult(syn, 'r', { r: ['Setup', 'retry'] })],
      ['dependency_fail', determineTestResult(syn, 'd', { r: fail, d: true })],
      ['untested', determineTestResult(syn, 'r', {})],
    ].map(([name, v]) => [key(v), name]),
  );

  const tests = suites.flatMap((s) => s.tests.map((t) => ({ ...t, kind: t.kind ?? 'required' })));
  return (results) => {
    const rows = tests.map((t) => ({
      id: t.id,
      name: t.name,
      kind: t.kind,
      result: types.get(key(determineTestResult(suites, t.id, results))) ?? 'other',
      detail: Array.isArray(results[t.id]) ? results[t.id][1] : '',
    }));
    const count = (kind, result) => rows.filter((r) => r.kind === kind && r.result === result).length;
    const total = (kind) => rows.filter((r) => r.kind === kind).length;
    return { rows, count, total };
  };
}

function report(score) {
  const { rows, count, total } = score;
  const pad = (n) => String(n).padStart(3);
  console.log(
    `required pass ${pad(count('required', 'pass'))} / ${total('required')}   ` +
      `optimal pass ${pad(count('optimal', 'pass'))} / ${total('optimal')}   ` +
      `check yes ${pad(count('check', 'yes'))} / ${total('check')}`,
  );
  const breakdown = (kind) => {
    const by = {};
    for (const r of rows) if (r.kind === kind) by[r.result] = (by[r.result] ?? 0) + 1;
    return Object.entries(by)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  };
  console.log(`  required: ${breakdown('required')}`);
  console.log(`  optimal:  ${breakdown('optimal')}`);
  console.log(`  check:    ${breakdown('check')}`);
  if (args['list-failing']) {
    console.log('\nnot passing (kind, result, id, name - detail):');
    for (const r of rows) {
      if (r.kind === 'check' || r.result === 'pass') continue;
      console.log(
        `${r.kind.padEnd(8)} ${r.result.padEnd(15)} ${r.id}  ${r.name ?? ''}${r.detail ? ` - ${r.detail}` : ''}`,
      );
    }
  }
}

// ---------- main ----------

async function main() {
  checkBuild();
  await ensureSuite();
  const layout = suiteLayout();
  const scorer = args.id === undefined ? await loadScorer(layout) : undefined;
  runDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-conformance-run-'));

  const originPort = originPortOpt ?? (await freePort());
  if (await canConnect(originPort)) throw new RunError(`origin port ${originPort} is already in use`);
  const config = await buildConfig(originPort);
  // The suite's origin binds all interfaces (server.listen(port)); only 127.0.0.1 is used here.
  await startOrigin(layout, originPort);
  log(`origin (${SUITE} ${installedVersion()}) on 127.0.0.1:${originPort} (bound on all interfaces)`);

  const proxyPort = proxyPortOpt ?? (await freePort());
  await startGatehouse(config, proxyPort);
  const base = `http://127.0.0.1:${proxyPort}`;
  log(`gatehouse on ${base}: ${JSON.stringify(config.proxy[0])}`);
  await probe(base);

  const t0 = Date.now();
  log(`running the suite (${args['keep-alive'] ? 'keep-alive' : 'one connection per request'})...`);
  const results = await runClient(layout, base);
  if (results === undefined) return 0;
  log(`${Object.keys(results).length} results in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  if (args.json) {
    mkdirSync(path.dirname(path.resolve(args.json)), { recursive: true });
    writeFileSync(args.json, `${JSON.stringify(results, null, 2)}\n`);
    log(`results written to ${args.json}`);
  }

  const score = scorer(results);
  report(score);
  let code = 0;
  const req = score.count('required', 'pass');
  const opt = score.count('optimal', 'pass');
  if (floorRequired !== undefined && req < floorRequired) {
    console.error(`conformance: required pass ${req} is below the floor ${floorRequired}`);
    code = 1;
  }
  if (floorOptimal !== undefined && opt < floorOptimal) {
    console.error(`conformance: optimal pass ${opt} is below the floor ${floorOptimal}`);
    code = 1;
  }
  return code;
}

main().then(
  (code) => finish(code),
  (err) => finish(1, err instanceof RunError ? err.message : (err?.stack ?? String(err))),
);
