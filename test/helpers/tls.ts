// The protocol the server tests run over: GATEHOUSE_TEST_PROTOCOL=http1 (default, plain HTTP/1.1),
// h2 (TLS, HTTP/2 by ALPN) or h1-tls (TLS, HTTP/1.1 by ALPN). startServer/get/raw in http.ts follow
// it, so one suite runs on each protocol (package.json test:h2 and test:h1-tls).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect as http2Connect } from 'node:http2';
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

export interface TlsExchange {
  /** The server resumed the session handed in (RFC 8446 §2.2, RFC 5077). */
  reused: boolean;
  protocol: string | null;
  alpn: string | false | null;
  /** The response status of GET `path`. */
  status: number;
  /** The whole response as received (HTTP/1.1 only; '' over h2). */
  raw: string;
  /** Bytes of the last ticket the server sent (0: none): a sealed session, or with SSL_OP_NO_TICKET on
   *  TLS 1.3 a 32-byte session cache id. */
  ticketBytes: number;
  /** The last session (ticket) the server sent, else (a resumption sends none) the one handed in. */
  session: Buffer | undefined;
}

/**
 * One connection to 127.0.0.1:`port` (SNI localhost): a handshake, resuming `session` when given,
 * then GET `path` over the ALPN protocol (HTTP/2 through node:http2 on this socket, HTTP/1.1 raw),
 * waiting for the socket to close so a TLS 1.3 ticket sent after the handshake is kept.
 */
export function tlsExchange(
  port: number,
  ca: string,
  o: { maxVersion?: 'TLSv1.2' | 'TLSv1.3'; alpn?: 'h2' | 'http/1.1'; session?: Buffer; path?: string } = {},
): Promise<TlsExchange> {
  const alpn = o.alpn ?? 'http/1.1';
  const path = o.path ?? '/';
  return new Promise((resolve, reject) => {
    let session: Buffer | undefined;
    let status = 0;
    let reused = false;
    let raw = '';
    const t = tlsConnect({
      port,
      host: '127.0.0.1',
      servername: 'localhost',
      ca,
      maxVersion: o.maxVersion,
      ALPNProtocols: [alpn],
      session: o.session,
    });
    let ticketBytes = 0;
    t.on('session', (s: Buffer) => {
      session = s;
      ticketBytes = t.getTLSTicket()?.length ?? 0;
    });
    t.on('error', reject);
    t.once('secureConnect', () => {
      reused = t.isSessionReused();
      const protocol = t.getProtocol();
      const alpnProtocol = t.alpnProtocol;
      const done = () =>
        resolve({
          reused,
          protocol,
          alpn: alpnProtocol,
          ticketBytes,
          raw,
          status,
          session: session ?? o.session,
        });
      if (alpn === 'h2') {
        const client = http2Connect(`https://localhost:${port}`, { createConnection: () => t });
        client.on('error', reject);
        const req = client.request({ ':path': path });
        req.on('response', (h) => {
          status = Number(h[':status']);
        });
        req.resume();
        req.on('end', () => client.close());
        t.on('close', done);
      } else {
        t.on('data', (d: Buffer) => {
          raw += d.toString('latin1');
          status ||= Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);
        });
        t.on('close', done);
        t.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
      }
    });
  });
}
