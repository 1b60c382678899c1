// The protocol the server tests run over: GATEHOUSE_TEST_PROTOCOL=http1 (default, plain HTTP/1.1),
// h2 (TLS, HTTP/2 by ALPN) or h1-tls (TLS, HTTP/1.1 by ALPN). startServer/get/raw in http.ts follow
// it, so one suite runs on each protocol (scripts/run-tests.mjs --protocol).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type TestProtocol = 'http1' | 'h2' | 'h1-tls';

export const TEST_PROTOCOL: TestProtocol = (() => {
  const p = process.env.GATEHOUSE_TEST_PROTOCOL ?? 'http1';
  if (p !== 'http1' && p !== 'h2' && p !== 'h1-tls')
    throw new Error(`GATEHOUSE_TEST_PROTOCOL=${p}: http1, h2 or h1-tls`);
  return p;
})();

export interface TestTlsFiles {
  cert: string;
  key: string;
  /** The CA the test clients trust (PEM text). */
  caPem: string;
}

let files: TestTlsFiles | undefined;

/** A CA and a leaf for localhost, 127.0.0.1 and ::1, made once per process. */
export function testTlsFiles(): TestTlsFiles {
  if (files !== undefined) return files;
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-tls-'));
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  run([
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca-key.pem',
    '-out',
    'ca.pem',
    '-days',
    '30',
    '-subj',
    '/CN=Gatehouse test CA',
  ]);
  run(['req', ...ec, '-keyout', 'key.pem', '-out', 'leaf.csr', '-subj', '/CN=localhost']);
  const ext = join(dir, 'ext.cnf');
  execFileSync('sh', [
    '-c',
    `printf 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\\nextendedKeyUsage=serverAuth\\n' > ${ext}`,
  ]);
  run([
    'x509',
    '-req',
    '-in',
    'leaf.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca-key.pem',
    '-CAcreateserial',
    '-out',
    'cert.pem',
    '-days',
    '30',
    '-extfile',
    ext,
  ]);
  files = {
    cert: join(dir, 'cert.pem'),
    key: join(dir, 'key.pem'),
    caPem: readFileSync(join(dir, 'ca.pem'), 'utf8'),
  };
  return files;
}
