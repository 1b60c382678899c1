// Attack: request bodies larger than the route accepts, by Content-Length or chunked, and bodies
// that stall. proxy[].maxBodyBytes gives 413 (before the upstream when Content-Length says so);
// a body that sends nothing for timeouts.idleMs aborts both sides.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { rawStatus } from '../helpers/http.js';
import { httpUpstream, proxyTo, rawClient, waitFor } from '../helpers/proxy-attack.js';

/** An upstream that reads the whole body and answers with its length. */
const reader = (req: IncomingMessage, res: import('node:http').ServerResponse) => {
  let n = 0;
  req.on('data', (c: Buffer) => {
    n += c.length;
  });
  req.on('end', () => res.end(String(n)));
};

describe('proxy request bodies', () => {
  it('attack: Content-Length over maxBodyBytes -> 413, the upstream is never contacted', async () => {
    const up = await httpUpstream(reader);
    const px = await proxyTo(up.url, { maxBodyBytes: 1000 });
    try {
      const c = rawClient(px.server.port, 'POST /api/x HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n');
      await c.closed;
      assert.equal(rawStatus(c.text()), 413);
      assert.match(c.text(), /\r\nconnection: close\r\n/i);
      assert.equal(up.seen.length, 0);
    } finally {
      await px.close();
      await up.close();
    }
  });

  it('a body within maxBodyBytes passes, chunked or not', async () => {
    const up = await httpUpstream(reader);
    const px = await proxyTo(up.url, { maxBodyBytes: 1000 });
    try {
      const body = 'a'.repeat(1000);
      const c = rawClient(
        px.server.port,
        `POST /api/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3e8\r\n${body}\r\n0\r\n\r\n`,
      );
      await c.closed;
      assert.equal(rawStatus(c.text()), 200);
      assert.match(c.text(), /\r\n\r\n1000$/);
    } finally {
      await px.close();
      await up.close();
    }
  });

  it('attack: a chunked body growing over maxBodyBytes -> 413, the upstream request aborted', async () => {
    const up = await httpUpstream(reader);
    const px = await proxyTo(up.url, { maxBodyBytes: 1000 });
    try {
      // Chunks of 600 bytes: the second crosses the limit; the client keeps sending after that.
      const chunk = `258\r\n${'b'.repeat(600)}\r\n`;
      const c = rawClient(
        px.server.port,
        `POST /api/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${chunk}`,
      );
      await waitFor(() => up.seen.length === 1, 'the request to reach the upstream');
      const upstreamClosed = new Promise<void>((r) => up.seen[0]!.once('close', () => r()));
      for (let i = 0; i < 3 && !c.sock.destroyed; i++) c.sock.write(chunk);
      await upstreamClosed;
      assert.equal(up.seen[0]!.complete, false, 'the upstream never got a complete body');
      await c.closed;
      assert.equal(rawStatus(c.text()), 413);
    } finally {
      await px.close();
      await up.close();
    }
  });

  it('attack: a request body that stalls for idleMs -> 408 to the client, the upstream request aborted', {
    timeout: 15_000,
  }, async () => {
    const up = await httpUpstream(reader);
    // Node's own request timer off, the head timer long: only the body idle timer can end this.
    const px = await proxyTo(
      up.url,
      { timeouts: { idleMs: 300, headersMs: 600_000 } },
      { limits: { requestTimeoutMs: 0, shutdownTimeoutMs: 100 } },
    );
    try {
      const c = rawClient(
        px.server.port,
        'POST /api/x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly ten b',
      );
      await waitFor(() => up.seen.length === 1, 'the request to reach the upstream');
      const upstreamClosed = new Promise<void>((r) => up.seen[0]!.once('close', () => r()));
      await upstreamClosed;
      assert.equal(up.seen[0]!.complete, false);
      await c.closed;
      assert.equal(rawStatus(c.text()), 408);
    } finally {
      await px.close();
      await up.close();
    }
  });
});
