// `gatehouse serve --tls-cert --tls-key` as users run it: HTTPS with HTTP/2, the redirect listener,
// SIGHUP reloading the certificate, and the exit code of a start whose certificate cannot be read.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { leafFor, testPki } from '../helpers/certs.js';
import { get, makeSite, removeSite } from '../helpers/http.js';
import { testTls, tlsExchange } from '../helpers/tls.js';
import { waitUntil } from '../helpers/wait.js';

const BIN = join(import.meta.dirname, '../../bin/gatehouse.js');

function servedSerial(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const t = tlsConnect({ port, host: '127.0.0.1', ca }, () => {
      resolve(t.getPeerCertificate().serialNumber.toUpperCase());
      t.end();
    });
    t.on('error', reject);
  });
}

describe('gatehouse serve with TLS', () => {
  it('--tls-cert/--tls-key: https:// and the redirect listener; SIGHUP reloads; SIGTERM exits 0', async () => {
    const pki = await testPki();
    await testTls();
    const dir = makeSite({ 'a.txt': 'over tls' });
    const certDir = mkdtempSync(join(tmpdir(), 'gatehouse-cli-tls-'));
    const cert = join(certDir, 'cert.pem');
    const key = join(certDir, 'key.pem');
    writeFileSync(cert, pki.leaf.certPem + pki.intermediate.certPem);
    writeFileSync(key, pki.leaf.keyPem);
    const child = spawn(
      process.execPath,
      [
        BIN,
        'serve',
        dir,
        '--port',
        '0',
        '--http-port',
        '0',
        '--tls-cert',
        cert,
        '--tls-key',
        key,
        '--log',
        'off',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const m = await waitUntil('the listening lines', () =>
        /listening on (https:\/\/\S+)\nredirecting (http:\/\/\S+) to HTTPS\n/.exec(out),
      );
      const url = m[1]!;
      const port = Number(new URL(url).port);
      const r = await get(url, '/a.txt');
      assert.equal(r.status, 200);
      assert.equal(r.text, 'over tls');
      const redirect = await get(m[2]!, '/a.txt', { headers: { host: 'localhost' } });
      assert.equal(redirect.status, 308);
      assert.equal(redirect.headers.location, `https://localhost:${port}/a.txt`);
      // SIGHUP: the renewed pair (written in place, the watch is on too) is what new connections get.
      const next = await leafFor({ hosts: ['localhost', '127.0.0.1'] });
      writeFileSync(cert, next.certPem + pki.intermediate.certPem);
      writeFileSync(key, next.keyPem);
      child.kill('SIGHUP');
      const want = new X509Certificate(next.certPem).serialNumber.toUpperCase();
      await waitUntil(
        'the reloaded certificate',
        async () => (await servedSerial(port, pki.root.certPem)) === want,
      );
      assert.equal(child.exitCode, null, 'SIGHUP did not stop the server');
      child.kill('SIGTERM');
      assert.equal(await exit, 0);
    } finally {
      child.kill('SIGKILL');
      removeSite(dir);
      rmSync(certDir, { recursive: true, force: true });
    }
  });

  it('a certificate that cannot be read: exit 1 naming the file; --tls-cert without --tls-key: exit 2', () => {
    const dir = makeSite({});
    try {
      const r = spawnSync(
        process.execPath,
        [
          BIN,
          'serve',
          dir,
          '--port',
          '0',
          '--tls-cert',
          '/nonexistent/c.pem',
          '--tls-key',
          '/nonexistent/k.pem',
        ],
        { encoding: 'utf8' },
      );
      assert.equal(r.status, 1);
      assert.match(r.stderr, /gatehouse: tls: \/nonexistent\/[ck]\.pem: cannot read/);
      const u = spawnSync(process.execPath, [BIN, 'serve', dir, '--tls-cert', 'c.pem'], { encoding: 'utf8' });
      assert.equal(u.status, 2);
      assert.match(u.stderr, /--tls-cert and --tls-key go together/);
    } finally {
      removeSite(dir);
    }
  });
  it('a session ticket key file readable by others: exit 1 naming the file and the mode', async () => {
    const files = await testTls();
    const dir = makeSite({});
    const keyFile = join(dir, '..', `ticket-${process.pid}.key`);
    writeFileSync(keyFile, Buffer.alloc(80, 1), { mode: 0o644 });
    chmodSync(keyFile, 0o644);
    const config = join(dir, 'gatehouse.config.json');
    writeFileSync(
      config,
      JSON.stringify({ tls: { cert: files.cert, key: files.key, sessionTickets: { keyFile } } }),
    );
    try {
      const r = spawnSync(process.execPath, [BIN, 'serve', dir, '--port', '0', '--config', config], {
        encoding: 'utf8',
      });
      assert.equal(r.status, 1);
      assert.equal(
        r.stderr.trim().split('\n').at(-1),
        `gatehouse: tls: sessionTickets.keyFile ${keyFile}: readable by group or others (mode 644): chmod 600 it`,
      );
      assert.doesNotMatch(r.stdout, /listening on/);
    } finally {
      removeSite(dir);
      rmSync(keyFile, { force: true });
    }
  });
  it("two processes sharing tls.sessionTickets.keyFile resume each other's tickets (different command lines)", async () => {
    const files = await testTls();
    const dir = makeSite({ 'a.txt': 'a' });
    const keyFile = join(dir, '..', `shared-ticket-${process.pid}.key`);
    writeFileSync(keyFile, Buffer.alloc(80, 7), { mode: 0o600 });
    const config = join(dir, 'gatehouse.config.json');
    writeFileSync(
      config,
      JSON.stringify({ tls: { cert: files.cert, key: files.key, sessionTickets: { keyFile } } }),
    );
    // Two `serve` processes whose command lines differ (--log), as two instances' often do.
    const start = (log: string) => {
      const child = spawn(
        process.execPath,
        [BIN, 'serve', dir, '--port', '0', '--config', config, '--log', log],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      const port = waitUntil('the listening line', () =>
        /listening on https:\/\/127\.0\.0\.1:(\d+)\n/.exec(out),
      );
      return { child, port: port.then((m) => Number(m[1])) };
    };
    const a = start('off');
    const b = start('json');
    try {
      const [portA, portB] = [await a.port, await b.port];
      for (const maxVersion of ['TLSv1.3', 'TLSv1.2'] as const) {
        const first = await tlsExchange(portA, files.caPem, { maxVersion, path: '/a.txt' });
        const onB = await tlsExchange(portB, files.caPem, {
          maxVersion,
          path: '/a.txt',
          session: first.session,
        });
        assert.deepEqual([first.reused, onB.reused, onB.status], [false, true, 200], maxVersion);
      }
    } finally {
      a.child.kill('SIGKILL');
      b.child.kill('SIGKILL');
      removeSite(dir);
      rmSync(keyFile, { force: true });
    }
  });
});
