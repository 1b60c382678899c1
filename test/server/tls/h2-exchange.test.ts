// HTTP/2 streams served by tls/h2-exchange.ts, not Node's compatibility layer, on a real TLS server
// and node:http2 clients: request bodies, 100-continue and other expectations, trailers only for a
// client that sent TE: trailers, a reset mid-response (close without finish), HEAD without DATA.
import assert from 'node:assert/strict';
import { createServer as createHttpServer, type Server } from 'node:http';
import { type ClientHttp2Session, connect, constants, type IncomingHttpHeaders } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { parseConfig, toServerOptions } from '../../../src/config/load.js';
import { createGatehouse, type Gatehouse } from '../../../src/server/app/gatehouse.js';
import type { Logger } from '../../../src/server/ops/log.js';
import type { Route } from '../../../src/server/routes/routes.js';
import { makeSite, removeSite } from '../../helpers/http.js';
import { testTls } from '../../helpers/tls.js';
import { waitUntil } from '../../helpers/wait.js';

interface Answer {
  headers: IncomingHttpHeaders;
  body: Buffer;
  trailers: IncomingHttpHeaders | undefined;
  interim: number[];
}

function h2(session: ClientHttp2Session, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const s = session.request(headers, { endStream: body === undefined });
    const chunks: Buffer[] = [];
    const interim: number[] = [];
    let head: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders | undefined;
    s.on('continue', () => interim.push(100));
    s.on('response', (h) => {
      head = h;
    });
    s.on('trailers', (t) => {
      trailers = t;
    });
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('end', () => resolve({ headers: head, body: Buffer.concat(chunks), trailers, interim }));
    s.on('error', reject);
    if (body !== undefined) s.end(body);
  });
}

describe('HTTP/2 streams without the compatibility layer', () => {
  let dir: string;
  let upstream: Server;
  let app: Gatehouse;
  let session: ClientHttp2Session;
  let base: string;
  const logged: { status?: number; url?: string; bytes?: number }[] = [];

  before(async () => {
    dir = makeSite({
      'index.html': '<!doctype html><title>h</title>',
      'big.bin': Buffer.alloc(4 * 1024 * 1024, 7),
    });
    // An upstream that ends its chunked answer with a trailer field (RFC 9110 §6.5).
    upstream = createHttpServer((req, res) => {
      if (req.method === 'POST') {
        const got: Buffer[] = [];
        req.on('data', (c: Buffer) => got.push(c));
        req.on('end', () => {
          const all = Buffer.concat(got);
          res.end(all.length > 1000 ? `got ${all.length} bytes` : `got ${all.toString()}`);
        });
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain', trailer: 'x-checksum' });
      res.write('body');
      res.addTrailers({ 'x-checksum': 'abc123' });
      res.end();
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const tls = await testTls();
    const routes: Route[] = [
      { path: '/api/echo', methods: ['POST'], handler: (_req, { body }) => ({ body: body ?? null }) },
    ];
    const logger: Logger = {
      info: (o: object | string) => {
        if (typeof o === 'object' && 'status' in o)
          logged.push(o as { status?: number; url?: string; bytes?: number });
      },
      warn() {},
      error() {},
      isLevelEnabled: () => true,
    };
    const c = parseConfig({
      root: dir,
      listen: { host: '127.0.0.1', port: 0 },
      tls: { cert: tls.cert, key: tls.key },
      proxy: [{ prefix: '/up', upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` }],
    });
    app = createGatehouse(toServerOptions(c), { routes, logger });
    const { port } = await app.listen();
    base = `https://localhost:${port}`;
    session = connect(base, { ca: tls.caPem });
  });

  after(async () => {
    session?.close();
    await app?.close();
    upstream?.close();
    if (dir) removeSite(dir);
  });

  it('a request body is read from the stream when the handler asks (POST to a route)', async () => {
    const r = await h2(
      session,
      { ':method': 'POST', ':path': '/api/echo', 'content-type': 'application/json' },
      '{"a":[1,2,3]}',
    );
    assert.equal(r.headers[':status'], 200);
    assert.deepEqual(JSON.parse(r.body.toString()), { body: { a: [1, 2, 3] } });
  });

  it('a proxied POST without Content-Length (RFC 9113 §8.1: DATA frames carry it) reaches the upstream', async () => {
    const r = await h2(
      session,
      { ':method': 'POST', ':path': '/up/post', 'content-type': 'text/plain' },
      'hello',
    );
    assert.equal(r.headers[':status'], 200);
    assert.equal(r.body.toString(), 'got hello');
  });

  it('a proxied 8 MB upload streams through (the stream paused and resumed as the upstream reads)', async () => {
    const r = await new Promise<Answer>((resolve, reject) => {
      const st = session.request({
        ':method': 'POST',
        ':path': '/up/big',
        'content-type': 'application/octet-stream',
      });
      const chunks: Buffer[] = [];
      let head: IncomingHttpHeaders = {};
      st.on('response', (h) => {
        head = h;
      });
      st.on('data', (c: Buffer) => chunks.push(c));
      st.on('end', () =>
        resolve({ headers: head, body: Buffer.concat(chunks), trailers: undefined, interim: [] }),
      );
      st.on('error', reject);
      const piece = Buffer.alloc(64 * 1024, 1);
      let left = 128;
      const pump = () => {
        while (left > 0) {
          left--;
          if (!st.write(piece)) return void st.once('drain', pump);
        }
        st.end();
      };
      pump();
    });
    assert.equal(r.headers[':status'], 200);
    assert.equal(r.body.toString(), `got ${8 * 1024 * 1024} bytes`);
  });

  it('Expect: 100-continue -> a 100 before the final answer', async () => {
    const r = await h2(
      session,
      { ':method': 'POST', ':path': '/api/echo', 'content-type': 'application/json', expect: '100-continue' },
      '{"x":1}',
    );
    assert.deepEqual(r.interim, [100]);
    assert.equal(r.headers[':status'], 200);
  });

  it('an expectation other than 100-continue -> 417 (RFC 9110 §10.1.1)', async () => {
    const r = await h2(session, { ':method': 'GET', ':path': '/', expect: 'something-else' });
    assert.equal(r.headers[':status'], 417);
  });

  it('TE: trailers -> the upstream trailer field arrives as HTTP/2 trailers', async () => {
    const r = await h2(session, { ':method': 'GET', ':path': '/up/t', te: 'trailers' });
    assert.equal(r.headers[':status'], 200);
    assert.equal(r.body.toString(), 'body');
    assert.equal(r.trailers?.['x-checksum'], 'abc123');
  });

  it('no TE: trailers -> no trailers frame; the body is whole', async () => {
    const r = await h2(session, { ':method': 'GET', ':path': '/up/t' });
    assert.equal(r.headers[':status'], 200);
    assert.equal(r.body.toString(), 'body');
    assert.equal(r.trailers, undefined);
  });

  it('HEAD -> the 200 head (content-length of the file) and no DATA', async () => {
    const r = await h2(session, { ':method': 'HEAD', ':path': '/index.html' });
    assert.equal(r.headers[':status'], 200);
    assert.equal(r.headers['content-length'], String('<!doctype html><title>h</title>'.length));
    assert.equal(r.body.length, 0);
  });

  it("the access log's bytes are the stream's own, not the connection's, while another stream downloads", async () => {
    const big = h2(session, { ':method': 'GET', ':path': '/big.bin', 'x-n': 'concurrent' });
    const small = await h2(session, { ':method': 'GET', ':path': '/index.html' });
    await big;
    await waitUntil('logged', () => logged.filter((l) => l.url === '/index.html').length > 0);
    const line = logged.filter((l) => l.url === '/index.html').at(-1)!;
    assert.equal(line.bytes, small.body.length);
    const bigLine = logged.filter((l) => l.url === '/big.bin').at(-1)!;
    assert.equal(bigLine.bytes, 4 * 1024 * 1024);
  });

  it('a stream reset mid-download -> the response closes without finishing; the server keeps serving', async () => {
    const before = logged.length;
    const s = session.request({ ':method': 'GET', ':path': '/big.bin' });
    await new Promise<void>((resolve) => s.once('data', () => resolve()));
    s.close(constants.NGHTTP2_CANCEL);
    await waitUntil('logged', () => logged.slice(before).some((l) => l.url === '/big.bin'));
    const line = logged.slice(before).find((l) => l.url === '/big.bin')!;
    // The access log's status for a client that went away (DESIGN: 499 in logs only).
    assert.equal(line.status, 499);
    const r = await h2(session, { ':method': 'GET', ':path': '/index.html' });
    assert.equal(r.headers[':status'], 200);
  });
});
