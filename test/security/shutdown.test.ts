// Attack/robustness: requests still waiting when the shutdown deadline (limits.shutdownTimeoutMs) hits.
// They used to get a reset connection; now a request whose answer has not started gets 503 with
// Retry-After and Connection: close (RFC 9110 §15.6.4), and one whose answer has started is cut.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import { makeSite, raw, rawStatus, removeSite, startServer } from '../helpers/http.js';
import { origin } from '../helpers/origin.js';
import { waitUntil } from '../helpers/wait.js';

/** Waits until `cond` holds; the shared deadline (WAIT_DEADLINE_MS) only turns a hang into a failure. */
async function until(cond: () => boolean, what: string): Promise<void> {
  await waitUntil(what, cond);
}

describe('shutdown deadline', () => {
  it('attack: requests hanging on an upstream at the shutdown deadline -> 503 with Retry-After and Connection: close, not a reset', async () => {
    const held: ServerResponse[] = [];
    const up = await origin({
      '/api/hang': (_req, res) => held.push(res),
      '/api/started': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100' });
        res.write('partial');
        held.push(res);
      },
    });
    const site = makeSite({ 'small.txt': 'small' });
    const gh = await startServer(site, {
      limits: { shutdownTimeoutMs: 300 },
      proxy: [{ prefix: '/api', upstream: up.url, stripPrefix: false }],
    });
    try {
      const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;
      const single = raw(gh.port, get('/api/hang'), 15_000);
      // A pipelined request queued behind a hanging one on the same connection.
      const pipelined = raw(gh.port, get('/api/hang') + get('/small.txt'), 15_000);
      const started = raw(gh.port, get('/api/started'), 15_000);
      await until(() => held.length === 3, 'the upstream to hold three requests');
      const closed = gh.close();
      const [a, b, c] = await Promise.all([single, pipelined, started]);
      await closed;
      for (const text of [a, b]) {
        assert.equal(rawStatus(text), 503, text.slice(0, 300));
        assert.match(text, /\r\nretry-after: 5\r\n/i);
        assert.match(text, /\r\nconnection: close\r\n/i);
        assert.match(text, /application\/problem\+json/);
      }
      // The answer had started: it is cut (never a complete-looking response), not turned into a 503.
      assert.equal(rawStatus(c), 200);
      assert.ok(c.endsWith('partial'), c);
    } finally {
      for (const r of held) r.destroy();
      await up.close();
      removeSite(site);
    }
  });
});
