// SIGTERM ends `gatehouse serve` on the runtimes' own servers even when connections are left that the
// runtime will not let go: a WebSocket peer that never answers the Close (RFC 6455 §7.1.1), handshakes
// whose clients reset at once. Deno.serve's shutdown() can wait for such connections for ever, so the
// drain stops waiting after limits.shutdownTimeoutMs and the command exits with what is left. Raw TCP
// clients on 127.0.0.1.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeSite, removeSite } from '../helpers/http.js';
import { serveOn } from '../helpers/runtimes.js';

/** A client that completes a WebSocket handshake on `/ws`, then never reads or writes again. */
function silentPeer(url: string): Promise<Socket> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(u.port), u.hostname, () =>
      s.write(
        'GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
          'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
      ),
    );
    s.once('data', (head: Buffer) => {
      if (!head.toString('latin1').startsWith('HTTP/1.1 101')) reject(new Error(head.toString('latin1')));
      // Stop reading: the server's Close stays unanswered, its buffers fill.
      s.pause();
      resolve(s);
    });
    s.once('error', reject);
  });
}

for (const runtime of ['bun', 'deno'] as const) {
  describe(`gatehouse serve on ${runtime}: SIGTERM with a WebSocket peer that never closes`, () => {
    let site: string;
    before(() => {
      site = makeSite({
        'index.html': '<h1>home</h1>',
        'conf/gatehouse.json': JSON.stringify({
          websocket: [{ path: '/ws', mode: 'echo' }],
          limits: { shutdownTimeoutMs: 1000 },
        }),
      });
    });
    after(() => removeSite(site));

    it('drains, then exits 0 within the shutdown bound and a second', async () => {
      const s = await serveOn(runtime, site, ['--config', join(site, 'conf/gatehouse.json')]);
      const peer = await silentPeer(s.url);
      // Handshakes whose clients reset at once: Deno.serve keeps their connections in its shutdown.
      const u = new URL(s.url);
      await Promise.all(
        Array.from(
          { length: 20 },
          () =>
            new Promise<void>((resolve) => {
              const c = connect(Number(u.port), u.hostname, () => {
                c.write(
                  'GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
                    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
                );
                c.resetAndDestroy();
              });
              c.on('error', () => {});
              c.on('close', () => resolve());
            }),
        ),
      );
      try {
        const t = performance.now();
        const code = await s.close();
        assert.equal(code, 0);
        // shutdownTimeoutMs (1 s) + the leftover bound (1 s) + start-up slack on a loaded machine.
        assert.ok(performance.now() - t < 8000, `exited after ${Math.round(performance.now() - t)} ms`);
      } finally {
        peer.destroy();
      }
    });
  });
}
