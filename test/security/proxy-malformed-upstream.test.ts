// Attack: an upstream sends a malformed chunked body (a bad chunk size). Before any byte reached
// the client the answer is 502; once the head is out, the client connection is closed so the
// response visibly ends early (no terminating chunk), never an empty reply or a silent truncation.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rawStatus } from '../helpers/http.js';
import { proxyTo, rawClient, rawUpstream, waitFor } from '../helpers/proxy-attack.js';

describe('proxy: malformed upstream bodies', () => {
  it('attack: bad chunk size right after the head -> 502', async () => {
    const up = await rawUpstream((sock) =>
      sock.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Up: 1\r\n\r\nzz\r\nabc\r\n'),
    );
    const px = await proxyTo(up.url);
    try {
      const c = rawClient(px.server.port, 'GET /api/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      await c.closed;
      assert.equal(rawStatus(c.text()), 502);
      assert.doesNotMatch(c.text(), /x-up/i, 'nothing of the broken response leaks');
    } finally {
      await px.close();
      await up.close();
    }
  });

  it('attack: bad chunk size after body bytes reached the client -> connection closed without the last chunk', async () => {
    let breakBody: () => void = () => {};
    const up = await rawUpstream((sock) => {
      sock.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n');
      breakBody = () => sock.write('zz\r\n');
    });
    const px = await proxyTo(up.url);
    try {
      const c = rawClient(px.server.port, 'GET /api/x HTTP/1.1\r\nHost: x\r\n\r\n');
      await waitFor(() => c.text().includes('hello'), 'the first body bytes at the client');
      breakBody();
      await c.closed;
      assert.equal(rawStatus(c.text()), 200);
      assert.doesNotMatch(
        c.text(),
        /\r\n0\r\n\r\n$/,
        'no terminating chunk: the response visibly ends early',
      );
    } finally {
      await px.close();
      await up.close();
    }
  });
});
