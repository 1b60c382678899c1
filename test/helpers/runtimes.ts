// Bun and Deno for the tests, from npm (devDependencies `bun` and `deno`: node_modules/.bin), and a
// child process that prints the `listening on URL` line `gatehouse serve` prints.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export type RuntimeName = 'node' | 'bun' | 'deno';

const binOf = (name: string) => fileURLToPath(new URL(`../../node_modules/.bin/${name}`, import.meta.url));

/** The command that runs a script on each runtime (Deno with every permission: files, net, env). */
export const RUNTIMES: Record<RuntimeName, { readonly cmd: string; readonly args: readonly string[] }> = {
  node: { cmd: process.execPath, args: [] },
  bun: { cmd: binOf('bun'), args: [] },
  deno: { cmd: binOf('deno'), args: ['run', '-A'] },
};

/** Fails loudly when a runtime is missing: `npm ci` installs both (a skipped runtime would hide a bug). */
export function requireRuntime(name: RuntimeName): void {
  if (!existsSync(RUNTIMES[name].cmd))
    throw new Error(`${RUNTIMES[name].cmd} is missing: npm ci installs the ${name} devDependency`);
}

export const FIXTURES = fileURLToPath(new URL('../fixtures/runtimes/', import.meta.url));
export const GATEHOUSE_BIN = fileURLToPath(new URL('../../bin/gatehouse.js', import.meta.url));

export interface Listening {
  /** `http://127.0.0.1:PORT` (or https://) from the `listening on` line. */
  readonly url: string;
  /** What the process printed to stdout so far (that line and what came before it, at least). */
  readonly stdout: string;
  /** What it printed to stderr so far. */
  stderr(): string;
  /** Sends the process a signal (SIGHUP: reload certificates). */
  signal(name: NodeJS.Signals): void;
  /** SIGTERM, then the exit code (null: killed by a signal). */
  close(): Promise<number | null>;
}

/** Runs `script args...` to its end on `runtime` (at most `timeoutMs`): exit code, stdout, stderr. */
export function runToExit(
  runtime: RuntimeName,
  script: string,
  args: readonly string[],
  o: { cwd?: string; timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  requireRuntime(runtime);
  const r = RUNTIMES[runtime];
  const child = spawn(r.cmd, [...r.args, script, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: o.cwd,
    env: { ...process.env, NO_COLOR: '1' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    stdout += c;
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 20_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

/** Runs `script args...` on `runtime` and resolves once it prints `listening on URL`. */
export function runListening(
  runtime: RuntimeName,
  script: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<Listening> {
  requireRuntime(runtime);
  const r = RUNTIMES[runtime];
  const child = spawn(r.cmd, [...r.args, script, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', ...env },
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stderr = '';
  let stdout = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  return new Promise<Listening>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const m = /^listening on (https?:\/\/\S+)$/m.exec(stdout);
      if (m === null) return;
      resolve({
        url: m[1]!,
        get stdout() {
          return stdout;
        },
        stderr: () => stderr,
        signal: (name) => void child.kill(name),
        close: () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          return exited;
        },
      });
    });
    exited.then((code) =>
      reject(new Error(`${runtime} ${script} exited (${code}) before listening: ${stderr}`)),
    );
  });
}

/** The runtime matrix's runtime (scripts/run-tests.mjs --runtime): whose own server the tests' servers are. */
export type TestRuntime = 'bun' | 'deno';

export const TEST_RUNTIME: TestRuntime | undefined = (() => {
  const r = process.env.GATEHOUSE_TEST_RUNTIME;
  if (r === undefined || r === '') return undefined;
  if (r !== 'bun' && r !== 'deno') throw new Error(`GATEHOUSE_TEST_RUNTIME=${r}: bun or deno`);
  return r;
})();

/**
 * True when the tests run against Gatehouse served by `runtime` (by either when none is named): for the
 * one assertion a runtime's own server cannot meet, where the file says why (docs/runtimes.md).
 */
export function onRuntime(runtime?: TestRuntime): boolean {
  return runtime === undefined ? TEST_RUNTIME !== undefined : TEST_RUNTIME === runtime;
}

/**
 * Bun.serve hands the handler a Request whose URL went through the WHATWG URL parser: dot segments are
 * resolved and `\` is read as `/` before Gatehouse sees the target, and its own parser answers a target
 * it cannot make a URL of (`OPTIONS *`, a raw CR or LF) itself. So the 400 that Node and Deno get from
 * Gatehouse for such a raw target cannot be Gatehouse's on Bun; the normalized path is answered instead,
 * inside the root as ever (docs/runtimes.md, "What Bun normalizes").
 */
export const RAW_TARGET_NORMALIZED = onRuntime('bun');

/**
 * A fetch handler returns one Response: there is no way to send a 1xx interim response before it on
 * Bun.serve or Deno.serve, so a proxied 103 (or a static page's Early Hints) reaches the client only as
 * the final response (docs/runtimes.md, "103 Early Hints"; test/conformance/README.md, `interim-*`).
 */
export const NO_INTERIM_RESPONSES = onRuntime();

/**
 * A Response has no trailer fields (RFC 9110 §6.5) on Bun.serve or Deno.serve: trailers an upstream
 * sends do not reach the client through the proxy (docs/runtimes.md).
 */
export const NO_TRAILERS = onRuntime();

/**
 * Bun.serve writes a streamed Response's head only with its first body byte (or its end): a proxied
 * head whose body starts later (an event stream) reaches the client when the body does
 * (docs/runtimes.md).
 */
export const HEAD_WAITS_FOR_BODY = onRuntime('bun');

/**
 * Bun's fetch (the proxy's requests to an https upstream there, proxy/fetch-pool.ts) has no connect step
 * of its own to time: a TCP connect or TLS handshake that stalls ends at `timeouts.headersMs` (504
 * "response timeout"), not at `connectMs` (docs/runtimes.md). http upstreams time it (socket-pool.ts).
 */
export const NO_CONNECT_TIMEOUT = onRuntime('bun');

/**
 * Deno.serve has no idle bound on a connection and no setting for one: a keep-alive connection left
 * idle after its response (and a request head never finished) stays open until the client closes it,
 * where Node closes it after `limits.keepAliveTimeoutMs` plus 1 s (and answers a slow head 408).
 * Bun.serve's idleTimeout does (fetch/hosts.ts). By runtime, for the files that start both
 * (docs/runtimes.md).
 */
export const IDLE_CONNECTIONS_KEPT: Readonly<Record<TestRuntime, boolean>> = { bun: false, deno: true };

/**
 * permessage-deflate (RFC 7692) per endpoint: Bun.serve sets it for the whole server (on only when every
 * `websocket` endpoint asks for it) and Deno.serve has none, so an endpoint beside others that do not
 * ask, or any endpoint on Deno, speaks uncompressed (docs/websocket.md, docs/runtimes.md).
 */
export const NO_ENDPOINT_DEFLATE = onRuntime();

/**
 * Deno.serve sends a Response's `Connection: close` but keeps the connection open (for the next request
 * or until the client closes it): a refused WebSocket handshake's connection, which Node and Bun close
 * after the answer, stays open there (docs/runtimes.md).
 */
export const CONNECTION_CLOSE_KEPT_OPEN = onRuntime('deno');

/**
 * On the fetch face an answer sent before the request's content is in (a 413 on Content-Length) does not
 * say `Connection: close`: the host reads the rest and discards it, since Bun.serve closing under the
 * client's writes resets the connection and the answer is lost (fetch/sink.ts, docs/runtimes.md).
 */
export const EARLY_ANSWER_KEEPS_OPEN = onRuntime();

/**
 * Deno.serve sends a 205 without `Content-Length: 0`, whatever the Response's fields say (RFC 9110
 * §15.3.6 asks a server for it; a strict HTTP/1.1 client then reads to the close): docs/runtimes.md.
 */
export const NO_LENGTH_ON_205 = onRuntime('deno');

/** Deno.serve adds `Connection: close` by itself to an answer sent while the request body is unread. */
export const EARLY_CLOSE_BY_HOST = onRuntime('deno');

/** `gatehouse serve SITE --host 127.0.0.1 --port 0 ...args` run by `runtime`, once it listens. */
export function serveOn(
  runtime: RuntimeName,
  site: string,
  args: readonly string[] = [],
  env: Record<string, string> = {},
): Promise<Listening> {
  return runListening(
    runtime,
    GATEHOUSE_BIN,
    ['serve', site, '--host', '127.0.0.1', '--port', '0', ...args],
    env,
  );
}
