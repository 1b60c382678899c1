// The protocol the server tests run over: GATEHOUSE_TEST_PROTOCOL=http1 (default, plain HTTP/1.1),
// h2 (TLS, HTTP/2 by ALPN) or h1-tls (TLS, HTTP/1.1 by ALPN). startServer/get/raw in http.ts follow
// it, so one suite runs on each protocol (package.json test:h2 and test:h1-tls).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { testPki } from './certs.js';

export type TestProtocol = 'http1' | 'h2' | 'h1-tls';

export const TEST_PROTOCOL: TestProtocol = (() => {
  const p = process.env.GATEHOUSE_TEST_PROTOCOL ?? 'http1';
  if (p !== 'http1' && p !== 'h2' && p !== 'h1-tls')
    throw new Error(`GATEHOUSE_TEST_PROTOCOL=${p}: http1, h2 or h1-tls`);
  return p;
})();

export interface TestTlsFiles {
  /** The chain file (leaf for localhost, 127.0.0.1, ::1, then the intermediate). */
  cert: string;
  key: string;
  /** The root the test clients trust (PEM text). */
  caPem: string;
}

let files: TestTlsFiles | undefined;

/** The test PKI's leaf written to files once per process (certs.ts testPki). */
export async function testTls(): Promise<TestTlsFiles> {
  if (files !== undefined) return files;
  const pki = await testPki();
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-tls-'));
  const cert = join(dir, 'chain.pem');
  const key = join(dir, 'key.pem');
  writeFileSync(cert, pki.chain);
  writeFileSync(key, pki.leaf.keyPem, { mode: 0o600 });
  files ??= { cert, key, caPem: pki.root.certPem };
  return files;
}

/** The files of testTls(), once a TLS test server made them (the clients' trust). */
export function testTlsFiles(): TestTlsFiles {
  if (files === undefined) throw new Error('testTlsFiles(): start a TLS test server first (await testTls())');
  return files;
}

/**
 * One TLS client handshake against 127.0.0.1:`port` (SNI localhost, trusting `ca`): the protocol, suite
 * and ALPN choice it gets (`TLSv1.3 TLS_AES_256_GCM_SHA384 h2`), or `refused <code>` when it fails.
 */
export function negotiate(
  port: number,
  ca: string,
  o: { maxVersion?: 'TLSv1.2' | 'TLSv1.3'; ciphers?: string; alpn?: string[] } = {},
): Promise<string> {
  return new Promise((resolve) => {
    const t = tlsConnect(
      {
        port,
        host: '127.0.0.1',
        servername: 'localhost',
        ca,
        maxVersion: o.maxVersion,
        ciphers: o.ciphers,
        ALPNProtocols: o.alpn ?? ['h2', 'http/1.1'],
      },
      () => {
        resolve(`${t.getProtocol()} ${t.getCipher().name} ${t.alpnProtocol}`);
        t.end();
      },
    );
    t.on('error', (err: NodeJS.ErrnoException) => resolve(`refused ${err.code}`));
  });
}
