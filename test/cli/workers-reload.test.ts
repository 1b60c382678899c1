// `gatehouse serve --workers`: SIGHUP restarts and TLS across workers (split from workers.test.ts so
// that each file's suite stays well inside the per-test timeout).
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { leafFor } from '../helpers/certs.js';
import { get, makeSite, removeSite } from '../helpers/http.js';
import { tlsExchange } from '../helpers/tls.js';
import { WAIT_DEADLINE_MS, waitUntil } from '../helpers/wait.js';
import { httpsPort, startCli, startTlsWorkers, workerPids } from '../helpers/workers-cli.js';

describe('gatehouse serve --workers: reloads and TLS', () => {
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
});
