// gatehouse-http/koa in a real Koa 3 app and gatehouse-http/hono in a real Hono app on @hono/node-server,
// on 127.0.0.1:0, with the same checks: Gatehouse's answers (200 with validators, 304, 206), what it
// passes on (the app's routes, a POST body the app reads itself), the app's own 404, a dotfile refused by
// Gatehouse, the proxy with a real upstream, and WebSockets through attach().
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import Koa from 'koa';
import { gatehouse as honoGatehouse } from '../../src/adapters/hono.js';
import { gatehouse as koaGatehouse } from '../../src/adapters/koa.js';
import { get, makeSite, removeSite } from '../helpers/http.js';
import { echoOnce } from '../helpers/ws-peer.js';

const address = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

/** Reads a request body (the app's own parsing, after Gatehouse passed the request on). */
const readBody = (req: NodeJS.ReadableStream) =>
  new Promise<string>((resolve) => {
    let s = '';
    req.on('data', (d) => {
      s += d;
    });
    req.on('end', () => resolve(s));
  });

interface Mounted {
  server: Server;
  close(): Promise<void>;
}

const apps: Record<string, (config: object) => Promise<Mounted>> = {
  koa: async (config) => {
    const mw = koaGatehouse(config);
    const app = new Koa();
    app.use(mw);
    app.use(async (ctx) => {
      if (ctx.path === '/api/echo' && ctx.method === 'POST')
        ctx.body = { got: JSON.parse(await readBody(ctx.req)) };
      else if (ctx.path === '/api/hello') ctx.body = { hello: true, url: ctx.url };
      // else Koa's own 404 ("Not Found")
    });
    const server = mw.attach(createServer(app.callback()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { server, close: () => mw.close() };
  },
  hono: async (config) => {
    const mw = honoGatehouse(config);
    const app = new Hono();
    app.use(mw);
    app.post('/api/echo', async (c) => c.json({ got: await c.req.json() }));
    app.get('/api/hello', (c) => c.json({ hello: true, url: new URL(c.req.url).pathname }));
    const server = await new Promise<Server>((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s as Server));
    });
    mw.attach(server);
    return { server, close: () => mw.close() };
  },
};

for (const [name, mount] of Object.entries(apps)) {
  describe(`gatehouse-http/${name}`, () => {
    let dir: string;
    let upstream: Server;
    let upstreamHits = 0;
    let m: Mounted;
    let base: string;

    before(async () => {
      dir = makeSite({ 'notes.txt': 'hello from the folder', '.env': 'SECRET=1' });
      upstream = createServer((req, res) => {
        upstreamHits++;
        res.end(`upstream ${req.url}`);
      });
      await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
      m = await mount({
        root: dir,
        log: { format: 'off' },
        proxy: [{ prefix: '/up', upstream: address(upstream) }],
        websocket: [{ path: '/ws', mode: 'echo' }],
      });
      base = address(m.server);
    });
    after(async () => {
      m.server.closeAllConnections();
      await new Promise<void>((resolve) => m.server.close(() => resolve()));
      await m.close();
      await new Promise<void>((resolve) => upstream.close(() => resolve()));
      removeSite(dir);
    });

    it('serves a file with its validators; 304 and 206', async () => {
      const r = await get(base, '/notes.txt');
      assert.equal(r.status, 200);
      assert.equal(r.body.toString(), 'hello from the folder');
      assert.ok(r.headers.etag);
      const c = await get(base, '/notes.txt', { headers: { 'if-none-match': r.headers.etag! } });
      assert.equal(c.status, 304);
      const p = await get(base, '/notes.txt', { headers: { range: 'bytes=0-4' } });
      assert.equal(p.status, 206);
      assert.equal(p.body.toString(), 'hello');
    });

    it("passes the app's routes on, the body unread", async () => {
      const h = await get(base, '/api/hello');
      assert.equal(h.status, 200);
      assert.equal(JSON.parse(h.body.toString()).hello, true);
      const p = await get(base, '/api/echo', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ n: 3 }),
      });
      assert.equal(p.status, 200);
      assert.deepEqual(JSON.parse(p.body.toString()), { got: { n: 3 } });
    });

    it("a path nothing claims gets the app's 404; a dotfile gets Gatehouse's", async () => {
      const r = await get(base, '/nothing');
      assert.equal(r.status, 404);
      assert.notEqual(r.headers['content-type'], 'application/problem+json');
      const d = await get(base, '/.env');
      assert.equal(d.status, 404);
      assert.equal(d.headers['content-type'], 'application/problem+json');
    });

    it('proxies its prefix to the upstream', async () => {
      const hits = upstreamHits;
      assert.equal((await get(base, '/up/x')).body.toString(), 'upstream /x');
      assert.equal(upstreamHits, hits + 1);
    });

    it('answers WebSocket handshakes after attach()', async () => {
      assert.equal(await echoOnce(`${base.replace('http', 'ws')}/ws`, 'ping'), 'ping');
    });
  });
}
