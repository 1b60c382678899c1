// gatehouse CLI: serve (default), precompress, hash, hash-password, sw-manifest, cert, check, trust. Flags become the same config a file would.
import cluster from 'node:cluster';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout } from 'node:timers';
import { devNameProblem, devNameWarning } from '../certs/dev-names.js';
import { ConfigError, loadConfig, toServerOptions } from '../config/load.js';
import type { GatehouseConfig, GatehouseConfigInput } from '../config/schema.js';
import { closestName } from '../config/suggest.js';
import { isToken } from '../http/lists.js';
import { forTerminal, forTerminalLines } from '../http/terminal.js';
import {
  createGatehouse,
  createLogger,
  createNativeServer,
  dropWriteErrors,
  http3Refusal,
  type NativeRuntime,
  nativeRefusals,
  nativeRuntime,
  primaryMetrics,
  WebSocketConfigError,
} from '../server/index.js';

export { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './io.js';

import { type FlagTable, type ParsedFlags, parseFlags } from './args.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './io.js';
import {
  applyHeapLimit,
  budgetLine,
  budgetOf,
  type HeapState,
  workerHeapArgs,
  workersHeap,
} from './memory.js';
import { startupLines } from './startup.js';
import {
  runPrimary,
  takeTicketSecret,
  ticketSecretEnv,
  type WorkerMessage,
  workerCount,
  workerSlot,
} from './workers.js';

export const HELP = `Usage: gatehouse [serve] [ROOT] [options]
       gatehouse precompress DIR [--min-bytes N] [--force] [--no-brotli] [--no-gzip] [--zstd] [--dry-run]
                             [--quiet]
       gatehouse hash-password [--n N] [--r R] [--p P] < password
       gatehouse hash [--root DIR] [--param NAME] FILE...
       gatehouse sw-manifest DIR [--out FILE] [--include GLOB]... [--exclude GLOB]...
       gatehouse cert TARGET [--ca FILE] [--servername NAME] [--warn-days N] [--json] [--timeout-ms N]
       gatehouse cert --ca-path
       gatehouse trust [--uninstall] [--dry-run] [--stores nss,system]
       gatehouse check URL [--origin ORIGIN] [--method M] [--header 'Name: value']... [--jsonp NAME]
                       [--json] [--verbose] [--no-color] [--timeout MS] [--insecure] [--ca FILE] [--allow-private]

serve options:
  --root DIR        the folder to serve, in place of ROOT (default: the config's root, else .)
  -p, --port N      port to listen on (default 8080; 0 picks a free one)
  --host ADDR       address to bind (default 127.0.0.1)
  --config FILE     config file (default: ./gatehouse.config.json when present)
  --spa             serve index.html for unknown page navigations
  --no-early-hints  send no 103 Early Hints before HTML pages
  --log FORMAT      json | pretty | off (default pretty)
  --proxy P=URL     forward PREFIX/... to URL/... (repeatable), e.g. --proxy /api=http://127.0.0.1:3000
  --cors ORIGINS    allow these origins (comma-separated, or *) cross-origin; a preflight may ask
                    for any request header (Authorization too) unless --cors-headers is given
  --cors-headers H1,H2
                    allow only these request headers (case-insensitive; * any but Authorization)
  --cors-credentials
                    allow cookies and HTTP auth cross-origin (not with --cors '*')
  --jsonp           answer ?callback= on .json files with JSONP
  --https           HTTPS with a certificate from the local development CA (made once; it prints
                    how to trust it); gatehouse cert --ca-path prints where the CA is
  --name NAME       with --https: the certificate names NAME too (repeatable), besides localhost,
                    127.0.0.1 and ::1: a host name (myapp.test), *.NAME or an IPv4/IPv6 address
  --tls-cert FILE --tls-key FILE
                    HTTPS (HTTP/2 and HTTP/1.1) with this certificate chain and key; SIGHUP or a
                    change of either file reloads them
  --http3           with HTTPS on Bun: HTTP/3 (QUIC, experimental) on the TLS port over UDP too,
                    advertised by Alt-Svc; a config error on Node and on Deno
  --workers N       N worker processes on one port (node:cluster), or auto (one per core);
                    SIGHUP restarts them one at a time, SIGTERM drains them all
  --http-port N     with HTTPS: also listen for plain HTTP on N, answering ACME challenges and
                    redirecting everything else to HTTPS (308)
  --memory SIZE     what each serving process may hold (512M, 1G): limits.memoryBytes; the heap
                    limit follows (default: from the bounds, or the container's lower limit)
  -h, --help        this help
  -v, --version     print the version

hash prints one URL per FILE, /path?v=<10 characters of its sha256> relative to --root (default .),
which the server caches for a year (gatehouse hash --help).
check audits a site's redirects, TLS, caching, validators, coding, CORS, JSONP and security headers,
with the RFC section of each finding; exit 1 on any error, for CI (gatehouse check --help).
cert checks a server's certificate or a PEM file: trusted, in date, names the host (gatehouse cert --help).
trust installs the development CA of --https into the browsers' NSS databases and the system store
(gatehouse trust --help); --uninstall removes it; --dry-run lists what it would change.
sw-manifest writes the precache list of a build folder for gatehouse-http/sw (gatehouse sw-manifest --help).
`;

/** A usage error: exit code 2 with a message naming the flag. */
export class UsageError extends Error {}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

/** The flags of `serve` (the help and the README list exactly these: test/cli/help.test.ts). */
export const SERVE_FLAGS = {
  root: { type: 'string' },
  port: { type: 'string', short: 'p' },
  host: { type: 'string' },
  config: { type: 'string' },
  spa: { type: 'boolean' },
  'no-early-hints': { type: 'boolean' },
  log: { type: 'string' },
  proxy: { type: 'string', multiple: true },
  cors: { type: 'string' },
  'cors-headers': { type: 'string' },
  'cors-credentials': { type: 'boolean' },
  jsonp: { type: 'boolean' },
  https: { type: 'boolean' },
  name: { type: 'string', multiple: true },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  'http-port': { type: 'string' },
  http3: { type: 'boolean' },
  workers: { type: 'string' },
  memory: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies FlagTable;

/** `gatehouse serve --help`: the usage line and serve's options, as in HELP. */
export const SERVE_HELP = (() => {
  const from = HELP.indexOf('serve options:');
  const to = HELP.indexOf('\n\n', from);
  return `Usage: gatehouse [serve] [ROOT] [options]\n\n${HELP.slice(from, to)}\n`;
})();

/** The commands; a first word that is none of them is serve's ROOT. */
export const COMMANDS = [
  'serve',
  'precompress',
  'hash',
  'hash-password',
  'sw-manifest',
  'cert',
  'trust',
  'check',
  'help',
] as const;

/**
 * A first word that is no command and no file or folder, but close to a command (`serv`): a mistyped
 * command rather than a missing ROOT. Returns the command it most likely meant.
 */
export function mistypedCommand(word: string, cwd: string): string | undefined {
  if (word.startsWith('-') || (COMMANDS as readonly string[]).includes(word)) return undefined;
  const near = closestName(word, COMMANDS);
  if (near === undefined || existsSync(resolve(cwd, word))) return undefined;
  return near;
}

export function parseServeFlags(args: string[]): {
  overrides: GatehouseConfigInput;
  configPath?: string;
  help?: true;
} {
  let parsed: ParsedFlags;
  try {
    parsed = parseFlags(args, SERVE_FLAGS, true);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help === true) return { overrides: {}, help: true };
  if (positionals.length > 1) throw new UsageError(`serve takes one ROOT, got: ${positionals.join(' ')}`);
  if (positionals.length > 0 && values.root !== undefined)
    throw new UsageError(`--root and a ROOT argument: give one (${values.root}, ${positionals[0]})`);
  const overrides: GatehouseConfigInput = {};
  const root = positionals[0] ?? (values.root as string | undefined);
  if (root !== undefined) overrides.root = root;
  const listen: { port?: number; host?: string; httpPort?: number } = {};
  if (values.port !== undefined) {
    const p = String(values.port);
    if (!/^\d{1,5}$/.test(p) || Number(p) > 65535) throw new UsageError(`--port: not a port number: ${p}`);
    listen.port = Number(p);
  }
  if (values.host !== undefined) listen.host = String(values.host);
  if (Object.keys(listen).length) overrides.listen = listen;
  if (values.spa) overrides.static = { spa: true };
  if (values['no-early-hints']) overrides.static = { ...overrides.static, earlyHints: false };
  if (values.log !== undefined) {
    const f = String(values.log);
    if (f !== 'json' && f !== 'pretty' && f !== 'off')
      throw new UsageError(`--log: expected json, pretty or off, got ${f}`);
    overrides.log = { format: f };
  }
  if (values.proxy !== undefined) {
    overrides.proxy = (values.proxy as string[]).map((spec) => {
      const eq = spec.indexOf('=');
      if (eq <= 0 || !spec.startsWith('/')) throw new UsageError(`--proxy: expected PREFIX=URL, got ${spec}`);
      return { prefix: spec.slice(0, eq), upstream: spec.slice(eq + 1) };
    });
  }
  if (values.cors !== undefined) {
    const origins = String(values.cors)
      .split(',')
      .map((o) => o.trim())
      .filter(Boolean);
    if (origins.length === 0) throw new UsageError('--cors: expected ORIGIN[,ORIGIN...]');
    overrides.cors = { origins };
  }
  const cors = corsFlags(values['cors-headers'], values['cors-credentials'], overrides.cors?.origins);
  if (cors !== undefined) overrides.cors = { ...overrides.cors, ...cors } as GatehouseConfigInput['cors'];
  if (values.jsonp) overrides.jsonp = { paths: ['/**/*.json'] };
  if (values.https) overrides.tls = { dev: true };
  if (values.name !== undefined) {
    const names = values.name as string[];
    for (const n of names) {
      const problem = devNameProblem(n);
      if (problem !== undefined) throw new UsageError(`--name: ${problem}: ${n}`);
    }
    if (!values.https)
      throw new UsageError('--name: only with --https (names on the development certificate)');
    overrides.tls = { dev: true, names };
  }
  if ((values['tls-cert'] === undefined) !== (values['tls-key'] === undefined))
    throw new UsageError('--tls-cert and --tls-key go together');
  if (values['tls-cert'] !== undefined) {
    if (values.https) throw new UsageError('--https makes its own certificate: not with --tls-cert');
    overrides.tls = { cert: String(values['tls-cert']), key: String(values['tls-key']) };
  }
  // --http3 joins whichever TLS source the flags or the config file give (tls.http3).
  if (values.http3) overrides.tls = { ...overrides.tls, http3: true };
  if (values['http-port'] !== undefined) {
    const p = String(values['http-port']);
    if (!/^\d{1,5}$/.test(p) || Number(p) > 65535)
      throw new UsageError(`--http-port: not a port number: ${p}`);
    overrides.listen = { ...overrides.listen, httpPort: Number(p) };
  }
  if (values.workers !== undefined) {
    const w = String(values.workers);
    if (w !== 'auto' && (!/^\d{1,3}$/.test(w) || Number(w) < 1 || Number(w) > 256))
      throw new UsageError(`--workers: expected 1..256 or auto, got ${w}`);
    overrides.workers = w === 'auto' ? 'auto' : Number(w);
  }
  if (values.memory !== undefined)
    overrides.limits = { ...overrides.limits, memoryBytes: sizeBytes(String(values.memory)) };
  return { overrides, ...(values.config !== undefined ? { configPath: String(values.config) } : {}) };
}

/** --memory: bytes, or a size with a binary unit (512M, 512MiB, 1G, 1GiB, 800K). */
function sizeBytes(v: string): number {
  const m = /^(\d+)\s*(?:([KMG])(?:i?B)?)?$/i.exec(v.trim());
  if (m === null) throw new UsageError(`--memory: expected a size such as 512M or 1G, got ${v}`);
  const unit = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[(m[2] ?? '').toUpperCase()]!;
  return Number(m[1]) * unit;
}

/** --cors-headers and --cors-credentials: merged over the cors section (origins from --cors or the file). */
function corsFlags(
  headersFlag: unknown,
  credentialsFlag: unknown,
  origins: readonly string[] | undefined,
): { headers?: string[]; credentials?: true } | undefined {
  const out: { headers?: string[]; credentials?: true } = {};
  if (headersFlag !== undefined) {
    const headers = String(headersFlag)
      .split(',')
      .map((h) => h.trim())
      .filter(Boolean);
    if (headers.length === 0) throw new UsageError('--cors-headers: expected NAME[,NAME...]');
    for (const h of headers) {
      if (h !== '*' && !isToken(h)) throw new UsageError(`--cors-headers: "${h}" is not a header name`);
    }
    out.headers = headers;
  }
  if (credentialsFlag === true) {
    // Fetch §3.2.5: a credentialed response must name its origin; `*` would fail every request.
    if (origins?.includes('*')) {
      throw new UsageError("--cors-credentials cannot be used with --cors '*': list the origins instead");
    }
    if (out.headers?.includes('*')) {
      throw new UsageError(
        "--cors-credentials: --cors-headers '*' is not a wildcard with credentials; name each",
      );
    }
    out.credentials = true;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** What was loaded, and what can only answer 404 (startup.ts), before the listening line. */
function announce(config: GatehouseConfig, configFile: string | undefined): void {
  const { lines, warnings } = startupLines(config, {
    configFile,
    rootEntries: readdirSync(config.root).length,
    fallbackExists: existsSync(join(config.root, config.static.spaFallback)),
  });
  for (const l of lines) process.stdout.write(`${forTerminal(l)}\n`);
  for (const w of warnings) process.stderr.write(`gatehouse: warning: ${forTerminal(w)}\n`);
}

/** serve --https: makes the dev CA and leaf now (idempotent) so the trust lines come before listening. */
async function announceDevCa(names: readonly string[]): Promise<void> {
  const { devLeafHosts, devTrustInstructions, ensureDevCertificate } = await import('../certs/dev-ca.js');
  const dev = await ensureDevCertificate({ names });
  process.stdout.write(
    dev.created.ca
      ? `${forTerminalLines(devTrustInstructions(dev.caCertPath))}\n`
      : `HTTPS with the development CA ${forTerminal(dev.caCertPath)} (how to trust it: README, "Local development CA")\n`,
  );
  if (names.length > 0)
    process.stdout.write(`${forTerminal(`the certificate names ${devLeafHosts(names).join(', ')}`)}\n`);
  for (const n of names) {
    const w = devNameWarning(n);
    if (w !== undefined) process.stderr.write(`gatehouse: warning: ${forTerminal(w)}\n`);
  }
}

async function serve(args: string[]): Promise<number> {
  // The listening line and pretty logs go to stdout too: a closed one must not stop the server.
  dropWriteErrors(process.stdout);
  const { overrides, configPath, help } = parseServeFlags(args);
  if (help) {
    process.stdout.write(SERVE_HELP);
    return EXIT_OK;
  }
  const { config, file } = loadConfig({ cwd: process.cwd(), configPath, overrides });
  if (!existsSync(config.root) || !statSync(config.root).isDirectory()) {
    throw new ConfigError(`root: not a directory: ${forTerminal(config.root)}`);
  }
  const slot = workerSlot();
  const count = workerCount(config.workers);
  // The memory budget (issue 40), before anything starts: applying its heap limit restarts this process.
  const budget = budgetOf(config, count);
  if ('error' in budget) throw new ConfigError(budget.error);
  let heap: HeapState | undefined;
  if (slot === undefined) heap = count > 1 ? workersHeap(budget) : applyHeapLimit(budget);
  if (slot === undefined) {
    announce(config, file);
    process.stdout.write(`${forTerminal(budgetLine(budget, heap!, count))}\n`);
  }
  if (slot === undefined && config.tls?.dev === true) await announceDevCa(config.tls.names);
  if (config.tls?.http3 === true) {
    // HTTP/3 is Bun.serve's alone; workers run node:http (node:cluster), so they cannot have it.
    if (count > 1)
      throw new ConfigError(
        'tls.http3: not with workers (each worker serves through node:http, which has no QUIC)',
      );
    const h3 = http3Refusal(toServerOptions(config), nativeRuntime() ?? 'node');
    if (h3 !== undefined) throw new ConfigError(h3);
  }
  if (slot === undefined && count > 1) {
    return runPrimary({
      count,
      logger: createLogger(config.log, process.stdout, { worker: 0 }),
      stdout: process.stdout,
      stderr: process.stderr,
      clusterMetrics: config.metrics === undefined ? undefined : await primaryMetrics(),
      env: ticketSecretEnv(config.tls),
      execArgv: workerHeapArgs(budget),
    });
  }
  const options = toServerOptions(config);
  // Each serving process sheds near its own budget (server/ops/pressure.ts).
  options.limits = { ...options.limits, memoryBytes: budget.budgetBytes };
  const secret = slot === undefined ? undefined : takeTicketSecret();
  if (secret !== undefined && options.tls?.sessionTickets !== undefined)
    options.tls = { ...options.tls, sessionTickets: { ...options.tls.sessionTickets, secret } };
  // On Bun and Deno the runtime's own server, unless the config needs what only node:http does yet.
  const runtime = slot === undefined ? nativeRuntime() : undefined;
  if (runtime !== undefined) {
    const refused = nativeRefusals(options, runtime);
    if (refused.length === 0) return serveNative(runtime, options);
    // No node:http emulation has HTTP/3: a config that needs it and cannot have it is an error.
    if (options.tls?.http3 === true)
      throw new ConfigError(
        `tls.http3: needs Bun.serve, which this config cannot use: ${forTerminal(refused.join('; '))}`,
      );
    // Bun's node:http emulation cannot run the Node TLS listener (its secure HTTP/2 server is missing).
    if (runtime === 'bun' && options.tls !== undefined)
      throw new ConfigError(
        `${forTerminal(refused.join('; '))} (Bun's node:http emulation has no TLS server to fall back to)`,
      );
    process.stderr.write(
      `gatehouse: note: served through ${runtime === 'bun' ? 'Bun' : 'Deno'}'s node:http emulation, not its own server: ${forTerminal(refused.join('; '))}\n`,
    );
  }
  // A cluster worker's log lines carry its slot (1..N); the primary's carry 0.
  const app = createGatehouse(
    options,
    slot === undefined ? {} : { logger: createLogger(options.log, process.stdout, { worker: slot }) },
  );
  let url: string;
  let httpUrl: string | undefined;
  try {
    ({ url, httpUrl } = await app.listen());
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { port?: number };
    if (e.code === 'GATEHOUSE_CACHE_STORE' || e.code === 'GATEHOUSE_TLS')
      console.error(`gatehouse: ${forTerminalLines(e.message)}`);
    else if (e.code === 'EADDRINUSE')
      console.error(
        `gatehouse: ${forTerminal(`port ${e.port ?? config.listen.port} on ${config.listen.host} is already in use (EADDRINUSE): choose another with --port N, or --port 0 for a free one`)}`,
      );
    else
      console.error(
        `gatehouse: ${forTerminal(`cannot listen on ${config.listen.host}:${config.listen.port}: ${e.code ?? e.message}`)}`,
      );
    await app.close();
    // A worker's IPC channel would keep it alive: the primary counts this death (crash loop).
    if (slot !== undefined && cluster.worker?.isConnected()) process.disconnect();
    return EXIT_FAILURE;
  }
  if (slot !== undefined) return serveAsWorker(app, { url, httpUrl });
  // SIGHUP reloads the certificates (nginx -s reload); without TLS it keeps its default meaning.
  const onHup = () => void app.tls?.reload();
  if (app.tls !== undefined) process.on('SIGHUP', onHup);
  // The signal handlers go in before the listening line: a supervisor may send SIGTERM the moment it
  // reads that line (one run in six was killed by the signal's default action when they came after).
  const stopped = drainOnSignal(app, () => process.off('SIGHUP', onHup));
  process.stdout.write(`listening on ${url}\n`);
  if (httpUrl !== undefined) process.stdout.write(`redirecting ${httpUrl} to HTTPS\n`);
  return stopped;
}

/**
 * The first SIGTERM or SIGINT drains the server (`close()`), then resolves with exit 0. Installed before
 * the listening line: a supervisor may send SIGTERM the moment it reads that line.
 */
function drainOnSignal(
  app: { readonly logger: { info(msg: string): void }; close(): Promise<void> },
  onStop: () => void = () => {},
): Promise<number> {
  return new Promise<number>((resolve) => {
    const stop = (signal: string) => {
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
      onStop();
      app.logger.info(`${signal}: draining`);
      app.close().then(() => resolve(EXIT_OK));
    };
    const onTerm = () => stop('SIGTERM');
    const onInt = () => stop('SIGINT');
    process.on('SIGTERM', onTerm);
    process.on('SIGINT', onInt);
  });
}

/** After a native server's drain, how long a connection the runtime cannot drop may keep the process. */
const LEFTOVER_EXIT_MS = 1000;

/** `gatehouse serve` on Bun.serve or Deno.serve (app/native.ts): listens, then drains on SIGTERM/SIGINT. */
async function serveNative(
  runtime: NativeRuntime,
  options: ReturnType<typeof toServerOptions>,
): Promise<number> {
  const app = createNativeServer(runtime, options);
  let listening: Awaited<ReturnType<typeof app.listen>>;
  try {
    listening = await app.listen();
  } catch (err) {
    const e = err as { code?: string; name?: string; message: string };
    const inUse = e.code === 'EADDRINUSE' || e.name === 'AddrInUse';
    console.error(
      `gatehouse: ${forTerminal(
        inUse
          ? `port ${options.listen.port} on ${options.listen.host} is already in use (EADDRINUSE): choose another with --port N, or --port 0 for a free one`
          : `cannot listen on ${options.listen.host}:${options.listen.port}: ${e.code ?? e.message}`,
      )}`,
    );
    await app.close();
    return EXIT_FAILURE;
  }
  // SIGHUP reloads certificates (Bun.serve swaps servers on the port, app/native.ts); where the server
  // cannot, it says so rather than exit by the signal's default action.
  const reload = app.reload;
  const onHup = () =>
    reload === undefined
      ? app.logger.warn(`SIGHUP: ${listening.server} cannot reload certificates; restart to serve new ones`)
      : void reload();
  if (options.tls !== undefined) process.on('SIGHUP', onHup);
  // tls.watch left to its default on a server that cannot swap: served without it, said once.
  if (options.tls?.watch === true && reload === undefined)
    process.stderr.write(
      `gatehouse: note: ${listening.server} reads the certificates at start only (no tls.watch, no reload on SIGHUP): restart to serve new ones\n`,
    );
  const stopped = drainOnSignal(app, () => process.off('SIGHUP', onHup)).then((code) => {
    // Deno.serve cannot drop a connection whose peer never finishes (a WebSocket that never answers
    // the Close): once the drain is over, such a leftover does not hold the process (an unref'd timer
    // fires only when something else keeps it alive).
    setTimeout(() => process.exit(code), LEFTOVER_EXIT_MS).unref();
    return code;
  });
  process.stdout.write(`on ${listening.runtime} (${listening.server})\n`);
  process.stdout.write(`listening on ${listening.url}\n`);
  if (listening.httpUrl !== undefined) process.stdout.write(`redirecting ${listening.httpUrl} to HTTPS\n`);
  return stopped;
}

/** Waits for the primary's answer to `drained` (workers.ts), at most 2 s (the primary may be gone). */
function drainedRoundTrip(): Promise<void> {
  if (!cluster.worker?.isConnected()) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      process.off('message', onMessage);
      resolve();
    };
    const onMessage = (m: { gatehouse?: string }) => {
      if (m?.gatehouse === 'drained-ack') done();
    };
    const timer = setTimeout(done, 2000);
    process.on('message', onMessage);
    process.send?.({ gatehouse: 'drained' } satisfies WorkerMessage);
  });
}

/**
 * A cluster worker: tells the primary it listens, drains on the primary's SIGTERM (or when the primary
 * is gone), and ignores SIGINT and SIGHUP, which the primary handles for the whole group (a Ctrl-C
 * reaches every process; SIGHUP replaces workers, and new workers read the certificates afresh).
 */
function serveAsWorker(
  app: ReturnType<typeof createGatehouse>,
  listening: { url: string; httpUrl?: string | undefined },
): Promise<number> {
  const ignore = () => {};
  process.on('SIGINT', ignore);
  process.on('SIGHUP', ignore);
  process.send?.({ gatehouse: 'listening', ...listening } satisfies WorkerMessage);
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (why: string) => {
      if (stopping) return;
      stopping = true;
      app.logger.info(`${why}: draining`);
      app
        .close()
        .then(() => drainedRoundTrip())
        .then(() => {
          // The IPC channel would keep the process alive.
          if (cluster.worker?.isConnected()) process.disconnect();
          resolve(EXIT_OK);
        });
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.once('disconnect', () => stop('primary gone'));
  });
}

/** Runs the CLI; resolves with the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  try {
    if (first === '-h' || first === '--help' || first === 'help') {
      process.stdout.write(HELP);
      return EXIT_OK;
    }
    if (first === '-v' || first === '--version') {
      process.stdout.write(`${version()}\n`);
      return EXIT_OK;
    }
    if (first === 'precompress') {
      const { precompressCommand } = await import('./precompress.js');
      return await precompressCommand(rest);
    }
    if (first === 'sw-manifest') {
      const { swManifestCommand } = await import('./sw-manifest.js');
      return await swManifestCommand(rest, {
        cwd: process.cwd(),
        stdout: process.stdout,
        stderr: process.stderr,
      });
    }
    if (first === 'hash') {
      const { hashCommand } = await import('./hash.js');
      return await hashCommand(rest, { cwd: process.cwd(), stdout: process.stdout, stderr: process.stderr });
    }
    if (first === 'hash-password') {
      const { hashPasswordCommand } = await import('./hash-password.js');
      return await hashPasswordCommand(rest, {
        stdin: process.stdin,
        stdout: process.stdout,
        stderr: process.stderr,
      });
    }
    if (first === 'cert') {
      const { certCommand } = await import('./cert.js');
      return await certCommand(rest, { cwd: process.cwd(), stdout: process.stdout, stderr: process.stderr });
    }
    if (first === 'trust') {
      const { trustCommand } = await import('./trust.js');
      return await trustCommand(rest, { cwd: process.cwd(), stdout: process.stdout, stderr: process.stderr });
    }
    if (first === 'check') {
      const { checkCommand } = await import('./check.js');
      return await checkCommand(rest, {
        cwd: process.cwd(),
        stdout: process.stdout,
        stderr: process.stderr,
        color: process.stdout.isTTY === true && (process.env.NO_COLOR ?? '') === '',
      });
    }
    if (first === 'serve') return await serve(rest);
    const meant = first === undefined ? undefined : mistypedCommand(first, process.cwd());
    if (meant !== undefined) throw new UsageError(`unknown command ${first} (did you mean ${meant}?)`);
    return await serve(argv);
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError || err instanceof WebSocketConfigError) {
      process.stderr.write(`gatehouse: ${forTerminalLines(err.message)}\n`);
      if (err instanceof UsageError) process.stderr.write('Run gatehouse --help for usage.\n');
      return EXIT_USAGE;
    }
    throw err;
  }
}
