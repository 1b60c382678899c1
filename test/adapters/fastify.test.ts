// gatehouse-http/fastify in a real Fastify 5 app on 127.0.0.1:0: Gatehouse's answers, what it passes on
// to Fastify's routes (body parsed by Fastify), Fastify's own 404, the prefix option, the proxy with a real
// upstream, WebSockets on Fastify's server, the CLI's config errors and fastify.close().
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { gatehouse } from '../../src/adapters/fastify.js';
import { get, makeSite, removeSite } from '../helpers/http.js';
import { echoOnce } from '../helpers/ws-peer.js';

const listen = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );

describe('gatehouse-http/fastify in a Fastify 5 app', () => {
  let dir: string;
  let upstream: Server;
  let upstreamHits = 0;
  let app: FastifyInstance;
  let base: string;
  const routeHits: string[] = [];

  before(async () => {
    dir = makeSite({
      'assets/app-3f2a9c1b.js': 'export const a = 1;\n'.repeat(100),
      'notes.txt': 'hello from the folder',
      '.env': 'SECRET=1',
    });
    upstream = createServer((req, res) => {
      upstreamHits++;
      res.end(`upstream ${req.url}`);
    });
    const upstreamUrl = await listen(upstream);
    app = Fastify({ logger: false });
    await app.register(gatehouse, {
      root: dir,
      log: { format: 'off' },
      proxy: [{ prefix: '/up', upstream: upstreamUrl }],
      websocket: [{ path: '/ws', mode: 'echo' }],
    });
    app.post('/api/echo', async (req) => {
      routeHits.push(req.url);
      return { got: req.body };
    });
    app.get('/api/hello', async (req) => {
      routeHits.push(req.url);
      return { hello: true };
    });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await app.close();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
    removeSite(dir);
  });

  it('serves a file with its validators and cache policy; 304, 206 and HEAD', async () => {
    const r = await get(base, '/assets/app-3f2a9c1b.js');
    assert.equal(r.status, 200);
    assert.match(r.headers['cache-control']!, /immutable/);
    const c = await get(base, '/assets/app-3f2a9c1b.js', { headers: { 'if-none-match': r.headers.etag! } });
    assert.equal(c.status, 304);
    const p = await get(base, '/notes.txt', { headers: { range: 'bytes=6-9' } });
    assert.equal(p.status, 206);
    assert.equal(p.body.toString(), 'from');
    const h = await get(base, '/notes.txt', { method: 'HEAD' });
    assert.equal(h.status, 200);
    assert.equal(h.body.length, 0);
  });

  it("passes Fastify's own routes on: a GET with no file, a POST whose body Fastify parses", async () => {
    const before = routeHits.length;
    const g = await get(base, '/api/hello');
    assert.equal(g.status, 200);
    assert.deepEqual(JSON.parse(g.body.toString()), { hello: true });
    const p = await get(base, '/api/echo', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ n: 7 }),
    });
    assert.equal(p.status, 200);
    assert.deepEqual(JSON.parse(p.body.toString()), { got: { n: 7 } });
    assert.deepEqual(routeHits.slice(before), ['/api/hello', '/api/echo']);
  });

  it("a path nothing claims gets Fastify's own 404; a dotfile gets Gatehouse's", async () => {
    const r = await get(base, '/nothing/here');
    assert.equal(r.status, 404);
    assert.match(r.headers['content-type']!, /^application\/json/);
    assert.match(r.body.toString(), /Route GET:\/nothing\/here not found/);
    const d = await get(base, '/.env');
    assert.equal(d.status, 404);
    assert.equal(d.headers['content-type'], 'application/problem+json');
  });

  it('proxies its prefix to the upstream', async () => {
    const hits = upstreamHits;
    const r = await get(base, '/up/x');
    assert.equal(r.body.toString(), 'upstream /x');
    assert.equal(upstreamHits, hits + 1);
  });

  it("answers WebSocket handshakes on Fastify's server", async () => {
    assert.equal(await echoOnce(`${base.replace('http', 'ws')}/ws`, 'ping'), 'ping');
  });

  it("refuses a bad config at register with the CLI's ConfigError", async () => {
    const bad = Fastify({ logger: false });
    await assert.rejects(
      async () => {
        await bad.register(gatehouse, { root: dir, limits: { maxUrlBytes: -1 } } as never);
      },
      (err: Error) => err.name === 'ConfigError' && /limits\.maxUrlBytes/.test(err.message),
    );
    await bad.close();
  });
});

describe('gatehouse-http/fastify with a prefix', () => {
  let dir: string;
  let app: FastifyInstance;
  let base: string;

  before(async () => {
    dir = makeSite({ 'notes.txt': 'prefixed' });
    app = Fastify({ logger: false });
    await app.register(gatehouse, { root: dir, log: { format: 'off' }, prefix: '/static' });
    app.get('/notes.txt', async () => 'the route, not the file');
    app.get('/static/missing', async (req) => `route saw ${req.url}`);
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await app.close();
    removeSite(dir);
  });

  it('serves the folder under the prefix and leaves other paths to Fastify', async () => {
    assert.equal((await get(base, '/static/notes.txt')).body.toString(), 'prefixed');
    assert.equal((await get(base, '/notes.txt')).body.toString(), 'the route, not the file');
    assert.equal((await get(base, '/staticx/notes.txt')).status, 404);
  });

  it('what it passes on keeps its whole path', async () => {
    assert.equal((await get(base, '/static/missing')).body.toString(), 'route saw /static/missing');
  });
});
