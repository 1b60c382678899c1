// Attack: certificates built to fool a checker (issue 15 §6): the wrong host, wildcards stretched
// over two labels or the apex, names smuggled in the CN, IP/DNS confusion, forged or non-CA issuers,
// control characters for the terminal. Checked both by the pure host match and end to end through
// `gatehouse cert` against real TLS servers on 127.0.0.1:0.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hostnameMatches, referenceIdentity } from '../../src/certs/checks.js';
import { issueCertificate } from '../../src/certs/x509.js';
import { certCommand } from '../../src/cli/cert.js';
import { DAY_MS, leafFor, leafWithRawSans, serveTls, testPki } from '../helpers/certs.js';

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-attack-'));
const closers: (() => Promise<void>)[] = [];
let rootPath = '';
before(async () => {
  rootPath = join(dir, 'root.pem');
  writeFileSync(rootPath, (await testPki()).root.certPem);
});
after(async () => {
  for (const c of closers) await c();
  rmSync(dir, { recursive: true, force: true });
});

/** Serves `chain` and runs gatehouse cert against it; returns exit code, parsed JSON and raw output. */
async function check(chain: string, key: string, args: string[]) {
  const s = await serveTls(chain, key);
  closers.push(s.close);
  let out = '';
  let err = '';
  const code = await certCommand([`127.0.0.1:${s.port}`, '--ca', rootPath, ...args], {
    cwd: dir,
    stdout: { write: (x: string) => (out += x) },
    stderr: { write: (x: string) => (err += x) },
  });
  return { code, out, err };
}

async function matches(hosts: string[], name: string, commonName?: string): Promise<boolean> {
  const c = await leafFor({ hosts, ...(commonName !== undefined ? { commonName } : {}) });
  return hostnameMatches(new X509Certificate(c.certPem), referenceIdentity(name));
}

describe('attack: host name confusion', () => {
  it('attack: certificate for evil.example served for good.example -> hostnameMatches false, exit 1', async () => {
    const pki = await testPki();
    const evil = await leafFor({ hosts: ['evil.example'] });
    const r = await check(evil.certPem + pki.intermediate.certPem, evil.keyPem, [
      '--servername',
      'good.example',
      '--json',
    ]);
    assert.equal(r.code, 1);
    const json = JSON.parse(r.out);
    assert.deepEqual(json.checks, {
      trusted: true,
      timeValid: true,
      hostnameMatches: false,
      keyStrength: true,
    });
    assert.equal(json.ok, false);
  });

  const table: [string, string[], string, boolean, string?][] = [
    [
      'attack: wildcard *.good.example for a.b.good.example (two labels) -> no match',
      ['*.good.example'],
      'a.b.good.example',
      false,
    ],
    [
      'attack: wildcard *.good.example for the apex good.example -> no match',
      ['*.good.example'],
      'good.example',
      false,
    ],
    [
      'control: wildcard *.good.example for a.good.example -> match',
      ['*.good.example'],
      'a.good.example',
      true,
    ],
    [
      'attack: partial wildcard f*.good.example for foo.good.example -> no match',
      ['f*.good.example'],
      'foo.good.example',
      false,
    ],
    ['attack: wildcard in a middle label a.*.example -> no match', ['a.*.example'], 'a.b.example', false],
    [
      'attack: wildcard over a public suffix *.com for victim.com -> no match',
      ['*.com'],
      'victim.com',
      false,
    ],
    [
      'attack: dNSName "127.0.0.1" for the IP 127.0.0.1 -> no match (IPs match iPAddress SANs only)',
      ['127.0.0.1.'],
      '127.0.0.1',
      false,
    ],
    [
      'attack: iPAddress SAN 127.0.0.1 for the host name localhost -> no match',
      ['127.0.0.1'],
      'localhost',
      false,
    ],
    ['control: iPAddress SAN ::1 for [::1] -> match', ['::1'], '[::1]', true],
    [
      'attack: iPAddress SAN 127.0.0.1 for ::ffff:127.0.0.1 -> no match',
      ['127.0.0.1'],
      '::ffff:127.0.0.1',
      false,
    ],
    [
      'attack: name with a trailing dot good.example. against evil.example -> no match',
      ['evil.example'],
      'good.example.',
      false,
    ],
    [
      'control: name with a trailing dot good.example. is good.example -> match',
      ['good.example'],
      'good.example.',
      true,
    ],
    [
      'attack: name with two trailing dots good.example.. -> no match',
      ['good.example'],
      'good.example..',
      false,
    ],
    [
      'attack: CN good.example without SANs -> no match (the CN is never read)',
      [],
      'good.example',
      false,
      'good.example',
    ],
    [
      'attack: NUL in a CN good.example\\0.evil.example -> no match',
      [],
      'good.example',
      false,
      'good.example\u0000.evil.example',
    ],
    [
      'attack: NUL in a dNSName good.example\\0.evil.example -> no match',
      ['good.example\u0000.evil.example'],
      'good.example',
      false,
    ],
    [
      'attack: NUL in the reference name -> no match',
      ['good.example'],
      'good.example\u0000.evil.example',
      false,
    ],
    [
      'attack: wildcard as the reference name *.good.example -> no match',
      ['*.good.example'],
      '*.good.example',
      false,
    ],
    [
      'attack: suffix lookalike good.example.evil.example -> no match',
      ['good.example'],
      'good.example.evil.example',
      false,
    ],
    ['attack: upper case GOOD.EXAMPLE is the same name -> match', ['good.example'], 'GOOD.EXAMPLE', true],
  ];
  for (const [title, hosts, name, want, cn] of table) {
    it(title, async () => assert.equal(await matches(hosts, name, cn), want));
  }

  it('attack: dNSName "127.0.0.1" for the IP 127.0.0.1 -> no match (IPs match iPAddress SANs only)', async () => {
    const c = await leafWithRawSans([{ type: 'dns', value: '127.0.0.1' }]);
    const x = new X509Certificate(c.certPem);
    assert.equal(x.subjectAltName, 'DNS:127.0.0.1');
    assert.equal(hostnameMatches(x, referenceIdentity('127.0.0.1')), false);
  });

  it('attack: dNSName "127.0.0.1" (and IP 10.0.0.1) served to a client of 127.0.0.1 -> hostnameMatches false, exit 1', async () => {
    const pki = await testPki();
    const c = await leafWithRawSans([
      { type: 'dns', value: '127.0.0.1' },
      { type: 'ip', value: '10.0.0.1' },
    ]);
    const r = await check(c.certPem + pki.intermediate.certPem, c.keyPem, ['--json']);
    assert.equal(r.code, 1);
    assert.equal(JSON.parse(r.out).checks.hostnameMatches, false);
  });

  it('attack: --servername with a NUL -> refused, exit 2 (never sent as SNI)', async () => {
    const pki = await testPki();
    const r = await check(pki.chain, pki.leaf.keyPem, ['--servername', 'good.example\u0000.evil.example']);
    assert.equal(r.code, 2);
    assert.match(r.err, /--servername: not a host name/);
  });

  it('attack: CN only (no SAN) for the host connected to -> hostnameMatches false, exit 1', async () => {
    const pki = await testPki();
    const c = await leafFor({ hosts: [], commonName: 'localhost' });
    const r = await check(c.certPem + pki.intermediate.certPem, c.keyPem, [
      '--servername',
      'localhost',
      '--json',
    ]);
    assert.equal(r.code, 1);
    assert.equal(JSON.parse(r.out).checks.hostnameMatches, false);
  });
});

describe('attack: chains that must not be trusted', () => {
  it('attack: leaf issued by a non-CA leaf of the trusted root -> trusted false, exit 1', async () => {
    const pki = await testPki();
    const notCa = await leafFor({ hosts: ['issuer.test'] });
    const victim = await leafFor({ hosts: ['localhost'], issuer: notCa });
    const r = await check(victim.certPem + notCa.certPem + pki.intermediate.certPem, victim.keyPem, [
      '--json',
    ]);
    assert.equal(r.code, 1);
    assert.equal(JSON.parse(r.out).checks.trusted, false);
  });

  it("attack: forged root with the trusted root's name served in the chain -> trusted false", async () => {
    const pki = await testPki();
    const now = Date.now();
    const forgedRoot = await issueCertificate({
      commonName: 'Gatehouse Test Root CA',
      isCa: true,
      notBefore: new Date(now - DAY_MS),
      notAfter: new Date(now + DAY_MS * 30),
    });
    const forgedInter = await issueCertificate({
      commonName: 'Gatehouse Test Intermediate CA',
      isCa: true,
      issuer: forgedRoot,
      notBefore: new Date(now - DAY_MS),
      notAfter: new Date(now + DAY_MS * 30),
    });
    const victim = await leafFor({ hosts: ['localhost'], issuer: forgedInter });
    const r = await check(victim.certPem + forgedInter.certPem + forgedRoot.certPem, victim.keyPem, [
      '--json',
    ]);
    assert.equal(r.code, 1);
    assert.equal(JSON.parse(r.out).checks.trusted, false);
    assert.notEqual(
      new X509Certificate(forgedRoot.certPem).fingerprint256,
      new X509Certificate(pki.root.certPem).fingerprint256,
    );
  });

  it('attack: a CA below the pathLen-0 intermediate issues a leaf -> trusted false', async () => {
    const pki = await testPki();
    const now = Date.now();
    const sub = await issueCertificate({
      commonName: 'Sneaky Sub CA',
      isCa: true,
      issuer: pki.intermediate,
      notBefore: new Date(now - DAY_MS),
      notAfter: new Date(now + DAY_MS * 30),
    });
    const victim = await leafFor({ hosts: ['localhost'], issuer: sub });
    const r = await check(victim.certPem + sub.certPem + pki.intermediate.certPem, victim.keyPem, ['--json']);
    assert.equal(r.code, 1);
    assert.equal(JSON.parse(r.out).checks.trusted, false);
  });

  it('attack: the same forged chain as a PEM file -> trusted false (our own chain check, no handshake)', async () => {
    const pki = await testPki();
    const notCa = await leafFor({ hosts: ['issuer.test'] });
    const victim = await leafFor({ hosts: ['localhost'], issuer: notCa });
    writeFileSync(join(dir, 'forged.pem'), victim.certPem + notCa.certPem + pki.intermediate.certPem);
    let out = '';
    const code = await certCommand(['forged.pem', '--ca', rootPath, '--json'], {
      cwd: dir,
      stdout: { write: (x: string) => (out += x) },
      stderr: { write: () => {} },
    });
    assert.equal(code, 1);
    assert.equal(JSON.parse(out).checks.trusted, false);
  });
});

describe('attack: terminal injection', () => {
  it('attack: ANSI escape and newline in the subject CN -> printed escaped, never raw', async () => {
    const pki = await testPki();
    const c = await leafFor({ hosts: ['localhost'], commonName: 'ok\u001b[2J\nok: trusted' });
    const r = await check(c.certPem + pki.intermediate.certPem, c.keyPem, []);
    assert.equal(r.out.includes('\u001b'), false);
    // RFC 4514 escapes the newline as \0A; the ESC, which it leaves, is shown as \x1b.
    assert.match(r.out, /subject: +CN=ok\\x1b\[2J\\(0A|x0a)ok: trusted$/m);
    // The forged "ok: trusted" stays inside the subject line: exactly one line starts with it.
    assert.equal(r.out.split('\n').filter((l) => l === 'ok: trusted').length, 1);
  });
});
