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
import { waitUntil } from '../helpers/wait.js';

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

/** An HTTP/2 frame (RFC 9113 §4.1): 24-bit length, type, flags, 31-bit stream id, payload. */
function frame(type: number, flags: number, streamId: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(streamId, 5);
  return Buffer.concat([head, payload]);
}

/** A header block of literal fields without indexing, new names (RFC 7541 §6.2.2), no Huffman;
 *  names and values under 127 bytes (one-byte lengths, §5.1). */
function literalBlock(fields: [string, string][]): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of fields) {
    parts.push(
      Buffer.from([0x00, name.length]),
      Buffer.from(name),
      Buffer.from([value.length]),
      Buffer.from(value),
    );
  }
  return Buffer.concat(parts);
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

  it('attack: HTTP/2 rapid reset (CVE-2023-44487) on a proxied route -> reset streams reach no upstream, GOAWAY ENHANCE_YOUR_CALM past the budget, the address is refused, others are served', async () => {
    const stats = () => s.app.tls!.http2Stats()!;
    const resetsBefore = stats().clientResets;
    upstreamRequests.length = 0;
    // From an address of its own (127.0.0.2): the budget is per client address.
    const attacker = () =>
      http2Connect(s.url, {
        ca,
        createConnection: () =>
          tlsConnect({
            ca,
            servername: 'localhost',
            ALPNProtocols: ['h2'],
            socket: connect({ host: '127.0.0.1', port: s.port, localAddress: '127.0.0.2' }),
          }),
      });
    const session = attacker();
    session.on('error', () => {});
    await new Promise<void>((r) => session.once('connect', () => r()));
    let sent = 0;
    // Bursts of open-and-cancel pairs, each flushed before the next, until the guard ends the session
    // (the server's count: Node's client does not always report the GOAWAY while it floods).
    while (stats().closed.resets === 0 && !session.destroyed && sent < 5000) {
      for (let i = 0; i < 20; i++) {
        const req = session.request({ ':method': 'POST', ':path': '/api/reset' }, { endStream: true });
        req.on('error', () => {});
        req.close(constants.NGHTTP2_CANCEL);
        sent++;
      }
      await new Promise((r) => setTimeout(r, 1));
    }
    session.destroy();
    // The attack reached the server: it saw the budget's worth of resets, then GOAWAY ENHANCE_YOUR_CALM.
    const seen = stats().clientResets - resetsBefore;
    assert.ok(seen > 400 && seen <= 400 + 200, `${seen} resets seen of ${sent} sent`);
    assert.equal(stats().closed.resets, 1);
    // Reset streams started no work: no upstream request for any of them.
    assert.deepEqual(upstreamRequests, []);
    // A new connection from that address is refused at accept; another address is served.
    const refusedBefore = stats().refusedConnections;
    const again = attacker();
    const againError = await new Promise<string>((r) => {
      again.on('error', (e: NodeJS.ErrnoException) => r(e.code ?? e.message));
      again.on('connect', () => r('connected'));
    });
    again.destroy();
    assert.notEqual(againError, 'connected');
    assert.equal(stats().refusedConnections, refusedBefore + 1);
    const r = await get(s.url, '/a.txt');
    assert.equal(r.status, 200);
    assert.equal(r.text, 'public');
    const up = http2Connect(s.url, { ca });
    try {
      assert.equal((await ask(up, { ':method': 'POST', ':path': '/api/after' }, 'x')).status, 200);
      assert.deepEqual(upstreamRequests, ['POST /after']);
    } finally {
      up.close();
    }
  });

  it('attack: HEADERS and RST_STREAM for one stream in one write (rapid reset, CVE-2023-44487) -> no upstream request', async () => {
    const stats = () => s.app.tls!.http2Stats()!;
    const before = { ...stats() };
    // Handlers started: the server's 'request' events (h2-exchange.ts emits one per stream it serves).
    let handled = 0;
    const count = () => handled++;
    s.app.server.prependListener('request', count);
    upstreamRequests.length = 0;
    // localAddress goes through to net.connect (tls's types leave it out).
    const options = {
      ca,
      host: '127.0.0.1',
      port: s.port,
      servername: 'localhost',
      ALPNProtocols: ['h2'],
      localAddress: '127.0.0.3',
    };
    const sock = tlsConnect(options);
    sock.on('error', () => {});
    await new Promise<void>((r) => sock.once('secureConnect', () => r()));
    assert.equal(sock.alpnProtocol, 'h2');
    let got = Buffer.alloc(0);
    sock.on('data', (c: Buffer) => (got = Buffer.concat([got, c])));
    // The connection preface and an empty SETTINGS frame (RFC 9113 §3.4).
    sock.write(
      Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), frame(0x4, 0, 0, Buffer.alloc(0))]),
    );
    // The server's SETTINGS: the session exists before the attack.
    await waitUntil('the server sent its SETTINGS', () => got.length >= 9 && got[3] === 0x4);
    const headers = literalBlock([
      [':method', 'GET'],
      [':scheme', 'https'],
      [':path', '/api/reset-before-handler'],
      [':authority', 'localhost'],
    ]);
    const cancel = Buffer.alloc(4);
    cancel.writeUInt32BE(constants.NGHTTP2_CANCEL);
    // HEADERS (END_STREAM | END_HEADERS) and RST_STREAM CANCEL for stream 1 in one write, so the
    // server reads them together. A PING after them: its ACK comes once the server processed both.
    const ping = Buffer.from('rstfirst');
    sock.write(
      Buffer.concat([frame(0x1, 0x5, 1, headers), frame(0x3, 0, 1, cancel), frame(0x6, 0, 0, ping)]),
    );
    await waitUntil('the server acknowledged the PING', () => got.includes(ping));
    await waitUntil('the reset was counted', () => stats().clientResets > before.clientResets);
    sock.destroy();
    s.app.server.off('request', count);
    // The stream reached the server, once: Node 20-24 emit 'stream' before nghttp2 reads the RST_STREAM
    // behind the HEADERS, so its handler starts (handled 1), and the reset is counted (below).
    assert.equal(handled, 1);
    assert.equal(stats().clientResets - before.clientResets, 1);
    // It started no upstream work (the proxy checks the response before it writes the request): the
    // next request is the upstream's first; had the reset one gone out, it would be listed first.
    const up = http2Connect(s.url, { ca });
    try {
      assert.equal((await ask(up, { ':path': '/api/after-reset' })).status, 200);
    } finally {
      up.close();
    }
    assert.deepEqual(upstreamRequests, ['GET /after-reset']);
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
    // The TLS layer refuses a record that is not TLS: at most an alert record (content type 21,
    // RFC 8446 §6) goes back before the close, and never an HTTP answer in clear.
    assert.ok(text === '' || text.charCodeAt(0) === 21, JSON.stringify(text));
    assert.doesNotMatch(text, /HTTP/);
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
