// Attack: clients that never read a proxied download, or never finish an upload, each hold an
// upstream connection. The pool must not stop at a fixed size (undici's was 128): others are
// still answered; with maxConnections a queued request is refused after queueMs; a client that
// takes no bytes for sendTimeoutMs is dropped and its upstream request aborted.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import { get } from '../helpers/http.js';
import { httpUpstream, proxyTo, type RawClient, rawClient, waitFor } from '../helpers/proxy-attack.js';

const STALLED = 130;
const CHUNK = Buffer.alloc(64 * 1024, 'x');

/** An endless download, written only as fast as the proxy takes it (bounded: 1 GiB). */
function endless(req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/octet-stream' });
  let sent = 0;
  const pump = () => {
    while (sent < 1024 * 1024 * 1024) {
      sent += CHUNK.length;
      if (!res.write(CHUNK)) return void res.once('drain', pump);
    }
    res.end();
  };
  req.socket.on('error', () => {});
  pump();
}

function routes(req: IncomingMessage, res: ServerResponse): void {
  if (req.url === '/big') endless(req, res);
  else if (req.url === '/upload') {
    req.resume();
    req.on('end', () => res.end('uploaded'));
  } else if (req.url !== '/hang') res.end('ok'); // /hang never answers
}

describe('proxy starvation', () => {
  it('attack: 130 clients that never read a large download -> another client is still answered', async () => {
    const up = await httpUpstream(routes);
    const px = await proxyTo(up.url, {}, { limits: { shutdownTimeoutMs: 100 } });
    const stalled: RawClient[] = [];
    try {
      for (let i = 0; i < STALLED; i++)
        stalled.push(
          rawClient(px.server.port, 'GET /api/big HTTP/1.1\r\nHost: x\r\n\r\n', {
            paused: true,
          }),
        );
      await waitFor(
        () => up.seen.filter((r) => r.url === '/big').length === STALLED,
        'every stalled download to reach the upstream',
      );
      const r = await get(px.server.url, '/api/ok');
      assert.equal(r.status, 200);
      assert.equal(r.text, 'ok');
    } finally {
      for (const c of stalled) c.sock.destroy();
      await px.close();
      await up.close();
    }
  });

  it('attack: 130 slow uploads that never finish -> another client is still answered', async () => {
    const up = await httpUpstream(routes);
    const px = await proxyTo(up.url, {}, { limits: { shutdownTimeoutMs: 100 } });
    const stalled: RawClient[] = [];
    try {
      for (let i = 0; i < STALLED; i++)
        stalled.push(
          rawClient(
            px.server.port,
            'POST /api/upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\nfirst bytes',
          ),
        );
      await waitFor(
        () => up.seen.filter((r) => r.url === '/upload').length === STALLED,
        'every slow upload to reach the upstream',
      );
      const r = await get(px.server.url, '/api/ok');
      assert.equal(r.status, 200);
    } finally {
      for (const c of stalled) c.sock.destroy();
      await px.close();
      await up.close();
    }
  });

  it('attack: maxConnections reached -> a queued request gets 503 after queueMs, a freed slot serves the next', async () => {
    const up = await httpUpstream(routes);
    const px = await proxyTo(up.url, { maxConnections: 2, timeouts: { queueMs: 200 } });
    const hung: RawClient[] = [];
    try {
      for (let i = 0; i < 2; i++)
        hung.push(rawClient(px.server.port, 'GET /api/hang HTTP/1.1\r\nHost: x\r\n\r\n'));
      await waitFor(() => up.seen.length === 2, 'both slots to be taken');
      const refused = await get(px.server.url, '/api/ok');
      assert.equal(refused.status, 503);
      assert.equal(refused.headers['retry-after'], '1');
      assert.equal(up.seen.length, 2, 'the refused request never reached the upstream');
      // A client that leaves gives its slot back.
      hung[0]!.sock.destroy();
      await waitFor(() => up.seen[0]!.destroyed, 'the upstream request of the client that left to close');
      const served = await get(px.server.url, '/api/ok');
      assert.equal(served.status, 200);
    } finally {
      for (const c of hung) c.sock.destroy();
      await px.close();
      await up.close();
    }
  });

  it('attack: a client that never reads a response within bufferBytes -> its upstream connection is free at once', async () => {
    const SIZE = 32 * 1024 * 1024; // more than loopback socket buffers hold
    const up = await httpUpstream((req, res) => {
      if (req.url === '/ok') return void res.end('ok');
      res.writeHead(200, { 'content-length': String(SIZE) });
      res.end(Buffer.alloc(SIZE, 'y'));
    });
    // One connection only: the second request is served only once the first one's is released.
    const px = await proxyTo(up.url, { maxConnections: 1, bufferBytes: 48 * 1024 * 1024 });
    const c = rawClient(px.server.port, 'GET /api/answer HTTP/1.1\r\nHost: x\r\n\r\n', { paused: true });
    try {
      await waitFor(() => up.seen.length === 1, 'the first request at the upstream');
      const r = await get(px.server.url, '/api/ok');
      assert.equal(r.status, 200);
    } finally {
      c.sock.destroy();
      await px.close();
      await up.close();
    }
  });

  it('attack: a client that takes no bytes for sendTimeoutMs -> dropped, its upstream request aborted', async () => {
    const up = await httpUpstream(routes);
    const px = await proxyTo(up.url, {}, { limits: { sendTimeoutMs: 300, shutdownTimeoutMs: 100 } });
    const c = rawClient(px.server.port, 'GET /api/big HTTP/1.1\r\nHost: x\r\n\r\n', { paused: true });
    try {
      await waitFor(() => up.seen.length === 1, 'the download to reach the upstream');
      const upstreamClosed = new Promise<void>((r) => up.seen[0]!.socket.once('close', () => r()));
      await upstreamClosed;
      // The client, reading at last, finds its connection closed before the endless body ended.
      c.sock.resume();
      await c.closed;
    } finally {
      c.sock.destroy();
      await px.close();
      await up.close();
    }
  });
});
