// 408, 414, 429 and 431 produced for real by the Gatehouse server, driven by a raw socket client.
// matrix: http1 h2 h1-tls (the listener's own limits: an app that mounts Gatehouse owns its server and these)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  makeSite,
  raw,
  rawConnect,
  rawStatus,
  removeSite,
  startServer,
  type TestServer,
} from '../../helpers/http.js';

describe('limits through a raw socket', () => {
  let site: string;
  let s: TestServer;
  before(async () => {
    site = makeSite({ 'a.txt': 'a' });
    s = await startServer(site, {
      limits: {
        headersTimeoutMs: 300,
        requestTimeoutMs: 600,
        maxHeaderBytes: 4096,
        maxUrlBytes: 100,
        rateLimit: { requestsPerSec: 1, burst: 2 },
      },
    });
  });
  after(async () => {
    await s.close();
    removeSite(site);
  });

  it('a request head that never completes -> 408 (RFC 9110 §15.5.9)', async () => {
    const text = await new Promise<string>((resolve, reject) => {
      const sock = rawConnect(s.port);
      let out = '';
      sock.on('data', (d) => (out += d));
      sock.on('error', reject);
      sock.on('close', () => resolve(out));
      sock.write('GET /a.txt HTTP/1.1\r\nHost: x\r\n'); // ...and nothing more
      // A deadline for a server that never answers (the bug), not a wait: headersTimeoutMs is 300.
      setTimeout(() => sock.destroy(), 15_000).unref();
    });
    assert.equal(rawStatus(text), 408, text);
    assert.match(text, /application\/problem\+json/);
  });

  it('a header block over limits.maxHeaderBytes -> 431', async () => {
    const text = await raw(s.port, `GET /a.txt HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(8000)}\r\n\r\n`);
    assert.equal(rawStatus(text), 431, text.slice(0, 200));
  });

  it('a target over limits.maxUrlBytes -> 414', async () => {
    const text = await raw(
      s.port,
      `GET /${'u'.repeat(200)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    assert.equal(rawStatus(text), 414);
  });

  it('past the burst -> 429 with Retry-After and RateLimit headers', async () => {
    const statuses: number[] = [];
    let last = '';
    for (let i = 0; i < 4; i++) {
      last = await raw(s.port, 'GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      statuses.push(rawStatus(last));
    }
    assert.ok(statuses.includes(429), statuses.join(','));
    assert.match(last, /Retry-After: \d+/i);
    assert.match(last, /RateLimit-Policy: /i);
  });
});

describe('limits.maxConnections', () => {
  it('a connection past the limit is dropped while the open ones keep being served', async () => {
    const site = makeSite({ 'a.txt': 'a' });
    const s = await startServer(site, { limits: { maxConnections: 1 } });
    const accepted = new Promise((r) => s.app.server.once('connection', r));
    const dropped = new Promise((r) => s.app.server.once('drop', r));
    const first = rawConnect(s.port);
    try {
      await accepted; // the server counts it before the second one comes
      // The second connection is accepted by the kernel and closed by Node without an answer.
      const second = await raw(s.port, 'GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      assert.equal(second, '');
      await dropped; // Node says so (net.Server 'drop')
      const answer = await new Promise<string>((resolve) => {
        let out = '';
        first.on('data', (d) => {
          out += d;
          if (out.includes('\r\n\r\na')) resolve(out);
        });
        first.write('GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n');
      });
      assert.equal(rawStatus(answer), 200);
    } finally {
      first.destroy();
      await s.close();
      removeSite(site);
    }
  });
});
