// The bench's certificate, made once per run in its fixture dir with Gatehouse's own issuer
// (dist/certs/x509.js, so `npm run build` first): a P-256 CA and a leaf for localhost and 127.0.0.1
// signed by it, like the development CA's. Every HTTPS server of the bench serves this same leaf.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const DAY_MS = 86_400_000;

/** Writes ca.pem, cert.pem and key.pem into `dir`; returns their paths. */
export async function makeBenchCertificate(dir) {
  const { issueCertificate } = await import('../../dist/certs/x509.js');
  const now = Date.now();
  const window = { notBefore: new Date(now - DAY_MS), notAfter: new Date(now + 7 * DAY_MS) };
  const ca = await issueCertificate({ commonName: 'Gatehouse Bench CA', isCa: true, ...window });
  const leaf = await issueCertificate({
    commonName: 'localhost',
    hosts: ['localhost', '127.0.0.1'],
    issuer: ca,
    ...window,
  });
  const files = { ca: join(dir, 'ca.pem'), cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') };
  writeFileSync(files.ca, ca.certPem);
  writeFileSync(files.cert, leaf.certPem);
  writeFileSync(files.key, leaf.keyPem, { mode: 0o600 });
  return files;
}
