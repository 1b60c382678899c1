// The local development CA behind `gatehouse serve --https` (like mkcert): a CA made once under the
// user's data directory, and a leaf it signs for localhost and the names the user lists (`--name`),
// renewed when near expiry or when the list changes.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir, hostname, userInfo } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { devNameProblem, normalizeDevName } from './dev-names.js';
import { type IssuedPem, issueCertificate } from './x509.js';

const DAY_MS = 86_400_000;
/** CA lifetime: 10 years (mkcert's choice); it only ever signs development leaves. */
export const DEV_CA_LIFETIME_MS = 3650 * DAY_MS;
/** Leaf lifetime: browsers refuse server certificates valid for longer than 398 days. */
export const DEV_LEAF_LIFETIME_MS = 397 * DAY_MS;
/** Reissue the leaf when fewer than this many milliseconds are left. */
export const DEV_LEAF_RENEW_BEFORE_MS = 30 * DAY_MS;
/** Backdating of notBefore, so a client whose clock is a little behind still accepts a fresh leaf. */
const BACKDATE_MS = 3_600_000;
/** The names on the development leaf. */
export const DEV_LEAF_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '::1'];

/** The leaf's names: the defaults, then the user's (`tls.names`), normalized, each once. */
export function devLeafHosts(names: readonly string[] = []): string[] {
  return [...new Set([...DEV_LEAF_HOSTS, ...names].map(normalizeDevName))];
}

/** The DNS names and IP addresses of a certificate's subjectAltName, normalized as devLeafHosts's. */
export function sanHosts(cert: X509Certificate): string[] {
  const san = cert.subjectAltName;
  if (san === undefined) return [];
  return san.split(', ').map((entry) => {
    if (entry.startsWith('DNS:')) return normalizeDevName(entry.slice(4));
    if (entry.startsWith('IP Address:')) return normalizeDevName(entry.slice(11));
    return entry; // another kind of name: never one we ask for, so the leaf is reissued
  });
}
/** A lock older than this is from a process that hung or died holding it (making keys takes ms). */
const STALE_LOCK_MS = 10_000;
const LOCK_WAIT_MS = 30_000;

export interface DevCaPaths {
  dir: string;
  caCert: string;
  caKey: string;
  leafCert: string;
  leafKey: string;
  lock: string;
}

/**
 * Where Gatehouse keeps its data: GATEHOUSE_DATA_DIR, else $XDG_DATA_HOME/gatehouse, else the
 * platform's per-user data folder. The arguments are for tests; the defaults read this process.
 */
export function devDataDir(
  env: Readonly<Record<string, string | undefined>> = process.env,
  platform: NodeJS.Platform = process.platform,
  home: string = homedir(),
): string {
  const explicit = env.GATEHOUSE_DATA_DIR;
  if (explicit !== undefined && explicit !== '') return explicit;
  const xdg = env.XDG_DATA_HOME;
  // XDG Base Directory spec: a relative XDG_DATA_HOME is invalid and must be ignored.
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, 'gatehouse');
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'gatehouse');
  if (platform === 'win32') {
    const local = env.LOCALAPPDATA;
    return local !== undefined && local !== ''
      ? join(local, 'gatehouse')
      : join(home, 'AppData', 'Local', 'gatehouse');
  }
  return join(home, '.local', 'share', 'gatehouse');
}

export function devCaPaths(dataDir: string = devDataDir()): DevCaPaths {
  const dir = join(dataDir, 'dev-ca');
  return {
    dir,
    caCert: join(dir, 'ca.pem'),
    caKey: join(dir, 'ca-key.pem'),
    leafCert: join(dir, 'localhost.pem'),
    leafKey: join(dir, 'localhost-key.pem'),
    lock: join(dir, '.lock'),
  };
}

/** What to do with the stored leaf; a pure decision over the parsed files and the clock. */
export type DevLeafAction = { kind: 'keep' } | { kind: 'reissue'; reason: string };

export interface DevLeafFacts {
  /** The stored leaf and key, or undefined when missing or unparsable. */
  leaf: X509Certificate | undefined;
  leafKeyMatches: boolean;
  ca: X509Certificate;
  nowMs: number;
  /** The names the leaf must carry, exactly (devLeafHosts); default the three of DEV_LEAF_HOSTS. */
  hosts?: readonly string[];
}

export function devLeafAction(f: DevLeafFacts): DevLeafAction {
  const { leaf } = f;
  if (leaf === undefined) return { kind: 'reissue', reason: 'no leaf yet' };
  if (!f.leafKeyMatches) return { kind: 'reissue', reason: 'the leaf key does not match the leaf' };
  // RFC 5280 §6.1.3 (a)(1)-(2): signed by the CA's key, issuer name = CA subject.
  if (!leaf.checkIssued(f.ca) || !leaf.verify(f.ca.publicKey)) {
    return { kind: 'reissue', reason: 'the leaf is not signed by the stored CA' };
  }
  if (Date.parse(leaf.validFrom) > f.nowMs) return { kind: 'reissue', reason: 'the leaf is not valid yet' };
  const leftMs = Date.parse(leaf.validTo) - f.nowMs;
  if (!(leftMs > 0)) return { kind: 'reissue', reason: 'the leaf has expired' };
  if (leftMs < DEV_LEAF_RENEW_BEFORE_MS) {
    return { kind: 'reissue', reason: `the leaf expires in ${Math.ceil(leftMs / DAY_MS)} days` };
  }
  // The same set of names, in any order: a name added to or dropped from the list makes a new leaf.
  const want = f.hosts ?? DEV_LEAF_HOSTS;
  const have = new Set(sanHosts(leaf));
  if (have.size !== want.length || !want.every((h) => have.has(h))) {
    return { kind: 'reissue', reason: `the leaf does not name exactly ${want.join(', ')}` };
  }
  return { kind: 'keep' };
}

export interface DevCertificate {
  caCertPath: string;
  certPem: string;
  keyPem: string;
  created: { ca: boolean; leaf: boolean };
}

export interface EnsureDevOptions {
  dataDir?: string;
  /** Names and addresses on the leaf besides localhost, 127.0.0.1 and ::1 (checked: dev-names.ts). */
  names?: readonly string[];
  nowMs?: number;
  log?: (line: string) => void;
}

/** A dev CA file that exists but cannot be used: the user should remove the folder to start over. */
export class DevCaError extends Error {
  override name = 'DevCaError';
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Writes through a temp file and rename, so a reader never sees half a PEM. */
async function writeAtomic(path: string, data: string, mode: number): Promise<void> {
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(tmp, data, { mode, flag: 'wx' });
  await chmod(tmp, mode); // the umask may have narrowed or the platform ignored `mode`
  await rename(tmp, path);
}

/** True when the lock names a process id that no longer exists on this host. */
async function holderDied(lockPath: string): Promise<boolean> {
  const pid = Number((await readIfExists(lockPath))?.trim());
  if (!Number.isSafeInteger(pid) || pid <= 0) return false; // being written: not judged yet
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** An exclusive lock file (O_EXCL); a stale one (its holder died) is taken over. */
async function withLock<T>(lockPath: string, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const fh = await open(lockPath, 'wx', 0o600);
      await fh.writeFile(`${process.pid}\n`);
      await fh.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const st = await stat(lockPath).catch(() => undefined);
      if (st !== undefined && (Date.now() - st.mtimeMs > STALE_LOCK_MS || (await holderDied(lockPath)))) {
        // Remove only the lock judged stale: another waiter may have replaced it meanwhile.
        const again = await stat(lockPath).catch(() => undefined);
        if (again?.ino === st.ino) await rm(lockPath, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new DevCaError(`${lockPath}: held by another process`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  try {
    return await fn();
  } finally {
    await rm(lockPath, { force: true });
  }
}

function caName(): string {
  let user = process.env.USER ?? process.env.USERNAME ?? 'user';
  try {
    user = userInfo().username;
  } catch {
    // no passwd entry (containers): keep the environment's name
  }
  return `Gatehouse development CA ${user}@${hostname()}`;
}

/** Loads the stored CA, or undefined when there is none; throws when it is there but unusable. */
async function loadCa(p: DevCaPaths, nowMs: number): Promise<IssuedPem | undefined> {
  const certPem = await readIfExists(p.caCert);
  const keyPem = await readIfExists(p.caKey);
  if (certPem === undefined && keyPem === undefined) return undefined;
  if (certPem === undefined || keyPem === undefined) {
    const missing = certPem === undefined ? p.caCert : p.caKey;
    throw new DevCaError(`${missing} is missing; remove ${p.dir} to make a new development CA`);
  }
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
    if (!cert.ca || !cert.checkPrivateKey(createPrivateKey(keyPem))) throw new Error('mismatch');
  } catch {
    throw new DevCaError(
      `${p.caCert} and ${p.caKey} are not a CA and its key; remove ${p.dir} to make a new one`,
    );
  }
  if (Date.parse(cert.validTo) <= nowMs) return undefined; // expired: made anew (and trusted anew)
  return { certPem, keyPem };
}

/** The CA path when a development CA exists (creates nothing). */
export async function existingDevCaPath(dataDir?: string): Promise<string | undefined> {
  const p = devCaPaths(dataDir ?? devDataDir());
  return (await readIfExists(p.caCert)) === undefined ? undefined : p.caCert;
}

async function loadLeafFacts(p: DevCaPaths, ca: IssuedPem, nowMs: number, hosts: readonly string[]) {
  const certPem = await readIfExists(p.leafCert);
  const keyPem = await readIfExists(p.leafKey);
  let leaf: X509Certificate | undefined;
  let leafKeyMatches = false;
  try {
    if (certPem !== undefined && keyPem !== undefined) {
      leaf = new X509Certificate(certPem);
      leafKeyMatches = leaf.checkPrivateKey(createPrivateKey(keyPem));
    }
  } catch {
    leaf = undefined;
  }
  const action = devLeafAction({ leaf, leafKeyMatches, ca: new X509Certificate(ca.certPem), nowMs, hosts });
  return { action, certPem: certPem ?? '', keyPem: keyPem ?? '' };
}

/**
 * Makes (once) the development CA and (when missing, near expiry, not chained to the CA or naming
 * other hosts than asked) the leaf; returns the leaf and the CA's path. Safe to call from several
 * processes at once.
 */
export async function ensureDevCertificate(o: EnsureDevOptions = {}): Promise<DevCertificate> {
  // The config checks the names; options built by hand are checked here, before anything is signed.
  for (const name of o.names ?? []) {
    const problem = devNameProblem(name);
    if (problem !== undefined) throw new DevCaError(`tls.names: ${problem}: ${name}`);
  }
  const nowMs = o.nowMs ?? Date.now();
  const log = o.log ?? (() => {});
  const p = devCaPaths(o.dataDir ?? devDataDir());
  await mkdir(p.dir, { recursive: true, mode: 0o700 });
  await chmod(p.dir, 0o700);
  return withLock(p.lock, async () => {
    const { ca, createdCa } = await loadOrMakeCa(p, nowMs, log);
    const hosts = devLeafHosts(o.names);
    const stored = await loadLeafFacts(p, ca, nowMs, hosts);
    if (stored.action.kind === 'keep') {
      return {
        caCertPath: p.caCert,
        certPem: stored.certPem,
        keyPem: stored.keyPem,
        created: { ca: createdCa, leaf: false },
      };
    }
    const notBefore = nowMs - BACKDATE_MS;
    const leaf = await issueCertificate({
      commonName: 'localhost',
      hosts,
      issuer: ca,
      notBefore: new Date(notBefore),
      notAfter: new Date(notBefore + DEV_LEAF_LIFETIME_MS),
    });
    await writeAtomic(p.leafKey, leaf.keyPem, 0o600);
    await writeAtomic(p.leafCert, leaf.certPem, 0o644);
    log(`issued the development certificate ${p.leafCert} (${stored.action.reason})`);
    return {
      caCertPath: p.caCert,
      certPem: leaf.certPem,
      keyPem: leaf.keyPem,
      created: { ca: createdCa, leaf: true },
    };
  });
}

/** The stored CA, or a new one written to disk; call under the lock. */
async function loadOrMakeCa(
  p: DevCaPaths,
  nowMs: number,
  log: (line: string) => void,
): Promise<{ ca: IssuedPem; createdCa: boolean }> {
  const stored = await loadCa(p, nowMs);
  if (stored !== undefined) return { ca: stored, createdCa: false };
  const ca = await issueCertificate({
    commonName: caName(),
    isCa: true,
    pathLength: 0,
    notBefore: new Date(nowMs - BACKDATE_MS),
    notAfter: new Date(nowMs + DEV_CA_LIFETIME_MS),
  });
  // Key first: a CA certificate on disk always has its key beside it.
  await writeAtomic(p.caKey, ca.keyPem, 0o600);
  await writeAtomic(p.caCert, ca.certPem, 0o644);
  log(`created the development CA ${p.caCert}`);
  return { ca, createdCa: true };
}

/**
 * Makes (once) the development CA only, leaving the leaf as it is: `gatehouse trust` needs the CA,
 * and must not reissue a leaf that `serve --https --name ...` made for more names.
 */
export async function ensureDevCa(
  o: Pick<EnsureDevOptions, 'dataDir' | 'nowMs'> = {},
): Promise<{ caCertPath: string; created: boolean }> {
  const p = devCaPaths(o.dataDir ?? devDataDir());
  await mkdir(p.dir, { recursive: true, mode: 0o700 });
  await chmod(p.dir, 0o700);
  return withLock(p.lock, async () => {
    const { createdCa } = await loadOrMakeCa(p, o.nowMs ?? Date.now(), () => {});
    return { caCertPath: p.caCert, created: createdCa };
  });
}

/** How to trust the CA, per platform and trust store (as mkcert -install would do it). */
export function devTrustInstructions(caCertPath: string): string {
  const q = JSON.stringify(caCertPath);
  return [
    `The Gatehouse development CA is ${caCertPath}`,
    'Trust it once to make https://localhost work without warnings:',
    '  Linux:         gatehouse trust   (NSS databases of Chromium and Firefox; the system store as root)',
    `  Debian/Ubuntu: sudo cp ${q} /usr/local/share/ca-certificates/gatehouse-dev.crt && sudo update-ca-certificates`,
    `  Fedora/RHEL:   sudo cp ${q} /etc/pki/ca-trust/source/anchors/gatehouse-dev.pem && sudo update-ca-trust`,
    `  macOS:         sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain ${q}`,
    `  Windows:       certutil -addstore -f ROOT ${q}   (in an administrator prompt)`,
    `  Firefox/Chromium (NSS), by hand: certutil -d sql:$HOME/.pki/nssdb -N --empty-password (once, when`,
    `                  the folder is new), then certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n "Gatehouse development CA" -i ${q}`,
    `  Node.js:       NODE_EXTRA_CA_CERTS=${q} node ...`,
    'Anyone holding its key (ca-key.pem beside it) can impersonate any site to you: never share it.',
  ].join('\n');
}
