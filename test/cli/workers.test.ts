// `--workers N` as users run it: the built CLI (bin/gatehouse.js), real processes, real sockets.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { brotliDecompressSync } from 'node:zlib';
import { CRASH_LOOP, decideOnDeath } from '../../src/cli/workers.js';
import { leafFor, testPki } from '../helpers/certs.js';
import { get, makeSite, removeSite } from '../helpers/http.js';
import { origin } from '../helpers/origin.js';
import { tlsExchange } from '../helpers/tls.js';
import { WAIT_DEADLINE_MS, waitUntil } from '../helpers/wait.js';

const BIN = join(import.meta.dirname, '../../bin/gatehouse.js');

interface Cli {
  child: ChildProcess;
  url: Promise<string>;
  exit: Promise<number | null>;
  output(): string;
  errors(): string;
  /** The JSON log lines so far. */
  lines(): Record<string, unknown>[];
}

function startCli(args: string[], cwd?: string): Cli {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const url = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)\n/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
  url.catch(() => {});
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = () =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { child, url, exit, output: () => out, errors: () => err, lines };
}

/** The pids of the primary's children (its workers). */
/** `serve --workers 2` over TLS with a test PKI's leaf in a temp folder (removed by the caller). */
async function startTlsWorkers() {
  const pki = await testPki();
  const dir = makeSite({ 'a.txt': 'a' });
  const certDir = mkdtempSync(join(tmpdir(), 'gatehouse-workers-tls-'));
  const cert = join(certDir, 'cert.pem');
  const key = join(certDir, 'key.pem');
  writeFileSync(cert, pki.leaf.certPem + pki.intermediate.certPem);
  writeFileSync(key, pki.leaf.keyPem);
  const p = startCli([
    dir,
    '--port',
    '0',
    '--workers',
    '2',
    '--log',
    'json',
    '--tls-cert',
    cert,
    '--tls-key',
    key,
  ]);
  return { pki, dir, certDir, cert, key, p };
}

/** The port of the HTTPS listening line. */
async function httpsPort(p: Cli): Promise<number> {
  const m = await waitUntil('the listening line', () =>
    /listening on https:\/\/127\.0\.0\.1:(\d+)\n/.exec(p.output()),
  );
  return Number(m[1]);
}

function workerPids(primary: number): number[] {
  const r = spawnSync('ps', ['-o', 'pid=', '--ppid', String(primary)], { encoding: 'utf8' });
  return r.stdout
    .split('\n')
    .map((s) => Number(s.trim()))
    .filter((n) => n > 0);
}

/** Worker ids seen in access-log lines for `url`. */
const servedBy = (cli: Cli, url: string) =>
  new Set(
    cli
      .lines()
      .filter((l) => l.url === url && l.status === 200)
      .map((l) => l.worker),
  );

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

  it('SIGHUP under load restarts the workers one at a time with no failed request', async () => {
    const dir = makeSite({ 'a.txt': 'a' });
    const p = startCli(['serve', dir, '--port', '0', '--workers', '2', '--log', 'json']);
    let stop = false;
    try {
      const url = await p.url;
      const before = workerPids(p.child.pid!);
      let ok = 0;
      const failures: string[] = [];
      // Four clients in a loop, a new connection per request (agent: false).
      const client = async () => {
        while (!stop) {
          try {
            // A connection stranded in the primary would hang: the deadline turns that into a failure.
            const r = await Promise.race([
              get(url, '/a.txt'),
              new Promise<never>((_, reject) =>
                setTimeout(
                  () => reject(new Error('no answer (connection stranded)')),
                  WAIT_DEADLINE_MS,
                ).unref(),
              ),
            ]);
            if (r.status === 200 && r.text === 'a') ok++;
            else failures.push(`status ${r.status}`);
          } catch (err) {
            failures.push((err as Error).message);
          }
        }
      };
      const clients = [client(), client(), client(), client()];
      await waitUntil('the load is running', () => ok > 20);
      p.child.kill('SIGHUP');
      await waitUntil('the workers were restarted', () =>
        p.lines().some((l) => l.msg === 'SIGHUP: workers restarted'),
      );
      const servedAfter = ok;
      await waitUntil('the new workers serve', () => ok > servedAfter + 20);
      stop = true;
      await Promise.all(clients);
      assert.deepEqual(failures, []);
      const after = workerPids(p.child.pid!);
      assert.equal(after.length, 2);
      assert.ok(
        after.every((pid) => !before.includes(pid)),
        `${before} -> ${after}`,
      );
      p.child.kill('SIGTERM');
      assert.equal(await p.exit, 0);
    } finally {
      stop = true;
      p.child.kill('SIGKILL');
      removeSite(dir);
    }
  });

  it('SIGHUP with TLS: the workers are replaced and serve the renewed certificate', async () => {
    const { pki, dir, certDir, cert, key, p } = await startTlsWorkers();
    const servedSerial = (port: number) =>
      new Promise<string>((resolve, reject) => {
        const t = tlsConnect(
          { port, host: '127.0.0.1', ca: pki.root.certPem, servername: 'localhost' },
          () => {
            resolve(t.getPeerCertificate().serialNumber.toUpperCase());
            t.end();
          },
        );
        t.on('error', reject);
      });
    try {
      const port = await httpsPort(p);
      const first = new X509Certificate(pki.leaf.certPem).serialNumber.toUpperCase();
      assert.equal(await servedSerial(port), first);
      const next = await leafFor({ hosts: ['localhost', '127.0.0.1'] });
      writeFileSync(cert, next.certPem + pki.intermediate.certPem);
      writeFileSync(key, next.keyPem);
      p.child.kill('SIGHUP');
      await waitUntil('the workers were restarted', () =>
        p.lines().some((l) => l.msg === 'SIGHUP: workers restarted'),
      );
      const want = new X509Certificate(next.certPem).serialNumber.toUpperCase();
      for (let i = 0; i < 4; i++) assert.equal(await servedSerial(port), want);
      p.child.kill('SIGTERM');
      assert.equal(await p.exit, 0);
    } finally {
      p.child.kill('SIGKILL');
      removeSite(dir);
      rmSync(certDir, { recursive: true, force: true });
    }
  });

  it('TLS: a session ticket from one worker resumes on the other (the primary shares the secret), 1.2 and 1.3', async () => {
    const { pki, dir, certDir, p } = await startTlsWorkers();
    const workerOf = (path: string) => p.lines().find((l) => l.url === path && l.status === 200)?.worker;
    try {
      const port = await httpsPort(p);
      for (const maxVersion of ['TLSv1.3', 'TLSv1.2'] as const) {
        const first = await tlsExchange(port, pki.root.certPem, {
          maxVersion,
          path: `/a.txt?${maxVersion}-first`,
        });
        const issuer = await waitUntil('the first request is logged', () =>
          workerOf(`/a.txt?${maxVersion}-first`),
        );
        // The primary deals connections round robin: resume until the other worker answered one.
        const seen: { worker: unknown; reused: boolean }[] = [];
        await waitUntil(`${maxVersion}: the other worker answered a resumed connection`, async () => {
          const path = `/a.txt?${maxVersion}-${seen.length}`;
          const r = await tlsExchange(port, pki.root.certPem, { maxVersion, path, session: first.session });
          assert.equal(r.status, 200);
          seen.push({
            worker: await waitUntil('the request is logged', () => workerOf(path)),
            reused: r.reused,
          });
          return seen.some((s) => s.worker !== issuer);
        });
        assert.deepEqual(
          seen.filter((s) => !s.reused),
          [],
          `${maxVersion}: every connection resumed (issued by worker ${issuer}): ${JSON.stringify(seen)}`,
        );
      }
      p.child.kill('SIGTERM');
      assert.equal(await p.exit, 0);
    } finally {
      p.child.kill('SIGKILL');
      removeSite(dir);
      rmSync(certDir, { recursive: true, force: true });
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
