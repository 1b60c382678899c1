// gatehouse hash [--root DIR] [--param NAME] FILE...: prints each file's versioned URL for build scripts,
//   gatehouse hash --root dist dist/assets/app.js   ->   /assets/app.js?v=Xa3k9Qw_Z1
// the same string assetUrl gives and the static handler pins for a year (see server/static/asset-url.ts).
import { stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { forTerminal } from '../http/terminal.js';
import {
  AssetPathError,
  assetVersion,
  entryFor,
  MANIFEST_NAME,
  type ManifestEntry,
  nodeFiles,
  updateManifest,
} from '../server/index.js';
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
Each hash is also recorded in its folder's ${MANIFEST_NAME} (with the file's inode, size, mtime and
ctime), so the server has the strong ETag of a large file from its first response (docs/static.md);
a folder that cannot be written gets one line on stderr, and the exit code stays 0.
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
  const manifests = new Map<string, Map<string, ManifestEntry>>();
  for (const file of files) {
    const rel = relative(root, resolve(io.cwd, file));
    try {
      if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
        throw new AssetPathError('outside_root', file, `not under the root ${root}`);
      }
      // assetUrl percent-encodes; the escape is for the one rule: nothing printed skips it.
      const found = await assetVersion(server, `/${rel.split(sep).join('/')}`);
      io.stdout.write(`${forTerminal(found.url)}\n`);
      if (found.stats !== undefined) {
        const dir = dirname(found.absPath);
        let m = manifests.get(dir);
        if (m === undefined) manifests.set(dir, (m = new Map()));
        m.set(basename(found.absPath), entryFor(found.stats, found.hash));
      }
    } catch (err) {
      if (!(err instanceof AssetPathError)) throw err;
      io.stderr.write(`gatehouse hash: ${forTerminal(`${file}: ${err.reason}`)}\n`);
      code = EXIT_FAILURE;
    }
  }
  for (const [dir, entries] of manifests) {
    try {
      await updateManifest(nodeFiles, dir, entries);
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      io.stderr.write(`gatehouse hash: ${forTerminal(`${MANIFEST_NAME} not written in ${dir}: ${why}`)}\n`);
    }
  }
  return code;
}
