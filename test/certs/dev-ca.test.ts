// The local development CA (issue 15 §5): where it lives, what it makes, when it renews the leaf,
// and that two processes starting at once share one CA.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import tls from 'node:tls';
import * as x509 from '@peculiar/x509';
import {
  DEV_LEAF_LIFETIME_MS,
  DevCaError,
  devCaPaths,
  devDataDir,
  devLeafAction,
  devTrustInstructions,
  ensureDevCertificate,
  existingDevCaPath,
} from '../../src/certs/dev-ca.js';
import { issueCertificate } from '../../src/certs/x509.js';
import { DAY_MS, unknownCaPki } from '../helpers/certs.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'gatehouse-devca-'));
  dirs.push(d);
  return d;
}
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const mode = (path: string) => statSync(path).mode & 0o777;

describe('devDataDir', () => {
  const cases: [string, Record<string, string>, NodeJS.Platform, string][] = [
    [
      'GATEHOUSE_DATA_DIR wins over everything',
      { GATEHOUSE_DATA_DIR: '/d', XDG_DATA_HOME: '/x' },
      'linux',
      '/d',
    ],
    ['XDG_DATA_HOME absolute -> $XDG_DATA_HOME/gatehouse', { XDG_DATA_HOME: '/x' }, 'linux', '/x/gatehouse'],
    [
      'XDG_DATA_HOME relative is ignored (XDG spec)',
      { XDG_DATA_HOME: 'rel' },
      'linux',
      '/home/u/.local/share/gatehouse',
    ],
    [
      'empty GATEHOUSE_DATA_DIR is ignored',
      { GATEHOUSE_DATA_DIR: '' },
      'linux',
      '/home/u/.local/share/gatehouse',
    ],
    ['linux default -> ~/.local/share/gatehouse', {}, 'linux', '/home/u/.local/share/gatehouse'],
    [
      'macOS -> ~/Library/Application Support/gatehouse',
      {},
      'darwin',
      '/home/u/Library/Application Support/gatehouse',
    ],
    ['Windows -> %LOCALAPPDATA%\\gatehouse', { LOCALAPPDATA: '/appdata' }, 'win32', '/appdata/gatehouse'],
    [
      'Windows without LOCALAPPDATA -> ~/AppData/Local/gatehouse',
      {},
      'win32',
      '/home/u/AppData/Local/gatehouse',
    ],
  ];
  for (const [name, env, platform, want] of cases) {
    it(name, () => assert.equal(devDataDir(env, platform, '/home/u'), want));
  }
});

describe('devLeafAction', async () => {
  const now = Date.now();
  const ca = await issueCertificate({
    commonName: 'dev CA',
    isCa: true,
    pathLength: 0,
    notBefore: new Date(now - DAY_MS),
    notAfter: new Date(now + 3650 * DAY_MS),
  });
  const leaf = (o: { fromMs?: number; toMs?: number; hosts?: string[]; issuer?: typeof ca } = {}) =>
    issueCertificate({
      commonName: 'localhost',
      hosts: o.hosts ?? ['localhost', '127.0.0.1', '::1'],
      issuer: o.issuer ?? ca,
      notBefore: new Date(o.fromMs ?? now - DAY_MS),
      notAfter: new Date(o.toMs ?? now + 300 * DAY_MS),
    });
  const other = await unknownCaPki();
  const good = await leaf();
  const cases: [string, Promise<{ certPem: string; keyPem: string }>, boolean, string | undefined][] = [
    ['good leaf -> keep', Promise.resolve(good), true, undefined],
    ['30 days and a minute left -> keep', leaf({ toMs: now + 30 * DAY_MS + 60_000 }), true, undefined],
    ['29 days left -> reissue', leaf({ toMs: now + 29 * DAY_MS }), true, 'expires in 29 days'],
    ['expired -> reissue', leaf({ fromMs: now - 40 * DAY_MS, toMs: now - DAY_MS }), true, 'has expired'],
    [
      'not yet valid -> reissue',
      leaf({ fromMs: now + DAY_MS, toMs: now + 300 * DAY_MS }),
      true,
      'not valid yet',
    ],
    ['signed by another CA -> reissue', leaf({ issuer: other }), true, 'not signed by the stored CA'],
    ['missing ::1 -> reissue', leaf({ hosts: ['localhost', '127.0.0.1'] }), true, 'does not name'],
    ['key does not match -> reissue', Promise.resolve(good), false, 'key does not match'],
  ];
  const caX = new X509Certificate(ca.certPem);
  for (const [name, made, keyMatches, reason] of cases) {
    it(name, async () => {
      const l = new X509Certificate((await made).certPem);
      const action = devLeafAction({ leaf: l, leafKeyMatches: keyMatches, ca: caX, nowMs: now });
      if (reason === undefined) assert.deepEqual(action, { kind: 'keep' });
      else {
        assert.equal(action.kind, 'reissue');
        assert.match(action.kind === 'reissue' ? action.reason : '', new RegExp(reason));
      }
    });
  }
  it('no leaf -> reissue', () => {
    const a = devLeafAction({ leaf: undefined, leafKeyMatches: false, ca: caX, nowMs: now });
    assert.deepEqual(a, { kind: 'reissue', reason: 'no leaf yet' });
  });
});

describe('ensureDevCertificate', () => {
  it('first run makes a P-256 CA (10 years, pathLen 0) and a P-256 localhost leaf (<= 397 days)', async () => {
    const dataDir = tempDir();
    const lines: string[] = [];
    const r = await ensureDevCertificate({ dataDir, log: (l) => lines.push(l) });
    const p = devCaPaths(dataDir);
    assert.deepEqual(r.created, { ca: true, leaf: true });
    assert.equal(r.caCertPath, p.caCert);
    assert.equal(lines.length, 2);
    const ca = new X509Certificate(readFileSync(p.caCert));
    assert.equal(ca.ca, true);
    assert.match(ca.subject, /^CN=Gatehouse development CA \S+@\S+$/);
    assert.equal(ca.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    const caLifeMs = Date.parse(ca.validTo) - Date.parse(ca.validFrom);
    assert.ok(caLifeMs >= 3650 * DAY_MS, `CA lives ${caLifeMs / DAY_MS} days`);
    const bc = new x509.X509Certificate(readFileSync(p.caCert, 'utf8')).getExtension(
      x509.BasicConstraintsExtension,
    );
    assert.equal(bc?.pathLength, 0);
    const leaf = new X509Certificate(r.certPem);
    assert.equal(leaf.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    assert.equal(Date.parse(leaf.validTo) - Date.parse(leaf.validFrom) <= 397 * DAY_MS, true);
    assert.equal(leaf.checkHost('localhost'), 'localhost');
    assert.ok(leaf.checkIP('127.0.0.1') && leaf.checkIP('::1'));
    assert.equal(leaf.verify(ca.publicKey), true);
    assert.equal(leaf.checkPrivateKey(createPrivateKey(r.keyPem)), true);
    assert.equal(readFileSync(p.leafCert, 'utf8'), r.certPem);
    assert.equal(readFileSync(p.leafKey, 'utf8'), r.keyPem);
  });

  it('attack: another local user reading the CA key -> dir 0700, keys 0600 (even under a permissive umask)', async () => {
    const dataDir = tempDir();
    const old = process.umask(0);
    try {
      await ensureDevCertificate({ dataDir });
    } finally {
      process.umask(old);
    }
    const p = devCaPaths(dataDir);
    assert.equal(mode(p.dir), 0o700);
    assert.equal(mode(p.caKey), 0o600);
    assert.equal(mode(p.leafKey), 0o600);
    assert.equal(mode(p.caCert), 0o644);
  });

  it('second run reuses both: created false/false, same leaf bytes', async () => {
    const dataDir = tempDir();
    const a = await ensureDevCertificate({ dataDir });
    const b = await ensureDevCertificate({ dataDir });
    assert.deepEqual(b.created, { ca: false, leaf: false });
    assert.equal(b.certPem, a.certPem);
    assert.equal(b.keyPem, a.keyPem);
  });

  it('near expiry (nowMs 380 days on) -> new leaf from the same CA', async () => {
    const dataDir = tempDir();
    const a = await ensureDevCertificate({ dataDir });
    const caBefore = readFileSync(devCaPaths(dataDir).caCert, 'utf8');
    const later = Date.now() + 380 * DAY_MS;
    const b = await ensureDevCertificate({ dataDir, nowMs: later });
    assert.deepEqual(b.created, { ca: false, leaf: true });
    assert.notEqual(b.certPem, a.certPem);
    assert.equal(readFileSync(devCaPaths(dataDir).caCert, 'utf8'), caBefore);
    const leaf = new X509Certificate(b.certPem);
    assert.ok(Date.parse(leaf.validTo) - later > DEV_LEAF_LIFETIME_MS - 2 * 3_600_000);
  });

  it('a leaf replaced by one from another CA is reissued from the stored CA', async () => {
    const dataDir = tempDir();
    await ensureDevCertificate({ dataDir });
    const p = devCaPaths(dataDir);
    const other = await unknownCaPki();
    const now = Date.now();
    const foreign = await issueCertificate({
      commonName: 'localhost',
      hosts: ['localhost', '127.0.0.1', '::1'],
      issuer: other,
      notBefore: new Date(now - DAY_MS),
      notAfter: new Date(now + 300 * DAY_MS),
    });
    writeFileSync(p.leafCert, foreign.certPem);
    writeFileSync(p.leafKey, foreign.keyPem);
    const r = await ensureDevCertificate({ dataDir });
    assert.deepEqual(r.created, { ca: false, leaf: true });
    assert.equal(
      new X509Certificate(r.certPem).verify(new X509Certificate(readFileSync(p.caCert)).publicKey),
      true,
    );
  });

  it('a garbage leaf file is reissued', async () => {
    const dataDir = tempDir();
    await ensureDevCertificate({ dataDir });
    writeFileSync(devCaPaths(dataDir).leafCert, 'not a certificate');
    const r = await ensureDevCertificate({ dataDir });
    assert.deepEqual(r.created, { ca: false, leaf: true });
  });

  it('CA key missing -> DevCaError naming the file; no new CA is made silently', async () => {
    const dataDir = tempDir();
    await ensureDevCertificate({ dataDir });
    const p = devCaPaths(dataDir);
    const caBefore = readFileSync(p.caCert, 'utf8');
    unlinkSync(p.caKey);
    await assert.rejects(ensureDevCertificate({ dataDir }), (err: Error) => {
      assert.ok(err instanceof DevCaError);
      assert.match(err.message, /ca-key\.pem is missing/);
      return true;
    });
    assert.equal(readFileSync(p.caCert, 'utf8'), caBefore);
  });

  it('concurrent calls in one process share one CA and one leaf', async () => {
    const dataDir = tempDir();
    const rs = await Promise.all([1, 2, 3, 4].map(() => ensureDevCertificate({ dataDir })));
    assert.equal(rs.filter((r) => r.created.ca).length, 1);
    assert.equal(new Set(rs.map((r) => r.certPem)).size, 1);
  });

  it('two processes starting at once make one CA', async () => {
    const dataDir = tempDir();
    const mod = new URL('../../src/certs/dev-ca.ts', import.meta.url).href;
    const code = `const m = await import(${JSON.stringify(mod)});
      const r = await m.ensureDevCertificate({ dataDir: ${JSON.stringify(dataDir)} });
      process.stdout.write(JSON.stringify({ ca: r.created.ca, cert: r.certPem }));`;
    const run = () => {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      return once(child, 'exit').then(([status]) => {
        assert.equal(status, 0);
        return JSON.parse(out) as { ca: boolean; cert: string };
      });
    };
    const [a, b] = await Promise.all([run(), run()]);
    assert.equal(Number(a.ca) + Number(b.ca), 1, 'exactly one process made the CA');
    assert.equal(a.cert, b.cert);
    const caX = new X509Certificate(readFileSync(devCaPaths(dataDir).caCert));
    assert.equal(new X509Certificate(a.cert).verify(caX.publicKey), true);
  });

  it('a lock left by a dead process is taken over', async () => {
    const dataDir = tempDir();
    const p = devCaPaths(dataDir);
    const dead = spawn(process.execPath, ['-e', '']);
    const deadPid = dead.pid;
    await once(dead, 'exit');
    mkdirSync(p.dir, { recursive: true, mode: 0o700 });
    writeFileSync(p.lock, `${deadPid}\n`);
    // Dated in the future, so only the dead holder (not the lock's age) can free it.
    const future = new Date(Date.now() + 3_600_000);
    utimesSync(p.lock, future, future);
    const r = await ensureDevCertificate({ dataDir });
    assert.deepEqual(r.created, { ca: true, leaf: true });
    assert.equal(existsSync(p.lock), false, 'the lock is released');
  });

  it('a lock of a live process older than 10 s is taken over', async () => {
    const dataDir = tempDir();
    const p = devCaPaths(dataDir);
    mkdirSync(p.dir, { recursive: true, mode: 0o700 });
    writeFileSync(p.lock, `${process.pid}\n`);
    const old = new Date(Date.now() - 60_000);
    utimesSync(p.lock, old, old);
    const r = await ensureDevCertificate({ dataDir });
    assert.equal(r.created.ca, true);
  });

  it('the leaf serves a TLS handshake that verifies against the CA for localhost and 127.0.0.1', async () => {
    const dataDir = tempDir();
    const r = await ensureDevCertificate({ dataDir });
    const ca = readFileSync(r.caCertPath, 'utf8');
    const server = tls.createServer({ cert: r.certPem, key: r.keyPem }, (s) => s.end());
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      for (const servername of ['localhost', undefined]) {
        const s = tls.connect({ host: '127.0.0.1', port, ca, ...(servername ? { servername } : {}) });
        await once(s, 'secureConnect');
        assert.equal(s.authorized, true);
        s.destroy();
      }
    } finally {
      server.close();
    }
  });

  it('existingDevCaPath: undefined before, the path after', async () => {
    const dataDir = tempDir();
    assert.equal(await existingDevCaPath(dataDir), undefined);
    const r = await ensureDevCertificate({ dataDir });
    assert.equal(await existingDevCaPath(dataDir), r.caCertPath);
  });
});

describe('devTrustInstructions', () => {
  it('names the path and the command of each trust store', () => {
    const t = devTrustInstructions('/d/dev-ca/ca.pem');
    for (const want of [
      'update-ca-certificates',
      'security add-trusted-cert',
      'certutil -addstore -f ROOT',
      'certutil -d sql:$HOME/.pki/nssdb',
      'NODE_EXTRA_CA_CERTS="/d/dev-ca/ca.pem"',
      '/usr/local/share/ca-certificates/gatehouse-dev.crt',
    ]) {
      assert.ok(t.includes(want), want);
    }
  });
});
