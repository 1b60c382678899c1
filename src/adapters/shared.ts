// What the adapters share: the handler's members on the middleware, attach(server) for handshakes,
// settling a middleware's promise when Gatehouse answered or passed on, and answering below a mount path.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { GatehouseHandler } from '../node.js';
import type { MountFacts } from '../server/index.js';

/** Where the middleware is mounted, for the handshakes `attach` hands to Gatehouse. */
export interface AttachOptions {
  /**
   * The path the app mounts the middleware at (`app.use('/static', gh)`: '/static'; an Express sub-app's
   * `app.mountpath`). Only handshakes at or below it reach Gatehouse, with it stripped, as the app's
   * router strips it from requests. Default: the root (every path).
   */
  readonly mountPath?: string;
}

/** The handler's members an adapter's middleware carries, and `attach`. */
export interface HandlerMembers extends Omit<GatehouseHandler, 'handle'> {
  /**
   * Listens to `server`'s 'upgrade' events (WebSocket endpoints, proxied handshakes) at the mount path;
   * returns `server`. Handshakes outside the mount, and those Gatehouse has no endpoint or proxy route
   * for, are left to the server's other 'upgrade' listeners, untouched.
   */
  attach<S extends Pick<Server, 'on'>>(server: S, options?: AttachOptions): S;
}

/** `middleware` with the handler's members; `defaultMount`: attach's mountPath when none is given. */
export function withMembers<F extends object>(
  middleware: F,
  h: GatehouseHandler,
  defaultMount?: string,
): F & HandlerMembers {
  return Object.assign(middleware, {
    upgrade: h.upgrade,
    upgradeAt: h.upgradeAt,
    ready: h.ready,
    close: h.close,
    options: h.options,
    logger: h.logger,
    static: h.static,
    attach<S extends Pick<Server, 'on'>>(server: S, options: AttachOptions = {}): S {
      const mountPath = options.mountPath ?? defaultMount;
      server.on('upgrade', mountPath === undefined ? h.upgrade : h.upgradeAt(mountPath));
      return server;
    },
  });
}

/**
 * Runs `handle` and settles when Gatehouse has answered (the response finished or the client left), or
 * with `passOn()` when it passed the request on.
 */
export function handleOrPass<T>(
  h: GatehouseHandler,
  req: IncomingMessage,
  res: ServerResponse,
  passOn: () => Promise<T>,
  mount?: MountFacts,
): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    const answered = () => {
      res.off('finish', answered);
      res.off('close', answered);
      resolve(undefined);
    };
    res.once('finish', answered);
    res.once('close', answered);
    h.handle(
      req,
      res,
      (err) => {
        res.off('finish', answered);
        res.off('close', answered);
        if (err !== undefined) reject(err);
        else passOn().then(resolve, reject);
      },
      mount,
    );
  });
}

/** True when a stripped `url` is the mount's root ('/app', '/app/', '/app?q' all became '/' or '/?q'). */
export function isMountRoot(url: string): boolean {
  return url === '/' || url.startsWith('/?');
}

/** True when `url` (below `mount`) is the mount itself without its slash: '/app', '/app?q'. */
export function isMountWithoutSlash(url: string, mount: string): boolean {
  const c = url.charCodeAt(mount.length);
  return Number.isNaN(c) || c === 0x3f;
}

/** Where an adapter mounted Gatehouse for one request, and what undoes its Location fixes. */
export interface AtMount {
  readonly mount: MountFacts | undefined;
  readonly undo: () => void;
}

const AT_ROOT: AtMount = { mount: undefined, undo: () => {} };

/**
 * Gatehouse answers a request below the path the app mounted it at (`mount`, no trailing slash: Express's
 * req.baseUrl, Fastify's prefix, the Koa and Hono `mountPath`), the mount already stripped from req.url.
 * - A path-only Location in the answer gets the mount back: the client resolves it against the URL it
 *   asked for (RFC 9110 §10.2.2), which has the mount. Absolute and protocol-relative ones are left alone.
 * - `withoutSlash` (the client asked for `/app`, not `/app/`): where the static files would answer the
 *   index, they redirect to `/app/`, as serve-static does, so the page's relative URLs resolve.
 * - So do the Link URLs of 103 Early Hints, and the proxy's rewritten absolute Location and Set-Cookie
 *   Path (core/context.ts mountOf).
 * Returns the mount facts for `handle`, and what undoes the Location fixes, called before the request
 * is passed on: the app's answers are its own.
 */
export function answerAtMount(res: ServerResponse, mount: string, withoutSlash: boolean): AtMount {
  if (mount === '') return AT_ROOT;
  // Never a protocol-relative result, whatever the app's router took as its mount.
  const prefix = mount.replace(/^[/\\]+/, '/');
  let active = true;
  const fix = (v: unknown) =>
    active && typeof v === 'string' && v.startsWith('/') && !v.startsWith('//') && !v.startsWith('/\\')
      ? prefix + v
      : v;
  const writeHead = res.writeHead as (this: ServerResponse, ...args: unknown[]) => ServerResponse;
  // A flag, not a restore: a step (auth) may wrap writeHead again after this, and keeps its wrapper.
  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    if (active) {
      const set = this.getHeader('location');
      if (set !== undefined) this.setHeader('location', fix(set) as string);
      // writeHead(status, [reason], [fields]); Node's implicit head (res.end alone) comes through here.
      const at = typeof args[1] === 'string' ? 2 : 1;
      const fields = args[at];
      if (Array.isArray(fields)) {
        const i = fields.findIndex((v, j) => j % 2 === 0 && String(v).toLowerCase() === 'location');
        if (i !== -1) args[at] = fields.map((v, j) => (j === i + 1 ? fix(v) : v));
      } else if (typeof fields === 'object' && fields !== null) {
        const name = Object.keys(fields).find((k) => k.toLowerCase() === 'location');
        // A copy: the handler's field objects may be shared between responses.
        if (name !== undefined)
          args[at] = { ...fields, [name]: fix((fields as Record<string, unknown>)[name]) };
      }
    }
    return writeHead.apply(this, args);
  } as typeof res.writeHead;
  // RFC 8297: the Link URLs of 103 Early Hints are Gatehouse's paths too (relative ones resolved).
  const writeEarlyHints = res.writeEarlyHints as
    | ((this: ServerResponse, ...args: unknown[]) => void)
    | undefined;
  if (typeof writeEarlyHints === 'function') {
    const fixLinks = (v: unknown): unknown =>
      typeof v === 'string'
        ? v.replace(/(^|,\s*)<\/(?![/\\])/g, (_, lead: string) => `${lead}<${prefix}/`)
        : Array.isArray(v)
          ? v.map(fixLinks)
          : v;
    res.writeEarlyHints = function (this: ServerResponse, ...args: unknown[]) {
      const hints = args[0] as Record<string, unknown> | undefined;
      if (active && hints !== undefined && hints !== null && hints.link !== undefined)
        args[0] = { ...hints, link: fixLinks(hints.link) };
      writeEarlyHints.apply(this, args);
    } as typeof res.writeEarlyHints;
  }
  return {
    mount: { path: prefix, withoutSlash },
    undo: () => {
      active = false;
    },
  };
}
