// `gatehouse serve` as users run it (node bin/gatehouse.js, the built dist/) in a child process, for
// browser tests that need the real CLI: a restart on the same port, or `npm start`'s exact command.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';

export const REPO_ROOT = join(import.meta.dirname, '../..');
export const GATEHOUSE_BIN = join(REPO_ROOT, 'bin/gatehouse.js');

/**
 * Copies the built client into `siteDir` as a page with no bundler loads it: /client/ and the pure
 * engine it imports relatively (/cache/, /http/), without the .d.ts files. npm test builds first.
 */
export function copyClientInto(siteDir: string): void {
  const dist = join(REPO_ROOT, 'dist');
  assert.ok(existsSync(join(dist, 'client/index.js')), 'no dist/client/index.js: run npm run build first');
  for (const folder of ['client', 'cache', 'http'])
    cpSync(join(dist, folder), join(siteDir, folder), {
      recursive: true,
      filter: (src) => !src.endsWith('.d.ts'),
    });
}

export interface CliServer {
  readonly child: ChildProcess;
  /** `http://127.0.0.1:PORT`, from the `listening on` line. */
  readonly url: string;
  readonly port: number;
  /** Everything the process printed to stdout so far (the access log with `--log json`). */
  stdout(): string;
  stderr(): string;
  /** Sends `signal` (SIGKILL: a crash, no draining) and resolves once the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Runs `node ARGS...` (ARGS usually start with bin/gatehouse.js) in `cwd` and resolves once it prints
 * `listening on http://...`; rejects with its stderr if it exits first.
 */
export function startCli(args: readonly string[], o: { cwd?: string } = {}): Promise<CliServer> {
  return startProcess(process.execPath, args, o);
}

/**
 * Runs a shell command line (an npm script's, with `npm_node_execpath` set as npm sets it) through
 * `sh -c 'exec ...'`, so the server is the child itself and a signal reaches it; resolves once it listens.
 */
export function startShell(commandLine: string, o: { cwd?: string } = {}): Promise<CliServer> {
  return startProcess('sh', ['-c', `exec ${commandLine}`], {
    ...o,
    env: { ...process.env, npm_node_execpath: process.execPath },
  });
}

async function startProcess(
  file: string,
  args: readonly string[],
  o: { cwd?: string; env?: NodeJS.ProcessEnv },
): Promise<CliServer> {
  const child = spawn(file, [...args], {
    cwd: o.cwd ?? REPO_ROOT,
    env: o.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code, signal) =>
      reject(new Error(`gatehouse exited (${code ?? signal}) before listening: ${err}`)),
    );
  });
  return {
    child,
    url,
    port: Number(new URL(url).port),
    stdout: () => out,
    stderr: () => err,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** The JSON access-log records a `--log json` server printed. */
export function accessLog(stdout: string): { method?: string; url?: string; status?: number }[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { method?: string; url?: string; status?: number });
}
