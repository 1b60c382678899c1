// gatehouse serve as a new user meets it (issue 26 §2): a closed stdout never stops it (EPIPE dropped
// and counted), and what it loaded is printed at start. Real processes on 127.0.0.1 (bin/gatehouse.js).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startupLines } from '../../src/cli/startup.js';
import { parseConfig } from '../../src/config/load.js';
import type { GatehouseConfigInput } from '../../src/config/schema.js';
import { get, makeSite, removeSite } from '../helpers/http.js';

const BIN = join(import.meta.dirname, '../../bin/gatehouse.js');

describe('gatehouse serve: a closed stdout', () => {
  for (const format of ['pretty', 'json'] as const) {
    it(`--log ${format}: the reader of stdout goes away -> the server keeps serving, the dropped writes are counted`, async () => {
      const dir = makeSite({ 'a.txt': 'hello' });
      const config = join(dir, 'gatehouse.config.json');
      writeFileSync(config, JSON.stringify({ metrics: {}, log: { format } }));
      const child = spawn(process.execPath, [BIN, 'serve', dir, '--port', '0', '--config', config], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let err = '';
      child.stderr.on('data', (d) => (err += d));
      try {
        const url = await new Promise<string>((resolve, reject) => {
          let out = '';
          child.stdout.on('data', (d) => {
            out += d;
            const m = /listening on (http:\/\/\S+)\n/.exec(out);
            if (m) resolve(m[1]!);
          });
          child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
        });
        // The log reader is gone: every later write to the pipe fails with EPIPE.
        child.stdout.destroy();
        const statuses: number[] = [];
        for (let i = 0; i < 20; i++) statuses.push((await get(url, '/a.txt')).status);
        assert.deepEqual(statuses, Array(20).fill(200));
        assert.equal(child.exitCode, null, `the server exited: ${err}`);
        const metrics = await get(url, '/metrics');
        const dropped = Number(/^gatehouse_log_dropped_writes_total\S* (\d+)$/m.exec(metrics.text)?.[1]);
        assert.ok(dropped > 0, `dropped writes counted: ${dropped}`);
        assert.equal(err, '', 'nothing on stderr');
      } finally {
        child.kill('SIGTERM');
        removeSite(dir);
      }
    });
  }
});

/** Runs `gatehouse ARGS` in `cwd` until it prints its listening line (or exits); then SIGTERM. */
async function startAndStop(args: string[], cwd: string) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve) => {
    child.stdout.on('data', (d) => {
      out += d;
      if (/listening on \S+\n/.test(out)) resolve();
    });
    void exit.then(() => resolve());
  });
  if (child.exitCode === null) child.kill('SIGTERM');
  return { out, err, code: await exit };
}

describe('gatehouse serve: what it says at start', () => {
  it('a config file in the working folder: named, with the root, each proxy prefix and WebSocket path, before the listening line', async () => {
    const dir = makeSite({ 'site/index.html': '<!doctype html>' });
    try {
      writeFileSync(
        join(dir, 'gatehouse.config.json'),
        JSON.stringify({
          root: 'site',
          proxy: [{ prefix: '/api', upstream: 'http://127.0.0.1:9', cache: { enabled: true } }],
          websocket: [{ path: '/ws', mode: 'echo' }],
        }),
      );
      const r = await startAndStop(['--port', '0'], dir);
      assert.equal(r.code, 0, `${r.out}\n${r.err}`);
      const lines = r.out.split('\n');
      assert.deepEqual(lines.slice(0, 4), [
        `config ${join(dir, 'gatehouse.config.json')}`,
        `root ${join(dir, 'site')}`,
        'proxy /api/* -> http://127.0.0.1:9/*, prefix stripped (cache: memory)',
        'websocket /ws (echo)',
      ]);
      // The memory budget (issue 40): the file view and the proxy cache are its bounds.
      assert.match(lines[4]!, /^memory budget 456 MiB, from the bounds \(128 MiB\) plus heap and runtime; /);
      assert.match(lines[5]!, /^listening on http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(r.err, '');
    } finally {
      removeSite(dir);
    }
  });

  it('no config file: says so; -p is --port', async () => {
    const dir = makeSite({ 'a.txt': 'a' });
    try {
      const r = await startAndStop(['serve', '--root', dir, '-p', '0'], dir);
      assert.equal(r.code, 0, r.err);
      assert.match(
        r.out,
        /^config: none \(flags and defaults\)\nroot .+\nmemory budget .+\nlistening on http:\/\/127\.0\.0\.1:\d+\n/,
      );
    } finally {
      removeSite(dir);
    }
  });

  it('--spa with no index.html in the root -> a warning naming the page', async () => {
    const dir = makeSite({ 'a.txt': 'a' });
    try {
      const r = await startAndStop([dir, '--spa', '--port', '0'], dir);
      assert.equal(r.code, 0);
      assert.match(
        r.err,
        /^gatehouse: warning: --spa is on but \/index\.html is not in the root .+: navigations get 404\n$/,
      );
    } finally {
      removeSite(dir);
    }
  });

  it('an empty root -> a warning', async () => {
    const dir = makeSite({});
    try {
      const r = await startAndStop([dir, '--port', '0'], dir);
      assert.equal(r.code, 0);
      assert.match(r.err, /^gatehouse: warning: the root .+ is empty: every static request gets 404\n$/);
    } finally {
      removeSite(dir);
    }
  });

  it('the port is taken -> exit 1 naming the port and --port', async () => {
    const dir = makeSite({ 'a.txt': 'a' });
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const r = await startAndStop([dir, '--port', String(port)], dir);
      assert.equal(r.code, 1);
      assert.equal(
        r.err,
        `gatehouse: port ${port} on 127.0.0.1 is already in use (EADDRINUSE): choose another with --port N, or --port 0 for a free one\n`,
      );
    } finally {
      taken.close();
      removeSite(dir);
    }
  });
});

describe('startupLines', () => {
  const config = (input: GatehouseConfigInput) => ({ ...parseConfig(input), root: '/srv/site' });
  const facts = { configFile: undefined, rootEntries: 3, fallbackExists: true };
  it('several upstreams, a Redis fan-out, no cache', () => {
    const c = config({
      proxy: [{ prefix: '/api', upstream: ['http://127.0.0.1:1', 'http://127.0.0.1:2'] }],
      redis: { url: 'redis://127.0.0.1:6379' },
      websocket: [{ path: '/chat', mode: 'broadcast', fanout: 'redis' }],
    });
    assert.deepEqual(startupLines(c, facts).lines.slice(2), [
      'proxy /api/* -> http://127.0.0.1:1/*, http://127.0.0.1:2/*, prefix stripped',
      'websocket /chat (broadcast, fanout redis)',
    ]);
  });
  it('stripPrefix false, an upstream path, a rewrite, a proxy on /: what each upstream receives', () => {
    const c = config({
      proxy: [
        { prefix: '/app/', upstream: 'http://127.0.0.1:1/v1/', stripPrefix: false },
        { prefix: '/old', upstream: 'https://127.0.0.1:2', rewrite: { from: '^/v1/(.*)', to: '/v2/$1' } },
        { prefix: '/', upstream: 'http://127.0.0.1:3' },
      ],
    });
    assert.deepEqual(startupLines(c, facts).lines.slice(2), [
      'proxy /app/* -> http://127.0.0.1:1/v1/app/*, prefix kept',
      'proxy /old/* -> https://127.0.0.1:2/*, prefix stripped, then rewritten ^/v1/(.*) -> /v2/$1',
      'proxy /* -> http://127.0.0.1:3/*',
    ]);
  });
  it('a proxy on / answers everything: no warning about the root', () => {
    const c = config({ static: { spa: true }, proxy: [{ prefix: '/', upstream: 'http://127.0.0.1:1' }] });
    assert.deepEqual(startupLines(c, { ...facts, rootEntries: 0, fallbackExists: false }).warnings, []);
  });
  it('spa with the fallback present: no warning', () => {
    assert.deepEqual(startupLines(config({ static: { spa: true } }), facts).warnings, []);
  });
});

describe('gatehouse serve: SIGTERM at once', () => {
  it('SIGTERM sent the moment the listening line is read -> drained, exit 0 (10 runs)', async () => {
    // The handlers were installed after the line was written: about one run in six died of the
    // signal's default action (exit code null) instead of draining.
    const dir = makeSite({ 'a.txt': 'a' });
    try {
      const codes: (number | null)[] = [];
      for (let i = 0; i < 10; i++) codes.push((await startAndStop([dir, '--port', '0'], dir)).code);
      assert.deepEqual(codes, Array(10).fill(0));
    } finally {
      removeSite(dir);
    }
  });
});
