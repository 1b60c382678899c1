// Attack: a certificate whose key or signature can be broken (issue 25 §5). An RSA-1024 leaf passed
// every check of `gatehouse cert` with exit 0. The CA/Browser Forum Baseline Requirements §6.1.5 ask
// for RSA >= 2048 bits and P-256/P-384/P-521, and §7.1.3.2 for SHA-256 or stronger signatures. Real
// certificates (node:crypto keys, @peculiar/x509, signed by the test intermediate) are served by a real
// TLS server on 127.0.0.1:0 that counts its connections, and checked with the CLI's own command.
import assert from 'node:assert/strict';
import { generateKeyPairSync, webcrypto } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createServer } from 'node:tls';
import * as x509 from '@peculiar/x509';
import { type KeyFacts, keyStrength } from '../../src/certs/checks.js';
import { certCommand } from '../../src/cli/cert.js';
import { DAY_MS, testPki } from '../helpers/certs.js';

const cryptoImpl = webcrypto as unknown as Crypto;
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-keys-'));
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

type LeafKey = { type: 'rsa'; bits: number } | { type: 'ec'; curve: string };

/** A localhost leaf with this key, signed by the test intermediate (P-256) with `hash`. */
async function leaf(key: LeafKey, hash: 'SHA-1' | 'SHA-256'): Promise<{ chain: string; keyPem: string }> {
  const pki = await testPki();
  const pair =
    key.type === 'rsa'
      ? generateKeyPairSync('rsa', { modulusLength: key.bits })
      : generateKeyPairSync('ec', { namedCurve: key.curve });
  const issuer = new x509.X509Certificate(pki.intermediate.certPem);
  const signingKey = await cryptoImpl.subtle.importKey(
    'pkcs8',
    x509.PemConverter.decodeFirst(pki.intermediate.keyPem),
    { name: 'ECDSA', namedCurve: 'P-256' },
    false,
    ['sign'],
  );
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: '0badc0de01',
      subject: 'CN=localhost',
      issuer: issuer.subject,
      notBefore: new Date(now - DAY_MS),
      notAfter: new Date(now + 30 * DAY_MS),
      publicKey: new Uint8Array(pair.publicKey.export({ type: 'spki', format: 'der' })),
      signingKey,
      signingAlgorithm: { name: 'ECDSA', hash },
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: 'localhost' }], false),
      ],
    },
    cryptoImpl,
  );
  return {
    chain: `${cert.toString('pem')}\n${pki.intermediate.certPem}`,
    keyPem: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  };
}

/** Serves the chain on 127.0.0.1:0 (counting handshakes) and runs `gatehouse cert --json` at it. */
async function certAt(c: { chain: string; keyPem: string }) {
  let connections = 0;
  // SECLEVEL=0: this server must be willing to present the weak certificate, as a misconfigured one is.
  const server = createServer({ cert: c.chain, key: c.keyPem, ciphers: 'DEFAULT@SECLEVEL=0' }, (s) => {
    s.on('error', () => {});
    s.end();
  });
  server.on('tlsClientError', () => {});
  // The client leaves as soon as it has the certificate: count connections, not finished handshakes.
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as AddressInfo).port;
  const run = async (json: boolean) => {
    let out = '';
    const code = await certCommand(
      [`127.0.0.1:${port}`, '--ca', rootPath, '--servername', 'localhost', ...(json ? ['--json'] : [])],
      { cwd: dir, stdout: { write: (x: string) => (out += x) }, stderr: { write: () => true } },
    );
    return { code, out };
  };
  const json = await run(true);
  const text = await run(false);
  return { code: json.code, json: JSON.parse(json.out), text: text.out, textCode: text.code, connections };
}

describe('attack: weak keys and signatures served live', () => {
  it('attack: RSA-1024 leaf -> keyStrength false, exit 1, the reason cites BR §6.1.5; the other checks unchanged', async () => {
    const r = await certAt(await leaf({ type: 'rsa', bits: 1024 }, 'SHA-256'));
    assert.ok(r.connections >= 1, 'the weak certificate was served and read');
    assert.equal(r.json.keyType, 'RSA 1024');
    // `trusted` is the TLS stack's own verdict: Node 20 and 22 accept the chain; Node 24's OpenSSL
    // (security level 2) refuses an RSA key under 2048 bits itself (EE_KEY_TOO_SMALL). Either way the
    // other checks are unchanged and keyStrength is what names the reason.
    const { trusted, ...others } = r.json.checks as Record<string, boolean>;
    assert.equal(typeof trusted, 'boolean');
    assert.deepEqual(others, { timeValid: true, hostnameMatches: true, keyStrength: false });
    assert.equal(r.code, 1);
    assert.equal(r.json.ok, false);
    assert.match(
      r.json.failures.join('\n'),
      /^keyStrength: the certificate has a RSA key of 1024 bits, under 2048 \(CA\/Browser Forum Baseline Requirements §6\.1\.5\)$/m,
    );
    assert.equal(r.textCode, 1);
    assert.match(r.text, /^FAIL: keyStrength: the certificate has a RSA key of 1024 bits/m);
  });

  it('attack: leaf signed with ECDSA-SHA1 -> keyStrength false, exit 1, SHA-1 named', async () => {
    const r = await certAt(await leaf({ type: 'ec', curve: 'prime256v1' }, 'SHA-1'));
    assert.ok(r.connections >= 1);
    assert.match(r.json.signatureAlgorithm, /SHA-1/);
    assert.equal(r.json.checks.keyStrength, false);
    // Node's OpenSSL may refuse the chain too ('UNSPECIFIED', depending on its security level); only
    // keyStrength says why.
    assert.equal(r.code, 1);
    assert.match(r.json.failures.join('\n'), /keyStrength: the certificate is signed with SHA-1/);
  });

  it('control: RSA-2048 leaf signed with SHA-256 -> keyStrength true, exit 0', async () => {
    const r = await certAt(await leaf({ type: 'rsa', bits: 2048 }, 'SHA-256'));
    assert.equal(r.json.keyType, 'RSA 2048');
    assert.deepEqual(r.json.checks, {
      trusted: true,
      timeValid: true,
      hostnameMatches: true,
      keyStrength: true,
    });
    assert.equal(r.code, 0);
    assert.match(r.text, /^ok: keyStrength$/m);
  });
});

describe('attack: EC key under 256 bits', () => {
  it('attack: P-224 leaf in a PEM file -> keyStrength false, exit 1', async () => {
    // TLS 1.3 has no signature scheme for P-224, so the file form of the command reads it.
    const c = await leaf({ type: 'ec', curve: 'secp224r1' }, 'SHA-256');
    const path = join(dir, 'p224.pem');
    writeFileSync(path, c.chain);
    let out = '';
    const code = await certCommand([path, '--ca', rootPath, '--servername', 'localhost', '--json'], {
      cwd: dir,
      stdout: { write: (x: string) => (out += x) },
      stderr: { write: () => true },
    });
    const json = JSON.parse(out);
    assert.equal(json.keyType, 'EC secp224r1');
    assert.equal(json.checks.keyStrength, false);
    assert.equal(code, 1);
    assert.match(json.failures.join('\n'), /EC key of 224 bits, under 256/);
  });
});

describe('keyStrength (pure): the thresholds', () => {
  const base: KeyFacts = {
    name: 'CN=x',
    keyType: 'rsa',
    keyBits: 2048,
    signatureHash: 'SHA-256',
    selfSigned: false,
  };
  const table: [string, Partial<KeyFacts>[], number][] = [
    ['RSA 2048, SHA-256 -> ok', [{}], 0],
    ['RSA 2047 -> weak', [{ keyBits: 2047 }], 1],
    ['RSA-PSS 1024 -> weak', [{ keyType: 'rsa-pss', keyBits: 1024 }], 1],
    ['DSA 1024 -> weak', [{ keyType: 'dsa', keyBits: 1024 }], 1],
    ['EC 256 -> ok', [{ keyType: 'ec', keyBits: 256 }], 0],
    ['EC 224 -> weak', [{ keyType: 'ec', keyBits: 224 }], 1],
    ['Ed25519 -> ok', [{ keyType: 'ed25519', keyBits: undefined }], 0],
    ['SHA-1 signature on the leaf -> weak', [{ signatureHash: 'SHA-1' }], 1],
    ['MD5 signature -> weak', [{ signatureHash: 'MD5' }], 1],
    ['unknown signature algorithm -> not judged', [{ signatureHash: undefined }], 0],
    [
      'self-signed leaf signed with SHA-1 -> weak (the leaf always counts)',
      [{ signatureHash: 'SHA-1', selfSigned: true }],
      1,
    ],
    [
      'a served root self-signed with SHA-1 -> ok (nothing relies on it)',
      [{}, { signatureHash: 'SHA-1', selfSigned: true }],
      0,
    ],
    ['an intermediate with RSA 1024 -> weak', [{}, { keyBits: 1024 }], 1],
    ['RSA 1024 signed with SHA-1 -> two reasons', [{ keyBits: 1024, signatureHash: 'SHA-1' }], 2],
  ];
  for (const [name, certs, reasons] of table) {
    it(name, () => assert.equal(keyStrength(certs.map((c) => ({ ...base, ...c }))).length, reasons));
  }
});
