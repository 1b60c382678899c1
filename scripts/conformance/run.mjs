#!/usr/bin/env node
// HTTP cache conformance: runs the public HTTP cache test suite (cache-tests.fyi, npm
// `http-cache-tests`) through Gatehouse as a reverse proxy, or (--private) in its browser mode
// against a caching fetch function in Node, and scores the result. See test/conformance/README.md.
//
//   node scripts/conformance/run.mjs [options]
//
//   --cache                 enable the proxy cache: route gets cache: { enabled: true, store }
//   --store memory|disk|redis  cache store with --cache (default memory); redis: the Redis at
//                           $REDIS_URL, else a redis-server (on PATH) started on a free loopback
//                           port for the run and stopped after it; keys under gatehouse-conformance-<pid>:
//   --suite npm|head        which suite: the npm release http-cache-tests@0.4.5 (default), or its git
//                           HEAD vendored in test/fixtures/cache-tests-HEAD (no install; 370 tests)
//   --via cli|express|bun|deno  what serves the proxy route: `gatehouse serve` (default), an Express 5
//                           app whose middleware is gatehouse-http/express with the same config, or
//                           `gatehouse serve` run by Bun or Deno (node_modules/.bin: their own servers)
//   --private               browser (private cache) mode: no proxy; the suite's client calls the
//                           adapter's fetch directly against its origin
//   --adapter FILE          with --private: module exporting cachedFetch(input, init)
//                           (default scripts/conformance/adapters/gatehouse-client.mjs)
//   --list-failing          print every required/optimal test that did not pass, with its name
//                           (--private always prints the required ones)
//   --json FILE             write the suite's raw results (JSON) to FILE
//   --out DIR               write results.json (raw) and tests.tsv (kind, result, id, name, detail)
//                           to DIR (--private default: <os tmpdir>/gatehouse-conformance-private)
//   --floor-required N      exit 1 when fewer than N required tests pass
//   --floor-optimal N       exit 1 when fewer than N optimal tests pass
//   --id TEST_ID            run one test with the suite's request/response dumps (no score)
//   --keep-alive            let the suite's client reuse connections (default: one per request; not
//                           with --private, where the adapter's own agent decides)
//   --origin-port N         port of the suite's origin server (default: a free one)
//   --proxy-port N          port of Gatehouse (default: a free one)
//   --timeout SECONDS       bound on the whole run (default 900)
//   --gatehouse DIR         the Gatehouse tree to test (bin/ + dist/; default: this repository;
//                           with --private, the dist/client the default adapter imports)
//   -h, --help              this help
//
// Environment:
//   GATEHOUSE_CONFORMANCE_DIR      where the suite is installed (default $XDG_CACHE_HOME/gatehouse-conformance,
//                                  else <os tmpdir>/gatehouse-conformance)
//   GATEHOUSE_CONFORMANCE_CONFIG   JSON string, or path of a JSON file, merged into the proxy route
//   GATEHOUSE_CONFORMANCE_TIMEOUT  as --timeout
//   GATEHOUSE_CONFORMANCE_CLIENT_OPTIONS  JSON object passed to createCachingFetch (default adapter)
//
// Exit status: 0 done (and floors met), 1 run failed or a floor was missed, 2 usage error (also: the
// --private adapter cannot provide its fetch, e.g. dist/client has no createCachingFetch yet).

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
import { parseOptions } from './options.mjs';
import { floorFailures, formatRow, makeScorer, notPassing, summaryLines, toTsv } from './score.mjs';

const SUITE = 'http-cache-tests';
const SUITE_VERSION = '0.4.5';
const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../..');
/** The suite's git HEAD (npm has nothing newer than 0.4.5), vendored: see its README.md. */
const HEAD_DIR = path.join(REPO, 'test', 'fixtures', 'cache-tests-HEAD');
const EXPRESS_APP = path.join(HERE, 'express-app.mjs');
const PRELOAD = path.join(HERE, 'one-connection.mjs');
const DRIVER = path.join(HERE, 'private-driver.mjs');
const DEFAULT_ADAPTER = path.join(HERE, 'adapters', 'gatehouse-client.mjs');

// ---------- options ----------

function usage(code) {
  const text = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n');
  // the header comment, from after the shebang to the first line that is not a comment
  const end = text.findIndex((l, i) => i > 0 && !l.startsWith('//'));
  console.log(
    text
      .slice(1, end)
      .map((l) => l.replace(/^\/\/ ?/, ''))
      .join('\n'),
  );
  process.exit(code);
}

const parsed = parseOptions(process.argv.slice(2), process.env);
if (parsed.kind === 'help') usage(0);
if (parsed.kind === 'usage') {
  console.error(`conformance: ${parsed.message}`);
  usage(2);
}
const flags = parsed.options;
const isPrivate = flags.mode === 'private';
const adapterFile = flags.adapter ?? DEFAULT_ADAPTER;
const timeoutSec = flags.timeoutSec;

const gatehouseDir = flags.gatehouse ?? REPO;

const suiteDir = path.resolve(
  process.env.GATEHOUSE_CONFORMANCE_DIR ||
    path.join(process.env.XDG_CACHE_HOME || os.tmpdir(), 'gatehouse-conformance'),
);
const pkgDir = flags.suite === 'head' ? HEAD_DIR : path.join(suiteDir, 'node_modules', SUITE);

// ---------- process bookkeeping: nothing outlives us ----------

const children = new Set();
let runDir;
let keepRunDir = false;

const log = (msg) => console.error(`* ${msg}`);

class RunError extends Error {
  constructor(message, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

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

/** What the origin log line and the summary call the suite. */
function suiteLabel() {
  if (flags.suite !== 'head') return `${SUITE} ${installedVersion()}`;
  const m = /commit ([0-9a-f]{40})/.exec(readFileSync(path.join(HEAD_DIR, 'README.md'), 'utf8'));
  return `${SUITE} git HEAD ${m ? m[1].slice(0, 7) : '(unknown commit)'}`;
}

async function ensureSuite() {
  if (flags.suite === 'head') {
    if (!existsSync(path.join(HEAD_DIR, 'tests', 'index.mjs'))) throw new RunError(`${HEAD_DIR}: missing`);
    return;
  }
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

/** `entry`: the built file the run needs (its mtime dates the build). */
function checkBuild(entry = path.join('dist', 'cli', 'main.js')) {
  const main = path.join(gatehouseDir, entry);
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
async function buildConfig(originPort, redis) {
  const { parseConfig } = await import(
    pathToFileURL(path.join(gatehouseDir, 'dist', 'config', 'load.js')).href
  );
  const extra = extraRouteConfig();
  const base = { prefix: '/', upstream: `http://127.0.0.1:${originPort}` };
  if (flags.cache) base.cache = { enabled: true, store: flags.store };
  const make = (passThrough) => ({
    ...(redis === undefined ? {} : { redis }),
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
        flags.cache && /proxy\[0\]\.cache\b/.test(err.message) ? ' (this build has no proxy cache)' : '';
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
  // --via express: the same config file, root and `log: off`, given to gatehouse-http/express instead.
  const argv =
    flags.via === 'express'
      ? [EXPRESS_APP, gatehouseDir, configFile, siteDir, String(port)]
      : [
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
        ];
  // --via bun|deno: the same command run by that runtime (the devDependency's binary).
  const runtimeBin = path.join(gatehouseDir, 'node_modules', '.bin', flags.via);
  const [cmd, pre] =
    flags.via === 'bun'
      ? [runtimeBin, []]
      : flags.via === 'deno'
        ? [runtimeBin, ['run', '-A']]
        : [process.execPath, []];
  const child = start('gatehouse', cmd, [...pre, ...argv], { cwd: runDir });
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

/** Runs a child that prints the suite's results as JSON on stdout. */
async function collectResults(child) {
  const chunks = [];
  let stderr = '';
  child.stdout.on('data', (d) => chunks.push(d));
  child.stderr.on('data', (d) => (stderr += d));
  const { code, signal } = await child.exited;
  const out = Buffer.concat(chunks).toString('utf8');
  // The suite's CLI exits 0 even when it crashes: insist on a non-empty JSON object.
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

async function passThrough(child) {
  child.stdout.pipe(process.stdout);
  child.stderr.pipe(process.stderr);
  await child.exited;
  return undefined;
}

async function runClient(layout, base) {
  const argv = ['--no-warnings'];
  if (!flags.keepAlive) argv.push('--import', pathToFileURL(PRELOAD).href);
  argv.push(layout.cli);
  const child = start('client', process.execPath, argv, {
    cwd: pkgDir,
    env: {
      ...process.env,
      npm_config_base: base,
      npm_package_config_base: '',
      // cli.mjs compares the id with '' and crashes when it is undefined
      npm_config_id: flags.id ?? '',
      npm_package_config_id: '',
    },
  });
  return flags.id !== undefined ? passThrough(child) : collectResults(child);
}

const driverEnv = () => ({ ...process.env, GATEHOUSE_CONFORMANCE_GATEHOUSE: gatehouseDir });

/** --private, before anything starts: the adapter must load and export its fetch. An adapter that
 *  exits 2 (gatehouse-client.mjs without createCachingFetch) makes the whole run a usage error. */
async function checkAdapter() {
  if (!existsSync(adapterFile)) throw new RunError(`--adapter: no such file: ${adapterFile}`, 2);
  const r = await run(process.execPath, ['--no-warnings', DRIVER, '--check', adapterFile], {
    cwd: REPO,
    env: driverEnv(),
  });
  if (r.code === 0) return;
  const text = r.out.trim() || String(r.error?.message ?? r.signal);
  // exit 2: the adapter said why in one line (prefixed 'conformance: '); pass it on as it is
  if (r.code === 2) throw new RunError(text.replace(/^conformance: /, ''), 2);
  throw new RunError(`the adapter ${adapterFile} failed to load (exit ${r.code ?? r.signal})\n${text}`);
}

/** --private: the suite's browser-mode client, in a child process (the suite's runner keeps module
 *  state, and the adapter's sockets die with it), calling the adapter's fetch against the origin. */
async function runPrivateClient(base) {
  const argv = ['--no-warnings', DRIVER, pkgDir, adapterFile, base];
  if (flags.id !== undefined) argv.push(flags.id);
  const child = start('client', process.execPath, argv, { cwd: REPO, env: driverEnv() });
  return flags.id !== undefined ? passThrough(child) : collectResults(child);
}

// ---------- 5. score ----------

async function loadScorer(layout) {
  const imp = (f) => import(pathToFileURL(path.join(pkgDir, f)).href);
  const suites = [...(await imp(layout.tests)).default];
  // The 0.4.x CLI appends the Surrogate-Control tests to the list it runs; score what it ran. The
  // browser mode skips them (all browser_skip), and they count as untested: same totals either way.
  const cliSource = readFileSync(path.join(pkgDir, layout.cli), 'utf8');
  const sc = path.join(path.dirname(layout.tests), 'surrogate-control.mjs');
  if (/surrogate-control\.mjs/.test(cliSource) && existsSync(path.join(pkgDir, sc))) {
    const surrogate = (await imp(sc)).default;
    if (!suites.some((s) => s === surrogate || s.id === surrogate.id)) suites.push(surrogate);
  }
  const { determineTestResult } = await imp(layout.results);
  if (typeof determineTestResult !== 'function')
    throw new RunError(`${layout.results}: no determineTestResult`);
  return makeScorer(suites, determineTestResult);
}

function report(score) {
  for (const line of summaryLines(score)) console.log(line);
  if (isPrivate) {
    const skipped = score.rows.filter((r) => r.kind === 'required' && r.result === 'untested').length;
    const failing = notPassing(score, ['required'], { withUntested: false });
    console.log(
      `\nrequired tests not passing (${failing.length}; ${skipped} more are browser_skip, not run in this mode):`,
    );
    for (const r of failing) console.log(formatRow(r));
  }
  if (flags.listFailing) {
    const kinds = isPrivate ? ['optimal'] : ['required', 'optimal'];
    console.log('\nnot passing (kind, result, id, name - detail):');
    for (const r of notPassing(score, kinds, { withUntested: !isPrivate })) console.log(formatRow(r));
  }
}

function writeOutputs(results, score) {
  if (flags.json) {
    mkdirSync(path.dirname(flags.json), { recursive: true });
    writeFileSync(flags.json, `${JSON.stringify(results, null, 2)}\n`);
    log(`results written to ${flags.json}`);
  }
  const out = flags.out ?? (isPrivate ? path.join(os.tmpdir(), 'gatehouse-conformance-private') : undefined);
  if (out === undefined) return;
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(path.join(out, 'tests.tsv'), toTsv(score));
  log(`per-test results in ${path.join(out, 'tests.tsv')} (raw: results.json)`);
}

// ---------- main ----------

async function originPortToUse() {
  const port = flags.originPort ?? (await freePort());
  if (await canConnect(port)) throw new RunError(`origin port ${port} is already in use`);
  return port;
}

async function startSuiteOrigin(layout, port) {
  // The suite's origin binds all interfaces (server.listen(port)); only 127.0.0.1 is used here.
  await startOrigin(layout, port);
  log(`origin (${suiteLabel()}) on 127.0.0.1:${port} (bound on all interfaces)`);
}

/** --store redis: $REDIS_URL, or a redis-server of our own (no persistence) for this run. */
async function redisForRun() {
  const keyPrefix = `gatehouse-conformance-${process.pid}:`;
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, keyPrefix };
  const port = await freePort();
  const logFile = path.join(runDir, 'redis.log');
  const child = start(
    'redis-server',
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', runDir],
    { cwd: runDir },
  );
  const out = createWriteStream(logFile);
  child.stdout.pipe(out);
  child.stderr.pipe(out);
  await waitForPort(child, port, logFile);
  log(`redis-server on 127.0.0.1:${port}`);
  return { url: `redis://127.0.0.1:${port}`, keyPrefix };
}

/** Proxy mode: origin, Gatehouse in front, the suite's CLI client through it. */
async function runProxy(layout) {
  const originPort = await originPortToUse();
  const redis = flags.cache && flags.store === 'redis' ? await redisForRun() : undefined;
  const config = await buildConfig(originPort, redis);
  await startSuiteOrigin(layout, originPort);

  const proxyPort = flags.proxyPort ?? (await freePort());
  await startGatehouse(config, proxyPort);
  const base = `http://127.0.0.1:${proxyPort}`;
  const via = flags.via === 'express' ? ' (gatehouse-http/express in Express)' : '';
  log(`gatehouse${via} on ${base}: ${JSON.stringify(config.proxy[0])}`);
  await probe(base);
  log(`running the suite (${flags.keepAlive ? 'keep-alive' : 'one connection per request'})...`);
  return runClient(layout, base);
}

/** --private: origin, and the suite's browser-mode client calling the adapter's fetch. */
async function runPrivate(layout) {
  const originPort = await originPortToUse();
  await startSuiteOrigin(layout, originPort);
  log(`running the suite in browser mode through ${path.relative(process.cwd(), adapterFile)}...`);
  return runPrivateClient(`http://127.0.0.1:${originPort}`);
}

async function main() {
  if (isPrivate) {
    await checkAdapter();
    if (adapterFile === DEFAULT_ADAPTER) checkBuild(path.join('dist', 'client', 'index.js'));
  } else {
    checkBuild(flags.via === 'express' ? path.join('dist', 'adapters', 'express.js') : undefined);
  }
  await ensureSuite();
  const layout = suiteLayout();
  const scorer = flags.id === undefined ? await loadScorer(layout) : undefined;
  runDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-conformance-run-'));

  const t0 = Date.now();
  const results = await (isPrivate ? runPrivate(layout) : runProxy(layout));
  if (results === undefined) return 0;
  log(`${Object.keys(results).length} results in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  const score = scorer(results);
  writeOutputs(results, score);
  report(score);
  const missed = floorFailures(score, flags);
  for (const m of missed) console.error(`conformance: ${m}`);
  return missed.length ? 1 : 0;
}

main().then(
  (code) => finish(code),
  (err) =>
    err instanceof RunError ? finish(err.exitCode, err.message) : finish(1, err?.stack ?? String(err)),
);
