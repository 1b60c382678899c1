// gatehouse-http/express in a real Express 5 app on 127.0.0.1:0: Gatehouse's answers, what it passes on
// (untouched, to the app's own routes and body parser), the proxy with a real upstream, WebSockets on the
// app's server, and the config errors of the CLI.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import express from 'express';
import { gatehouse } from '../../src/adapters/express.js';
import { ConfigError } from '../../src/config/load.js';
import { get, makeSite, removeSite } from '../helpers/http.js';
import { echoOnce } from '../helpers/ws-peer.js';

const listen = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
const closeServer = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe('gatehouse-http/express in an Express 5 app', () => {
  let dir: string;
  let upstream: Server;
  let upstreamHits = 0;
  let server: Server;
  let base: string;
  let mw: ReturnType<typeof gatehouse>;
  const seenByApp: string[] = [];

  before(async () => {
    dir = makeSite({
      'index.html': '<!doctype html><title>home</title>',
      'assets/app-3f2a9c1b.js': 'export const a = 1;\n'.repeat(100),
      '.env': 'SECRET=1',
      'notes.txt': 'hello from the folder',
    });
    upstream = createServer((req, res) => {
      upstreamHits++;
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end(`upstream ${req.url}`);
    });
    const upstreamUrl = await listen(upstream);
    mw = gatehouse({
      root: dir,
      log: { format: 'off' },
      proxy: [{ prefix: '/up', upstream: upstreamUrl }],
      websocket: [{ path: '/ws', mode: 'echo' }],
    });
    const app = express();
    app.use(mw);
    app.use(express.json());
    app.post('/api/echo', (req, res) => {
      res.json({ got: req.body });
    });
    app.use((req, res) => {
      seenByApp.push(req.url);
      res.status(404).type('text/plain').send(`app 404 ${req.url}`);
    });
    server = mw.attach(createServer(app));
    base = await listen(server);
  });
  after(async () => {
    await closeServer(server);
    await mw.close();
    await closeServer(upstream);
    removeSite(dir);
  });

  it('serves a file with its validators and cache policy; 304 and 206 from the same file', async () => {
    const r = await get(base, '/assets/app-3f2a9c1b.js');
    assert.equal(r.status, 200);
    assert.match(r.headers['cache-control']!, /immutable/);
    assert.ok(r.headers.etag);
    const c = await get(base, '/assets/app-3f2a9c1b.js', { headers: { 'if-none-match': r.headers.etag! } });
    assert.equal(c.status, 304);
    const p = await get(base, '/notes.txt', { headers: { range: 'bytes=0-4' } });
    assert.equal(p.status, 206);
    assert.equal(p.body.toString(), 'hello');
    const h = await get(base, '/notes.txt', { method: 'HEAD' });
    assert.equal(h.status, 200);
    assert.equal(h.body.length, 0);
    assert.equal(h.headers['content-length'], String('hello from the folder'.length));
  });

  it('passes a path with no file to the app, with the target it came with', async () => {
    const before = seenByApp.length;
    const r = await get(base, '/nothing/%7Ehere');
    assert.equal(r.status, 404);
    assert.equal(r.body.toString(), 'app 404 /nothing/%7Ehere');
    assert.deepEqual(seenByApp.slice(before), ['/nothing/%7Ehere']);
  });

  it('passes other methods to the app, body unread (its own parser reads it)', async () => {
    const r = await get(base, '/api/echo', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ n: 42 }),
    });
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.body.toString()), { got: { n: 42 } });
  });

  it("does not pass on what it refuses: a dotfile is its 404, never the app's", async () => {
    const before = seenByApp.length;
    const r = await get(base, '/.env');
    assert.equal(r.status, 404);
    assert.equal(r.headers['content-type'], 'application/problem+json');
    assert.equal(seenByApp.length, before);
  });

  it('proxies its prefix to the upstream', async () => {
    const hits = upstreamHits;
    const r = await get(base, '/up/x');
    assert.equal(r.status, 200);
    assert.equal(r.body.toString(), 'upstream /x');
    assert.equal(upstreamHits, hits + 1);
  });

  it('answers WebSocket handshakes on the app server after attach()', async () => {
    assert.equal(await echoOnce(`${base.replace('http', 'ws')}/ws`, 'ping'), 'ping');
  });

  it('with fallthrough: false answers a missing path and a POST itself; the app never sees them', async () => {
    const own = gatehouse({ root: dir, log: { format: 'off' } }, { fallthrough: false });
    const app = express();
    let seen = 0;
    app.use(own);
    app.use((_req, res) => {
      seen++;
      res.status(418).end();
    });
    const s = createServer(app);
    const url = await listen(s);
    try {
      const missing = await get(url, '/nothing/here');
      assert.equal(missing.status, 404);
      assert.equal(missing.headers['content-type'], 'application/problem+json');
      assert.equal((await get(url, '/notes.txt', { method: 'POST', body: 'x' })).status, 405);
      // Found files are answered either way: the app is reached by nothing.
      assert.equal((await get(url, '/notes.txt')).status, 200);
      assert.equal(seen, 0);
    } finally {
      await closeServer(s);
      await own.close();
    }
  });

  it("refuses a bad config with the CLI's ConfigError", () => {
    assert.throws(() => gatehouse({ root: dir, limits: { maxUrlBytes: -1 } } as never), ConfigError);
  });
});
