// Node's own limits (408, 431, 400, maxConnections) answered by handleClientError on a plain node:http
// server with the same options app.ts uses: the Node listener's, so off the runtimes matrix (split from
// steps/limits.test.ts, which runs on every runtime).
// matrix: http1 h2 h1-tls adapters (the static, policy, proxy and cache suites run on every protocol and adapter)
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Duplex } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import {
  CLIENT_ERROR_LINGER_MS,
  clientErrorEntry,
  handleClientError,
} from '../../../src/server/node/client-error.js';
import { raw, rawConnect, rawStatus } from '../../helpers/http.js';

describe("Node's limits answered by handleClientError", () => {
  let server: Server;
  let port: number;
  before(async () => {
    // The options app.ts sets, with short timeouts so the test is quick.
    server = createServer(
      {
        maxHeaderSize: 16384,
        headersTimeout: 500,
        requestTimeout: 1000,
        keepAliveTimeout: 5000,
        connectionsCheckingInterval: 100,
      },
      (req, res) => {
        if (req.url === '/early') {
          // Answers before the body arrives; the body never completes, so requestTimeout fires later.
          res.end('early');
          return;
        }
        res.end('ok');
      },
    );
    server.on('clientError', handleClientError);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const headOf = (text: string) => text.slice(0, text.indexOf('\r\n\r\n'));
  const bodyOf = (text: string) => text.slice(text.indexOf('\r\n\r\n') + 4);

  it('a slow request head -> 408 problem+json with Connection: close, the server closing the socket', async () => {
    // raw reads until the server closes; only headersTimeout (500 ms) can make it answer a head that
    // never ends, so a 408 here is the timeout at work however slow the machine is.
    const text = await raw(port, 'GET / HTTP/1.1\r\nHost: x\r\n');
    assert.equal(rawStatus(text), 408);
    assert.match(headOf(text), /\r\nConnection: close/);
    assert.match(headOf(text), /\r\nContent-Type: application\/problem\+json/);
    const body = JSON.parse(bodyOf(text));
    assert.equal(body.status, 408);
    assert.equal(body.code, 'request_timeout');
    assert.equal(Buffer.byteLength(bodyOf(text)), Number(/Content-Length: (\d+)/.exec(text)?.[1]));
  });

  it('a 20 KB header -> 431 and the socket closes', async () => {
    const text = await raw(
      port,
      `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`,
      3000,
    );
    assert.equal(rawStatus(text), 431);
    assert.equal(JSON.parse(bodyOf(text)).code, 'headers_too_large');
    assert.match(headOf(text), /\r\nConnection: close/);
  });

  it('garbage -> 400', async () => {
    const text = await raw(port, 'NOT HTTP AT ALL\r\n\r\n');
    assert.equal(rawStatus(text), 400);
    assert.equal(JSON.parse(bodyOf(text)).code, 'bad_request');
  });

  it('a timeout after the response was sent does not add a second status line', async () => {
    const text = await raw(port, 'POST /early HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nab');
    assert.equal(rawStatus(text), 200);
    assert.equal(text.match(/HTTP\/1\.1 /g)?.length, 1, text);
  });

  it('a valid request on the same server still works', async () => {
    const text = await raw(port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.equal(rawStatus(text), 200);
  });

  it('clientErrorEntry: the status for each Node error code', () => {
    const cases: [string | undefined, number][] = [
      ['HPE_HEADER_OVERFLOW', 431],
      ['ERR_HTTP_REQUEST_TIMEOUT', 408],
      ['HPE_CHUNK_EXTENSIONS_OVERFLOW', 413],
      ['HPE_INVALID_METHOD', 400],
      [undefined, 400],
    ];
    for (const [code, status] of cases) assert.equal(clientErrorEntry(code).status, status, code);
  });

  /** A socket stand-in that records writes. */
  function fakeSocket(extra: Record<string, unknown> = {}): { socket: Duplex; written: Buffer[] } {
    const written: Buffer[] = [];
    const socket = new Duplex({
      read() {},
      write(chunk: Buffer, _enc, cb) {
        written.push(chunk);
        cb();
      },
    });
    Object.assign(socket, extra);
    return { socket, written };
  }

  it('never writes to a destroyed socket', () => {
    const { socket, written } = fakeSocket();
    socket.destroy();
    handleClientError(Object.assign(new Error('x'), { code: 'HPE_INVALID_METHOD' }), socket);
    assert.equal(written.length, 0);
  });

  it('never writes after a response head was sent; destroys instead', () => {
    const { socket, written } = fakeSocket({ _httpMessage: { _headerSent: true } });
    handleClientError(Object.assign(new Error('x'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket);
    assert.equal(written.length, 0);
    assert.equal(socket.destroyed, true);
  });

  it('answers once per socket, however many errors Node reports', async () => {
    const { socket, written } = fakeSocket();
    handleClientError(Object.assign(new Error('x'), { code: 'HPE_HEADER_OVERFLOW' }), socket);
    handleClientError(Object.assign(new Error('y'), { code: 'HPE_INVALID_EOF_STATE' }), socket);
    await new Promise((r) => setImmediate(r));
    assert.equal(written.length, 1);
    assert.match(written[0]!.toString('latin1'), /^HTTP\/1\.1 431 /);
    socket.destroy();
    assert.ok(CLIENT_ERROR_LINGER_MS <= 2000);
  });
});

describe('maxConnections (server.maxConnections)', () => {
  it('Node drops sockets beyond the limit at accept time, without a response', async () => {
    const server = createServer((_req, res) => res.end('ok'));
    server.maxConnections = 1;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const accepted = new Promise((r) => server.once('connection', r));
    const dropped = new Promise((r) => server.once('drop', r));
    const first = rawConnect(port);
    await accepted; // the server counts it before the second one comes
    const text = await raw(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.equal(text, '');
    await dropped; // Node says so (net.Server 'drop')
    first.destroy();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
});
