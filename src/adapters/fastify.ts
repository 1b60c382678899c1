// gatehouse-http/fastify: Gatehouse as a Fastify 5 plugin, `fastify.register(gatehouse, config)`.
// Every request (under `prefix`, when given) enters Gatehouse's pipeline first, on Fastify's raw request
// and response, in an onRequest hook: what Gatehouse answers never reaches Fastify's routing (as with
// @fastify/middie), what it passes on (a path with no file, a method the static files do not answer)
// goes on to Fastify's routes untouched, body unread. Fastify's logger is Gatehouse's; its server's
// WebSocket handshakes under the prefix go to Gatehouse; fastify.close() closes Gatehouse's parts.
import type { Server } from 'node:http';
import type { FastifyPluginCallback } from 'fastify';
import type { GatehouseConfigInput } from '../config/schema.js';
import { createHandler, type GatehouseDeps, type GatehouseHandler } from '../node.js';
import { belowMount, type Logger, normalMount } from '../server/index.js';
import { answerAtMount, isMountWithoutSlash } from './shared.js';

export type { GatehouseConfigInput, GatehouseDeps } from '../node.js';

/** The plugin's options: Gatehouse's config, plus the path prefix it serves (every path by default). */
export type GatehouseFastifyOptions = GatehouseConfigInput & {
  /** Only requests whose path is at or below this prefix enter Gatehouse (e.g. `/static`), which serves
   *  them as if the prefix were its root (`/static/app.js` is `app.js` in the folder). */
  readonly prefix?: string;
  readonly deps?: Omit<GatehouseDeps, 'logger'>;
};

const gatehousePlugin: FastifyPluginCallback<GatehouseFastifyOptions> = (fastify, opts, done) => {
  const { prefix: rawPrefix, deps, ...config } = opts;
  const log = fastify.log as unknown as Partial<Logger> & Pick<Logger, 'info' | 'warn' | 'error'>;
  // Fastify's pino logger (or its no-op one, which has no isLevelEnabled: then nothing is logged).
  const logger: Logger = {
    info: (o, m) => log.info(o, m),
    warn: (o, m) => log.warn(o, m),
    error: (o, m) => log.error(o, m),
    isLevelEnabled: (level) => (typeof log.isLevelEnabled === 'function' ? log.isLevelEnabled(level) : false),
  };
  let h: ReturnType<typeof createHandler>;
  let prefix: string;
  try {
    prefix = normalMount(rawPrefix);
    h = createHandler(config, { ...deps, logger });
  } catch (err) {
    done(err as Error);
    return;
  }
  fastify.addHook('onRequest', (request, reply, next) => {
    const raw = request.raw;
    const url = raw.url ?? '/';
    if (prefix === '') {
      h.handle(raw, reply.raw, (err) => next(err as Error | undefined));
      return;
    }
    // Served from the root at the prefix (as @fastify/static's prefix, Express's mount path); what is
    // passed on gets its whole path back.
    const inner = belowMount(url, prefix);
    if (inner === undefined) {
      next();
      return;
    }
    raw.url = inner;
    // Locations get the prefix back; `/app` alone is the folder without its slash (shared.ts).
    const at = answerAtMount(reply.raw, prefix, isMountWithoutSlash(url, prefix));
    h.handle(
      raw,
      reply.raw,
      (err) => {
        at.undo();
        raw.url = url;
        next(err as Error | undefined);
      },
      at.mount,
    );
  });
  // HTTP/1.1 handshakes (an HTTP/2 Fastify server has no 'upgrade' event), under the same prefix and
  // stripped alike; the others are left to the server's other 'upgrade' listeners.
  (fastify.server as unknown as Server).on('upgrade', h.upgradeAt(prefix));
  // fastify.gatehouse: the handler's members (options, logger, static for assetUrl, ready, close); the
  // first plugin's when several are registered under different prefixes.
  if (!fastify.hasDecorator('gatehouse')) fastify.decorate('gatehouse', h);
  fastify.addHook('onReady', () => h.ready());
  fastify.addHook('onClose', () => h.close());
  done();
};

// fastify-plugin's marks, without the package: the hook applies to the whole instance (404s included),
// not only to routes registered inside the plugin.
Object.assign(gatehousePlugin, {
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: 'gatehouse',
  [Symbol.for('plugin-meta')]: { name: 'gatehouse', fastify: '5.x' },
});

declare module 'fastify' {
  interface FastifyInstance {
    /** The Gatehouse handler the plugin registered (gatehouse-http/fastify). */
    gatehouse: GatehouseHandler;
  }
}

export const gatehouse = gatehousePlugin;
export default gatehousePlugin;
