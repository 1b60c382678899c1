// gatehouse trust [--uninstall] [--stores nss,system]: the development CA of `serve --https` into the
// user's NSS databases (Chromium and Firefox on Linux; the database is made when missing) and the system
// store (update-ca-certificates, or update-ca-trust), as `mkcert -install` does; --uninstall undoes both.
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { forTerminal, forTerminalLines } from '../http/terminal.js';
import { devTrustInstructions, ensureDevCertificate, existingDevCaPath } from '../server/tls/dev-ca.js';
import { type FlagTable, parseFlags } from './args.js';
import { type CommandIo, EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './io.js';

const USAGE = `Usage: gatehouse trust [--uninstall] [--stores nss,system]
Installs the development CA of gatehouse serve --https (made now if missing) so that
https://localhost works without warnings:
  nss     the user's NSS databases: ~/.pki/nssdb (Chromium; created when missing) and every
          Firefox profile under ~/.mozilla/firefox; needs certutil (Debian: libnss3-tools)
  system  the system store: /usr/local/share/ca-certificates + update-ca-certificates (Debian,
          Ubuntu), or /etc/pki/ca-trust/source/anchors + update-ca-trust (Fedora); needs root,
          skipped with a note otherwise (curl, Node with --use-openssl-ca, Go and Python read it)
  --uninstall       remove it from the same stores
  --stores LIST     only these stores (default nss,system)
Exit: 0 done (a system store without root is skipped unless asked for by --stores), 1 a store
failed, 2 bad usage.
`;

export type TrustStoreName = 'nss' | 'system';

/** Where the system store lives and how it is rebuilt (tests point both at a temporary folder). */
export interface SystemStore {
  readonly dir: string;
  /** Rebuilds the store after a CA file was added. */
  readonly command: readonly string[];
  /** Rebuilds it after one was removed (Debian's needs --fresh to drop the removed CA's links). */
  readonly removeCommand: readonly string[];
}

/** Debian's layout first, then Fedora's; the first whose command is installed is used. */
const SYSTEM_STORES: readonly SystemStore[] = [
  {
    dir: '/usr/local/share/ca-certificates',
    command: ['update-ca-certificates'],
    removeCommand: ['update-ca-certificates', '--fresh'],
  },
  {
    dir: '/etc/pki/ca-trust/source/anchors',
    command: ['update-ca-trust', 'extract'],
    removeCommand: ['update-ca-trust', 'extract'],
  },
];

export interface TrustOptions {
  readonly uninstall?: boolean;
  readonly stores?: readonly TrustStoreName[];
  /** The user's home (tests: a fresh one); default os.homedir(). */
  readonly home?: string;
  /** Where Gatehouse keeps the dev CA (tests); default devDataDir(). */
  readonly dataDir?: string;
  /** The system store (tests); default the first of SYSTEM_STORES whose command exists. */
  readonly system?: SystemStore;
  /** certutil's path; default `certutil` on PATH. */
  readonly certutil?: string;
}

/** What was done to one store (one NSS database, or the system store). */
export interface TrustStep {
  readonly store: TrustStoreName;
  readonly target: string;
  readonly outcome: 'installed' | 'removed' | 'absent' | 'skipped' | 'failed';
  readonly detail?: string;
}

interface Run {
  readonly code: number;
  readonly output: string;
}

function run(cmd: string, args: readonly string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(cmd, [...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      const e = err as (NodeJS.ErrnoException & { code?: number | string }) | null;
      if (e?.code === 'ENOENT') resolve({ code: -1, output: `${cmd}: not found` });
      else
        resolve({
          code: e === null ? 0 : typeof e.code === 'number' ? e.code : 1,
          output: `${stdout}${stderr}`.trim(),
        });
    });
  });
}

const lastLine = (s: string): string => s.split('\n').filter(Boolean).at(-1) ?? '';

/** The nickname names the CA by its fingerprint, so two data folders' CAs never replace each other. */
function nickname(caPem: string): string {
  const fp = new X509Certificate(caPem).fingerprint256.replaceAll(':', '').slice(0, 16).toLowerCase();
  return `Gatehouse development CA ${fp}`;
}

/** ~/.pki/nssdb (Chromium's; made when missing on install) and each Firefox profile holding a database. */
async function nssDatabases(home: string, create: boolean): Promise<string[]> {
  const out: string[] = [];
  const chromium = join(home, '.pki', 'nssdb');
  if (create || existsSync(join(chromium, 'cert9.db'))) out.push(chromium);
  const firefox = join(home, '.mozilla', 'firefox');
  const profiles = await readdir(firefox, { withFileTypes: true }).catch(() => []);
  for (const p of profiles) {
    const dir = join(firefox, p.name);
    if (p.isDirectory() && existsSync(join(dir, 'cert9.db'))) out.push(dir);
  }
  return out;
}

async function nssStep(
  certutil: string,
  db: string,
  nick: string,
  caPath: string,
  uninstall: boolean,
): Promise<TrustStep> {
  const d = `sql:${db}`;
  const step = (outcome: TrustStep['outcome'], detail?: string): TrustStep =>
    detail === undefined
      ? { store: 'nss', target: db, outcome }
      : { store: 'nss', target: db, outcome, detail };
  if (uninstall) {
    if ((await run(certutil, ['-L', '-d', d, '-n', nick])).code !== 0) return step('absent');
    const r = await run(certutil, ['-D', '-d', d, '-n', nick]);
    return r.code === 0 ? step('removed') : step('failed', lastLine(r.output));
  }
  if (!existsSync(join(db, 'cert9.db'))) {
    // A fresh profile has no database: `certutil -A` alone fails with SEC_ERROR_BAD_DATABASE.
    await mkdir(db, { recursive: true, mode: 0o700 });
    const made = await run(certutil, ['-N', '-d', d, '--empty-password']);
    if (made.code !== 0) return step('failed', `creating the database: ${lastLine(made.output)}`);
  }
  // Trust flags C,,: a CA trusted to issue server certificates (TLS), not e-mail or code signing.
  const r = await run(certutil, ['-A', '-d', d, '-t', 'C,,', '-n', nick, '-i', caPath]);
  return r.code === 0 ? step('installed') : step('failed', lastLine(r.output));
}

async function defaultSystemStore(): Promise<SystemStore | undefined> {
  for (const s of SYSTEM_STORES) {
    const found = await run('sh', ['-c', `command -v ${s.command[0]}`]);
    if (found.code === 0) return s;
  }
  return undefined;
}

async function systemStep(
  store: SystemStore,
  fileName: string,
  caPath: string,
  uninstall: boolean,
): Promise<TrustStep> {
  const file = join(store.dir, fileName);
  const step = (outcome: TrustStep['outcome'], detail?: string): TrustStep =>
    detail === undefined
      ? { store: 'system', target: file, outcome }
      : { store: 'system', target: file, outcome, detail };
  try {
    if (uninstall) {
      if (!existsSync(file)) return step('absent');
      await rm(file);
    } else {
      await mkdir(store.dir, { recursive: true });
      await copyFile(caPath, file);
    }
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EACCES' || e.code === 'EPERM') return step('skipped', 'needs root: sudo gatehouse trust');
    return step('failed', e.message);
  }
  const command = uninstall ? store.removeCommand : store.command;
  const [cmd, ...args] = command;
  const r = await run(cmd as string, args);
  if (r.code !== 0) return step('failed', `${command.join(' ')}: ${lastLine(r.output)}`);
  return step(uninstall ? 'removed' : 'installed', command.join(' '));
}

/** Installs (or removes) the development CA in the chosen stores; one step per database or store. */
export async function trustDevCa(o: TrustOptions = {}): Promise<{ caPath: string; steps: TrustStep[] }> {
  const uninstall = o.uninstall === true;
  const stores = o.stores ?? ['nss', 'system'];
  const dataDir = o.dataDir === undefined ? {} : { dataDir: o.dataDir };
  const caPath = uninstall
    ? await existingDevCaPath(o.dataDir)
    : (await ensureDevCertificate(dataDir)).caCertPath;
  if (caPath === undefined) return { caPath: '', steps: [] };
  const caPem = await readFile(caPath, 'utf8');
  const nick = nickname(caPem);
  const steps: TrustStep[] = [];
  if (stores.includes('nss')) {
    const certutil = o.certutil ?? 'certutil';
    const dbs = await nssDatabases(o.home ?? homedir(), !uninstall);
    const probe = await run(certutil, ['-H']);
    if (probe.code === -1) {
      steps.push({
        store: 'nss',
        target: certutil,
        outcome: 'failed',
        detail: 'certutil not found (Debian: apt-get install libnss3-tools)',
      });
    } else {
      for (const db of dbs) steps.push(await nssStep(certutil, db, nick, caPath, uninstall));
    }
  }
  if (stores.includes('system')) {
    const store = o.system ?? (await defaultSystemStore());
    const fileName = `${nick.toLowerCase().replaceAll(' ', '-')}.crt`;
    if (store === undefined) {
      steps.push({
        store: 'system',
        target: '',
        outcome: 'skipped',
        detail: 'neither update-ca-certificates nor update-ca-trust is installed',
      });
    } else {
      steps.push(await systemStep(store, fileName, caPath, uninstall));
    }
  }
  return { caPath, steps };
}

function parseStores(text: string): TrustStoreName[] | string {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const n of names) if (n !== 'nss' && n !== 'system') return `--stores: nss or system, got ${n}`;
  return names.length === 0 ? '--stores: name at least one of nss, system' : (names as TrustStoreName[]);
}

/** The flags of `trust` (checked against --help and the README: test/cli/help.test.ts). */
export const TRUST_FLAGS = {
  uninstall: { type: 'boolean' },
  stores: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies FlagTable;

export interface TrustIo extends CommandIo {
  readonly home?: string;
  readonly dataDir?: string;
}

/** The `gatehouse trust` command. */
export async function trustCommand(args: string[], io: TrustIo): Promise<number> {
  let values: { uninstall?: boolean; stores?: string; help?: boolean };
  try {
    ({ values } = parseFlags(args, TRUST_FLAGS, false) as { values: typeof values });
  } catch (err) {
    io.stderr.write(`gatehouse trust: ${(err as Error).message}\n${USAGE}`);
    return EXIT_USAGE;
  }
  if (values.help === true) {
    io.stdout.write(USAGE);
    return EXIT_OK;
  }
  const stores = values.stores === undefined ? undefined : parseStores(values.stores);
  if (typeof stores === 'string') {
    io.stderr.write(`gatehouse trust: ${stores}\n`);
    return EXIT_USAGE;
  }
  if (process.platform !== 'linux') {
    const ca = (await ensureDevCertificate(io.dataDir === undefined ? {} : { dataDir: io.dataDir }))
      .caCertPath;
    io.stderr.write(
      `gatehouse trust installs on Linux only; here, by hand:\n${forTerminalLines(devTrustInstructions(ca))}\n`,
    );
    return EXIT_FAILURE;
  }
  const uninstall = values.uninstall === true;
  const result = await trustDevCa({
    uninstall,
    ...(stores === undefined ? {} : { stores }),
    ...(io.home === undefined ? {} : { home: io.home }),
    ...(io.dataDir === undefined ? {} : { dataDir: io.dataDir }),
  });
  if (result.caPath === '') {
    io.stdout.write('no development CA: nothing to remove\n');
    return EXIT_OK;
  }
  io.stdout.write(
    `${uninstall ? 'removing' : 'installing'} the development CA ${forTerminal(result.caPath)}\n`,
  );
  let failed = false;
  for (const s of result.steps) {
    const asked = stores?.includes(s.store) === true;
    if (s.outcome === 'failed' || (s.outcome === 'skipped' && asked)) failed = true;
    const detail = s.detail === undefined ? '' : ` (${s.detail})`;
    io.stdout.write(`${forTerminal(`  ${s.store} ${s.target}: ${s.outcome}${detail}`)}\n`);
  }
  if (!uninstall && !failed) io.stdout.write('restart the browser to pick it up\n');
  return failed ? EXIT_FAILURE : EXIT_OK;
}
