// `gatehouse serve --https --name ...` as users run it (bin/gatehouse.js, dist/): the names the
// development certificate carries are printed and served, a wildcard under a top-level name is
// warned about, and a bad name stops the start with exit 2 naming the flag or the config key.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { makeSite, removeSite } from '../helpers/http.js';

const BIN = join(import.meta.dirname, '../../bin/gatehouse.js');
const base = mkdtempSync(join(tmpdir(), 'gatehouse-serve-names-'));
const site = makeSite({ 'index.html': 'hi' });
after(() => {
  rmSync(base, { recursive: true, force: true });
  removeSite(site);
});
const env = { ...process.env, GATEHOUSE_DATA_DIR: join(base, 'data') };

/** The certificate a TLS client gets for `servername` (not verified: only its names are read). */
function servedSan(port: number, servername: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const t = tlsConnect({ port, host: '127.0.0.1', servername, rejectUnauthorized: false }, () => {
      resolve(t.getPeerCertificate().subjectaltname ?? '');
      t.end();
    });
    t.on('error', reject);
  });
}

describe('gatehouse serve --https --name', () => {
  it('prints the names, warns about *.test, serves a certificate with them; SIGTERM exits 0', async () => {
    const child = spawn(
      process.execPath,
      [
        BIN,
        'serve',
        site,
        '--https',
        '--name',
        'MyApp.test',
        '--name',
        '*.test',
        '--name',
        '2001:db8::1',
      ].concat(['--port', '0', '--log', 'off']),
      { env },
    );
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d) => {
        out += d;
        const m = /listening on (https:\S+)\n/.exec(out);
        if (m) resolve(m[1]!);
      });
      exited.then((code) => reject(new Error(`exit ${code}: ${err}`)));
    });
    try {
      assert.match(
        out,
        /^the certificate names localhost, 127\.0\.0\.1, ::1, myapp\.test, \*\.test, 2001:db8::1$/m,
      );
      assert.match(err, /warning: --name \*\.test: browsers and OpenSSL match no wildcard/);
      const san = await servedSan(Number(new URL(url).port), 'myapp.test');
      assert.match(san, /DNS:myapp\.test/);
      assert.match(san, /DNS:\*\.test/);
      assert.match(san, /IP Address:2001:DB8:0:0:0:0:0:1/i);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0);
  });

  it('a bad --name -> exit 2 naming the flag and the name; nothing listens', () => {
    const r = spawnSync(
      process.execPath,
      [BIN, 'serve', site, '--https', '--name', 'my_app.test', '--port', '0'],
      {
        encoding: 'utf8',
        env,
      },
    );
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /--name: not a host name .*: my_app\.test/);
    assert.doesNotMatch(r.stdout, /listening/);
  });

  it('--name without --https -> exit 2 naming the flag', () => {
    const r = spawnSync(process.execPath, [BIN, 'serve', site, '--name', 'myapp.test', '--port', '0'], {
      encoding: 'utf8',
      env,
    });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /--name: only with --https/);
  });

  it('a bad tls.names entry in the config file -> exit 2 naming the key', () => {
    const config = join(base, 'bad-names.json');
    writeFileSync(config, JSON.stringify({ root: site, tls: { dev: true, names: ['ok.test', '10.0.0'] } }));
    const r = spawnSync(process.execPath, [BIN, 'serve', '--config', config, '--port', '0'], {
      encoding: 'utf8',
      env,
    });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /tls\.names\[1\]: not an IPv4 address: 10\.0\.0/);
  });
});
