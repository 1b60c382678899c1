// Child process of `run.mjs --private`: drives the suite's client in browser mode against a fetch
// function in this Node process, and writes the suite's results (JSON) to stdout.
//
//   node private-driver.mjs --check ADAPTER             import the adapter, check its export, exit
//   node private-driver.mjs PKG_DIR ADAPTER BASE_URL [TEST_ID]
//
// ADAPTER exports `cachedFetch(input, init) -> Promise<Response>` (the name the reference runner in
// ../shared/conformance uses too, so one adapter serves both). An adapter that cannot provide it exits
// 2 with a one-line reason itself (see adapters/gatehouse-client.mjs); an adapter without the export
// makes this exit 2.
//
// http-cache-tests 0.4.5, client/runner.mjs: runTests(tests, fetchFn, browserCache, baseUrl) keeps
// module state (one run per process) and calls fetchFn for every request, control plane included.
// With browserCache = true (what the suite's test-browser.html passes with a browser's fetch),
// client/fetching.mjs sends no `cache: 'no-store'` and no Pragma/Cache-Control of its own, skips
// `browser_skip` tests (shared-cache-only ones: s-maxage, 3xx with redirect: 'manual', the Surrogate-
// Control suite...) and runs `browser_only` ones. Each test gets a fresh uuid, so its URLs
// (/test/<uuid>[/file][?query]) are its own and one cache serves the whole run, 100 tests at a time.
// What fetchFn receives: input a string URL; init { headers: [[name, value], ...] (Test-ID, Req-Num,
// Test-Name always), method?, body?, redirect?, cache?, mode? }.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const imp = (p) => import(pathToFileURL(path.resolve(p)).href);

async function loadAdapter(file) {
  const mod = await imp(file);
  if (typeof mod.cachedFetch !== 'function') {
    console.error(`conformance: ${file} does not export cachedFetch(input, init)`);
    process.exit(2);
  }
  return mod.cachedFetch;
}

const argv = process.argv.slice(2);
if (argv[0] === '--check') {
  await loadAdapter(argv[1]);
  process.exit(0);
}

const [pkg, adapter, base, only] = argv;
const cachedFetch = await loadAdapter(adapter);

// The control plane (PUT /config/<uuid>, GET /state/<uuid>: what the origin should answer and what it
// saw) bypasses the cache under test, as in the reference runner. Neither URL is ever a test's URL,
// so this changes no test's outcome; it keeps the cache's own counters to the tests' requests.
const rawFetch = globalThis.fetch;
const control = (url) => /^\/(config|state)\//.test(new URL(url).pathname);
const testFetch = (input, init) =>
  control(String(input)) ? rawFetch(input, init) : cachedFetch(input, init);

// The browser page's list: tests/index.mjs (the Surrogate-Control suite is all browser_skip anyway).
let tests = (await imp(path.join(pkg, 'tests/index.mjs'))).default;
if (only) {
  tests = tests
    .map((s) => ({ ...s, tests: s.tests.filter((t) => t.id === only) }))
    .filter((s) => s.tests.length);
  if (!tests.length) {
    console.error(`conformance: no test with id '${only}'`);
    process.exit(2);
  }
  for (const s of tests) for (const t of s.tests) t.dump = true;
}

let runner;
if (existsSync(path.join(pkg, 'client/runner.mjs'))) {
  runner = await imp(path.join(pkg, 'client/runner.mjs'));
  await runner.runTests(tests, testFetch, true, base);
} else {
  // newer git trees: runTests(tests, browserCache, baseUrl) over a bare global fetch
  runner = await imp(path.join(pkg, 'test-engine/client/runner.mjs'));
  globalThis.fetch = testFetch;
  await runner.runTests(tests, true, base);
}
const results = runner.getResults();
const text = only
  ? `==== Result: ${results[only] === true ? 'pass' : JSON.stringify(results[only])}\n`
  : `${JSON.stringify(results, null, 2)}\n`;
// Adapters may hold keep-alive sockets or timers: once the results are out, stop.
process.stdout.write(text, () => process.exit(0));
