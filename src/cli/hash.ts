// gatehouse hash [--root DIR] [--param NAME] FILE...: prints each file's versioned URL for build scripts,
//   gatehouse hash --root dist dist/assets/app.js   ->   /assets/app.js?v=Xa3k9Qw_Z1
// the same string assetUrl gives and the static handler pins for a year (see server/static/asset-url.ts).
import { stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { forTerminal } from '../http/terminal.js';
import { AssetPathError, assetUrl } from '../server/static/asset-url.js';
import { type FlagTable, parseFlags } from './args.js';
import { type CommandIo, EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './io.js';

export type HashIo = CommandIo;

const USAGE = `Usage: gatehouse hash [--root DIR] [--param NAME] FILE...
Prints one line per FILE, in order: its URL under DIR with ?v= and the first 10 characters of the
base64url sha256 of its bytes, e.g. /assets/app.js?v=Xa3k9Qw_Z1 (what the server pins for a year).
  --root DIR     the folder the server serves (default: the current directory)
  --param NAME   the query parameter, as static.versionParam (default v)
A FILE that is missing, outside DIR or hidden gets one line on stderr naming it; the others are
still printed, and the exit code is 1.
`;

/** Runs the command; resolves with the exit code. */
/** The flags of `hash` (checked against --help and the README: test/cli/help.test.ts). */
export const HASH_FLAGS = {
  root: { type: 'string' },
  param: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies FlagTable;

export async function hashCommand(args: string[], io: HashIo): Promise<number> {
  let values: { root?: string; param?: string; help?: boolean };
  let files: string[];
  try {
    ({ values, positionals: files } = parseFlags(args, HASH_FLAGS, true) as {
      values: typeof values;
      positionals: string[];
    });
  } catch (err) {
    io.stderr.write(`gatehouse hash: ${forTerminal((err as Error).message)}\n${USAGE}`);
    return EXIT_USAGE;
  }
  if (values.help) {
    io.stdout.write(USAGE);
    return EXIT_OK;
  }
  const usage = (msg: string) => {
    io.stderr.write(`gatehouse hash: ${forTerminal(msg)}\n${USAGE}`);
    return EXIT_USAGE;
  };
  if (files.length === 0) return usage('expected at least one FILE');
  const param = values.param ?? 'v';
  if (!/^[A-Za-z0-9._~-]{1,64}$/.test(param)) return usage(`--param: not a query parameter name: ${param}`);
  const root = resolve(io.cwd, values.root ?? '.');
  const rootStat = await stat(root).catch(() => undefined);
  if (!rootStat?.isDirectory()) return usage(`--root: not a directory: ${values.root ?? '.'}`);
  const server = {
    options: { root, static: { dotfiles: 'ignore', followSymlinks: false, versionParam: param } },
  } as const;
  let code = EXIT_OK;
  for (const file of files) {
    const rel = relative(root, resolve(io.cwd, file));
    try {
      if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
        throw new AssetPathError('outside_root', file, `not under the root ${root}`);
      }
      // assetUrl percent-encodes; the escape is for the one rule: nothing printed skips it.
      io.stdout.write(`${forTerminal(await assetUrl(server, `/${rel.split(sep).join('/')}`))}\n`);
    } catch (err) {
      if (!(err instanceof AssetPathError)) throw err;
      io.stderr.write(`gatehouse hash: ${forTerminal(`${file}: ${err.reason}`)}\n`);
      code = EXIT_FAILURE;
    }
  }
  return code;
}
