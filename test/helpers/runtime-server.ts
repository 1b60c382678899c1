// The runtime matrix (issue 39): under GATEHOUSE_TEST_RUNTIME=bun|deno, startServer (http.ts) serves
// the config from a child process of that runtime, on its own server (Bun.serve, Deno.serve through
// createNativeServer: test/fixtures/runtimes/serve-config.mjs, on dist/), so the static, policy and
// routes suites run once more on each runtime, with the same assertions, over real sockets.
// The config crosses as JSON through the CLI's loader: a config that holds a function (or any value
// JSON would change) is refused here by key, never sent without it. What the suites read from the
// in-process server object is there as far as it can be: `options` (the same config, parsed here),
// `static.files.compressionStats()` (asked of the child, so it returns a Promise), `close()`; the rest
// (`server`, `tls`, `logger`) throws, naming the member, so a file that reads it stays off the matrix.
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { parseConfig, toServerOptions } from '../../src/config/load.js';
import type { GatehouseConfigInput } from '../../src/config/schema.js';
import type { Gatehouse } from '../../src/server/app/gatehouse.js';
import type { CompressionStats } from '../../src/server/static/compressor.js';
import { FIXTURES, RUNTIMES, requireRuntime, type TestRuntime } from './runtimes.js';

export { TEST_RUNTIME } from './runtimes.js';

/** The key path of the first value in `v` that JSON would drop or change, if any. */
function notJson(v: unknown, path: string): string | undefined {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return undefined;
  if (typeof v === 'number') return Number.isFinite(v) ? undefined : path;
  if (typeof v !== 'object') return path;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const at = notJson(v[i], `${path}[${i}]`);
      if (at !== undefined) return at;
    }
    return undefined;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return path;
  for (const [k, x] of Object.entries(v)) {
    if (x === undefined) continue;
    const at = notJson(x, path === '' ? k : `${path}.${k}`);
    if (at !== undefined) return at;
  }
  return undefined;
}

type Child = ChildProcessByStdio<Writable, Readable, Readable>;

/** Each runtime server's way to ask its child (serve-config.mjs's CALLS), by its `app`. */
const children = new WeakMap<object, <T>(name: string, ...args: unknown[]) => Promise<T>>();

/**
 * Asks the process that serves `app` one of serve-config.mjs's CALLS: for a fact of the server's own
 * runtime (its zlib), where an in-process server would be asked directly.
 */
export function askRuntime<T>(app: Gatehouse, name: string, ...args: unknown[]): Promise<T> {
  const call = children.get(app);
  if (call === undefined) throw new Error('askRuntime: this server is not on the runtime matrix');
  return call<T>(name, ...args);
}

/** Gatehouse over `config` served by `runtime` in a child process, listening on 127.0.0.1:0. */
export async function startRuntimeServer(
  runtime: TestRuntime,
  config: GatehouseConfigInput,
  /** A module of test/fixtures/runtimes/ whose `routes(count)` the child serves (library-routes.mjs). */
  routesModule?: string,
): Promise<{ app: Gatehouse; url: string; port: number; close(): Promise<void> }> {
  const bad = notJson(config, '');
  if (bad !== undefined)
    throw new Error(
      `the runtime matrix (${runtime}): config key ${bad || '(root)'} is not JSON (a function?) and cannot ` +
        'cross to the runtime process: leave this file off the runtimes matrix',
    );
  // The same config, parsed here too: `app.options` for what reads it (assetUrl), and a bad config
  // fails here with the loader's own error, as it would in process.
  const options = toServerOptions(parseConfig(config));
  requireRuntime(runtime);
  const r = RUNTIMES[runtime];
  const child: Child = spawn(
    r.cmd,
    [
      ...r.args,
      `${FIXTURES}serve-config.mjs`,
      JSON.stringify(config),
      ...(routesModule ? [routesModule] : []),
    ],
    // cwd: a folder with no gatehouse.config.json for the loader to find.
    { cwd: FIXTURES, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const calls = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let nextId = 1;
  let stdout = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      for (let nl = stdout.indexOf('\n'); nl >= 0; nl = stdout.indexOf('\n')) {
        const line = stdout.slice(0, nl);
        stdout = stdout.slice(nl + 1);
        const listening = /^listening on (http:\/\/\S+)$/.exec(line);
        if (listening !== null) resolve(listening[1]!);
        else if (line.startsWith('rpc ')) {
          const m = JSON.parse(line.slice(4)) as { id: number; result?: unknown; error?: string };
          const call = calls.get(m.id);
          calls.delete(m.id);
          if (m.error !== undefined) call?.reject(new Error(`${runtime}: ${m.error}`));
          else call?.resolve(m.result);
        }
      }
    });
    exited.then((code) => reject(new Error(`${runtime} serve-config.mjs exited (${code}): ${stderr}`)));
  });
  // A crash after the listening line fails every call in flight, with what the child said.
  exited.then((code) => {
    for (const c of calls.values()) c.reject(new Error(`${runtime} exited (${code}): ${stderr}`));
    calls.clear();
  });
  const call = <T>(name: string, ...args: unknown[]) =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      calls.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.stdin.write(`${JSON.stringify({ id, call: name, args })}\n`);
    });
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      child.kill('SIGTERM');
      const code = await exited;
      if (code !== 0) throw new Error(`${runtime} serve-config.mjs exited ${code} on SIGTERM: ${stderr}`);
    })();
    return closing;
  };
  const port = Number(new URL(url).port);
  const absent = (member: string) => () => {
    throw new Error(
      `app.${member} lives in the ${runtime} process: a file that reads it stays off the runtimes matrix`,
    );
  };
  const app = Object.defineProperties(
    {
      options,
      static: { files: { compressionStats: () => call<CompressionStats>('compressionStats') } },
      listen: async () => ({ url, host: '127.0.0.1', port }),
      close,
    },
    {
      server: { get: absent('server') },
      tls: { get: absent('tls') },
      logger: { get: absent('logger') },
    },
  ) as unknown as Gatehouse;
  children.set(app, call);
  return { app, url, port, close };
}
