#!/usr/bin/env node
// Collects test files and runs them with node's test runner through tsx.
// Usage: node scripts/run-tests.mjs [--node BIN] [--skip-missing] [--protocol P | --adapter A | --runtime R]
//                                    [DIR_OR_FILE ...]
//        (default: test/)
//   --node BIN       run the tests under another node binary (CI: Node 24 from .node24/, see .ci/run);
//                    default: the node running npm (npm_node_execpath), else this one
//   --skip-missing   ignore DIR_OR_FILE arguments that do not exist (for folders that come later)
//   --protocol P     h2 or h1-tls: only the files marked `// matrix: ... P ...` in their first lines, with
//                    GATEHOUSE_TEST_PROTOCOL=P, so their servers listen with TLS and their clients speak
//                    HTTP/2 (or HTTP/1.1 on TLS) (test/helpers/tls.ts)
//   --adapter A      express, fastify, koa or hono: only the files marked `// matrix: ... adapters`, with
//                    GATEHOUSE_TEST_ADAPTER=A, so their servers are that framework's app with Gatehouse
//                    mounted as its middleware (test/helpers/adapter-server.ts)
//   --runtime R      bun or deno: only the files marked `// matrix: ... runtimes`, with
//                    GATEHOUSE_TEST_RUNTIME=R, so their servers are Gatehouse on that runtime's own server
//                    (Bun.serve, Deno.serve) in a child process, over dist/ (test/helpers/runtime-server.ts);
//                    the tests themselves still run on node. One matrix at a time.
// Environment: TEST_TIMEOUT_MS (default 60000) fails any single test that runs longer, so a slow
// regression fails instead of hanging; FUZZ_SEED / FUZZ_ITERATIONS go to the seeded fuzz tests.
// A missing dist/ is built first (scripts/build-if-stale.mjs --missing-only); under --runtime a stale one too.
// CHROME_PATH (default /usr/bin/chromium) is the Chromium of test/browser/. When it is missing, those
// files are left out of the run and one loud line after it says so; under CI (CI=true) they run anyway
// and fail (test/helpers/browser.ts: describeBrowser), so CI never passes them over.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isCI } from './ci.mjs';

/** Generous for a shared 2-core machine: the slowest test takes a few seconds alone. */
const DEFAULT_TIMEOUT_MS = 60_000;

function collect(path, out) {
  if (statSync(path).isDirectory()) {
    for (const name of readdirSync(path).sort()) {
      if (name === 'node_modules' || name === 'fixtures') continue;
      collect(join(path, name), out);
    }
  } else if (/\.test\.(ts|mjs|js)$/.test(path)) {
    out.push(path);
  }
  return out;
}

function usage(message) {
  console.error(`run-tests: ${message}`);
  process.exit(2);
}

const args = process.argv.slice(2);
// The node that runs npm (never another `node` that a package may have put first on PATH).
let nodeBin = process.env.npm_node_execpath || process.execPath;
let skipMissing = false;
let protocol;
let adapter;
let runtime;
const roots = [];
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '--node') {
    nodeBin = args[++i] ?? usage('--node needs a path');
  } else if (a === '--protocol') {
    protocol = args[++i] ?? usage('--protocol needs h2 or h1-tls');
    if (protocol !== 'h2' && protocol !== 'h1-tls') usage(`--protocol: h2 or h1-tls, got ${protocol}`);
  } else if (a === '--adapter') {
    adapter = args[++i] ?? usage('--adapter needs express, fastify, koa or hono');
    if (!['express', 'fastify', 'koa', 'hono'].includes(adapter))
      usage(`--adapter: express, fastify, koa or hono, got ${adapter}`);
  } else if (a === '--runtime') {
    runtime = args[++i] ?? usage('--runtime needs bun or deno');
    if (runtime !== 'bun' && runtime !== 'deno') usage(`--runtime: bun or deno, got ${runtime}`);
  } else if (a === '--skip-missing') {
    skipMissing = true;
  } else if (a.startsWith('--')) {
    usage(`unknown option ${a}`);
  } else if (existsSync(a) || !skipMissing) {
    roots.push(a);
  }
}

if ([protocol, adapter, runtime].filter((m) => m !== undefined).length > 1)
  usage('--protocol, --adapter and --runtime are separate matrices: one at a time');

const timeoutText = process.env.TEST_TIMEOUT_MS ?? String(DEFAULT_TIMEOUT_MS);
const timeoutMs = Number(timeoutText);
if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
  usage(`TEST_TIMEOUT_MS=${timeoutText}: expected a positive integer`);

/**
 * A file's matrix line (`// matrix: http1 h2 adapters`) in its first 2 KB names the protocols it runs on,
 * `adapters` when it runs through each framework adapter too, and `runtimes` when on Bun's and Deno's
 * own servers.
 */
const onMatrix = (f, entry) => {
  const m = /^\/\/ matrix:([^\n]*)/m.exec(readFileSync(f, 'utf8').slice(0, 2048));
  return m?.[1].trim().split(/\s+/).includes(entry);
};
const found = (roots.length ? roots : ['test'])
  .flatMap((r) => collect(r, []))
  .filter(
    (f) =>
      (!protocol || onMatrix(f, protocol)) &&
      (!adapter || onMatrix(f, 'adapters')) &&
      (!runtime || onMatrix(f, 'runtimes')),
  );

// Resolved as test/helpers/browser.ts resolves them.
const chromiumPath = process.env.CHROME_PATH || '/usr/bin/chromium';
const inCI = isCI();
const isBrowserTest = (f) => /(^|[\\/])browser[\\/]/.test(f);
const noChromium = !inCI && !existsSync(chromiumPath);
const leftOut = noChromium ? found.filter(isBrowserTest) : [];
// Files elsewhere with a describeBrowser part (test/adapters/vite.test.ts) run without that part.
const partly = noChromium
  ? found.filter((f) => !isBrowserTest(f) && readFileSync(f, 'utf8').includes('describeBrowser('))
  : [];
const browserNote =
  leftOut.length || partly.length
    ? `\n!!! CHROMIUM TESTS NOT RUN: no Chromium at ${chromiumPath}, so the ${leftOut.length} files under ` +
      `test/browser/ were left out${partly.length ? ` and the Chromium parts of ${partly.join(', ')} not run` : ''}. ` +
      'Get them: apt-get install -y --no-install-recommends chromium, or set ' +
      'CHROME_PATH=/path/to/chromium. (Under CI=true a missing Chromium fails the run.) !!!'
    : '';
const files = found.filter((f) => !leftOut.includes(f));
if (found.length === 0) usage('no test files found');
if (files.length === 0) {
  console.error(browserNote);
  process.exit(0);
}

// A fresh clone has no dist/ (npm ci does not build it; `prepack` does, for the tarball): the CLI,
// package and browser tests run it, so a missing one is built first. An existing one is left alone,
// except under --runtime, where every server runs dist/: a stale one is rebuilt before any test starts
// (else the matrix would pass or fail on the source before the last edit).
const built = spawnSync(
  process.execPath,
  [join(import.meta.dirname, 'build-if-stale.mjs'), ...(runtime ? [] : ['--missing-only'])],
  {
    stdio: 'inherit',
  },
);
if (built.status !== 0) usage('dist/ is missing and npm run build failed');

const version = spawnSync(nodeBin, ['--version'], { encoding: 'utf8' });
if (version.status !== 0) usage(`cannot run ${nodeBin}: ${version.error?.message ?? version.stderr}`);
const seed = process.env.FUZZ_SEED ?? '0';
console.log(
  `node ${version.stdout.trim()}, ${files.length} files, per-test timeout ${timeoutMs} ms, FUZZ_SEED=${seed}` +
    (protocol ? `, protocol ${protocol}` : '') +
    (adapter ? `, adapter ${adapter}` : '') +
    (runtime ? `, runtime ${runtime}` : ''),
);

const r = spawnSync(
  nodeBin,
  [
    '--import',
    'tsx',
    '--test',
    '--test-reporter=spec',
    '--test-concurrency=2',
    `--test-timeout=${timeoutMs}`,
    ...files,
  ],
  {
    stdio: 'inherit',
    env: {
      ...process.env,
      ...(protocol ? { GATEHOUSE_TEST_PROTOCOL: protocol } : {}),
      ...(adapter ? { GATEHOUSE_TEST_ADAPTER: adapter } : {}),
      ...(runtime ? { GATEHOUSE_TEST_RUNTIME: runtime } : {}),
    },
  },
);
if (browserNote) console.error(browserNote);
if (r.status !== 0)
  console.error(
    `\ntests failed under node ${version.stdout.trim()} with FUZZ_SEED=${seed} (replay: FUZZ_SEED=${seed} npm test)`,
  );
process.exit(r.status ?? 1);
