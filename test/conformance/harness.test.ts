// The parts of scripts/conformance/run.mjs that `--suite head` and `--via express` add, without a full run:
// the vendored git HEAD suite is complete and loads, the one-connection preload covers the global fetch
// that suite's client uses, and the Express app (express-app.mjs) serves the proxy route through
// gatehouse-http/express with its cache, and stops on SIGTERM.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { get } from '../helpers/http.js';
import { waitUntil } from '../helpers/wait.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const headDir = join(repoRoot, 'test/fixtures/cache-tests-HEAD');
const conformance = join(repoRoot, 'scripts/conformance');

const scratch: string[] = [];
const servers: Server[] = [];
after(async () => {
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  for (const d of scratch) rmSync(d, { recursive: true, force: true });
});

/** A server on 127.0.0.1:0 that counts connections and requests. */
async function countingServer(handler: Parameters<typeof createServer>[1]) {
  const counts = { connections: 0, requests: 0 };
  const server = createServer((req, res) => {
    counts.requests++;
    handler!(req, res);
  });
  server.on('connection', () => counts.connections++);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { counts, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

describe('conformance: the vendored git HEAD suite', () => {
  test('names its commit, keeps its licence, and has the 370 tests (163 required, 107 optimal, 100 check)', async () => {
    assert.match(readFileSync(join(headDir, 'README.md'), 'utf8'), /commit [0-9a-f]{40}/);
    assert.match(readFileSync(join(headDir, 'LICENSE'), 'utf8'), /BSD 3-Clause/);
    const suites = (await import(pathToFileURL(join(headDir, 'tests/index.mjs')).href)).default as Array<{
      tests: Array<{ id: string; kind?: string }>;
    }>;
    const tests = suites.flatMap((s) => s.tests);
    const kinds: Record<string, number> = {};
    for (const t of tests) kinds[t.kind ?? 'required'] = (kinds[t.kind ?? 'required'] ?? 0) + 1;
    assert.deepEqual(kinds, { required: 163, optimal: 107, check: 100 });
    assert.equal(new Set(tests.map((t) => t.id)).size, 370);
  });

  test("the harness modules the runner uses are all there and load (client, results, the origin's handlers)", async () => {
    for (const f of ['test-engine/cli.mjs', 'test-engine/server/server.mjs']) {
      assert.ok(existsSync(join(headDir, f)), f);
    }
    const load = (f: string) => import(pathToFileURL(join(headDir, f)).href);
    assert.equal(typeof (await load('test-engine/lib/results.mjs')).determineTestResult, 'function');
    assert.equal(typeof (await load('test-engine/client/runner.mjs')).runTests, 'function');
    for (const f of ['handle-config', 'handle-file', 'handle-state', 'handle-test']) {
      assert.equal(typeof (await load(`test-engine/server/${f}.mjs`)).default, 'function', f);
    }
  });
});

describe('conformance: one-connection.mjs', () => {
  // The HEAD client calls the global fetch (undici), the 0.4.5 one node-fetch over http.globalAgent.
  const script = `
    import http from 'node:http';
    const [url, n] = [process.argv[1], Number(process.argv[2])];
    for (let i = 0; i < n; i++) await (await fetch(url)).text();
    for (let i = 0; i < n; i++)
      await new Promise((ok) => http.get(url, (r) => r.resume().on('end', ok)));
  `;
  const run = (url: string, preload: boolean) => {
    const argv = preload ? ['--import', pathToFileURL(join(conformance, 'one-connection.mjs')).href] : [];
    const child = spawn(process.execPath, [...argv, '--input-type=module', '-e', script, url, '10'], {
      stdio: 'inherit',
    });
    return exited(child);
  };

  test('20 requests (10 by fetch, 10 by http.get) -> 20 connections; without it fewer (the reference)', async () => {
    const server = await countingServer((_req, res) => res.end('ok'));
    assert.equal(await run(server.url, true), 0);
    assert.deepEqual(server.counts, { connections: 20, requests: 20 });
    server.counts.connections = 0;
    server.counts.requests = 0;
    assert.equal(await run(server.url, false), 0);
    assert.equal(server.counts.requests, 20);
    assert.ok(server.counts.connections < 20, `keep-alive reference: ${server.counts.connections}`);
  });
});

describe('conformance: express-app.mjs (--via express)', () => {
  test('serves the proxy route through gatehouse-http/express with its cache; SIGTERM -> exit 0', async () => {
    assert.ok(
      existsSync(join(repoRoot, 'dist/adapters/express.js')),
      'dist/ not built (npm test builds it first)',
    );
    const origin = await countingServer((req, res) => {
      res.writeHead(200, { 'Cache-Control': 'max-age=60', 'Content-Type': 'text/plain' });
      res.end(`origin ${req.url}`);
    });
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-conformance-express-'));
    scratch.push(dir);
    const configFile = join(dir, 'config.json');
    // What run.mjs writes for `--cache --store memory`.
    writeFileSync(
      configFile,
      JSON.stringify({
        proxy: [
          {
            prefix: '/',
            upstream: origin.url,
            cache: { enabled: true, store: 'memory' },
            cacheControl: null,
          },
        ],
      }),
    );
    const child = spawn(process.execPath, [
      join(conformance, 'express-app.mjs'),
      repoRoot,
      configFile,
      dir,
      '0',
    ]);
    const done = exited(child);
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    try {
      const port = await waitUntil(
        'express-app.mjs listens',
        () => /127\.0\.0\.1:(\d+) \(express 5\./.exec(out)?.[1],
      );
      const base = `http://127.0.0.1:${port}`;
      const first = await get(base, '/test/a');
      const second = await get(base, '/test/a');
      for (const r of [first, second]) {
        assert.equal(r.status, 200);
        assert.equal(r.body.toString(), 'origin /test/a');
        assert.equal(r.headers['x-powered-by'], 'Express'); // Express's own header: the app answered
      }
      assert.equal(origin.counts.requests, 1, 'the second GET comes from the proxy cache');
      assert.equal(origin.counts.connections, 1);
      child.kill('SIGTERM');
      assert.equal(await done, 0, out);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
