// `gatehouse serve --workers` driven as a user would: the CLI in a child process (tests in test/cli/workers*.test.ts).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testPki } from './certs.js';
import { makeSite } from './http.js';
import { waitUntil } from './wait.js';

export const BIN = join(import.meta.dirname, '../../bin/gatehouse.js');

export interface Cli {
  child: ChildProcess;
  url: Promise<string>;
  exit: Promise<number | null>;
  output(): string;
  errors(): string;
  /** The JSON log lines so far. */
  lines(): Record<string, unknown>[];
}

export function startCli(args: string[], cwd?: string, env?: NodeJS.ProcessEnv): Cli {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(env && { env: { ...process.env, ...env } }),
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const url = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)\n/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
  url.catch(() => {});
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = () =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { child, url, exit, output: () => out, errors: () => err, lines };
}

/** `serve --workers 2` over TLS with a test PKI's leaf in a temp folder (removed by the caller). */
export async function startTlsWorkers() {
  const pki = await testPki();
  const dir = makeSite({ 'a.txt': 'a' });
  const certDir = mkdtempSync(join(tmpdir(), 'gatehouse-workers-tls-'));
  const cert = join(certDir, 'cert.pem');
  const key = join(certDir, 'key.pem');
  writeFileSync(cert, pki.leaf.certPem + pki.intermediate.certPem);
  writeFileSync(key, pki.leaf.keyPem);
  const p = startCli([
    dir,
    '--port',
    '0',
    '--workers',
    '2',
    '--log',
    'json',
    '--tls-cert',
    cert,
    '--tls-key',
    key,
  ]);
  return { pki, dir, certDir, cert, key, p };
}

/** The port of the HTTPS listening line. */
export async function httpsPort(p: Cli): Promise<number> {
  const m = await waitUntil('the listening line', () =>
    /listening on https:\/\/127\.0\.0\.1:(\d+)\n/.exec(p.output()),
  );
  return Number(m[1]);
}

/** The pids of the primary's children (its workers). */
export function workerPids(primary: number): number[] {
  const r = spawnSync('ps', ['-o', 'pid=', '--ppid', String(primary)], { encoding: 'utf8' });
  return r.stdout
    .split('\n')
    .map((s) => Number(s.trim()))
    .filter((n) => n > 0);
}

/** Worker ids seen in access-log lines for `url`. */
export const servedBy = (cli: Cli, url: string) =>
  new Set(
    cli
      .lines()
      .filter((l) => l.url === url && l.status === 200)
      .map((l) => l.worker),
  );
