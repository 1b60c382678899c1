// `--workers N` as users run it: the built CLI (bin/gatehouse.js), real processes, real sockets.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { brotliDecompressSync } from 'node:zlib';
import { CRASH_LOOP, decideOnDeath } from '../../src/cli/workers.js';
import { get, makeSite, removeSite } from '../helpers/http.js';
import { origin } from '../helpers/origin.js';
import { waitUntil } from '../helpers/wait.js';
import { BIN, servedBy, startCli, workerPids } from '../helpers/workers-cli.js';

describe('gatehouse serve --workers', () => {
  it('two workers on one port: one listening line, both serve, log lines carry the worker id', async () => {
    const dir = makeSite({ 'a.txt': 'a' });
    const p = startCli(['serve', dir, '--port', '0', '--workers', '2', '--log', 'json']);
    try {
      const url = await p.url;
      // New connections are dealt round robin by the primary; poll until both workers answered.
      await waitUntil('both workers served a request', async () => {
        assert.equal((await get(url, '/a.txt')).text, 'a');
        return servedBy(p, '/a.txt').size === 2;
      });
      assert.deepEqual([...servedBy(p, '/a.txt')].sort(), [1, 2]);
      assert.equal(p.output().match(/listening on /g)?.length, 1);
      p.child.kill('SIGTERM');
      assert.equal(await p.exit, 0);
    } finally {
      p.child.kill('SIGKILL');
      removeSite(dir);
    }
  });

  it('compression on the fly in each worker (its own thread): br once made, then SIGTERM still exits 0', async () => {
    const js = `export const answer = 42;\n${'console.log("gatehouse");\n'.repeat(400)}`;
    const dir = makeSite({ 'app.js': js });
    const p = startCli(['serve', dir, '--port', '0', '--workers', '2', '--log', 'json']);
    try {
      const url = await p.url;
      // Identity until the file is kept and compressed in the process that answers; poll until each
      // worker has logged an answer smaller than the file (head included): br.
      const brBy = () =>
        new Set(
          p
            .lines()
            .filter((l) => l.url === '/app.js' && l.status === 200 && Number(l.bytes) < js.length)
            .map((l) => l.worker),
        );
      await waitUntil('both workers answered br', async () => {
        const r = await get(url, '/app.js', { headers: { 'accept-encoding': 'br' } });
        assert.equal(r.status, 200);
        if (r.headers['content-encoding'] === 'br') assert.equal(brotliDecompressSync(r.body).toString(), js);
        else assert.equal(r.text, js);
        return brBy().size === 2;
      });
      assert.deepEqual([...brBy()].sort(), [1, 2]);
      p.child.kill('SIGTERM');
      assert.equal(await p.exit, 0);
    } finally {
      p.child.kill('SIGKILL');
      removeSite(dir);
    }
  });

  it('a worker killed with SIGKILL is restarted and serves again', async () => {
    const dir = makeSite({ 'a.txt': 'a' });
    const p = startCli(['serve', dir, '--port', '0', '--workers', '2', '--log', 'json']);
    try {
      const url = await p.url;
      const before = workerPids(p.child.pid!);
      assert.equal(before.length, 2);
      process.kill(before[0]!, 'SIGKILL');
      await waitUntil('a new worker replaced the killed one', () => {
        const now = workerPids(p.child.pid!);
        return now.length === 2 && !now.includes(before[0]!);
      });
      await waitUntil('the restart is logged', () =>
        p.lines().some((l) => /worker died \(signal SIGKILL\); restarting/.test(String(l.msg))),
      );
      // Both slots serve again.
      const served = () => servedBy(p, '/a.txt?after').size === 2;
      await waitUntil('both workers serve after the restart', async () => {
        assert.equal((await get(url, '/a.txt?after')).status, 200);
        return served();
      });
      p.child.kill('SIGTERM');
      assert.equal(await p.exit, 0);
    } finally {
      p.child.kill('SIGKILL');
      removeSite(dir);
    }
  });

  it('SIGTERM lets an in-flight request finish, then every worker and the primary exit 0', async () => {
    let release: (() => void) | undefined;
    const up = await origin({
      '/slow': (_req, res) => {
        release = () => res.end('done');
        res.writeHead(200, { 'content-type': 'text/plain' });
      },
    });
    const dir = makeSite({ 'a.txt': 'a' });
    const p = startCli([
      'serve',
      dir,
      '--port',
      '0',
      '--workers',
      '2',
      '--log',
      'json',
      '--proxy',
      `/up=${up.url}`,
    ]);
    try {
      const url = await p.url;
      const pending = get(url, '/up/slow');
      await waitUntil('the upstream holds the request', () => release !== undefined);
      const workers = workerPids(p.child.pid!);
      p.child.kill('SIGTERM');
      await waitUntil(
        'both workers drain',
        () =>
          p.lines().filter((l) => l.msg === 'SIGTERM: draining' && l.worker !== 0).length === workers.length,
      );
      release!();
      const r = await pending;
      assert.equal(r.status, 200);
      assert.equal(r.text, 'done');
      assert.equal(await p.exit, 0);
      assert.deepEqual(workerPids(p.child.pid!), []);
    } finally {
      p.child.kill('SIGKILL');
      removeSite(dir);
      await up.close();
    }
  });

  it('a crash loop (workers that cannot listen) stops the start with a clear message and exit 1', async () => {
    const dir = makeSite({ 'a.txt': 'a' });
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = String((taken.address() as { port: number }).port);
    const p = startCli(['serve', dir, '--port', port, '--workers', '2', '--log', 'json']);
    try {
      assert.equal(await p.exit, 1);
      assert.match(p.errors(), /workers keep dying \(5 deaths within 30 s/);
      assert.doesNotMatch(p.output(), /listening on/);
    } finally {
      p.child.kill('SIGKILL');
      taken.close();
      removeSite(dir);
    }
  });

  it('/metrics on any worker aggregates every worker (the AggregatorRegistry of the primary); health answers', async () => {
    const dir = makeSite({ 'a.txt': 'a' });
    writeFileSync(
      join(dir, 'gatehouse.config.json'),
      JSON.stringify({
        workers: 2,
        log: { format: 'json' },
        metrics: {},
        health: {},
        // Nothing listens on port 9: every request fails (502), once (no retry).
        proxy: [{ prefix: '/down', upstream: 'http://127.0.0.1:9', retry: false }],
      }),
    );
    const p = startCli(['--port', '0', dir], dir);
    try {
      const url = await p.url;
      let sent = 0;
      await waitUntil('both workers served a request', async () => {
        await get(url, '/a.txt');
        sent++;
        return servedBy(p, '/a.txt').size === 2;
      });
      // Summed over both workers: every /a.txt request, whichever worker answered it.
      const staticOk = (text: string) =>
        Number(
          text
            .split('\n')
            .find((l) => l.startsWith('gatehouse_requests_total{class="2xx",kind="static"} '))
            ?.split(' ')[1],
        );
      await waitUntil('the scrape counts every request', async () => {
        const r = await get(url, '/metrics');
        assert.equal(r.status, 200);
        return staticOk(r.text) === sent;
      });
      // Per-process gauges are not summed: an upstream is up (1) unless a worker took it out (min).
      const down = (text: string, name: string) =>
        text
          .split('\n')
          .filter((l) => l.startsWith(`${name}{route="/down",upstream="http://127.0.0.1:9"} `))
          .map((l) => Number(l.split(' ')[1]));
      assert.deepEqual(down((await get(url, '/metrics')).text, 'gatehouse_upstream_up'), [1]);
      // Six failures over two workers: one of them saw at least three (health.failures) and took it out.
      for (let i = 0; i < 6; i++) assert.equal((await get(url, '/down/x')).status, 502);
      const after = (await get(url, '/metrics')).text;
      assert.deepEqual(down(after, 'gatehouse_upstream_up'), [0], after);
      assert.deepEqual(down(after, 'gatehouse_upstream_errors_total'), [6]);
      assert.equal((await get(url, '/readyz')).status, 200);
      p.child.kill('SIGTERM');
      assert.equal(await p.exit, 0);
    } finally {
      p.child.kill('SIGKILL');
      removeSite(dir);
    }
  });

  it('workers in the config file; SIGINT drains and exits 0; --workers 0 is a usage error (exit 2)', async () => {
    const dir = makeSite({ 'a.txt': 'a' });
    writeFileSync(
      join(dir, 'gatehouse.config.json'),
      JSON.stringify({ workers: 2, log: { format: 'json' } }),
    );
    const p = startCli(['--port', '0'], dir);
    try {
      const url = await p.url;
      assert.equal((await get(url, '/a.txt')).text, 'a');
      assert.equal(workerPids(p.child.pid!).length, 2);
      p.child.kill('SIGINT');
      assert.equal(await p.exit, 0);
      const bad = spawnSync(process.execPath, [BIN, dir, '--workers', '0'], { encoding: 'utf8' });
      assert.equal(bad.status, 2);
      assert.match(bad.stderr, /--workers: expected 1\.\.256 or auto, got 0/);
    } finally {
      p.child.kill('SIGKILL');
      removeSite(dir);
    }
  });
});

describe('decideOnDeath', () => {
  const cases: { name: string; earlier: number[]; now: number; want: string }[] = [
    { name: 'first death -> restart after 100 ms', earlier: [], now: 1000, want: 'restart 100' },
    { name: 'second death in the window -> 200 ms', earlier: [900], now: 1000, want: 'restart 200' },
    {
      name: 'deaths older than the window are forgotten',
      earlier: [0, 1, 2, 3],
      now: 40_000,
      want: 'restart 100',
    },
    { name: 'fifth death within 30 s -> give up', earlier: [1, 2, 3, 4], now: 1000, want: 'give-up' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const d = decideOnDeath(c.earlier, c.now, CRASH_LOOP);
      assert.equal(d.kind === 'restart' ? `restart ${d.delayMs}` : d.kind, c.want);
    });
  }
});
