// issueCertificate: the certificates it makes are accepted by Node's own TLS and X509Certificate.
import assert from 'node:assert/strict';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import tls from 'node:tls';
import * as x509 from '@peculiar/x509';
import { issueCertificate } from '../../src/certs/x509.js';
import { DAY_MS, leafFor, selfSigned, testPki, unknownCaPki } from '../helpers/certs.js';

/** Serves `cert` (a chain) on 127.0.0.1:0 and connects with `ca`; resolves with the client's verdict. */
async function handshake(
  cert: string,
  key: string,
  ca: string,
  servername = 'localhost',
): Promise<{ authorized: boolean; error: string | undefined }> {
  const server = tls.createServer({ cert, key }, (s) => s.end());
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  try {
    const socket = tls.connect({ host: '127.0.0.1', port, ca, servername, rejectUnauthorized: false });
    await once(socket, 'secureConnect');
    const verdict = {
      authorized: socket.authorized,
      error: socket.authorizationError === null ? undefined : String(socket.authorizationError),
    };
    socket.destroy();
    return verdict;
  } finally {
    server.close();
  }
}

describe('issueCertificate', () => {
  it('leaf + intermediate chain verifies against the root over a real TLS handshake', async () => {
    const pki = await testPki();
    const v = await handshake(pki.chain, pki.leaf.keyPem, pki.root.certPem);
    assert.deepEqual(v, { authorized: true, error: undefined });
  });

  it('leaf without its intermediate does not verify (UNABLE_TO_VERIFY_LEAF_SIGNATURE)', async () => {
    const pki = await testPki();
    const v = await handshake(pki.leaf.certPem, pki.leaf.keyPem, pki.root.certPem);
    assert.equal(v.authorized, false);
    assert.equal(v.error, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  });

  it('chain does not verify against an unknown CA', async () => {
    const pki = await testPki();
    const other = await unknownCaPki();
    const v = await handshake(pki.chain, pki.leaf.keyPem, other.certPem);
    assert.equal(v.authorized, false);
  });

  it('leaf SANs: checkHost / checkIP match localhost, 127.0.0.1, ::1 and nothing else', async () => {
    const { leaf } = await testPki();
    const c = new X509Certificate(leaf.certPem);
    assert.equal(c.checkHost('localhost'), 'localhost');
    assert.equal(c.checkIP('127.0.0.1'), '127.0.0.1');
    assert.equal(c.checkIP('::1'), '::1');
    assert.equal(c.checkHost('example.com'), undefined);
    assert.equal(c.checkIP('127.0.0.2'), undefined);
    assert.equal(c.subjectAltName, 'DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
  });

  it('signatures verify with the issuer public key: leaf by intermediate, intermediate by root', async () => {
    const pki = await testPki();
    const leaf = new X509Certificate(pki.leaf.certPem);
    const inter = new X509Certificate(pki.intermediate.certPem);
    const root = new X509Certificate(pki.root.certPem);
    assert.equal(leaf.verify(inter.publicKey), true);
    assert.equal(inter.verify(root.publicKey), true);
    assert.equal(root.verify(root.publicKey), true);
    assert.equal(leaf.verify(root.publicKey), false);
    assert.equal(leaf.checkIssued(inter), true);
    assert.equal(inter.checkIssued(root), true);
  });

  it('CA flags: root and intermediate are CAs, the leaf is not', async () => {
    const pki = await testPki();
    assert.equal(new X509Certificate(pki.root.certPem).ca, true);
    assert.equal(new X509Certificate(pki.intermediate.certPem).ca, true);
    assert.equal(new X509Certificate(pki.leaf.certPem).ca, false);
    const inter = new x509.X509Certificate(pki.intermediate.certPem);
    assert.equal(inter.getExtension(x509.BasicConstraintsExtension)?.pathLength, 0);
  });

  it('leaf extensions: serverAuth EKU, digitalSignature, SKI, AKI = issuer SKI', async () => {
    const pki = await testPki();
    const leaf = new x509.X509Certificate(pki.leaf.certPem);
    const inter = new x509.X509Certificate(pki.intermediate.certPem);
    const eku = leaf.getExtension(x509.ExtendedKeyUsageExtension);
    assert.deepEqual(Array.from(eku?.usages ?? [], String), ['1.3.6.1.5.5.7.3.1']);
    const ku = leaf.getExtension(x509.KeyUsagesExtension);
    assert.equal(ku?.usages, x509.KeyUsageFlags.digitalSignature);
    const ski = leaf.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId;
    assert.ok(ski !== undefined && ski.length > 0);
    const aki = leaf.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId;
    assert.equal(aki, inter.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId);
  });

  it('serial is 16 bytes and positive; two certificates get different serials', async () => {
    const a = await selfSigned(['a.test']);
    const b = await selfSigned(['a.test']);
    const sa = new X509Certificate(a.certPem).serialNumber;
    const sb = new X509Certificate(b.certPem).serialNumber;
    assert.equal(sa.length, 32);
    assert.ok(Number.parseInt(sa.slice(0, 2), 16) < 0x80, 'high bit clear');
    assert.notEqual(sa, sb);
  });

  it('keys are PKCS#8 PEM and match the certificate', async () => {
    const { leaf } = await testPki();
    assert.match(leaf.keyPem, /^-----BEGIN PRIVATE KEY-----\n/);
    const key = createPrivateKey(leaf.keyPem);
    assert.equal(key.asymmetricKeyType, 'ec');
    assert.equal(key.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    assert.equal(new X509Certificate(leaf.certPem).checkPrivateKey(key), true);
  });

  it('RSA-2048 keys: 2048-bit RSA, and an RSA CA can sign an ECDSA leaf', async () => {
    const now = Date.now();
    const ca = await issueCertificate({
      commonName: 'RSA CA',
      isCa: true,
      keyType: 'RSA-2048',
      notBefore: new Date(now - DAY_MS),
      notAfter: new Date(now + DAY_MS),
    });
    const caX = new X509Certificate(ca.certPem);
    assert.equal(caX.publicKey.asymmetricKeyType, 'rsa');
    assert.equal(caX.publicKey.asymmetricKeyDetails?.modulusLength, 2048);
    const leaf = await leafFor({ hosts: ['localhost'], issuer: ca });
    assert.equal(new X509Certificate(leaf.certPem).verify(caX.publicKey), true);
    const v = await handshake(leaf.certPem, leaf.keyPem, ca.certPem);
    assert.equal(v.authorized, true);
  });

  it('validity window is the one asked for (to the second)', async () => {
    const notBefore = new Date('2030-01-02T03:04:05Z');
    const notAfter = new Date('2031-01-02T03:04:05Z');
    const c = await selfSigned(['x.test'], { notBefore, notAfter });
    const x = new X509Certificate(c.certPem);
    assert.equal(new Date(x.validFrom).toISOString(), notBefore.toISOString());
    assert.equal(new Date(x.validTo).toISOString(), notAfter.toISOString());
  });

  it('bracketed IPv6 host becomes an IP SAN; wildcard stays a DNS name', async () => {
    const c = await leafFor({ hosts: ['*.example.test', '[2001:db8::1]'] });
    const x = new X509Certificate(c.certPem);
    assert.equal(x.subjectAltName, 'DNS:*.example.test, IP Address:2001:DB8:0:0:0:0:0:1');
    assert.equal(x.checkHost('a.example.test'), '*.example.test');
    assert.equal(x.checkIP('2001:db8::1'), '2001:db8::1');
  });

  it('a CN with commas and equals signs is stored as one attribute, not parsed', async () => {
    const c = await selfSigned(['x.test'], { commonName: 'a=b, O=Evil' });
    const name = new x509.X509Certificate(c.certPem).subjectName;
    assert.equal(name.getField('CN')[0], 'a=b, O=Evil');
    assert.equal(name.getField('O').length, 0);
  });
});
