// Attack: a mounted Gatehouse passes a request it does not answer to the next middleware, which may be
// a static server of the same folder with none of its rules (Vite's preview serves any method, has no
// dotfile rule and follows symlinks; an app's express.static may follow). So a dotfile, Gatehouse's own
// files or a path whose real location is outside the root, asked for with any method (POST /.env), is
// refused by Gatehouse (404; 400 for a target above the root) and never passed on. Driven through a real
// `vite preview` (at the root and under `base: '/app/'`) and real Express 5, Fastify 5, Koa and Hono
// apps, each with a counting middleware after Gatehouse: what reaches it is counted and must be nothing.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { serve } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import { type Plugin, type PreviewServer, preview } from 'vite';
import { gatehouse as expressGatehouse } from '../../src/adapters/express.js';
import gatehouseFastify from '../../src/adapters/fastify.js';
import { gatehouse as honoGatehouse } from '../../src/adapters/hono.js';
import { gatehouse as koaGatehouse } from '../../src/adapters/koa.js';
import { gatehouse as viteGatehouse } from '../../src/adapters/vite.js';
import type { GatehouseConfigInput } from '../../src/config/schema.js';
import { get } from '../helpers/http.js';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'PROPFIND'] as const;
const WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'PROPFIND']);
/** Every secret below holds this; no answer may. */
const SECRET = 'SECRET-';

/** Paths the files refuse, with the status they get (for every method). */
const REFUSED: readonly [path: string, status: number][] = [
  ['/.env', 404],
  ['/%2eenv', 404],
  ['/%2Eenv', 404],
  ['/.git/config', 404],
  ['/%2egit/config', 404],
  ['/sub/.env', 404],
  ['/sub/%2eenv', 404],
  ['/.gatehouse-hashes.json', 404],
  ['/sub/.gatehouse-hashes.json', 404],
  // Symlinks in the root whose target is outside it.
  ['/link.txt', 404],
  ['/link.txt/', 404],
  ['/linkdir/secret.txt', 404],
  ['/linkdir/', 404],
  // A folder in the root whose index page is a symlink out of it.
  ['/idx/', 404],
  // Dot segments above the root (the request head refuses them).
  ['/../../outside/secret.txt', 400],
  ['/%2e%2e/%2e%2e/outside/secret.txt', 400],
];

/** The build folder (`dist`) with a public file, dotfiles, Gatehouse's manifest and symlinks out of it. */
function makeProject(): { dir: string; dist: string } {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-mount-leak-'));
  const outside = join(dir, 'outside');
  mkdirSync(join(outside, 'dir'), { recursive: true });
  writeFileSync(join(outside, 'secret.txt'), `${SECRET}outside\n`);
  writeFileSync(join(outside, 'dir', 'secret.txt'), `${SECRET}outside-dir\n`);
  writeFileSync(join(outside, 'dir', 'index.html'), `<p>${SECRET}outside-index</p>`);
  const dist = join(dir, 'project', 'dist');
  mkdirSync(join(dist, 'sub'), { recursive: true });
  mkdirSync(join(dist, '.git'));
  writeFileSync(join(dist, 'index.html'), '<!doctype html><title>app</title>');
  writeFileSync(join(dist, 'app.js'), 'export const app = 1;\n');
  writeFileSync(join(dist, '.env'), `TOKEN=${SECRET}dotenv\n`);
  writeFileSync(join(dist, 'sub', '.env'), `TOKEN=${SECRET}sub-dotenv\n`);
  writeFileSync(join(dist, '.git', 'config'), `[core] ${SECRET}git\n`);
  const manifest = JSON.stringify({ format: 'not-gatehouse', note: `${SECRET}manifest` });
  writeFileSync(join(dist, '.gatehouse-hashes.json'), manifest);
  writeFileSync(join(dist, 'sub', '.gatehouse-hashes.json'), manifest);
  symlinkSync(join(outside, 'secret.txt'), join(dist, 'link.txt'));
  symlinkSync(join(outside, 'dir'), join(dist, 'linkdir'));
  mkdirSync(join(dist, 'idx'));
  symlinkSync(join(outside, 'dir', 'index.html'), join(dist, 'idx', 'index.html'));
  return { dir, dist };
}

/** Every method to every refused path under `prefix`: the answers that are not the refusal. */
async function refusals(url: string, prefix: string): Promise<string[]> {
  const wrong: string[] = [];
  for (const [path, status] of REFUSED)
    for (const method of METHODS) {
      const r = await get(url, prefix + path, {
        method,
        headers: { 'content-type': 'text/plain', accept: '*/*' },
        ...(WITH_BODY.has(method) ? { body: 'x' } : {}),
      });
      if (r.status !== status || r.text.includes(SECRET))
        wrong.push(`${method} ${prefix}${path} -> ${r.status} ${r.text.slice(0, 60)}`);
    }
  return wrong;
}

const listen = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
const closeServer = (server: Server) =>
  new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });

describe('mounted Gatehouse: refused paths are refused for every method, never passed on', () => {
  let project: { dir: string; dist: string };
  before(() => {
    project = makeProject();
  });
  after(() => rmSync(project.dir, { recursive: true, force: true }));

  describe('vite preview with gatehouse-http/vite', () => {
    /** A `vite preview` of the project with the plugin, and a plugin after it that counts what reaches
     *  Vite's own middlewares (its static files, HTML fallback, 404). */
    async function startPreview(
      base: string,
      config: GatehouseConfigInput = { static: { spa: false } },
    ): Promise<{ server: PreviewServer; url: string; seen: string[] }> {
      const seen: string[] = [];
      const counter: Plugin = {
        name: 'count-what-is-passed-on',
        configurePreviewServer(server) {
          server.middlewares.use((req, _res, next) => {
            seen.push(`${req.method} ${req.url}`);
            next();
          });
        },
      };
      const server = await preview({
        root: join(project.dir, 'project'),
        configFile: false,
        logLevel: 'silent',
        base,
        preview: { host: '127.0.0.1', port: 0 },
        plugins: [viteGatehouse(config), counter],
      });
      const url = `http://127.0.0.1:${(server.httpServer.address() as AddressInfo).port}`;
      return { server, url, seen };
    }

    for (const base of ['/', '/app/']) {
      const prefix = base.slice(0, -1);
      it(`attack: POST /.env and every method to dotfiles, .gatehouse-hashes.json and symlinks out of outDir (base ${base}) -> 404, never passed on to Vite`, async () => {
        const { server, url, seen } = await startPreview(base);
        try {
          assert.deepEqual(await refusals(url, prefix), []);
          assert.deepEqual(seen, [], 'requests that reached Vite after Gatehouse');
          // The counter counts: a path with nothing on disk goes on to Vite (its 404).
          const none = await get(url, `${prefix}/nothing-here`, { method: 'POST', body: 'x' });
          assert.equal(none.status, 404);
          assert.deepEqual(seen, [`POST ${prefix}/nothing-here`]);
        } finally {
          await server.close();
        }
      });

      it(`an existing file with another method (base ${base}) -> 405 with Allow (OPTIONS 204), never served by Vite`, async () => {
        const { server, url, seen } = await startPreview(base);
        try {
          for (const path of ['/app.js', '/index.html', '/', '/sub', '/sub/', '/app.js/']) {
            for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'PROPFIND']) {
              const r = await get(url, prefix + path, {
                method,
                ...(WITH_BODY.has(method) ? { body: 'x' } : {}),
              });
              assert.equal(r.status, 405, `${method} ${prefix}${path}`);
              assert.equal(r.headers.allow, 'GET, HEAD, OPTIONS', `${method} ${prefix}${path}`);
            }
            const o = await get(url, prefix + path, { method: 'OPTIONS' });
            assert.equal(o.status, 204, `OPTIONS ${prefix}${path}`);
            assert.equal(o.headers.allow, 'GET, HEAD, OPTIONS');
          }
          assert.deepEqual(seen, [], 'requests that reached Vite after Gatehouse');
          const js = await get(url, `${prefix}/app.js`);
          assert.equal(js.status, 200);
          assert.equal(js.text, 'export const app = 1;\n');
        } finally {
          await server.close();
        }
      });
    }

    it('attack: every method to .gatehouse-hashes.json and its temp files with static.dotfiles "allow" -> 404, never passed on to Vite', async () => {
      const tmp = '.gatehouse-hashes-4242-0a1b2c.tmp';
      writeFileSync(join(project.dist, tmp), `{"note":"${SECRET}manifest-temp"}`);
      const { server, url, seen } = await startPreview('/', { static: { spa: false, dotfiles: 'allow' } });
      try {
        const wrong: string[] = [];
        for (const path of ['/.gatehouse-hashes.json', '/sub/.gatehouse-hashes.json', `/${tmp}`])
          for (const method of METHODS) {
            const r = await get(url, path, { method, ...(WITH_BODY.has(method) ? { body: 'x' } : {}) });
            if (r.status !== 404 || r.text.includes(SECRET)) wrong.push(`${method} ${path} -> ${r.status}`);
          }
        assert.deepEqual(wrong, []);
        assert.deepEqual(seen, [], 'requests that reached Vite after Gatehouse');
        // Other dotfiles are served, as configured.
        assert.equal((await get(url, '/.env')).status, 200);
      } finally {
        await server.close();
        rmSync(join(project.dist, tmp));
      }
    });
  });

  describe('framework adapters (the app gets other methods on existing files, never a refused path)', () => {
    /** An app answering 418 with `app` for whatever Gatehouse passes on; `seen` counts it. */
    type Started = { url: string; seen: string[]; close(): Promise<void> };
    const apps: Record<string, (root: string, mount: string) => Promise<Started>> = {
      async express(root, mount) {
        const seen: string[] = [];
        const gh = expressGatehouse({ root, log: { format: 'off' } });
        const app = express();
        if (mount === '') app.use(gh);
        else app.use(mount, gh);
        app.use((req, res) => {
          seen.push(`${req.method} ${req.originalUrl}`);
          res.status(418).end('app');
        });
        const server = gh.attach(createServer(app));
        const url = await listen(server);
        return {
          url,
          seen,
          close: async () => {
            await closeServer(server);
            await gh.close();
          },
        };
      },
      async fastify(root, mount) {
        const seen: string[] = [];
        const app = Fastify({ logger: false });
        await app.register(gatehouseFastify, {
          root,
          log: { format: 'off' },
          ...(mount === '' ? {} : { prefix: mount }),
        });
        // Hooks run in order: this one only for what Gatehouse's onRequest hook passed on.
        app.addHook('onRequest', (req, _reply, done) => {
          seen.push(`${req.method} ${req.url}`);
          done();
        });
        app.setNotFoundHandler((_req, reply) => void reply.code(418).send('app'));
        await app.listen({ port: 0, host: '127.0.0.1' });
        const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
        return { url, seen, close: () => app.close() };
      },
      async koa(root) {
        const seen: string[] = [];
        const gh = koaGatehouse({ root, log: { format: 'off' } });
        const app = new Koa();
        app.use(gh);
        app.use((ctx) => {
          seen.push(`${ctx.method} ${ctx.url}`);
          ctx.status = 418;
          ctx.body = 'app';
        });
        const server = gh.attach(createServer(app.callback()));
        const url = await listen(server);
        return {
          url,
          seen,
          close: async () => {
            await closeServer(server);
            await gh.close();
          },
        };
      },
      async hono(root) {
        const seen: string[] = [];
        const gh = honoGatehouse({ root, log: { format: 'off' } });
        const app = new Hono();
        app.use(gh);
        app.all('*', (c) => {
          seen.push(`${c.req.method} ${c.req.path}`);
          return c.text('app', 418);
        });
        let server: Server | undefined;
        const port = await new Promise<number>((resolve) => {
          server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
            resolve(info.port),
          ) as Server;
        });
        gh.attach(server!);
        return {
          url: `http://127.0.0.1:${port}`,
          seen,
          close: async () => {
            await closeServer(server!);
            await gh.close();
          },
        };
      },
    };

    const cases: [name: string, mount: string][] = [
      ['express', ''],
      ['express', '/static'],
      ['fastify', ''],
      ['fastify', '/static'],
      ['koa', ''],
      ['hono', ''],
    ];
    for (const [name, mount] of cases) {
      const where = mount === '' ? '' : ` mounted at ${mount}`;
      it(`attack: POST /.env and every method to dotfiles, .gatehouse-hashes.json and symlinks out of the root through ${name}${where} -> 404, the app reached by nothing`, async () => {
        const a = await apps[name]!(project.dist, mount);
        try {
          assert.deepEqual(await refusals(a.url, mount), []);
          assert.deepEqual(a.seen, [], 'requests that reached the app after Gatehouse');
          // serve-static's rule: other methods on an existing file, and paths with no file, are the app's.
          for (const path of ['/app.js', '/nothing-here']) {
            const r = await get(a.url, mount + path, {
              method: 'POST',
              body: 'x',
              headers: { 'content-type': 'text/plain' },
            });
            assert.equal(r.status, 418, `POST ${mount}${path}`);
            assert.equal(r.text, 'app');
          }
          assert.equal(a.seen.length, 2, a.seen.join(', '));
          assert.equal((await get(a.url, `${mount}/app.js`)).status, 200);
        } finally {
          await a.close();
        }
      });
    }
  });
});
