// Interim (1xx) responses through the proxy (RFC 9110 §15.2): every one the upstream sends is
// forwarded with its fields minus hop-by-hop ones, HTTP/1.0 clients get none, and a storm of
// them is bounded: at most 32 per request, and the final head still within headersMs -> 504.
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { describe, it } from 'node:test';
import { proxyTo, rawClient, rawUpstream, statusLines, waitFor } from '../helpers/proxy-attack.js';

const FINAL = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok';

describe('proxy: interim responses', () => {
  const interims =
    'HTTP/1.1 102 Processing\r\nX-Progress: 50\r\n\r\n' +
    'HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\nX-Hint: yes\r\nConnection: x-secret\r\nX-Secret: 1\r\nKeep-Alive: timeout=5\r\n\r\n';

  it('attack: upstream 102 and 103 -> both reach the client with their fields, hop-by-hop ones removed', async () => {
    const up = await rawUpstream((sock) => sock.write(interims + FINAL));
    const px = await proxyTo(up.url);
    try {
      const c = rawClient(px.server.port, 'GET /api/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      await c.closed;
      const text = c.text();
      assert.deepEqual(statusLines(text), [102, 103, 200]);
      const [p102, p103] = text.split('\r\n\r\n');
      assert.match(p102!, /\r\nx-progress: 50$/i);
      assert.match(p103!, /\r\nlink: <\/a\.css>; rel=preload\r\n/i);
      assert.match(p103!, /\r\nx-hint: yes/i);
      assert.doesNotMatch(p103!, /x-secret|connection|keep-alive/i);
      assert.match(text, /\r\n\r\nok$/);
    } finally {
      await px.close();
      await up.close();
    }
  });

  it('an HTTP/1.0 client gets no interim response (RFC 9110 §15.2)', async () => {
    const up = await rawUpstream((sock) => sock.write(interims + FINAL));
    const px = await proxyTo(up.url);
    try {
      const c = rawClient(px.server.port, 'GET /api/x HTTP/1.0\r\nHost: x\r\n\r\n');
      await c.closed;
      assert.deepEqual(statusLines(c.text()), [200]);
    } finally {
      await px.close();
      await up.close();
    }
  });

  it('attack: a 103 storm to a client that does not read -> at most 32 forwarded, then 504', async () => {
    const link = `Link: </${'a'.repeat(4000)}.css>; rel=preload\r\n`;
    const hint = `HTTP/1.1 103 Early Hints\r\n${link}\r\n`;
    let upstreamSock: Socket | undefined;
    let sent = 0;
    const up = await rawUpstream((sock) => {
      upstreamSock = sock;
      // As fast as the proxy reads, bounded so a broken proxy cannot make the test run forever.
      const pump = () => {
        while (sent < 100_000 && !sock.destroyed) {
          sent++;
          if (!sock.write(hint)) return void sock.once('drain', pump);
        }
      };
      pump();
    });
    const px = await proxyTo(up.url);
    try {
      const c = rawClient(px.server.port, 'GET /api/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', {
        paused: true,
      });
      await waitFor(() => upstreamSock?.destroyed === true, 'the proxy to abort the upstream exchange');
      c.sock.resume();
      await c.closed;
      const statuses = statusLines(c.text());
      assert.equal(statuses.at(-1), 504);
      assert.ok(statuses.length - 1 <= 32, `${statuses.length - 1} interim responses forwarded`);
      assert.ok(sent > 32, 'the upstream really sent a storm');
    } finally {
      await px.close();
      await up.close();
    }
  });

  it('attack: 102s trickling in slower than headersMs -> 504, the 1xx do not restart the head timer', async () => {
    let timer: NodeJS.Timeout | undefined;
    let sent = 0;
    const up = await rawUpstream((sock) => {
      // One 102 every 50 ms, bounded (200); each would restart undici's own head timer.
      timer = setInterval(() => {
        if (sent++ >= 200 || sock.destroyed) return clearInterval(timer);
        sock.write('HTTP/1.1 102 Processing\r\n\r\n');
      }, 50);
    });
    const px = await proxyTo(up.url, { timeouts: { headersMs: 400 } });
    try {
      const c = rawClient(px.server.port, 'GET /api/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      await c.closed;
      const statuses = statusLines(c.text());
      assert.equal(statuses.at(-1), 504);
      assert.ok(statuses.length - 1 < 32, 'ended by time, not by the count');
      assert.ok(statuses.length > 1, 'the 102s were forwarded meanwhile');
    } finally {
      clearInterval(timer);
      await px.close();
      await up.close();
    }
  });
});
