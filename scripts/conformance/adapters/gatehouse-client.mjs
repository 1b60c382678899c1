// Conformance adapter (the default of `run.mjs --private`): Gatehouse's own caching fetch,
// `createCachingFetch()` from dist/client (issue 14 §1), default options, in Node.
//
// One instance for the whole run: the suite gives every test a fresh uuid, so every test has its own
// URLs and never sees another test's entries; 100 tests run at once against the one cache, as in a
// browser tab. GATEHOUSE_CONFORMANCE_CLIENT_OPTIONS (a JSON object) is passed to createCachingFetch.
// GATEHOUSE_CONFORMANCE_GATEHOUSE (set by run.mjs --gatehouse DIR) picks another build's dist/.
//
// Exits 2 with one line when dist/client cannot provide createCachingFetch: a missing feature must
// never read as a score.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const fail = (message) => {
  console.error(`conformance: ${message}`);
  process.exit(2);
};

const repo =
  process.env.GATEHOUSE_CONFORMANCE_GATEHOUSE || fileURLToPath(new URL('../../../', import.meta.url));
const entry = path.join(repo, 'dist', 'client', 'index.js');

let client;
try {
  client = await import(pathToFileURL(entry).href);
} catch (err) {
  fail(`cannot import ${entry} (${err.code ?? err.message}): run npm run build first`);
}
if (typeof client.createCachingFetch !== 'function') {
  fail('dist/client has no createCachingFetch: build issue 14 §1 first');
}

let options;
const raw = process.env.GATEHOUSE_CONFORMANCE_CLIENT_OPTIONS;
if (raw) {
  try {
    options = JSON.parse(raw);
  } catch (err) {
    fail(`GATEHOUSE_CONFORMANCE_CLIENT_OPTIONS: not valid JSON: ${err.message}`);
  }
}

export const cachedFetch = client.createCachingFetch(options);
