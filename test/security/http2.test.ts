// Attacks on the TLS listener and its HTTP/2 side: Host confusion, rapid reset, smuggling through
// the HTTP/2 -> HTTP/1.1 proxy hop, path tricks, oversized header blocks, plain bytes on the TLS port.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { type ClientHttp2Session, constants, connect as http2Connect } from 'node:http2';
import { type AddressInfo, connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { get, makeSite, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { testTls } from '../helpers/tls.js';

/** One request on `session`: status, headers and body. */
function ask(
  session: ClientHttp2Session,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = session.request(headers, { endStream: body === undefined });
    let status = 0;
    let text = '';
    req.on('response', (h) => (status = Number(h[':status'])));
    req.setEncoding('utf8');
    req.on('data', (c: string) => (text += c));
    req.on('end', () => resolve({ status, body: text }));
    req.on('error', reject);
    if (body !== undefined) req.end(body);
  });
}

describe('attacks on HTTP/2 and the TLS port', () => {
  let site: string;
  let s: TestServer;
  let upstream: Server;
  const upstreamRequests: string[] = [];
  let ca: string;
  before(async () => {
    upstream = createServer((req, res) => {
      upstreamRequests.push(`${req.method} ${req.url}`);
      req.resume();
      req.on('end', () => res.end('up'));
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const up = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    site = makeSite({ 'public/a.txt': 'public', 'secret.txt': 'secret' });
    ca = (await testTls()).caPem;
    s = await startServer(`${site}/public`, {
      tls: { cert: (await testTls()).cert, key: (await testTls()).key },
      proxy: [{ prefix: '/api', upstream: up }],
    });
  });
  after(async () => {
    await s.close();
    upstream.close();
    removeSite(site);
  });

  it('attack: :authority and Host that differ (Host confusion) -> 400 (RFC 9113 §8.3.1)', async () => {
    const session = http2Connect(s.url, { ca });
    try {
      const r = await ask(session, { ':path': '/a.txt', ':authority': 'good.example', host: 'evil.example' });
      assert.equal(r.status, 400);
      assert.match(r.body, /Host differs from :authority/);
      const ok = await ask(session, { ':path': '/a.txt', ':authority': 'good.example' });
      assert.equal(ok.status, 200);
    } finally {
      session.close();
    }
  });

  it('attack: HTTP/2 rapid reset (CVE-2023-44487): 2000 streams opened and cancelled -> the server keeps serving', async () => {
    const session = http2Connect(s.url, { ca });
    session.on('error', () => {});
    await new Promise<void>((r) => session.once('connect', () => r()));
    for (let i = 0; i < 2000 && !session.destroyed; i++) {
      const req = session.request({ ':path': '/a.txt' });
      req.on('error', () => {});
      req.close(constants.NGHTTP2_CANCEL);
    }
    session.destroy();
    const r = await get(s.url, '/a.txt');
    assert.equal(r.status, 200);
    assert.equal(r.text, 'public');
  });

  it('attack: request smuggling through the proxy hop (a body holding a second request) -> one upstream request', async () => {
    const session = http2Connect(s.url, { ca });
    try {
      upstreamRequests.length = 0;
      const smuggled = 'x\r\n\r\nGET /api/smuggled HTTP/1.1\r\nHost: x\r\n\r\n';
      const r = await ask(session, { ':method': 'POST', ':path': '/api/in' }, smuggled);
      assert.equal(r.status, 200);
      assert.deepEqual(upstreamRequests, ['POST /in']);
    } finally {
      session.close();
    }
  });

  it('attack: a content-length smaller than the DATA sent (RFC 9113 §8.1.1) -> never a second upstream request', async () => {
    const session = http2Connect(s.url, { ca });
    session.on('error', () => {});
    try {
      upstreamRequests.length = 0;
      const body = 'abc' + 'GET /api/second HTTP/1.1\r\nHost: x\r\n\r\n';
      const r = await ask(
        session,
        { ':method': 'POST', ':path': '/api/cl', 'content-length': '3' },
        body,
      ).catch((err: Error) => ({ status: 0, body: err.message }));
      // A malformed request is a stream error (nghttp2 checks content-length against DATA) and is
      // never forwarded, let alone split into two upstream requests.
      assert.notEqual(r.status, 200, JSON.stringify(r));
      assert.ok(!upstreamRequests.some((u) => u.includes('/second')), JSON.stringify(upstreamRequests));
    } finally {
      session.destroy();
    }
    assert.equal((await get(s.url, '/a.txt')).status, 200);
  });

  it('attack: dot segments in :path (path traversal) stay inside the root', async () => {
    const session = http2Connect(s.url, { ca });
    try {
      for (const path of ['/../secret.txt', '/%2e%2e/secret.txt', '/a/../../secret.txt']) {
        const r = await ask(session, { ':path': path });
        assert.notEqual(r.body, 'secret', path);
        assert.ok(r.status === 404 || r.status === 400, `${path}: ${r.status}`);
      }
    } finally {
      session.close();
    }
  });

  it('attack: an oversized header block over HTTP/2 -> refused, and the server keeps serving', async () => {
    const session = http2Connect(s.url, { ca });
    session.on('error', () => {});
    const r = await ask(session, { ':path': '/a.txt', 'x-big': 'b'.repeat(64 * 1024) }).catch(
      (err: Error) => ({
        status: 0,
        body: err.message,
      }),
    );
    session.destroy();
    assert.notEqual(r.status, 200, JSON.stringify(r).slice(0, 200));
    assert.equal((await get(s.url, '/a.txt')).status, 200);
  });

  it('attack: plain-text HTTP sent to the TLS port -> the connection closes, nothing is answered in clear', async () => {
    const text = await new Promise<string>((resolve) => {
      const sock = connect(s.port, '127.0.0.1');
      let out = '';
      sock.setEncoding('latin1');
      sock.on('data', (c: string) => (out += c));
      sock.on('error', () => {});
      sock.on('close', () => resolve(out));
      sock.write('GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    assert.doesNotMatch(text, /HTTP\/1\.1 200/);
    assert.equal((await get(s.url, '/a.txt')).status, 200);
  });

  it('attack: a 300-character SNI name with odd bytes -> the default certificate, no crash', async () => {
    const cn = await new Promise<string>((resolve, reject) => {
      const t = tlsConnect(
        {
          port: s.port,
          host: '127.0.0.1',
          servername: `${'a'.repeat(250)}.x-_.example`,
          rejectUnauthorized: false,
        },
        () => {
          resolve(String(t.getPeerCertificate().subject.CN));
          t.end();
        },
      );
      t.on('error', reject);
    });
    assert.equal(cn, 'localhost');
    assert.equal((await get(s.url, '/a.txt')).status, 200);
  });
});
