// Attack: WebSocket handshakes outside the mount. Gatehouse mounted under /static in a real Express 5,
// Fastify 5, Koa 3 or Hono app must take only the handshakes below /static (with /static stripped, as the
// app's router strips it from requests) and leave every other one to the app's own 'upgrade' listener,
// untouched: no Gatehouse endpoint answering at the app's /ws, no proxy route tunnelling the app's own
// /internal* or / handshakes to its upstream. Real `ws` clients, a real `ws` server in the app, and real
// upstream WebSocket servers that count the handshakes they receive.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { serve } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import { preview } from 'vite';
import { WebSocket, WebSocketServer } from 'ws';
import { gatehouse as expressGatehouse, findExpressMount } from '../../src/adapters/express.js';
import gatehouseFastify from '../../src/adapters/fastify.js';
import { gatehouse as honoGatehouse } from '../../src/adapters/hono.js';
import { gatehouse as koaGatehouse } from '../../src/adapters/koa.js';
import { gatehouse as viteGatehouse } from '../../src/adapters/vite.js';
import type { GatehouseConfigInput } from '../../src/config/schema.js';
import { belowMount, normalMount } from '../../src/server/index.js';
import type { Logger } from '../../src/server/ops/log.js';
import { get, makeSite, removeSite } from '../helpers/http.js';
import { WAIT_DEADLINE_MS } from '../helpers/wait.js';

const listen = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
/** Every socket `server` accepted, upgraded or not (server.close() waits for those too). */
const accepted = new WeakMap<Server, Set<Socket>>();
function track(server: Server): void {
  const sockets = new Set<Socket>();
  accepted.set(server, sockets);
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
}
/** Closes `server`, destroying what is still open: a handshake left hanging fails its test, not the file. */
const closeServer = (server: Server) =>
  new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
    for (const s of accepted.get(server) ?? []) s.destroy();
  });

/** What a handshake got: a WebSocket (and the first message back), an HTTP answer, or an error. */
type Outcome = { open: string } | { status: number; body: string } | { error: string };

/**
 * Opens a WebSocket to `path`, sends "ping" and closes after the first message. A handshake nobody
 * answers fails after the shared deadline (it only turns a hang into a failure).
 */
function attempt(base: string, path: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${base.replace('http', 'ws')}${path}`, { handshakeTimeout: WAIT_DEADLINE_MS });
    ws.once('open', () => ws.send('ping'));
    ws.once('message', (d) => {
      resolve({ open: String(d) });
      ws.close();
    });
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', (e) => resolve({ error: e.message }));
    });
    ws.once('error', (e) => resolve({ error: e.message }));
  });
}

/** A real upstream WebSocket server that counts the handshakes it receives and names the target. */
interface Upstream {
  url: string;
  seen: string[];
  close(): Promise<void>;
}
async function upstream(name: string): Promise<Upstream> {
  const seen: string[] = [];
  const wss = new WebSocketServer({ noServer: true });
  const server = createServer((_req, res) => {
    res.writeHead(404).end();
  });
  server.on('upgrade', (req, socket, head) => {
    seen.push(req.url!);
    wss.handleUpgrade(req, socket, head, (ws) =>
      ws.on('message', (m) => ws.send(`${name} ${req.url}: ${String(m)}`)),
    );
  });
  const url = await listen(server);
  return {
    url,
    seen,
    close: async () => {
      for (const c of wss.clients) c.terminate();
      await closeServer(server);
    },
  };
}

/**
 * The app's own 'upgrade' listener, as an app with its own WebSockets has one: it completes every
 * handshake outside /static itself with `ws` (which fails on a socket someone else wrote to, read from or
 * destroyed) and records it.
 */
function appWebSockets(server: Pick<Server, 'on'>): { seen: string[]; close(): void } {
  const seen: string[] = [];
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = req.url!;
    if (url === '/static' || url.startsWith('/static/') || url.startsWith('/static?')) return;
    seen.push(url);
    wss.handleUpgrade(req, socket, head, (ws) =>
      ws.on('message', (m) => ws.send(`app ${url}: ${String(m)}`)),
    );
  });
  return {
    seen,
    close: () => {
      for (const c of wss.clients) c.terminate();
    },
  };
}

/** Gatehouse under /static in one framework's app; the app's own WebSockets listen after it. */
interface App {
  base: string;
  server: Server;
  /** The handshakes the app's own listener completed (none without it). */
  appSeen: readonly string[];
  close(): Promise<void>;
}
type Mount = (config: GatehouseConfigInput, withAppListener: boolean) => Promise<App>;

/** The app's answer to what it is passed (and to the handshakes read again as requests). */
const APP_404 = (url: string) => `app http ${url}`;

/**
 * Express with `app.use('/static', gh)` (or through a Router): `gh.attach(server)` with no mountPath, so
 * the mount is read from Express's router, or `attach(server, { mountPath: '/static' })` (explicit).
 */
function expressMount(how: 'found' | 'router' | 'explicit'): Mount {
  return async (config, withAppListener) => {
    const gh = expressGatehouse(config);
    const app = express();
    if (how === 'router') {
      const router = express.Router();
      router.use('/static', gh);
      app.use(router);
    } else app.use('/static', gh);
    app.use((req, res) => {
      res.status(404).type('text/plain').send(APP_404(req.originalUrl));
    });
    const server = createServer(app);
    if (how === 'explicit') gh.attach(server, { mountPath: '/static' });
    else gh.attach(server);
    track(server);
    const own = withAppListener ? appWebSockets(server) : undefined;
    const base = await listen(server);
    return {
      base,
      server,
      appSeen: own?.seen ?? [],
      close: async () => {
        own?.close();
        await closeServer(server);
        await gh.close();
      },
    };
  };
}

const MOUNTS: Record<'express' | 'express-router' | 'express-explicit' | 'fastify' | 'koa' | 'hono', Mount> =
  {
    express: expressMount('found'),
    'express-router': expressMount('router'),
    'express-explicit': expressMount('explicit'),
    async fastify(config, withAppListener) {
      const app = Fastify({ logger: false });
      await app.register(gatehouseFastify, { ...config, prefix: '/static' });
      app.setNotFoundHandler((req, reply) => {
        reply.code(404).type('text/plain').send(APP_404(req.url));
      });
      track(app.server);
      const own = withAppListener ? appWebSockets(app.server) : undefined;
      await app.listen({ port: 0, host: '127.0.0.1' });
      return {
        base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
        server: app.server,
        appSeen: own?.seen ?? [],
        close: async () => {
          own?.close();
          app.server.closeAllConnections();
          for (const sock of accepted.get(app.server) ?? []) sock.destroy();
          await app.close();
        },
      };
    },
    async koa(config, withAppListener) {
      const gh = koaGatehouse(config);
      const app = new Koa();
      // A mount as koa-mount makes it: ctx.path (and so req.url) without the prefix below it.
      app.use(async (ctx, next) => {
        const prev = ctx.path;
        if (prev !== '/static' && !prev.startsWith('/static/')) return next();
        ctx.path = prev.slice('/static'.length) || '/';
        try {
          await gh(ctx, async () => {
            ctx.path = prev;
            await next();
          });
        } finally {
          ctx.path = prev;
        }
      });
      app.use((ctx) => {
        ctx.status = 404;
        ctx.type = 'text/plain';
        ctx.body = APP_404(ctx.url);
      });
      const server = gh.attach(createServer(app.callback()), { mountPath: '/static' });
      track(server);
      const own = withAppListener ? appWebSockets(server) : undefined;
      const base = await listen(server);
      return {
        base,
        server,
        appSeen: own?.seen ?? [],
        close: async () => {
          own?.close();
          await closeServer(server);
          await gh.close();
        },
      };
    },
    async hono(config, withAppListener) {
      const gh = honoGatehouse(config, { mountPath: '/static' });
      const app = new Hono();
      app.use(gh);
      app.notFound((c) => c.text(APP_404(new URL(c.req.url).pathname), 404));
      let server: Server | undefined;
      const port = new Promise<number>((resolve) => {
        server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
          resolve(info.port),
        ) as Server;
      });
      const s = server as unknown as Server;
      track(s);
      gh.attach(s);
      const own = withAppListener ? appWebSockets(s) : undefined;
      const base = `http://127.0.0.1:${await port}`;
      return {
        base,
        server: s,
        appSeen: own?.seen ?? [],
        close: async () => {
          own?.close();
          await closeServer(s);
          await gh.close();
        },
      };
    },
  };

for (const [name, mount] of Object.entries(MOUNTS)) {
  describe(`handshakes through ${name}, Gatehouse mounted under /static`, () => {
    let dir: string;
    let internal: Upstream;
    let everything: Upstream;

    before(async () => {
      dir = makeSite({ 'notes.txt': 'hello from the folder' });
      internal = await upstream('internal');
      everything = await upstream('root');
    });
    after(async () => {
      await internal.close();
      await everything.close();
      removeSite(dir);
    });

    /** An echo endpoint at /ws, a proxy route /internal and a proxy route / (every other path). */
    const config = (): GatehouseConfigInput => ({
      root: dir,
      log: { format: 'off' },
      websocket: [{ path: '/ws', mode: 'echo' }],
      proxy: [
        { prefix: '/internal', upstream: internal.url },
        { prefix: '/', upstream: everything.url },
      ],
    });

    it(`attack: handshake outside the mount (${name}): the app's own /ws, /internal* and / handshakes reach the app's listener untouched, none is tunnelled`, async () => {
      const app = await mount(config(), true);
      try {
        // The app's own WebSockets, Gatehouse's listener registered before the app's.
        const own = ['/ws', '/internal', '/internal/chat?room=1', '/chat', '/statics/ws', '/'];
        for (const path of own)
          assert.deepEqual(await attempt(app.base, path), { open: `app ${path}: ping` }, path);
        // Gatehouse's, below the mount and seen without it.
        assert.deepEqual(await attempt(app.base, '/static/ws'), { open: 'ping' });
        assert.deepEqual(await attempt(app.base, '/static/internal/chat?room=1'), {
          open: 'internal /chat?room=1: ping',
        });
        assert.deepEqual(await attempt(app.base, '/static/chat'), { open: 'root /chat: ping' });
        assert.deepEqual(await attempt(app.base, '/static'), { open: 'root /: ping' });
        // What reached each upstream (the route's prefix stripped, stripPrefix's default): only the
        // handshakes below the mount.
        assert.deepEqual(internal.seen, ['/chat?room=1']);
        assert.deepEqual(everything.seen, ['/chat', '/']);
        // And what reached the app's own listener: each of its handshakes once, none of Gatehouse's.
        assert.deepEqual(app.appSeen, own);
      } finally {
        await app.close();
        internal.seen.length = 0;
        everything.seen.length = 0;
      }
    });

    it(`attack: handshake outside the mount (${name}) with Gatehouse the only 'upgrade' listener: read as a plain request by the app, as Node does with no listener`, async () => {
      const app = await mount(
        { root: dir, log: { format: 'off' }, websocket: [{ path: '/ws', mode: 'echo' }] },
        false,
      );
      try {
        // Outside the mount: the app's own answer, with the whole path, Upgrade ignored (RFC 9110 §7.8).
        assert.deepEqual(await attempt(app.base, '/ws'), { status: 404, body: APP_404('/ws') });
        // Inside it, a path with no endpoint: served as a request by Gatehouse (the file, Upgrade ignored).
        assert.deepEqual(await attempt(app.base, '/static/notes.txt'), {
          status: 200,
          body: 'hello from the folder',
        });
        assert.deepEqual(await attempt(app.base, '/static/ws'), { open: 'ping' });
        // The connection the ignored Upgrade came on still serves requests.
        assert.equal((await get(app.base, '/static/notes.txt')).status, 200);
      } finally {
        await app.close();
      }
    });
  });
}

describe('gatehouse-http/express: the mount path given to attach() and the one Express routes at', () => {
  it('warns once when attach() was given another mount path than req.baseUrl; none when it was found', async () => {
    const warnings: string[] = [];
    const logger: Logger = {
      info() {},
      warn: (_o, m) => warnings.push(String(m)),
      error() {},
      isLevelEnabled: () => true,
    };
    const dir = makeSite({ 'notes.txt': 'hello' });
    const gh = expressGatehouse({ root: dir, log: { format: 'off' } }, { logger });
    const app = express();
    app.use('/static', gh);
    const server = gh.attach(createServer(app), { mountPath: '/assets' });
    const base = await listen(server);
    try {
      assert.equal((await get(base, '/static/notes.txt')).status, 200);
      assert.equal((await get(base, '/static/notes.txt')).status, 200);
      assert.equal(warnings.length, 1);
      assert.match(
        warnings[0]!,
        /mounted at "\/static" but .* taken at "\/assets".*attach\(server, \{ mountPath: "\/static" \}\)/,
      );
    } finally {
      await closeServer(server);
      await gh.close();
      removeSite(dir);
    }
  });
});

describe('gatehouse-http/express: attach(server) with no mountPath finds the mount', () => {
  it('app.use("/static", gh): no warning, and handshakes are taken below /static only', async () => {
    const warnings: string[] = [];
    const logger: Logger = {
      info() {},
      warn: (_o, m) => warnings.push(String(m)),
      error() {},
      isLevelEnabled: () => true,
    };
    const dir = makeSite({ 'notes.txt': 'hello' });
    const gh = expressGatehouse(
      { root: dir, log: { format: 'off' }, websocket: [{ path: '/ws', mode: 'echo' }] },
      { logger },
    );
    const app = express();
    app.use('/static', gh);
    app.use((req, res) => {
      res.status(404).type('text/plain').send(APP_404(req.originalUrl));
    });
    const server = gh.attach(createServer(app));
    track(server);
    const base = await listen(server);
    try {
      assert.equal((await get(base, '/static/notes.txt')).status, 200);
      assert.deepEqual(warnings, []);
      assert.deepEqual(await attempt(base, '/static/ws'), { open: 'ping' });
      assert.deepEqual(await attempt(base, '/ws'), { status: 404, body: APP_404('/ws') });
    } finally {
      await closeServer(server);
      await gh.close();
      removeSite(dir);
    }
  });
});

describe('two Gatehouse mounts on one server (the Fastify plugin registered under two prefixes)', () => {
  it('each takes the handshakes below its own prefix; an Upgrade neither takes is read again once, by the app', async () => {
    const dir = makeSite({ 'a.txt': 'from a' });
    const app = Fastify({ logger: false });
    track(app.server);
    const hits: string[] = [];
    app.addHook('onRequest', async (req) => {
      hits.push(req.url);
    });
    for (const prefix of ['/a', '/b'])
      await app.register(gatehouseFastify, {
        root: dir,
        log: { format: 'off' },
        prefix,
        websocket: [{ path: '/ws', mode: prefix === '/a' ? 'echo' : 'broadcast' }],
      });
    app.setNotFoundHandler((req, reply) => {
      reply.code(404).type('text/plain').send(APP_404(req.url));
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    try {
      assert.equal(app.server.listenerCount('upgrade'), 2);
      assert.deepEqual(await attempt(base, '/a/ws'), { open: 'ping' });
      // The broadcast endpoint at /b/ws: the sender does not get its own message back, so only the
      // handshake is checked here.
      const b = new WebSocket(`${base.replace('http', 'ws')}/b/ws`);
      await new Promise<void>((resolve, reject) => {
        b.once('open', () => resolve());
        b.once('error', reject);
      });
      b.close();
      hits.length = 0;
      assert.deepEqual(await attempt(base, '/c/ws'), { status: 404, body: APP_404('/c/ws') });
      assert.deepEqual(await attempt(base, '/a/a.txt'), { status: 200, body: 'from a' });
      // Each read again exactly once (two would be two requests, or a garbled connection).
      assert.deepEqual(hits, ['/c/ws', '/a/a.txt']);
    } finally {
      for (const s of accepted.get(app.server) ?? []) s.destroy();
      await app.close();
      removeSite(dir);
    }
  });
});

describe("handshakes through vite preview, Gatehouse at Vite's base /app/ beside Vite's own WebSocket proxy", () => {
  it("attack: handshake outside the mount (vite): Vite's proxied /app/vws handshakes reach Vite's proxy untouched, none is tunnelled by Gatehouse's proxy route /", async () => {
    const dir = makeSite({ 'dist/index.html': '<!doctype html><title>vite app</title>' });
    const ours = await upstream('gatehouse-upstream');
    const vites = await upstream('vite-upstream');
    const at = await preview({
      root: dir,
      configFile: false,
      logLevel: 'silent',
      base: '/app/',
      preview: {
        host: '127.0.0.1',
        port: 0,
        proxy: { '/app/vws': { target: vites.url, ws: true } },
      },
      plugins: [
        viteGatehouse({
          log: { format: 'off' },
          websocket: [{ path: '/ws', mode: 'echo' }],
          proxy: [{ prefix: '/', upstream: ours.url }],
        }),
      ],
    });
    const server = at.httpServer as Server;
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      assert.deepEqual(await attempt(base, '/app/ws'), { open: 'ping' });
      assert.deepEqual(await attempt(base, '/app/chat'), { open: 'gatehouse-upstream /chat: ping' });
      assert.deepEqual(await attempt(base, '/app/vws/x'), { open: 'vite-upstream /app/vws/x: ping' });
      // What reached each upstream: Gatehouse's route only its own path, Vite's proxy only its own.
      assert.deepEqual(ours.seen, ['/chat']);
      assert.deepEqual(vites.seen, ['/app/vws/x']);
    } finally {
      await at.close();
      await ours.close();
      await vites.close();
      removeSite(dir);
    }
  });
});

describe('belowMount / normalMount: the mount a mounted handler scopes requests and handshakes to', () => {
  const cases: [url: string, mount: string, inner: string | undefined][] = [
    ['/ws', '', '/ws'],
    ['/static/ws', '/static', '/ws'],
    ['/static', '/static', '/'],
    ['/static?x=1', '/static', '/?x=1'],
    ['/static/', '/static', '/'],
    ['/statics/ws', '/static', undefined],
    ['/ws', '/static', undefined],
    ['/Static/ws', '/static', undefined],
    ['/%73tatic/ws', '/static', undefined],
    ['http://a/static/ws', '/static', undefined],
    ['/static/../ws', '/static', '/../ws'],
  ];
  for (const [url, mount, inner] of cases)
    it(`${url} under "${mount}" -> ${inner ?? 'outside'}`, () => assert.equal(belowMount(url, mount), inner));
  it('normalises a mount path and refuses what is not a path', () => {
    assert.equal(normalMount(undefined), '');
    assert.equal(normalMount(''), '');
    assert.equal(normalMount('/'), '');
    assert.equal(normalMount('/static/'), '/static');
    assert.equal(normalMount('/a/b'), '/a/b');
    for (const bad of ['static', '/a?b', '/a#b', '/a b', 'http://x/a'])
      assert.throws(() => normalMount(bad), TypeError, bad);
  });
});

describe('findExpressMount: the path Express 5 mounted a middleware at', () => {
  it('app.use(path), through nested routers, the root, and not found', () => {
    const fn = () => {};
    const app = express();
    const inner = express.Router();
    inner.use('/assets/', fn);
    app.use('/v1', inner);
    assert.equal(findExpressMount([app], fn), '/v1/assets');
    const root = express();
    root.use(fn);
    assert.equal(findExpressMount([root], fn), '/');
    assert.equal(findExpressMount([express()], fn), undefined);
    assert.equal(findExpressMount([() => {}], fn), undefined);
  });
});
