// The connection timeouts of `gatehouse serve` on the runtimes' own servers, as on Node: a request in
// progress has no idle bound of the server's (Node's keep-alive timeout runs only between requests), so
// a proxied upstream that answers after 12 s, within `proxy[].timeouts.headersMs` (30 s by default),
// and a proxied body that pauses 12 s both reach the client (Bun.serve's own idleTimeout, 10 s, cut
// them: "socket hang up"); and a keep-alive connection left idle is still closed by the server after
// `limits.keepAliveTimeoutMs` plus Node's 1 s margin, also after such a slow request (fetch/hosts.ts).
// Deno.serve has no idle bound at all (IDLE_CONNECTIONS_KEPT, docs/runtimes.md).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeSite, removeSite } from '../helpers/http.js';
import { IDLE_CONNECTIONS_KEPT, type Listening, serveOn } from '../helpers/runtimes.js';

/** How long the upstream takes: past Bun.serve's default idleTimeout (10 s), within headersMs (30 s). */
const SLOW_MS = 12_000;
const KEEP_ALIVE_MS = 1000;
/** Node closes at keepAliveTimeoutMs + 1 s; Bun checks its timeouts every few seconds. */
const CLOSED_WITHIN_MS = 7000;

interface Exchange {
  /** The response as it came (head and body). */
  readonly text: string;
  /** Milliseconds from the response's end to the server closing the connection; undefined: still open. */
  readonly closedAfterMs: number | undefined;
}

/**
 * One GET on a fresh keep-alive connection: the response (ended by `last` in its text), then how long
 * the connection stays open with nothing sent (watched for `watchMs`).
 */
function exchange(url: string, path: string, last: string, watchMs: number): Promise<Exchange> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    let endedAt: number | undefined;
    let watch: NodeJS.Timeout | undefined;
    const done = (closedAfterMs: number | undefined) => {
      clearTimeout(watch);
      socket.destroy();
      resolve({ text, closedAfterMs });
    };
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`));
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (endedAt === undefined && text.includes(last)) {
        endedAt = Date.now();
        watch = setTimeout(() => done(undefined), watchMs);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => {
      if (endedAt === undefined) reject(new Error(`closed before the response ended: ${text}`));
      else done(Date.now() - endedAt);
    });
  });
}

for (const runtime of ['bun', 'deno'] as const) {
  describe(`connection timeouts on ${runtime}'s own server`, () => {
    let upstream: Server;
    let site: string;
    let s: Listening;

    before(async () => {
      upstream = createServer((req, res) => {
        if (req.url === '/slow') {
          setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain' }).end('slow done'), SLOW_MS);
        } else if (req.url === '/pause') {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('first ');
          setTimeout(() => res.end('after the pause'), SLOW_MS);
        } else {
          res.writeHead(200, { 'content-type': 'text/plain' }).end('quick');
        }
      });
      await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
      const port = (upstream.address() as AddressInfo).port;
      site = makeSite({
        'index.html': '<h1>home</h1>',
        'conf/gatehouse.json': JSON.stringify({
          proxy: [{ prefix: '/api', upstream: `http://127.0.0.1:${port}` }],
          limits: { keepAliveTimeoutMs: KEEP_ALIVE_MS },
        }),
      });
      s = await serveOn(runtime, site, ['--config', join(site, 'conf/gatehouse.json')]);
    });
    after(async () => {
      await s.close();
      upstream.close();
      removeSite(site);
    });

    it('waits for a slow upstream and a paused body, then bounds the idle connection again', async () => {
      const [slow, paused, quick] = await Promise.all([
        exchange(s.url, '/api/slow', 'slow done', CLOSED_WITHIN_MS),
        exchange(s.url, '/api/pause', 'after the pause', CLOSED_WITHIN_MS),
        exchange(s.url, '/api/quick', 'quick', CLOSED_WITHIN_MS),
      ]);
      for (const r of [slow, paused, quick]) assert.match(r.text, /^HTTP\/1\.1 200 /);
      assert.match(paused.text, /first [\s\S]*after the pause/);
      for (const r of [slow, paused, quick]) {
        if (IDLE_CONNECTIONS_KEPT[runtime])
          assert.equal(r.closedAfterMs, undefined, 'Deno.serve has no idle bound');
        else {
          assert.notEqual(r.closedAfterMs, undefined, 'the idle keep-alive connection stays open');
          assert.ok(r.closedAfterMs! >= KEEP_ALIVE_MS - 100, `closed after ${r.closedAfterMs} ms`);
        }
      }
    });
  });
}
