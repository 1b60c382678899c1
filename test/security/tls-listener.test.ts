// Attacks on the TLS handshake itself, before any HTTP: sockets that never finish a handshake (holding
// places under limits.maxConnections), client-initiated renegotiation, and suites without forward
// secrecy or with CBC (RFC 9325 §4.2), the ones RFC 9113 Appendix A bars from HTTP/2.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duplex } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { type TLSSocket, connect as tlsConnect } from 'node:tls';
import type { GatehouseConfigInput } from '../../src/config/schema.js';
import { leafFor, testPki } from '../helpers/certs.js';
import { makeSite, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { negotiate } from '../helpers/tls.js';
import { waitUntil } from '../helpers/wait.js';

type Tls = NonNullable<GatehouseConfigInput['tls']>;

/** A leaf of the test PKI (ECDSA P-256 or RSA 2048) with its chain, written to files. */
async function certFiles(keyType: 'P-256' | 'RSA-2048'): Promise<{ dir: string; cert: string; key: string }> {
  const pki = await testPki();
  const leaf = await leafFor({ hosts: ['localhost', '127.0.0.1'], keyType });
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-tls-attack-'));
  writeFileSync(join(dir, 'cert.pem'), leaf.certPem + pki.intermediate.certPem);
  writeFileSync(join(dir, 'key.pem'), leaf.keyPem, { mode: 0o600 });
  return { dir, cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') };
}

/** The server's raw TCP sockets (tls.Server 'connection'), and the handshakes it refused. */
function watchServer(s: TestServer): { raw: Socket[]; refused: string[] } {
  const seen = { raw: [] as Socket[], refused: [] as string[] };
  const server = s.app.server as import('node:tls').Server;
  server.on('connection', (raw: Socket) => seen.raw.push(raw));
  server.on('tlsClientError', (err: NodeJS.ErrnoException) => seen.refused.push(err.code ?? err.message));
  return seen;
}

for (const http2 of [true, false]) {
  const listener = http2 ? 'HTTP/2 listener (h2 + http/1.1)' : 'HTTP/1.1 listener (tls.http2: false)';
  describe(`attacks on the TLS handshake: ${listener}`, () => {
    let site: string;
    let ca: string;
    let files: { dir: string; cert: string; key: string };
    before(async () => {
      site = makeSite({ 'a.txt': 'hello' });
      ca = (await testPki()).root.certPem;
      files = await certFiles('P-256');
    });
    after(() => {
      removeSite(site);
      rmSync(files.dir, { recursive: true, force: true });
    });
    const tls = (extra: Partial<Tls> = {}): Tls => ({ cert: files.cert, key: files.key, http2, ...extra });

    it('attack: sockets that never finish a handshake (silent, 6 bytes of a ClientHello, a trickled one) hold every place under maxConnections -> closed after headersTimeoutMs, a real client then connects', async () => {
      const s = await startServer(site, {
        tls: tls(),
        limits: { maxConnections: 4, headersTimeoutMs: 300 },
      });
      const seen = watchServer(s);
      const stalled: Socket[] = [];
      let trickle: NodeJS.Timeout | undefined;
      try {
        const closed = new Set<Socket>();
        for (let i = 0; i < 4; i++) {
          const sock = netConnect(s.port, '127.0.0.1');
          sock.on('error', () => {});
          sock.on('close', () => closed.add(sock));
          // A TLS record header and the first byte of a ClientHello (RFC 8446 §5.1), then nothing.
          if (i % 2 === 1) sock.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]));
          stalled.push(sock);
        }
        // The last one trickles a byte of the ClientHello every 50 ms: the deadline is not an idle timer.
        trickle = setInterval(() => stalled[3]?.write(Buffer.from([0x00])), 50);
        await waitUntil('the server accepted the four stalled sockets', () => seen.raw.length === 4);
        // Node's own handshake timeout is 120 s; the server must close them within the wait deadline.
        await waitUntil('the server closed every stalled socket', () => closed.size === 4);
        assert.ok(
          seen.refused.filter((c) => c === 'ERR_TLS_HANDSHAKE_TIMEOUT').length >= 4,
          seen.refused.join(),
        );
        assert.match(await negotiate(s.port, ca), /^TLSv1\.3 /);
      } finally {
        clearInterval(trickle);
        for (const sock of stalled) sock.destroy();
        await s.close();
      }
    });

    // Node's HTTP/2 server passes a handshake's 'tlsClientError' on as 'clientError'; an HTTP answer
    // written there was held until the handshake ended, then went out beside the HTTP/2 session that
    // took the socket, and Node aborted the whole process (TLSWrap: "Assertion failed: !current_write_").
    it('attack: a handshake that outlasts headersTimeoutMs, then completes (ALPN h2) -> the socket is closed at the timeout, no session starts, the server lives on', async () => {
      const s = await startServer(site, { tls: tls(), limits: { headersTimeoutMs: 300 } });
      const seen = watchServer(s);
      let secured = 0;
      (s.app.server as import('node:tls').Server).on('secureConnection', () => secured++);
      // The client's TLS runs over a pipe that lets its first flight (the ClientHello) through and
      // holds the rest (its Finished) until the server has given up on the handshake.
      const raw = netConnect(s.port, '127.0.0.1');
      raw.on('error', () => {});
      let rawClosed = false;
      raw.on('close', () => (rawClosed = true));
      const held: Buffer[] = [];
      let flights = 0;
      let release = false;
      const pipe = new Duplex({
        read: () => void raw.resume(),
        write: (chunk: Buffer, _enc, done) => {
          if (flights++ === 0 || release) raw.write(chunk, () => done());
          else {
            held.push(chunk);
            done();
          }
        },
        final: (done) => {
          raw.end();
          done();
        },
      });
      raw.on('data', (c: Buffer) => {
        if (!pipe.push(c)) raw.pause();
      });
      raw.on('end', () => pipe.push(null));
      const t = tlsConnect({ socket: pipe, servername: 'localhost', ca, ALPNProtocols: ['h2', 'http/1.1'] });
      t.on('error', () => {});
      try {
        await waitUntil('the server timed the handshake out', () =>
          seen.refused.includes('ERR_TLS_HANDSHAKE_TIMEOUT'),
        );
        assert.ok(held.length > 0, 'the client had its last flight ready');
        release = true;
        for (const chunk of held.splice(0)) raw.write(chunk, () => {});
        await waitUntil('the server closed the socket', () => rawClosed);
        // One handshake reached the server and was refused; none completed, no session started.
        assert.deepEqual(seen.refused, ['ERR_TLS_HANDSHAKE_TIMEOUT']);
        assert.equal(secured, 0);
        assert.match(await negotiate(s.port, ca), /^TLSv1\.3 /);
      } finally {
        t.destroy();
        raw.destroy();
        await s.close();
      }
    });

    it('attack: client-initiated renegotiation on TLS 1.2 HTTP/1.1 -> refused (no_renegotiation), the connection closed', async () => {
      const s = await startServer(site, { tls: tls() });
      const seen = watchServer(s);
      const t: TLSSocket = tlsConnect({
        port: s.port,
        host: '127.0.0.1',
        servername: 'localhost',
        ca,
        maxVersion: 'TLSv1.2',
        ALPNProtocols: ['http/1.1'],
      });
      try {
        const failures: Error[] = [];
        t.on('error', (e) => failures.push(e));
        await new Promise<void>((resolve) => t.once('secureConnect', () => resolve()));
        assert.equal(t.alpnProtocol, 'http/1.1');
        // A request first: the connection serves HTTP/1.1.
        const head = await new Promise<string>((resolve) => {
          t.once('data', (c: Buffer) => resolve(c.toString('latin1')));
          t.write('GET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\n');
        });
        assert.match(head, /^HTTP\/1\.1 200 /);
        await waitUntil('the server saw the connection', () => seen.raw.length === 1);
        const raw = seen.raw[0]!;
        const readBefore = raw.bytesRead;
        const outcome = await new Promise<string>((resolve) => {
          const started = t.renegotiate({}, (err) =>
            resolve(err ? `refused: ${err.message}` : 'renegotiated'),
          );
          if (!started) resolve('not started');
          t.once('error', (e) => resolve(`refused: ${e.message}`));
          t.once('close', () => resolve('closed'));
        });
        assert.notEqual(outcome, 'renegotiated');
        assert.notEqual(outcome, 'not started');
        // The new ClientHello reached the server, which answered it with a refusal and closed.
        await waitUntil('the server closed the connection', () => raw.destroyed);
        assert.ok(raw.bytesRead > readBefore, `server read ${raw.bytesRead} bytes, ${readBefore} before`);
      } finally {
        t.destroy();
        await s.close();
      }
    });
  });
}

describe('attacks on the cipher suites (RFC 9325 §4.2, RFC 9113 Appendix A)', () => {
  let site: string;
  let ca: string;
  const certs: Record<string, { dir: string; cert: string; key: string }> = {};
  before(async () => {
    site = makeSite({ 'a.txt': 'hello' });
    ca = (await testPki()).root.certPem;
    certs.rsa = await certFiles('RSA-2048');
    certs.ecdsa = await certFiles('P-256');
  });
  after(() => {
    removeSite(site);
    for (const f of Object.values(certs)) rmSync(f.dir, { recursive: true, force: true });
  });

  // Suites a downgrading client (or a middlebox stripping the ClientHello) might leave on offer.
  const weak: [string, string, string][] = [
    ['rsa', 'AES128-SHA', 'RSA key exchange (no forward secrecy), CBC: on the HTTP/2 blocklist'],
    ['rsa', 'AES256-GCM-SHA384', 'RSA key exchange (no forward secrecy), AEAD'],
    ['rsa', 'ECDHE-RSA-AES128-SHA', 'forward secret but CBC'],
    ['rsa', 'ECDHE-RSA-AES256-SHA384', 'forward secret but CBC (SHA-2 MAC)'],
    ['ecdsa', 'ECDHE-ECDSA-AES128-SHA', 'forward secret but CBC'],
  ];
  for (const [keyType, suite, why] of weak) {
    it(`attack: a TLS 1.2 client offering only ${suite} (${why}), h2 by ALPN, to a ${keyType.toUpperCase()} certificate -> handshake refused`, async () => {
      const s = await startServer(site, { tls: { cert: certs[keyType]!.cert, key: certs[keyType]!.key } });
      const seen = watchServer(s);
      try {
        assert.match(await negotiate(s.port, ca, { ciphers: suite, maxVersion: 'TLSv1.2' }), /^refused /);
        await waitUntil('the server refused the handshake', () => seen.refused.length === 1);
        assert.equal(seen.raw.length, 1);
        // The same certificate serves a client offering a forward-secret AEAD suite, over h2.
        const good = keyType === 'rsa' ? 'ECDHE-RSA-AES128-GCM-SHA256' : 'ECDHE-ECDSA-AES128-GCM-SHA256';
        assert.equal(
          await negotiate(s.port, ca, { ciphers: `${suite}:${good}`, maxVersion: 'TLSv1.2' }),
          `TLSv1.2 ${good} h2`,
        );
      } finally {
        await s.close();
      }
    });
  }

  it('attack: AES128-SHA only, to a name whose RSA certificate is chosen by SNI -> handshake refused (the suites hold for every context)', async () => {
    const s = await startServer(site, {
      tls: {
        cert: certs.ecdsa!.cert,
        key: certs.ecdsa!.key,
        sni: { localhost: { cert: certs.rsa!.cert, key: certs.rsa!.key } },
      },
    });
    const seen = watchServer(s);
    try {
      assert.match(
        await negotiate(s.port, ca, { ciphers: 'AES128-SHA', maxVersion: 'TLSv1.2' }),
        /^refused /,
      );
      await waitUntil('the server refused the handshake', () => seen.refused.length === 1);
      assert.equal(
        await negotiate(s.port, ca, {
          ciphers: 'AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256',
          maxVersion: 'TLSv1.2',
        }),
        'TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256 h2',
      );
    } finally {
      await s.close();
    }
  });
});
