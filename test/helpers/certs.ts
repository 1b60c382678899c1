// A test PKI made in the test process (RFC 5280): a root CA, an intermediate, and leaves with chosen
// SANs and validity windows. Keys are made once per process (ECDSA P-256 is fast) and reused.
import { type IssuedPem, type IssueOptions, issueCertificate } from '../../src/certs/x509.js';

export type { IssuedPem } from '../../src/certs/x509.js';

export const DAY_MS = 86_400_000;

export interface TestPki {
  /** Self-signed root CA, valid now-1d .. now+10y. */
  root: IssuedPem;
  /** Intermediate CA (pathLen 0) signed by root. */
  intermediate: IssuedPem;
  /** localhost, 127.0.0.1, ::1; signed by intermediate; valid now-1d .. now+30d. */
  leaf: IssuedPem;
  /** leaf + intermediate PEM, the chain as a server sends it. */
  chain: string;
}

let cached: Promise<TestPki> | undefined;

async function makePki(): Promise<TestPki> {
  const now = Date.now();
  const root = await issueCertificate({
    commonName: 'Gatehouse Test Root CA',
    isCa: true,
    notBefore: new Date(now - DAY_MS),
    notAfter: new Date(now + 3650 * DAY_MS),
  });
  const intermediate = await issueCertificate({
    commonName: 'Gatehouse Test Intermediate CA',
    isCa: true,
    pathLength: 0,
    issuer: root,
    notBefore: new Date(now - DAY_MS),
    notAfter: new Date(now + 1825 * DAY_MS),
  });
  const leaf = await issueCertificate({
    commonName: 'localhost',
    hosts: ['localhost', '127.0.0.1', '::1'],
    issuer: intermediate,
    notBefore: new Date(now - DAY_MS),
    notAfter: new Date(now + 30 * DAY_MS),
  });
  return { root, intermediate, leaf, chain: leaf.certPem + intermediate.certPem };
}

/** The process-wide test PKI (made on first use). */
export function testPki(): Promise<TestPki> {
  cached ??= makePki();
  return cached;
}

/**
 * An odd leaf: defaults are CN = first host, signed by the test intermediate, valid now-1d .. now+30d.
 * `issuer: undefined` given explicitly still means the intermediate; use `selfSigned()` for that.
 */
export async function leafFor(o: Partial<IssueOptions> & { hosts: string[] }): Promise<IssuedPem> {
  const pki = await testPki();
  const now = Date.now();
  return issueCertificate({
    commonName: o.hosts[0] ?? 'test',
    notBefore: new Date(now - DAY_MS),
    notAfter: new Date(now + 30 * DAY_MS),
    ...o,
    issuer: o.issuer ?? pki.intermediate,
  });
}

/** A self-signed leaf for these hosts. */
export function selfSigned(hosts: string[], o: Partial<IssueOptions> = {}): Promise<IssuedPem> {
  const now = Date.now();
  return issueCertificate({
    commonName: hosts[0] ?? 'test',
    hosts,
    notBefore: new Date(now - DAY_MS),
    notAfter: new Date(now + 30 * DAY_MS),
    ...o,
  });
}

let unknownCa: Promise<IssuedPem> | undefined;

/** A CA nobody trusts (not the test root); leaves signed by it fail verification against the root. */
export function unknownCaPki(): Promise<IssuedPem> {
  const now = Date.now();
  unknownCa ??= issueCertificate({
    commonName: 'Unknown CA',
    isCa: true,
    notBefore: new Date(now - DAY_MS),
    notAfter: new Date(now + 3650 * DAY_MS),
  });
  return unknownCa;
}

/** A TLS server on 127.0.0.1:0 presenting `cert` (a PEM chain) that closes each connection. */
export async function serveTls(
  cert: string,
  key: string,
  extra: Omit<import('node:tls').TlsOptions, 'cert' | 'key'> = {},
): Promise<{ port: number; close: () => Promise<void> }> {
  const { createServer } = await import('node:tls');
  const server = createServer({ cert, key, ...extra }, (s) => {
    s.on('error', () => {});
    s.end();
  });
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as import('node:net').AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
      }),
  };
}

/**
 * A leaf with SANs exactly as given (a dNSName that looks like an IP, say), signed by the test
 * intermediate; issueCertificate would tell IPs and names apart itself.
 */
export async function leafWithRawSans(
  sans: { type: 'dns' | 'ip'; value: string }[],
  commonName = 'raw',
): Promise<IssuedPem> {
  const x509 = await import('@peculiar/x509');
  const { webcrypto } = await import('node:crypto');
  const c = webcrypto as unknown as Crypto;
  const pki = await testPki();
  const alg = { name: 'ECDSA', namedCurve: 'P-256' };
  const keys = (await c.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
  const signingKey = await c.subtle.importKey(
    'pkcs8',
    x509.PemConverter.decodeFirst(pki.intermediate.keyPem),
    alg,
    false,
    ['sign'],
  );
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create(
    {
      subject: [{ CN: [commonName] }],
      issuer: new x509.X509Certificate(pki.intermediate.certPem).subjectName,
      notBefore: new Date(now - DAY_MS),
      notAfter: new Date(now + 30 * DAY_MS),
      publicKey: keys.publicKey,
      signingKey,
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension(sans),
      ],
    },
    c,
  );
  const pkcs8 = await c.subtle.exportKey('pkcs8', keys.privateKey);
  return {
    certPem: `${cert.toString('pem')}\n`,
    keyPem: `${x509.PemConverter.encode(pkcs8, 'PRIVATE KEY')}\n`,
  };
}
