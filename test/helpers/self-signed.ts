// A throwaway ECDSA P-256 certificate for 127.0.0.1 (and localhost), made in the test with
// @peculiar/x509: the PEM pair for a TLS listener, and the SPKI pin Chromium can be told to trust.
import { webcrypto } from 'node:crypto';
import { createSecureServer } from 'node:http2';
import * as x509 from '@peculiar/x509';
import { parseConfig, toServerOptions } from '../../src/config/load.js';
import type { GatehouseConfigInput } from '../../src/config/schema.js';
import { createGatehouse } from '../../src/server/app.js';

export interface TestCertificate {
  readonly certPem: string;
  readonly keyPem: string;
  /** base64 sha256 of the SubjectPublicKeyInfo: `--ignore-certificate-errors-spki-list=<spki>`. */
  readonly spki: string;
}

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

/** A self-signed leaf valid from a minute ago for a day. */
export async function makeTestCertificate(): Promise<TestCertificate> {
  x509.cryptoProvider.set(webcrypto as unknown as Crypto);
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Date.now().toString(16),
    name: 'CN=127.0.0.1',
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 86_400_000),
    keys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.SubjectAlternativeNameExtension([
        { type: 'ip', value: '127.0.0.1' },
        { type: 'dns', value: 'localhost' },
      ]),
    ],
  });
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  const spkiDer = await webcrypto.subtle.exportKey('spki', keys.publicKey);
  return {
    certPem: cert.toString('pem'),
    keyPem: x509.PemConverter.encode(pkcs8, 'PRIVATE KEY'),
    spki: Buffer.from(await webcrypto.subtle.digest('SHA-256', spkiDer)).toString('base64'),
  };
}

export interface TlsTestServer {
  /** `https://127.0.0.1:PORT` */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Gatehouse's static handler behind `http2.createSecureServer({ allowHTTP1: true })` on 127.0.0.1:0.
 * TEMPORARY until the TLS listener lands on main: then this starts the real one (tls: { cert, key }).
 */
export async function startTlsServer(
  root: string,
  cert: TestCertificate,
  config: GatehouseConfigInput,
): Promise<TlsTestServer> {
  const app = createGatehouse(toServerOptions(parseConfig({ log: { format: 'off' }, ...config, root })));
  const server = createSecureServer(
    { allowHTTP1: true, cert: cert.certPem, key: cert.keyPem },
    app.static as never,
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
