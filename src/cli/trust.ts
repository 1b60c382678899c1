// gatehouse trust [--uninstall] [--dry-run] [--stores nss,system]: the development CA of `serve --https`
// into the user's NSS databases (Chromium and Firefox on Linux; the database is made when missing) and
// the system store (update-ca-certificates, or update-ca-trust), as `mkcert -install` does; --uninstall
// undoes both; --dry-run only says which databases and files it would change.
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { constants, existsSync } from 'node:fs';
import { access, copyFile, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  devCaPaths,
  devDataDir,
  devTrustInstructions,
  ensureDevCa,
  existingDevCaPath,
} from '../certs/dev-ca.js';
import { forTerminal, forTerminalLines } from '../http/terminal.js';
import { type FlagTable, parseFlags } from './args.js';
import { type CommandIo, EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './io.js';

const USAGE = `Usage: gatehouse trust [--uninstall] [--dry-run] [--stores nss,system]
Installs the development CA of gatehouse serve --https (made now if missing) so that
https://localhost (and the --name names of serve --https) works without warnings:
  nss     the user's NSS databases: ~/.pki/nssdb (Chromium; created when missing) and every
          Firefox profile under ~/.mozilla/firefox; needs certutil (Debian: libnss3-tools)
  system  the system store: /usr/local/share/ca-certificates + update-ca-certificates (Debian,
          Ubuntu), or /etc/pki/ca-trust/source/anchors + update-ca-trust (Fedora); needs root,
          skipped with a note otherwise (curl, Go, Python's ssl and Node with --use-system-ca read it)
  --uninstall       remove it from the same stores
  --dry-run         print the databases and files it would change, and change nothing
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
  /** Only find out what would change: no CA is made, no database or file is touched. */
  readonly dryRun?: boolean;
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

/** What was done to one store (one NSS database, or the system store), or would be (dryRun). */
export interface TrustStep {
  readonly store: TrustStoreName;
  readonly target: string;
  readonly outcome:
    | 'installed'
    | 'removed'
    | 'absent'
    | 'skipped'
    | 'failed'
    | 'would install'
    | 'would remove'
    | 'already installed';
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

/** The NSS step of a dry run: reads the database (certutil -L), changes nothing. */
async function nssPlan(
  certutil: string,
  db: string,
  nick: string | undefined,
  uninstall: boolean,
): Promise<TrustStep> {
  const step = (outcome: TrustStep['outcome'], detail: string): TrustStep => ({
    store: 'nss',
    target: db,
    outcome,
    detail,
  });
  const exists = existsSync(join(db, 'cert9.db'));
  const listed =
    exists && nick !== undefined && (await run(certutil, ['-L', '-d', `sql:${db}`, '-n', nick])).code === 0;
  const name = `"${nick ?? 'Gatehouse development CA <fingerprint>'}"`;
  if (uninstall)
    return listed ? step('would remove', `certutil -D -n ${name}`) : step('absent', 'nothing to remove');
  if (listed) return step('already installed', `${name} is there; it would be added again`);
  const add = `add ${name} trusted to issue TLS server certificates, flags C,,`;
  return exists ? step('would install', add) : step('would install', `create the database, then ${add}`);
}

/** The system store's step of a dry run: looks at the file and the folder's permissions only. */
async function systemPlan(
  store: SystemStore,
  fileName: string,
  caPem: string | undefined,
  uninstall: boolean,
): Promise<TrustStep> {
  const file = join(store.dir, fileName);
  const step = (outcome: TrustStep['outcome'], detail: string): TrustStep => ({
    store: 'system',
    target: file,
    outcome,
    detail,
  });
  const present = existsSync(file);
  const command = (uninstall ? store.removeCommand : store.command).join(' ');
  // The nearest folder that exists decides whether this user may write there.
  let dir = store.dir;
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  const writable = await access(dir, constants.W_OK).then(
    () => true,
    () => false,
  );
  const root = writable ? '' : '; needs root: sudo gatehouse trust';
  if (uninstall) {
    return present
      ? step('would remove', `delete it, then run ${command}${root}`)
      : step('absent', 'nothing to remove');
  }
  if (present && caPem !== undefined && (await readFile(file, 'utf8').catch(() => '')) === caPem)
    return step('already installed', `the same CA is there; ${command} would run again${root}`);
  return step('would install', `copy the CA there, then run ${command}${root}`);
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

/**
 * Installs (or removes) the development CA in the chosen stores; one step per database or store.
 * With dryRun, each step says what would be done, and nothing is made or changed; `caMissing` is then
 * true when there is no CA yet (a real run would make it at `caPath`).
 */
export async function trustDevCa(
  o: TrustOptions = {},
): Promise<{ caPath: string; steps: TrustStep[]; caMissing?: boolean }> {
  const uninstall = o.uninstall === true;
  const dryRun = o.dryRun === true;
  const stores = o.stores ?? ['nss', 'system'];
  const dataDir = o.dataDir === undefined ? {} : { dataDir: o.dataDir };
  const existing = await existingDevCaPath(o.dataDir);
  if (uninstall && existing === undefined) return { caPath: '', steps: [] };
  const caPath =
    existing ??
    (dryRun ? devCaPaths(o.dataDir ?? devDataDir()).caCert : (await ensureDevCa(dataDir)).caCertPath);
  const caPem = existing === undefined && dryRun ? undefined : await readFile(caPath, 'utf8');
  const nick = caPem === undefined ? undefined : nickname(caPem);
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
      for (const db of dbs)
        steps.push(
          dryRun
            ? await nssPlan(certutil, db, nick, uninstall)
            : await nssStep(certutil, db, nick as string, caPath, uninstall),
        );
    }
  }
  if (stores.includes('system')) {
    const store = o.system ?? (await defaultSystemStore());
    const fileName = `${(nick ?? 'Gatehouse development CA <fingerprint>').toLowerCase().replaceAll(' ', '-')}.crt`;
    if (store === undefined) {
      steps.push({
        store: 'system',
        target: '',
        outcome: 'skipped',
        detail: 'neither update-ca-certificates nor update-ca-trust is installed',
      });
    } else {
      steps.push(
        dryRun
          ? await systemPlan(store, fileName, caPem, uninstall)
          : await systemStep(store, fileName, caPath, uninstall),
      );
    }
  }
  return caPem === undefined ? { caPath, steps, caMissing: true } : { caPath, steps };
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
  'dry-run': { type: 'boolean' },
  stores: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies FlagTable;

export interface TrustIo extends CommandIo {
  readonly home?: string;
  readonly dataDir?: string;
  /** The system store (tests); default the machine's. */
  readonly system?: SystemStore;
}

/** The `gatehouse trust` command. */
export async function trustCommand(args: string[], io: TrustIo): Promise<number> {
  let values: { uninstall?: boolean; 'dry-run'?: boolean; stores?: string; help?: boolean };
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
  const dryRun = values['dry-run'] === true;
  if (process.platform !== 'linux') {
    const ca = dryRun
      ? ((await existingDevCaPath(io.dataDir)) ?? devCaPaths(io.dataDir ?? devDataDir()).caCert)
      : (await ensureDevCa(io.dataDir === undefined ? {} : { dataDir: io.dataDir })).caCertPath;
    io.stderr.write(
      `gatehouse trust installs on Linux only; here, by hand:\n${forTerminalLines(devTrustInstructions(ca))}\n`,
    );
    return EXIT_FAILURE;
  }
  const uninstall = values.uninstall === true;
  const result = await trustDevCa({
    uninstall,
    dryRun,
    ...(stores === undefined ? {} : { stores }),
    ...(io.home === undefined ? {} : { home: io.home }),
    ...(io.dataDir === undefined ? {} : { dataDir: io.dataDir }),
    ...(io.system === undefined ? {} : { system: io.system }),
  });
  if (result.caPath === '') {
    io.stdout.write('no development CA: nothing to remove\n');
    return EXIT_OK;
  }
  if (dryRun) {
    io.stdout.write('dry run: nothing is changed\n');
    io.stdout.write(
      `would ${uninstall ? 'remove' : 'install'} the development CA ${forTerminal(result.caPath)}` +
        `${result.caMissing === true ? ' (made first: it does not exist yet)' : ''}\n`,
    );
  } else {
    io.stdout.write(
      `${uninstall ? 'removing' : 'installing'} the development CA ${forTerminal(result.caPath)}\n`,
    );
  }
  let failed = false;
  for (const s of result.steps) {
    const asked = stores?.includes(s.store) === true;
    if (s.outcome === 'failed' || (s.outcome === 'skipped' && asked)) failed = true;
    const detail = s.detail === undefined ? '' : ` (${s.detail})`;
    io.stdout.write(`${forTerminal(`  ${s.store} ${s.target}: ${s.outcome}${detail}`)}\n`);
  }
  if (!uninstall && !failed && !dryRun) io.stdout.write('restart the browser to pick it up\n');
  return failed ? EXIT_FAILURE : EXIT_OK;
}
