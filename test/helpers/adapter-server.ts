// The adapter matrix (issue 28): under GATEHOUSE_TEST_ADAPTER=express|fastify|koa|hono, startServer
// (http.ts) mounts Gatehouse in a real app of that framework on 127.0.0.1:0 instead of its own listener,
// so the static, policy, proxy and cache suites run once more through each adapter, with the same
// assertions. The app has no routes of its own and `fallthrough: false`: Gatehouse answers everything,
// its 404s included, exactly as standalone.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import { gatehouse as expressGatehouse } from '../../src/adapters/express.js';
import gatehouseFastify from '../../src/adapters/fastify.js';
import { gatehouse as honoGatehouse } from '../../src/adapters/hono.js';
import { gatehouse as koaGatehouse } from '../../src/adapters/koa.js';
import type { HandlerMembers } from '../../src/adapters/shared.js';
import type { GatehouseConfigInput } from '../../src/config/schema.js';
import type { Gatehouse } from '../../src/server/app/gatehouse.js';

export type TestAdapter = 'express' | 'fastify' | 'koa' | 'hono';

export const TEST_ADAPTER: TestAdapter | undefined = (() => {
  const a = process.env.GATEHOUSE_TEST_ADAPTER;
  if (a === undefined || a === '') return undefined;
  if (a !== 'express' && a !== 'fastify' && a !== 'koa' && a !== 'hono')
    throw new Error(`GATEHOUSE_TEST_ADAPTER=${a}: express, fastify, koa or hono`);
  return a;
})();

const listening = (server: Server) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });

const closing = (server: Server) =>
  new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });

/** The app's server, and how it closes (Gatehouse's parts included). */
interface Mounted {
  server: Server;
  members: Pick<HandlerMembers, 'options' | 'logger' | 'static'>;
  listen(): Promise<number>;
  close(): Promise<void>;
}

/** An app on a node:http server of ours, with Gatehouse's handshakes attached. */
function onNodeServer(mw: HandlerMembers, server: Server): Mounted {
  mw.attach(server);
  return {
    server,
    members: mw,
    listen: () => listening(server),
    close: async () => {
      await closing(server);
      await mw.close();
    },
  };
}

/** A listener-owning app per framework, Gatehouse its only middleware. */
const MOUNT: Record<TestAdapter, (config: GatehouseConfigInput) => Promise<Mounted>> = {
  async express(config) {
    const mw = expressGatehouse(config, { fallthrough: false });
    const app = express();
    // Express's own header, on before any middleware runs; an app that serves with Gatehouse turns it off.
    app.disable('x-powered-by');
    app.use(mw);
    return onNodeServer(mw, createServer(app));
  },
  async fastify(config) {
    const app = Fastify({ logger: false });
    await app.register(gatehouseFastify, { ...config, deps: { fallthrough: false } });
    await app.ready();
    const server = app.server as Server;
    const { options, logger, static: files } = gatehouseMembers(app);
    return {
      server,
      members: { options, logger, static: files },
      listen: async () => {
        await app.listen({ port: 0, host: '127.0.0.1' });
        return (server.address() as AddressInfo).port;
      },
      close: () => app.close(),
    };
  },
  async koa(config) {
    const mw = koaGatehouse(config, { fallthrough: false });
    const app = new Koa();
    app.use(mw);
    return onNodeServer(mw, createServer(app.callback()));
  },
  async hono(config) {
    const mw = honoGatehouse(config, { fallthrough: false });
    const app = new Hono();
    app.use(mw);
    let server: Server | undefined;
    const port = new Promise<number>((resolve) => {
      server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
        resolve(info.port),
      ) as Server;
    });
    const s = server as unknown as Server;
    mw.attach(s);
    return {
      server: s,
      members: mw,
      listen: () => port,
      close: async () => {
        await closing(s);
        await mw.close();
      },
    };
  },
};

/** The Fastify plugin keeps its handler inside; the test reads what it decorated. */
function gatehouseMembers(app: unknown): Pick<HandlerMembers, 'options' | 'logger' | 'static'> {
  const g = (app as { gatehouse?: Pick<HandlerMembers, 'options' | 'logger' | 'static'> }).gatehouse;
  if (g === undefined) throw new Error('the Fastify plugin did not decorate fastify.gatehouse');
  return g;
}

/** Gatehouse mounted in `adapter`'s app over `config`, listening; `app` has the members the suites use. */
export async function startAdapterServer(
  adapter: TestAdapter,
  config: GatehouseConfigInput,
): Promise<{ app: Gatehouse; url: string; port: number; close(): Promise<void> }> {
  const m = await MOUNT[adapter](config);
  const port = await m.listen();
  const url = `http://127.0.0.1:${port}`;
  const app: Gatehouse = {
    server: m.server,
    tls: undefined,
    options: m.members.options,
    logger: m.members.logger,
    static: m.members.static,
    listen: async () => ({ url, host: '127.0.0.1', port }),
    close: m.close,
  };
  return { app, url, port, close: m.close };
}
