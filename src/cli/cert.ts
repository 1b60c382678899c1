// gatehouse cert TARGET: prints a certificate's facts and checks it: chained to a trusted
// CA, within its validity window, naming the host. TARGET is host[:port], https://URL or a PEM file.
//   gatehouse cert example.com            gatehouse cert 127.0.0.1:8443 --ca dev-ca.pem --json
//   gatehouse cert --ca-path              (where the development CA of serve --https is)
import { readFile, stat } from 'node:fs/promises';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { referenceIdentity } from '../certs/checks.js';
import { existingDevCaPath } from '../certs/dev-ca.js';
import {
  type CheckOptions,
  type InspectReport,
  type InspectResult,
  inspectFile,
  inspectLive,
  parsePemCertificates,
} from '../certs/inspect.js';
import { forTerminal, jsonForTerminal } from '../http/terminal.js';
import { type FlagTable, parseFlags } from './args.js';
import { type CommandIo, EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './io.js';

export interface CertIo extends CommandIo {
  /** The clock (tests); default Date.now(). */
  readonly nowMs?: number;
  /** Where the dev CA lives (tests); default devDataDir(). */
  readonly dataDir?: string;
}

const USAGE = `Usage: gatehouse cert TARGET [--ca FILE] [--servername NAME] [--warn-days N] [--json] [--timeout-ms N]
       gatehouse cert --ca-path
TARGET is host[:port] (port 443 by default), https://host[:port]/..., or a PEM file (the leaf first).
Prints the certificate (subject, SANs, issuer, validity, key, signature, serial, SHA-256 fingerprint,
the chain as served, and the protocol and cipher when live) and checks that it
  - chains to a trusted CA (the system store, or --ca FILE),
  - is within its validity window,
  - names the host (or --servername NAME; for a PEM file only when --servername is given),
  - has strong keys and signatures: RSA >= 2048 bits, EC >= 256 bits, no SHA-1 (CA/Browser Forum
    Baseline Requirements §6.1.5).
It warns when it expires within --warn-days (default 21) and when the served chain is incomplete.
  --ca FILE         PEM file of the CA certificates to trust in place of the system store
  --servername NAME the name to send (SNI) and to match, in place of the target's host
  --warn-days N     warn when fewer than N days are left (default 21)
  --json            print one JSON object (checks.hostnameMatches is null when not checked)
  --timeout-ms N    give up connecting after N ms (default 10000)
  --ca-path         print the path of the development CA (gatehouse serve --https); exit 1 if none
Exit: 0 every check passes, 1 a check fails or the target cannot be reached, 2 bad usage.
`;

/** The flags of `cert` (checked against --help and the README: test/cli/help.test.ts). */
export const CERT_FLAGS = {
  ca: { type: 'string' },
  servername: { type: 'string' },
  'warn-days': { type: 'string' },
  json: { type: 'boolean' },
  'timeout-ms': { type: 'string' },
  'ca-path': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies FlagTable;

export type CertTarget =
  | { kind: 'file'; path: string }
  | { kind: 'live'; host: string; port: number }
  | { kind: 'invalid'; reason: string };

/** Reads TARGET: an https URL, an existing file, or host[:port] (IDN names become A-labels). */
export function parseTarget(arg: string, isFile: boolean): CertTarget {
  if (/^https:\/\//i.test(arg)) return hostPort(arg, arg);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(arg)) return { kind: 'invalid', reason: `only https:// URLs: ${arg}` };
  if (isFile) return { kind: 'file', path: arg };
  if (/[/\\]|\.(pem|crt|cer)$/i.test(arg)) return { kind: 'invalid', reason: `no such file: ${arg}` };
  if (isIP(arg) === 6) return { kind: 'live', host: arg, port: 443 };
  return hostPort(`https://${arg}`, arg);
}

function hostPort(url: string, arg: string): CertTarget {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { kind: 'invalid', reason: `not a host[:port] or URL: ${arg}` };
  }
  if (u.username !== '' || u.password !== '') return { kind: 'invalid', reason: `credentials in ${arg}` };
  if (!/^https:\/\//i.test(arg) && (u.pathname !== '/' || u.search !== '' || u.hash !== '')) {
    return { kind: 'invalid', reason: `not a host[:port]: ${arg}` };
  }
  const port = u.port === '' ? 443 : Number(u.port);
  if (port === 0) return { kind: 'invalid', reason: `port 0 in ${arg}` };
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  if (host === '') return { kind: 'invalid', reason: `no host in ${arg}` };
  return { kind: 'live', host, port };
}

/** Aligned `name: value` lines, then one ok/FAIL line per check and the warnings. */
export function formatText(r: InspectReport): string {
  const rows: [string, string][] = [
    ['target', r.target],
    ['subject', r.subject],
    ['san', r.san.join(', ') || '(none)'],
    ['issuer', r.issuer],
    ['validFrom', r.validFrom],
    ['validTo', r.validTo],
    ['daysLeft', String(r.daysLeft)],
    ['key', r.keyType],
    ['signature', r.signatureAlgorithm],
    ['serial', r.serialNumber],
    ['fingerprint256', r.fingerprint256],
  ];
  if (r.source === 'live') {
    rows.push(['protocol', r.protocol ?? '?'], ['alpn', r.alpn ?? '(none)'], ['cipher', r.cipher ?? '?']);
  }
  r.chain.forEach((c, i) => {
    rows.push([i === 0 ? 'chain' : '', `${i}: ${c.subject} (issuer ${c.issuer}, until ${c.validTo})`]);
  });
  const width = Math.max(...rows.map(([k]) => k.length)) + 2;
  const lines = rows.map(([k, v]) => `${(k === '' ? '' : `${k}:`).padEnd(width)}${forTerminal(v)}`);
  for (const name of ['trusted', 'timeValid', 'hostnameMatches', 'keyStrength'] as const) {
    const v = r.checks[name];
    if (v === true) lines.push(`ok: ${name}`);
    else if (v === null) lines.push(`skipped: ${name} (give --servername to check a file's names)`);
    else {
      const reasons = r.failures.filter((f) => f.startsWith(`${name}:`));
      for (const f of reasons.length > 0 ? reasons : [name]) lines.push(`FAIL: ${forTerminal(f)}`);
    }
  }
  for (const w of r.warnings) lines.push(`warning: ${forTerminal(w)}`);
  return `${lines.join('\n')}\n`;
}

interface Parsed {
  target: CertTarget | undefined;
  caPath: boolean;
  ca?: string;
  servername?: string;
  warnDays: number;
  json: boolean;
  timeoutMs: number;
  help: boolean;
}

class CertUsageError extends Error {}

function nonNegativeInt(flag: string, raw: string | undefined, fallback: number, min: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < min) {
    throw new CertUsageError(`${flag}: expected an integer >= ${min}, got ${raw}`);
  }
  return Number(raw);
}

async function parse(args: string[], cwd: string): Promise<Parsed> {
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseFlags(args, CERT_FLAGS, true) as {
      values: Record<string, string | boolean | undefined>;
      positionals: string[];
    });
  } catch (err) {
    throw new CertUsageError((err as Error).message);
  }
  const caPath = values['ca-path'] === true;
  const help = values.help === true;
  if (positionals.length > 1) throw new CertUsageError(`one TARGET, got: ${positionals.join(' ')}`);
  if (caPath && positionals.length > 0) throw new CertUsageError('--ca-path takes no TARGET');
  if (!caPath && !help && positionals.length === 0) throw new CertUsageError('expected a TARGET');
  let target: CertTarget | undefined;
  const arg = positionals[0];
  if (arg !== undefined) {
    const st = await stat(resolve(cwd, arg)).catch(() => undefined);
    target = parseTarget(arg, st?.isFile() === true);
    if (target.kind === 'invalid') throw new CertUsageError(target.reason);
    if (target.kind === 'file') target = { kind: 'file', path: resolve(cwd, arg) };
  }
  if (typeof values.servername === 'string') {
    const ref = referenceIdentity(values.servername);
    if (ref.kind === 'invalid') throw new CertUsageError(`--servername: ${ref.reason}`);
  }
  return {
    target,
    caPath,
    help,
    ...(typeof values.ca === 'string' ? { ca: values.ca } : {}),
    ...(typeof values.servername === 'string' ? { servername: values.servername } : {}),
    warnDays: nonNegativeInt('--warn-days', values['warn-days'] as string | undefined, 21, 0),
    json: values.json === true,
    timeoutMs: nonNegativeInt('--timeout-ms', values['timeout-ms'] as string | undefined, 10_000, 1),
  };
}

/** Reads --ca: a usage error (exit 2) when it is not a readable PEM of certificates. */
async function readCa(path: string, cwd: string): Promise<string> {
  let pem: string;
  try {
    pem = await readFile(resolve(cwd, path), 'utf8');
  } catch (err) {
    throw new CertUsageError(`--ca: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    parsePemCertificates(pem, `--ca ${path}`);
  } catch (err) {
    throw new CertUsageError((err as Error).message);
  }
  return pem;
}

/** Runs the command; resolves with the exit code. */
export async function certCommand(args: string[], io: CertIo): Promise<number> {
  let p: Parsed;
  let caPem: string | undefined;
  try {
    p = await parse(args, io.cwd);
    if (p.ca !== undefined) caPem = await readCa(p.ca, io.cwd);
  } catch (err) {
    if (!(err instanceof CertUsageError)) throw err;
    io.stderr.write(`gatehouse cert: ${forTerminal(err.message)}\n${USAGE}`);
    return EXIT_USAGE;
  }
  if (p.help) {
    io.stdout.write(USAGE);
    return EXIT_OK;
  }
  if (p.caPath) {
    const path = await existingDevCaPath(io.dataDir);
    if (path === undefined) {
      io.stderr.write('gatehouse cert: no development CA yet (gatehouse serve --https makes one)\n');
      return EXIT_FAILURE;
    }
    io.stdout.write(`${path}\n`);
    return EXIT_OK;
  }
  const target = p.target as Exclude<CertTarget, { kind: 'invalid' }>;
  const o: CheckOptions = {
    caPem,
    servername: p.servername,
    warnDays: p.warnDays,
    nowMs: io.nowMs ?? Date.now(),
  };
  const result: InspectResult =
    target.kind === 'file'
      ? await inspectFile(target.path, o)
      : await inspectLive({ host: target.host, port: target.port, timeoutMs: p.timeoutMs }, o);
  if (result.kind === 'error') {
    if (p.json) {
      const label = target.kind === 'file' ? target.path : `${target.host}:${target.port}`;
      io.stdout.write(`${jsonForTerminal({ target: label, ok: false, error: result.reason })}\n`);
    }
    io.stderr.write(`gatehouse cert: ${forTerminal(result.reason)}\n`);
    return EXIT_FAILURE;
  }
  io.stdout.write(p.json ? `${jsonForTerminal(result.report, 2)}\n` : formatText(result.report));
  return result.report.ok ? EXIT_OK : EXIT_FAILURE;
}
