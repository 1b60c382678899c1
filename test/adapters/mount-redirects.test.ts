// Gatehouse mounted under /app in a real Express 5, Fastify 5, Koa 3 and Hono app: every path-only
// Location it sends (a folder's slash, trailingSlash, indexRedirect, a `redirects` rule, a route's reply)
// carries the mount path, and /app itself redirects to /app/ where the index would be served, as
// serve-static does (RFC 9110 §15.4.2: the page's relative URLs resolve against /app/). What Gatehouse
// passes on is the app's: its own Location is left as it is.
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { serve } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import { gatehouse as expressGatehouse } from '../../src/adapters/express.js';
import gatehouseFastify from '../../src/adapters/fastify.js';
import { gatehouse as honoGatehouse } from '../../src/adapters/hono.js';
import { gatehouse as koaGatehouse } from '../../src/adapters/koa.js';
import type { GatehouseConfigInput } from '../../src/config/schema.js';
import type { GatehouseDeps } from '../../src/node.js';
import { normalMount } from '../../src/server/index.js';
import { reply } from '../../src/server/routes/reply.js';
import { get, makeSite, removeSite } from '../helpers/http.js';

const listen = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
const closing = (server: Server) =>
  new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });

/** An app with Gatehouse under /app and routes of its own: /app/elsewhere (302 to /elsewhere), /app. */
interface MountedApp {
  base: string;
  /** Requests the app's own route answered. */
  reached: () => number;
  close(): Promise<void>;
}

/** An app on a node:http server: listening on 127.0.0.1 (unless it is already), closed with Gatehouse. */
async function mounted(
  server: Server,
  gh: { close(): Promise<void> },
  reached: () => number,
): Promise<MountedApp> {
  const base = server.listening
    ? `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    : await listen(server);
  return {
    base,
    reached,
    close: async () => {
      await closing(server);
      await gh.close();
    },
  };
}

type MountAt = (config: GatehouseConfigInput, deps: GatehouseDeps) => Promise<MountedApp>;

const MOUNTS: Record<'express' | 'fastify' | 'koa' | 'hono', MountAt> = {
  async express(config, deps) {
    let reached = 0;
    const gh = expressGatehouse(config, deps);
    const app = express();
    app.use('/app', gh);
    app.get('/app/elsewhere', (_req, res) => {
      reached++;
      res.redirect('/elsewhere');
    });
    app.get('/app', (_req, res) => {
      reached++;
      res.send('the app at /app');
    });
    return mounted(createServer(app), gh, () => reached);
  },
  async fastify(config, deps) {
    let reached = 0;
    const app = Fastify({ logger: false });
    await app.register(gatehouseFastify, { ...config, prefix: '/app', deps });
    app.get('/app/elsewhere', (_req, r) => {
      reached++;
      return r.redirect('/elsewhere');
    });
    app.get('/app', () => {
      reached++;
      return 'the app at /app';
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    return { base, reached: () => reached, close: () => app.close() };
  },
  async koa(config, deps) {
    let reached = 0;
    const gh = koaGatehouse(config, { ...deps, mountPath: '/app' });
    const app = new Koa();
    app.use(gh);
    app.use(async (ctx) => {
      if (ctx.path === '/app/elsewhere') {
        reached++;
        ctx.redirect('/elsewhere');
      } else if (ctx.path === '/app') {
        reached++;
        ctx.body = 'the app at /app';
      }
    });
    return mounted(createServer(app.callback()), gh, () => reached);
  },
  async hono(config, deps) {
    let reached = 0;
    const gh = honoGatehouse(config, { ...deps, mountPath: '/app' });
    const site = new Hono();
    site.use(gh);
    const app = new Hono();
    app.route('/app', site);
    app.get('/app/elsewhere', (c) => {
      reached++;
      return c.redirect('/elsewhere');
    });
    app.get('/app', (c) => {
      reached++;
      return c.text('the app at /app');
    });
    const server = await new Promise<Server>((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s as Server));
    });
    return mounted(server, gh, () => reached);
  },
};

const SITE = {
  'index.html':
    '<!doctype html><title>home</title><script type="module" src="assets/app-3f9a2b1c.js"></script>',
  'assets/app-3f9a2b1c.js': 'export {};\n',
  'docs/index.html': '<!doctype html><title>docs</title>',
};

const routes: GatehouseDeps['routes'] = [
  { path: '/make', handler: () => reply(201, { id: 1 }, { location: '/items/1' }) },
  { path: '/make-relative', handler: () => reply(201, { id: 2 }, { location: 'items/2' }) },
  {
    path: '/make-absolute',
    handler: () => reply(201, { id: 3 }, { location: 'https://example.com/items/3' }),
  },
];

/** Status and Location of a GET (or `method`) to `path`. */
async function redirectOf(base: string, path: string, method = 'GET') {
  const r = await get(base, path, { method });
  return { status: r.status, location: r.headers.location };
}

/** The Link of the 103 Early Hints a page navigation to `path` gets (RFC 8297), and the final status. */
function earlyHintsOf(base: string, path: string): Promise<{ status: number; links: string[] }> {
  return new Promise((resolve, reject) => {
    const links: string[] = [];
    const r = request(`${base}${path}`, { headers: { 'sec-fetch-mode': 'navigate' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, links }));
    });
    r.on('information', (info) => {
      if (info.statusCode === 103) links.push(String(info.headers.link));
    });
    r.on('error', reject);
    r.end();
  });
}

for (const [name, mountAt] of Object.entries(MOUNTS)) {
  describe(`${name}: Gatehouse mounted under /app`, () => {
    let dir: string;
    let m: MountedApp;
    before(async () => {
      dir = makeSite(SITE);
      m = await mountAt(
        {
          root: dir,
          log: { format: 'off' },
          static: { indexRedirect: true },
          redirects: [
            { from: '/old', to: '/new' },
            { from: '/gone', to: 'https://example.com/gone', status: 301 },
          ],
        },
        { routes },
      );
    });
    after(async () => {
      await m.close();
      removeSite(dir);
    });

    it("a folder's slash redirect carries the mount, query kept", async () => {
      assert.deepEqual(await redirectOf(m.base, '/app/assets'), { status: 301, location: '/app/assets/' });
      assert.deepEqual(await redirectOf(m.base, '/app/assets?v=1'), {
        status: 301,
        location: '/app/assets/?v=1',
      });
    });

    it('the mount without its slash redirects to /app/ (GET and HEAD, query kept); /app/ is the index', async () => {
      assert.deepEqual(await redirectOf(m.base, '/app'), { status: 301, location: '/app/' });
      assert.deepEqual(await redirectOf(m.base, '/app', 'HEAD'), { status: 301, location: '/app/' });
      assert.deepEqual(await redirectOf(m.base, '/app?x=1'), { status: 301, location: '/app/?x=1' });
      const page = await get(m.base, '/app/');
      assert.equal(page.status, 200);
      assert.match(page.text, /<title>home/);
    });

    it("the page's 103 Early Hints link its assets under the mount", async () => {
      assert.deepEqual(await earlyHintsOf(m.base, '/app/'), {
        status: 200,
        links: ['</app/assets/app-3f9a2b1c.js>; rel=modulepreload'],
      });
    });

    it('indexRedirect carries the mount', async () => {
      assert.deepEqual(await redirectOf(m.base, '/app/docs/index.html'), {
        status: 301,
        location: '/app/docs/',
      });
      assert.deepEqual(await redirectOf(m.base, '/app/index.html'), { status: 301, location: '/app/' });
      // The Location leads to the page.
      assert.match((await get(m.base, '/app/docs/')).text, /<title>docs/);
    });

    it('a redirects rule with a path-only target carries the mount; an absolute target is left alone', async () => {
      assert.deepEqual(await redirectOf(m.base, '/app/old'), { status: 308, location: '/app/new' });
      assert.deepEqual(await redirectOf(m.base, '/app/old?q=1'), { status: 308, location: '/app/new?q=1' });
      assert.deepEqual(await redirectOf(m.base, '/app/gone'), {
        status: 301,
        location: 'https://example.com/gone',
      });
    });

    it("a route's reply Location carries the mount (path-absolute and resolved relative); absolute is left alone", async () => {
      assert.deepEqual(await redirectOf(m.base, '/app/make'), { status: 201, location: '/app/items/1' });
      assert.deepEqual(await redirectOf(m.base, '/app/make-relative'), {
        status: 201,
        location: '/app/items/2',
      });
      assert.deepEqual(await redirectOf(m.base, '/app/make-absolute'), {
        status: 201,
        location: 'https://example.com/items/3',
      });
    });

    it("what Gatehouse passes on is the app's: its own Location is left as it is", async () => {
      const before = m.reached();
      assert.deepEqual(await redirectOf(m.base, '/app/elsewhere'), { status: 302, location: '/elsewhere' });
      assert.equal(m.reached() - before, 1);
    });
  });

  describe(`${name}: the proxy mounted under /app, rewriteLocation and rewriteCookies on`, () => {
    let upstream: Server;
    let upstreamBase: string;
    let reachedUpstream = 0;
    let m: MountedApp;
    before(async () => {
      upstream = createServer((req, res) => {
        reachedUpstream++;
        if (req.url === '/abs') res.writeHead(302, { location: `${upstreamBase}/next` });
        else if (req.url === '/path') res.writeHead(302, { location: '/next' });
        else res.writeHead(200, { 'set-cookie': 'sid=1; Path=/; HttpOnly' });
        res.end();
      });
      upstreamBase = await listen(upstream);
      m = await mountAt(
        {
          log: { format: 'off' },
          proxy: [{ prefix: '/api', upstream: upstreamBase, rewriteLocation: true, rewriteCookies: true }],
        },
        {},
      );
    });
    after(async () => {
      await m.close();
      await closing(upstream);
    });

    it("the upstream's absolute and path-only Locations and its cookie Path carry the mount", async () => {
      const before = reachedUpstream;
      assert.deepEqual(await redirectOf(m.base, '/app/api/abs'), {
        status: 302,
        location: `${m.base}/app/api/next`,
      });
      assert.deepEqual(await redirectOf(m.base, '/app/api/path'), { status: 302, location: '/app/api/next' });
      const c = await get(m.base, '/app/api/cookie');
      assert.deepEqual(c.headers['set-cookie'], ['sid=1; Path=/app/api; HttpOnly']);
      assert.equal(reachedUpstream - before, 3);
    });
  });

  describe(`${name}: Gatehouse mounted under /app, no index`, () => {
    let dir: string;
    let m: MountedApp;
    before(async () => {
      dir = makeSite({ 'assets/app-3f9a2b1c.js': SITE['assets/app-3f9a2b1c.js'] });
      m = await mountAt({ root: dir, log: { format: 'off' } }, {});
    });
    after(async () => {
      await m.close();
      removeSite(dir);
    });

    it('/app is passed on to the app, not redirected, when no index would be served', async () => {
      const before = m.reached();
      const r = await get(m.base, '/app');
      assert.equal(r.status, 200);
      assert.equal(r.headers.location, undefined);
      assert.equal(r.text, 'the app at /app');
      assert.equal(m.reached() - before, 1);
    });
  });

  for (const [mode, path, location] of [
    ['add', '/app/contact', '/app/contact/'],
    ['remove', '/app/contact/', '/app/contact'],
  ] as const) {
    describe(`${name}: Gatehouse mounted under /app, trailingSlash ${mode}`, () => {
      let dir: string;
      let m: MountedApp;
      before(async () => {
        dir = makeSite(SITE);
        m = await mountAt({ root: dir, log: { format: 'off' }, static: { trailingSlash: mode } }, {});
      });
      after(async () => {
        await m.close();
        removeSite(dir);
      });

      it(`trailingSlash ${mode} carries the mount; the mount itself still gets its slash`, async () => {
        assert.deepEqual(await redirectOf(m.base, path), { status: 301, location });
        assert.deepEqual(await redirectOf(m.base, '/app'), { status: 301, location: '/app/' });
        assert.equal((await get(m.base, '/app/')).status, 200);
      });
    });
  }
}

describe('the mountPath option of Koa and Hono', () => {
  const cases: [string, string | undefined, string | RegExp][] = [
    ['none: the root', undefined, ''],
    ["'/': the root", '/', ''],
    ['a path', '/app', '/app'],
    ['a trailing slash is dropped', '/app/', '/app'],
    ['nested', '/a/b', '/a/b'],
    ['no leading slash', 'app', /must be a path such as "\/app", not "app"/],
    ['protocol-relative', '//evil.example', /not "\/\/evil.example"/],
    ['a query', '/app?x', /not "\/app\?x"/],
    ['a backslash', '/\\evil.example', /must be a path/],
  ];
  for (const [name, given, expected] of cases) {
    it(`${name} -> ${typeof expected === 'string' ? JSON.stringify(expected) : 'TypeError'}`, () => {
      if (typeof expected === 'string') assert.equal(normalMount(given, 'mountPath'), expected);
      else assert.throws(() => normalMount(given, 'mountPath'), expected);
    });
  }

  it('a bad mountPath fails when the middleware is made', () => {
    assert.throws(
      () => koaGatehouse({}, { mountPath: 'app' }),
      /gatehouse-http\/koa: mountPath must be a path/,
    );
    assert.throws(
      () => honoGatehouse({}, { mountPath: 'app' }),
      /gatehouse-http\/hono: mountPath must be a path/,
    );
  });
});
