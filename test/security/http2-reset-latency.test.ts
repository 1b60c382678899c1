// Rapid reset (CVE-2023-44487) and a legitimate client (issue 25 §1): under the attack, a client on
// another address keeps its median latency within 10x of quiet, on a static file and on a proxied
// path. The attacker runs in its own process (fixtures/h2-rapid-reset.mjs), two connections that open
// and cancel streams and reconnect when closed or refused; the server is this process.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { type ClientHttp2Session, connect as http2Connect } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { makeSite, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { testTls } from '../helpers/tls.js';
import { waitUntil } from '../helpers/wait.js';

const ATTACKER = fileURLToPath(new URL('./fixtures/h2-rapid-reset.mjs', import.meta.url));
const SAMPLES = 30;

function ask(session: ClientHttp2Session, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = session.request({ ':path': path });
    let status = 0;
    req.on('response', (h) => (status = Number(h[':status'])));
    req.resume();
    req.on('end', () => resolve(status));
    req.on('error', reject);
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

/** The median of SAMPLES sequential requests for `path` on one session (ms). */
async function p50(session: ClientHttp2Session, path: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t = performance.now();
    assert.equal(await ask(session, path), 200);
    times.push(performance.now() - t);
  }
  return median(times);
}

/** The median delay of a 0 ms timer (ms): what this process's event loop adds to any answer. */
async function loopLag(): Promise<number> {
  const lags: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t = performance.now();
    await new Promise((r) => setTimeout(r, 0));
    lags.push(performance.now() - t);
  }
  return median(lags);
}

describe('HTTP/2 rapid reset and a legitimate client', () => {
  let site: string;
  let s: TestServer;
  let upstream: Server;
  let ca: string;
  let attacker: ChildProcess | undefined;
  before(async () => {
    upstream = createServer((req, res) => {
      req.resume();
      res.end('up');
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    site = makeSite({ 'a.txt': 'public' });
    const tls = await testTls();
    ca = tls.caPem;
    s = await startServer(site, {
      tls: { cert: tls.cert, key: tls.key },
      proxy: [{ prefix: '/api', upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` }],
    });
  });
  /** Ends the attacker and its pipes (an open pipe to it would keep this process alive). */
  const stopAttacker = () => {
    attacker?.stdout?.destroy();
    attacker?.kill();
    attacker = undefined;
  };
  after(async () => {
    stopAttacker();
    await s.close();
    upstream.closeAllConnections();
    upstream.close();
    removeSite(site);
  });

  it('attack: rapid reset from two connections of another process -> a client on another address keeps its p50 within 10x of quiet, static and proxied', async () => {
    const stats = () => s.app.tls!.http2Stats()!;
    const client = http2Connect(s.url, { ca });
    client.on('error', () => {});
    try {
      // Quiet: warm up once, then the references.
      await p50(client, '/a.txt');
      await p50(client, '/api/x');
      const floorMs = await loopLag();
      const quiet = { static: await p50(client, '/a.txt'), proxied: await p50(client, '/api/x') };
      const before = { ...stats() };
      let report = { sessions: 0, streams: 0 };
      attacker = spawn(process.execPath, [ATTACKER, s.url, '127.0.0.2', '/api/reset', '2'], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      attacker.stdout!.setEncoding('utf8');
      attacker.stdout!.on('data', (c: string) => {
        const last = c.trim().split('\n').pop();
        if (last) report = JSON.parse(last);
      });
      // The attack reached the server before the measurement: resets counted against its address.
      await waitUntil('the server saw the attack', () => stats().clientResets - before.clientResets >= 200);
      const attacked = { static: await p50(client, '/a.txt'), proxied: await p50(client, '/api/x') };
      const during = {
        resets: stats().clientResets - before.clientResets,
        refused: stats().refusedConnections - before.refusedConnections,
        ...report,
      };
      stopAttacker();
      const what = JSON.stringify({ quiet, attacked, floorMs, during });
      for (const k of ['static', 'proxied'] as const) {
        assert.ok(attacked[k] < 10 * Math.max(quiet[k], floorMs), `${k}: ${what}`);
      }
      // The attack went on throughout: streams sent, and its reconnections refused at accept.
      assert.ok(during.streams > during.resets, what);
      assert.ok(during.refused > 0, what);
    } finally {
      client.destroy();
    }
  });
});
