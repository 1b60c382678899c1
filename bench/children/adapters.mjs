// Peers of the adapters group (issue 28): one framework app per BENCH_APP, serving the fixture root either
// through Gatehouse's adapter (dist/adapters/*, so `npm run build` first) or through the framework's own
// static module, logger off, no other middleware. Express's x-powered-by is off in both.
import http from 'node:http';
import { announce, exitWithParent, fieldsObject, listen, requestedPort, root } from './runtime.mjs';

const adapter = (name) => import(`../../dist/adapters/${name}.js`);

const apps = {
  async 'gatehouse-express'() {
    const { default: express } = await import('express');
    const { gatehouse } = await adapter('express');
    const app = express().disable('x-powered-by');
    app.use(gatehouse({ root, log: { format: 'off' } }));
    listen(http.createServer(app));
  },
  // The framework's floor: one Express middleware answering every request with the 1 KB body and exactly
  // the fields Gatehouse sends for it (BENCH_FIELDS, as node-fields-ceiling), so the table shows what
  // Express itself costs per request, which no middleware inside it can go under.
  async 'express-ceiling'() {
    const { default: express } = await import('express');
    const fields = fieldsObject(JSON.parse(process.env.BENCH_FIELDS).ok);
    const body = Buffer.alloc(1024, 'x');
    const app = express().disable('x-powered-by');
    app.use((_req, res) => {
      res.writeHead(200, fields);
      res.end(body);
    });
    listen(http.createServer(app));
  },
  async 'express-static'() {
    const { default: express } = await import('express');
    const app = express().disable('x-powered-by');
    app.use(express.static(root));
    listen(http.createServer(app));
  },
  async 'gatehouse-fastify'() {
    const { default: Fastify } = await import('fastify');
    const { gatehouse } = await adapter('fastify');
    const app = Fastify({ logger: false });
    await app.register(gatehouse, { root, log: { format: 'off' } });
    exitWithParent();
    await app.listen({ port: requestedPort, host: '127.0.0.1' });
    announce(app.server.address().port);
  },
  async 'gatehouse-koa'() {
    const { default: Koa } = await import('koa');
    const { gatehouse } = await adapter('koa');
    const app = new Koa();
    app.use(gatehouse({ root, log: { format: 'off' } }));
    listen(http.createServer(app.callback()));
  },
  async 'koa-static'() {
    const { default: Koa } = await import('koa');
    const { default: serve } = await import('koa-static');
    const app = new Koa();
    app.use(serve(root));
    listen(http.createServer(app.callback()));
  },
  async 'gatehouse-hono'() {
    const { Hono } = await import('hono');
    const { serve } = await import('@hono/node-server');
    const { gatehouse } = await adapter('hono');
    const app = new Hono();
    app.use(gatehouse({ root, log: { format: 'off' } }));
    exitWithParent();
    serve({ fetch: app.fetch, port: requestedPort, hostname: '127.0.0.1' }, (info) => announce(info.port));
  },
  async 'hono-serve-static'() {
    const { Hono } = await import('hono');
    const { serve } = await import('@hono/node-server');
    const { serveStatic } = await import('@hono/node-server/serve-static');
    const app = new Hono();
    app.use('*', serveStatic({ root }));
    exitWithParent();
    serve({ fetch: app.fetch, port: requestedPort, hostname: '127.0.0.1' }, (info) => announce(info.port));
  },
};

const start = apps[process.env.BENCH_APP];
if (!start) throw new Error(`BENCH_APP=${process.env.BENCH_APP}: one of ${Object.keys(apps).join(', ')}`);
await start();
