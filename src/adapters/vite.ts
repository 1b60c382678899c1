// gatehouse-http/vite: `plugins: [gatehouse(config)]`. `vite preview` serves the build
// through Gatehouse's pipeline (per-class Cache-Control, strong ETags, br/gzip, the SPA fallback that
// leaves the assets folder alone, the config's proxy and CORS) in front of Vite's own static files and
// HTML fallback; `precompress` writes .br/.gz siblings at the end of `vite build`; `gatehouse check`
// runs against the preview URL on request (the `g` shortcut, or `check` at start). `vite` (the dev
// server) is left alone.
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import type { Connect, Plugin, PreviewServer, ResolvedConfig, Logger as ViteLogger } from 'vite';
import {
  type Coding,
  DEFAULT_MIN_BYTES,
  formatSummary,
  type PrecompressOptions,
  precompressDir,
} from '../build/precompress.js';
import { checkCommand } from '../cli/check.js';
import { parseConfig } from '../config/load.js';
import type { GatehouseConfigInput } from '../config/schema.js';
import { forTerminal } from '../http/terminal.js';
import { createHandler, type GatehouseHandler } from '../node.js';
import { type Logger, ZSTD_AVAILABLE } from '../server/index.js';
import { answerAtMount } from './shared.js';

export type { GatehouseConfigInput } from '../node.js';

type HeaderRule = NonNullable<GatehouseConfigInput['headers']>[number];

/** `precompress` at the end of `vite build`: the codings and size floor of `gatehouse precompress`. */
export interface VitePrecompressOptions {
  /** Files smaller than this are left alone (default 1024, as `--min-bytes`). */
  readonly minBytes?: number;
  /** .br siblings (default true). */
  readonly brotli?: boolean;
  /** .gz siblings (default true). */
  readonly gzip?: boolean;
  /** .zst siblings too (default false; Node 22.15+). */
  readonly zstd?: boolean;
}

/** `gatehouse check` against the preview URL: the `g` shortcut, and once at start with `check`. */
export interface ViteCheckOptions {
  /** Also send CORS probes from this origin (`--origin`). */
  readonly origin?: string;
  /** Print the report as JSON (`--json`). */
  readonly json?: boolean;
  /** Run it once when the preview server listens (default true when `check` is given). */
  readonly onStart?: boolean;
}

/** The plugin's options: Gatehouse's config (the CLI's schema and errors), plus the plugin's own keys. */
export type GatehouseViteOptions = GatehouseConfigInput & {
  /** Write .br/.gz siblings into the client build's outDir at the end of `vite build` (default off). */
  readonly precompress?: boolean | VitePrecompressOptions;
  /**
   * `true` or options: `gatehouse check` runs on the preview URL once the server listens, and on the
   * `g + enter` shortcut. Unset: the shortcut only. `false`: neither.
   */
  readonly check?: boolean | ViteCheckOptions;
};

/** The shortcut key `vite preview` lists under `h + enter`. */
export const CHECK_SHORTCUT_KEY = 'g';

/** Keys of Gatehouse's config that Vite's preview server owns (preview.port/host/https). */
const LISTENER_KEYS = ['listen', 'tls', 'workers'] as const;

/** The pathname prefix of Vite's `base` ('/app/' for '/app/' or 'https://cdn.example/app/'). */
function basePath(base: string): string {
  if (base.startsWith('/')) return base.endsWith('/') ? base : `${base}/`;
  try {
    return new URL(base).pathname;
  } catch {
    return '/';
  }
}

/** Vite's proxy context test (a `^` key is a RegExp, any other a path prefix), on the whole URL. */
function viteProxyMatcher(proxy: Record<string, unknown> | undefined): (url: string) => boolean {
  const contexts = Object.keys(proxy ?? {}).map((c) => (c.startsWith('^') ? new RegExp(c) : c));
  if (contexts.length === 0) return () => false;
  return (url) => contexts.some((c) => (typeof c === 'string' ? url.startsWith(c) : c.test(url)));
}

/** Gatehouse's warnings and errors in Vite's log; no access lines (vite preview prints none). */
function viteLogger(log: ViteLogger): Logger {
  const text = (o: object | string, m?: string) => {
    if (typeof o === 'string') return `gatehouse: ${forTerminal(o)}`;
    const err = (o as { err?: { message?: unknown } }).err;
    const why = err?.message === undefined ? '' : `: ${String(err.message)}`;
    return `gatehouse: ${forTerminal(`${m ?? ''}${why}`)}`;
  };
  return {
    info: () => {},
    warn: (o, m) => log.warn(text(o, m), { timestamp: true }),
    error: (o, m) => log.error(text(o, m), { timestamp: true }),
    isLevelEnabled: (level) => level === 'warn' || level === 'error',
  };
}

/** The plugin's `precompress` option as `precompressDir` options (throws on a value it cannot use). */
function precompressPlan(
  option: GatehouseViteOptions['precompress'],
): Omit<PrecompressOptions, 'dir'> | undefined {
  if (option === undefined || option === false) return undefined;
  const o: VitePrecompressOptions = option === true ? {} : option;
  const minBytes = o.minBytes ?? DEFAULT_MIN_BYTES;
  if (!Number.isSafeInteger(minBytes) || minBytes < 0)
    throw new TypeError(`gatehouse-http/vite: precompress.minBytes: not a byte count: ${String(minBytes)}`);
  if (o.zstd === true && !ZSTD_AVAILABLE)
    throw new TypeError(
      `gatehouse-http/vite: precompress.zstd needs Node 22.15 or later (${process.version})`,
    );
  const codings: Coding[] = [];
  if (o.brotli !== false) codings.push('br');
  if (o.gzip !== false) codings.push('gzip');
  if (o.zstd === true) codings.push('zstd');
  if (codings.length === 0)
    throw new TypeError('gatehouse-http/vite: precompress with brotli and gzip off leaves nothing to do');
  return { minBytes, force: false, codings, dryRun: false };
}

/** The URL Vite prints as Local (base included), else the one the server listens on. */
function previewUrl(server: PreviewServer): string | undefined {
  const printed = server.resolvedUrls?.local[0] ?? server.resolvedUrls?.network[0];
  if (printed !== undefined) return printed;
  const a = server.httpServer.address() as AddressInfo | string | null;
  if (a === null || typeof a === 'string') return undefined;
  const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
  return `http://${host}:${a.port}${basePath(server.config.base)}`;
}

/** Runs `gatehouse check` (the CLI command itself) on the preview URL; prints into Vite's log. */
async function runCheck(server: PreviewServer, o: ViteCheckOptions): Promise<number> {
  const log = server.config.logger;
  const url = previewUrl(server);
  if (url === undefined) {
    log.warn('gatehouse check: the preview server is not listening');
    return 1;
  }
  const args = [url];
  if (o.origin !== undefined) args.push('--origin', o.origin);
  if (o.json === true) args.push('--json');
  let out = '';
  let err = '';
  let code = 1;
  try {
    code = await checkCommand(args, {
      cwd: server.config.root,
      stdout: { write: (s: string) => (out += s) },
      stderr: { write: (s: string) => (err += s) },
      color: process.stdout.isTTY === true && process.env.NO_COLOR === undefined,
    });
  } catch (e) {
    // Never an unhandled rejection in the preview server (the shortcut's and the start's runs).
    err += `gatehouse check: ${forTerminal(e instanceof Error ? e.message : String(e))}`;
  }
  if (out !== '') log.info(out.trimEnd());
  if (err !== '') log.error(err.trimEnd());
  return code;
}

/** Mounts the handler in front of Vite's own preview middlewares (proxy, compression, static, fallback). */
function mountPreview(server: PreviewServer, h: GatehouseHandler, viteProxy: (url: string) => boolean) {
  const base = basePath(server.config.base);
  const prefix = base === '/' ? '' : base.slice(0, -1);
  /** The URL as Gatehouse sees it (below Vite's base), or undefined when it is Vite's to answer. */
  const inside = (url: string): string | undefined => {
    // Vite's preview.proxy (server.proxy by default) keeps its paths; Gatehouse's own `proxy` is ours.
    if (viteProxy(url)) return undefined;
    if (prefix === '') return url;
    // Served at Vite's base as at the root (Vite's base middleware answers the rest).
    return url.startsWith(base) ? url.slice(prefix.length) : undefined;
  };
  const middleware: Connect.NextHandleFunction = (req, res, next) => {
    const url = req.url ?? '/';
    const inner = inside(url);
    if (inner === undefined) return next();
    req.url = inner;
    // Vite's base back on path-only Locations (its own middleware redirects the base without its slash).
    const at = answerAtMount(res as ServerResponse, prefix, false);
    // GET and HEAD are the build's: a missing file is Gatehouse's 404 (or the SPA page for a navigation),
    // never Vite's index.html. Other methods go on to Vite's middlewares only where nothing is on disk:
    // a file gets 405, a refused path (dotfile, symlink out of outDir, own files) 404.
    if (req.method === 'GET' || req.method === 'HEAD')
      h.handle(req, res as ServerResponse, undefined, at.mount);
    else
      h.handle(
        req,
        res as ServerResponse,
        (err) => {
          at.undo();
          req.url = url;
          next(err);
        },
        at.mount,
      );
  };
  server.middlewares.use(middleware);
  // Handshakes for Gatehouse's WebSocket endpoints and proxy, at the base and below it as requests are;
  // the rest (Vite's proxy's among them) are left to Vite's own 'upgrade' listeners, untouched.
  const atBase = h.upgradeAt(prefix);
  server.httpServer.on('upgrade', (req: IncomingMessage, socket, head) => {
    if (!viteProxy(req.url ?? '/')) atBase(req, socket, head);
  });
  server.httpServer.once('close', () => void h.close());
}

/** Adds the check shortcut to whatever shortcuts the server binds (the `vite preview` CLI binds them). */
function addCheckShortcut(server: PreviewServer, o: ViteCheckOptions): void {
  const bind = server.bindCLIShortcuts.bind(server);
  server.bindCLIShortcuts = (options) =>
    bind({
      ...options,
      customShortcuts: [
        ...(options?.customShortcuts ?? []),
        {
          key: CHECK_SHORTCUT_KEY,
          description: 'run gatehouse check on the preview URL',
          action: async (s) => {
            await runCheck(s, o);
          },
        },
      ],
    });
}

/** Vite's `preview.headers` as a first header rule (values of one field joined as a list). */
function viteHeaders(headers: OutgoingHttpHeaders | undefined): HeaderRule[] {
  const set: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {}))
    if (value !== undefined) set[name] = Array.isArray(value) ? value.join(', ') : String(value);
  return Object.keys(set).length === 0 ? [] : [{ set }];
}

/**
 * The Gatehouse config for a preview: root at the client outDir, SPA and assets folder from Vite,
 * Vite's preview.headers before the config's own header rules (which win where both set a field).
 */
function previewConfig(input: GatehouseConfigInput, config: ResolvedConfig): GatehouseConfigInput {
  const build = config.environments.client?.build ?? config.build;
  const outDir = resolve(config.root, build.outDir);
  const given = input.static ?? {};
  return {
    ...input,
    headers: [...viteHeaders(config.preview.headers), ...(input.headers ?? [])],
    root: input.root === undefined ? outDir : resolve(config.root, input.root),
    static: {
      ...given,
      spa: given.spa ?? config.appType === 'spa',
      assetsDir: given.assetsDir ?? build.assetsDir,
    },
  };
}

export function gatehouse(options: GatehouseViteOptions = {}): Plugin {
  const { precompress, check, ...input } = options;
  // The CLI's validation, at once: a bad key fails `vite` as it fails `gatehouse serve --config`.
  parseConfig(input);
  const plan = precompressPlan(precompress);
  const checkOptions: ViteCheckOptions | undefined =
    check === false ? undefined : check === true || check === undefined ? {} : check;
  const checkOnStart = check !== undefined && check !== false && checkOptions?.onStart !== false;
  let userSetCors = false;
  let resolved: ResolvedConfig;
  return {
    name: 'gatehouse',
    config(user) {
      userSetCors = user.preview?.cors !== undefined;
      // One CORS decision: Gatehouse's `cors` (none: no CORS headers, as `gatehouse serve`). Vite's
      // middleware would answer preflights first and set Vary that Gatehouse's head then replaces.
      return { preview: { cors: false } };
    },
    configResolved(config) {
      resolved = config;
    },
    configurePreviewServer(server) {
      const log = server.config.logger;
      if (userSetCors) log.warn('gatehouse: preview.cors is replaced by the Gatehouse config key cors');
      const ignored = LISTENER_KEYS.filter((k) => input[k] !== undefined);
      if (ignored.length > 0)
        log.warn(`gatehouse: ${ignored.join(', ')}: Vite's preview server listens (preview.port/host/https)`);
      const h = createHandler(previewConfig(input, server.config), {
        ...(input.log === undefined ? { logger: viteLogger(log) } : {}),
        // What is passed on reaches Vite's static files, which serve any method: an existing file asked
        // for with another method is answered 405 here, as `gatehouse serve` answers it.
        otherMethodsOnFiles: '405',
      });
      // Now, not in a returned post hook: ahead of Vite's proxy, compression, static files and fallback.
      mountPreview(server, h, viteProxyMatcher(server.config.preview.proxy));
      if (checkOptions !== undefined) addCheckShortcut(server, checkOptions);
      if (checkOnStart && checkOptions !== undefined) {
        // After Vite has set resolvedUrls (the same turn as 'listening').
        server.httpServer.once('listening', () => setImmediate(() => void runCheck(server, checkOptions)));
      }
    },
    closeBundle: {
      order: 'post',
      sequential: true,
      async handler(error?: Error) {
        if (plan === undefined || error !== undefined || resolved?.command !== 'build') return;
        // The client build only (not SSR or other server environments), when it wrote files.
        const env = (this as { environment?: { config: ResolvedConfig & { consumer?: string } } })
          .environment;
        const build = env?.config.build ?? resolved.build;
        if ((env !== undefined && env.config.consumer !== 'client') || !build.write) return;
        const dir = resolve(resolved.root, build.outDir);
        const log = resolved.logger;
        const report = await precompressDir(
          { ...plan, dir },
          {
            error: (path, message) =>
              log.error(`gatehouse precompress: ${forTerminal(`${path}: ${message}`)}`),
          },
        );
        log.info(`gatehouse: ${formatSummary(report, plan.codings, false)}`);
        if (report.failed > 0)
          throw new Error(`gatehouse precompress: ${report.failed} file(s) failed in ${forTerminal(dir)}`);
      },
    },
  };
}

export default gatehouse;
