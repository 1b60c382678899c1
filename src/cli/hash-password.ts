// gatehouse hash-password: reads a password from stdin, prints the scrypt hash for auth[].basic.users.
//   printf '%s' 'correct horse' | gatehouse hash-password
// The password never appears in argv (visible in `ps` and shell history).

import { hashPassword, parseScryptHash, SCRYPT_DEFAULTS } from '../server/index.js';
import { type FlagTable, parseFlags } from './args.js';

const EXIT_OK = 0;
const EXIT_USAGE = 2;

export interface HashPasswordIo {
  readonly stdin: AsyncIterable<string | Buffer> & { readonly isTTY?: boolean };
  readonly stdout: { write(s: string): unknown };
  readonly stderr: { write(s: string): unknown };
}

const USAGE = `Usage: gatehouse hash-password [--n N] [--r R] [--p P] < password
Reads one line from stdin and prints scrypt$N$r$p$salt$hash for auth[].basic.users.
Defaults: N=${SCRYPT_DEFAULTS.N} r=${SCRYPT_DEFAULTS.r} p=${SCRYPT_DEFAULTS.p}.
`;

/** Longest stdin read; a password is a line, not a file. */
const MAX_INPUT_BYTES = 64 * 1024;

async function readFirstLine(stdin: HashPasswordIo['stdin']): Promise<string | null> {
  let text = '';
  for await (const chunk of stdin) {
    text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    if (text.length > MAX_INPUT_BYTES) return null;
    if (text.includes('\n')) break;
  }
  const nl = text.indexOf('\n');
  const line = nl === -1 ? text : text.slice(0, nl);
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

/** Runs the command; resolves with the exit code. */
/** The flags of `hash-password` (checked against --help and the README: test/cli/help.test.ts). */
export const HASH_PASSWORD_FLAGS = {
  n: { type: 'string' },
  r: { type: 'string' },
  p: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies FlagTable;

export async function hashPasswordCommand(args: string[], io: HashPasswordIo): Promise<number> {
  let values: { n?: string; r?: string; p?: string; help?: boolean };
  try {
    ({ values } = parseFlags(args, HASH_PASSWORD_FLAGS, false) as { values: typeof values });
  } catch (err) {
    io.stderr.write(`gatehouse hash-password: ${(err as Error).message}\n${USAGE}`);
    return EXIT_USAGE;
  }
  if (values.help) {
    io.stdout.write(USAGE);
    return EXIT_OK;
  }
  const params: { N: number; r: number; p: number } = { ...SCRYPT_DEFAULTS };
  for (const [flag, key] of [
    ['n', 'N'],
    ['r', 'r'],
    ['p', 'p'],
  ] as const) {
    const v = values[flag];
    if (v === undefined) continue;
    if (!/^[1-9]\d{0,9}$/.test(v)) {
      io.stderr.write(`gatehouse hash-password: --${flag}: expected a positive integer, got ${v}\n`);
      return EXIT_USAGE;
    }
    params[key] = Number(v);
  }
  // Check the parameters the way the config loader will, before asking for anything.
  const probe = parseScryptHash(`scrypt$${params.N}$${params.r}$${params.p}$AAAAAAAAAAA=$${'A'.repeat(44)}`);
  if (typeof probe === 'string') {
    io.stderr.write(`gatehouse hash-password: ${probe}\n`);
    return EXIT_USAGE;
  }
  if (io.stdin.isTTY) io.stderr.write('Password (one line; input is echoed): ');
  const password = await readFirstLine(io.stdin);
  if (password === null || password === '') {
    io.stderr.write('gatehouse hash-password: expected a non-empty password line on stdin\n');
    return EXIT_USAGE;
  }
  io.stdout.write(`${await hashPassword(password, params)}\n`);
  return EXIT_OK;
}
