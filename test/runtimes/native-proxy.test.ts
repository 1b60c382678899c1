// The reverse proxy and its shared cache on the runtimes' own servers: `gatehouse serve` run by Bun
// (upstream requests on its own HTTP/1.1 client, proxy/socket-pool.ts) and by Deno (undici over
// Deno's node:net) forwards, streams request bodies up, passes encoded bytes through untouched, stores
// and serves from the cache (RFC 9111), and answers 502 for an upstream that is down. A real upstream on
// 127.0.0.1 in this process counts what reached it.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { get, makeSite, removeSite } from '../helpers/http.js';
import { type Listening, serveOn } from '../helpers/runtimes.js';

const SERVERS = { bun: /\(Bun\.serve\)/, deno: /\(Deno\.serve\)/ } as const;

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

for (const [runtime, line] of Object.entries(SERVERS) as [keyof typeof SERVERS, RegExp][]) {
  describe(`the proxy on ${runtime}'s own server`, () => {
    const seen: Seen[] = [];
    const zipped = gzipSync(Buffer.from('compressed upstream bytes '.repeat(20)));
    let endlessClose!: () => void;
    const endlessClosed = new Promise<void>((resolve) => {
      endlessClose = resolve;
    });
    let upstream: Server;
    let site: string;
    let s: Listening;

    before(async () => {
      upstream = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          seen.push({
            method: req.method!,
            url: req.url!,
            headers: req.headers,
            body: Buffer.concat(chunks).toString(),
          });
          if (req.url === '/gz') {
            res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
            res.end(zipped);
          } else if (req.url === '/endless') {
            // A body that never ends: the client leaving must abort this upstream request.
            res.writeHead(200, { 'content-type': 'text/plain' });
            const timer = setInterval(() => res.write('tick\n'), 10);
            res.on('close', () => {
              clearInterval(timer);
              endlessClose();
            });
          } else if (req.url === '/silent') {
            // No head within headersMs: 504.
          } else if (req.url!.startsWith('/cached')) {
            res.writeHead(200, { 'cache-control': 'public, max-age=60', 'content-type': 'text/plain' });
            res.end(`cached #${seen.length}`);
          } else {
            res.writeHead(200, { 'content-type': 'text/plain', 'set-cookie': ['a=1', 'b=2'] });
            res.end(`upstream saw ${req.method} ${req.url}`);
          }
        });
      });
      await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
      const port = (upstream.address() as AddressInfo).port;
      site = makeSite({
        'index.html': '<h1>home</h1>',
        'conf/gatehouse.json': JSON.stringify({
          proxy: [
            { prefix: '/api', upstream: `http://127.0.0.1:${port}` },
            { prefix: '/c', upstream: `http://127.0.0.1:${port}`, cache: { enabled: true } },
            { prefix: '/down', upstream: 'http://127.0.0.1:9' },
            { prefix: '/slow', upstream: `http://127.0.0.1:${port}`, timeouts: { headersMs: 300 } },
          ],
        }),
      });
      s = await serveOn(runtime, site, ['--config', join(site, 'conf/gatehouse.json')]);
    });
    after(async () => {
      await s.close();
      upstream.close();
      removeSite(site);
    });

    it(`serves the proxy on the runtime's own server (no emulation note)`, () => {
      assert.match(s.stdout, line);
      assert.doesNotMatch(s.stderr(), /emulation/);
    });

    it('forwards GET with the prefix stripped, X-Forwarded-For and Via; both Set-Cookie lines return', async () => {
      const before = seen.length;
      const r = await get(s.url, '/api/items?x=1');
      assert.equal(r.status, 200);
      assert.equal(r.body.toString(), 'upstream saw GET /items?x=1');
      assert.equal(seen.length, before + 1);
      const up = seen.at(-1)!;
      assert.equal(up.headers['x-forwarded-for'], '127.0.0.1');
      assert.match(String(up.headers.via), /gatehouse/);
      assert.deepEqual(r.headers['set-cookie'], ['a=1', 'b=2']);
      assert.match(String(r.headers.via), /gatehouse/);
    });

    it('streams a POST body up whole', async () => {
      const body = 'x'.repeat(200_000);
      const r = await get(s.url, '/api/upload', { method: 'POST', body });
      assert.equal(r.status, 200);
      const up = seen.at(-1)!;
      assert.equal(up.method, 'POST');
      assert.equal(up.body.length, body.length);
    });

    it('passes an encoded body through as the upstream sent it (no decoding on the way)', async () => {
      const r = await get(s.url, '/api/gz', { headers: { 'accept-encoding': 'gzip' } });
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-encoding'], 'gzip');
      assert.deepEqual(r.body, zipped);
    });

    it('a second GET of a fresh response is a cache hit: the upstream sees one request', async () => {
      const before = seen.length;
      const a = await get(s.url, '/c/cached-1');
      const b = await get(s.url, '/c/cached-1');
      assert.equal(a.status, 200);
      assert.equal(b.body.toString(), a.body.toString());
      assert.equal(seen.length, before + 1);
      assert.match(String(b.headers['cache-status']), /hit/);
    });

    it('an upstream that refuses connections -> 502 problem+json, and it keeps serving', async () => {
      const r = await get(s.url, '/down/x');
      assert.equal(r.status, 502);
      assert.equal(r.headers['content-type'], 'application/problem+json');
      assert.equal((await get(s.url, '/api/again')).status, 200);
    });

    it('a client that leaves mid-body aborts the upstream request (its connection closes)', async () => {
      const url = new URL('/api/endless', s.url);
      await new Promise<void>((resolve, reject) => {
        const req = request(url, { agent: false }, (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        });
        req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
        req.end();
      });
      await endlessClosed;
    });

    it('no head within headersMs -> 504', async () => {
      const r = await get(s.url, '/slow/silent');
      assert.equal(r.status, 504);
    });
  });
}
