// gatehouse sw-manifest DIR [--out FILE] [--include GLOB]... [--exclude GLOB]...: the precache list of a
// build folder for versionedCache (gatehouse-http/sw), a JSON array of { url, revision } sorted by URL:
//   [{ "url": "/", "revision": "\"Xa3k...\"" }, { "url": "/assets/app-3f2a9c1b.js", "revision": null }]
// The revision is the file's strong ETag as the static handler sends it (its content hash), so the
// worker can tell a changed file from an unchanged one; a hashed name needs none (null).
import { createHash } from 'node:crypto';
import { closeSync, type Dirent, openSync, readSync } from 'node:fs';
import { readdir, stat, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { globToRegExp } from '../http/glob.js';
import { isHashedName } from '../http/hashed-name.js';
import { forTerminal, jsonForTerminal } from '../http/terminal.js';
import { HASH_CHARS } from '../server/index.js';
import { type FlagTable, parseFlags } from './args.js';
import { type CommandIo, EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './io.js';

export type SwManifestIo = CommandIo;

export interface ManifestEntry {
  readonly url: string;
  /** The strong ETag (`"..."`), or null for a hashed name. */
  readonly revision: string | null;
}

const USAGE = `Usage: gatehouse sw-manifest DIR [--out FILE] [--include GLOB]... [--exclude GLOB]...
Writes the precache list of DIR for versionedCache (gatehouse-http/sw): a JSON array of
{ "url", "revision" }, sorted by URL. The revision is the file's strong ETag as gatehouse serve sends
it; a hashed name (app-3f2a9c1b.js) has revision null. index.html is listed as its folder ("/").
  --out FILE       write there instead of stdout (the file itself is never listed); a FILE ending in
                   .js or .mjs gets \`export default [...]\`, a module the worker can import
  --include GLOB   list only files matching one of these globs (repeatable)
  --exclude GLOB   leave files matching this glob out (repeatable; wins over --include)
Left out by default: dotfiles and dot folders, .br/.gz siblings of a listed file, source maps
(*.map), and sw.js / service-worker.js at the top (the browser keeps the worker script itself).
Globs as in cachePolicy: * within a segment, ** across, {a,b}; a glob without / matches the name.
`;

const READ_CHUNK_BYTES = 64 * 1024;

/**
 * hashFile (server/static/files.ts) read one file at a time with synchronous reads through one buffer:
 * one descriptor and 64 KB held at any moment, however many files. Hashing every file at once ran out
 * of descriptors (EMFILE at 3,000 files under `ulimit -n 1024`) and held 465 MB for 50,000 files;
 * sixteen at a time through streams took 8.6 s for 50,000 small files where this takes 0.7 s (each
 * asynchronous read is four thread-pool round trips). A CLI has nothing else for its event loop to do.
 * The sw-manifest tests compare the revisions with the ETags a real server sends for the same folder.
 */
function hashFileSync(path: string, buf: Buffer): string {
  const h = createHash('sha256');
  const fd = openSync(path, 'r');
  try {
    for (let n = readSync(fd, buf, 0, buf.length, null); n > 0; n = readSync(fd, buf, 0, buf.length, null)) {
      h.update(buf.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  return h.digest('base64url').slice(0, HASH_CHARS);
}

/** Files always left out (relative path with a leading `/`), whatever --include says. */
function excludedByDefault(path: string, all: ReadonlySet<string>): boolean {
  if (path.split('/').some((seg) => seg.startsWith('.'))) return true;
  if (path.endsWith('.map')) return true;
  if (path === '/sw.js' || path === '/service-worker.js') return true;
  // A precompressed sibling is the same resource in another content coding (RFC 9110 §8.4), not a URL.
  for (const ext of ['.br', '.gz']) {
    if (path.endsWith(ext) && all.has(path.slice(0, -ext.length))) return true;
  }
  return false;
}

/** The URL a file is served at: segments percent-encoded, `index.html` as its folder. */
export function urlOf(path: string): string {
  const segs = path.slice(1).split('/');
  if (segs[segs.length - 1] === 'index.html') segs[segs.length - 1] = '';
  return `/${segs.map(encodeURIComponent).join('/')}`;
}

/** Regular files under root (symlinks not followed), as `/`-separated paths with a leading `/`. */
async function listFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (abs: string, rel: string): Promise<void> => {
    const entries: Dirent[] = await readdir(abs, { withFileTypes: true });
    for (const e of entries) {
      if (e.isDirectory()) await walk(join(abs, e.name), `${rel}/${e.name}`);
      else if (e.isFile()) out.push(`${rel}/${e.name}`);
    }
  };
  await walk(root, '');
  return out.sort();
}

/**
 * The manifest of `root`: every listed file's URL and revision, sorted by URL. `skip` holds absolute
 * paths never listed (the --out file).
 */
export async function buildManifest(
  root: string,
  o: { include?: readonly string[]; exclude?: readonly string[]; skip?: readonly string[] } = {},
): Promise<ManifestEntry[]> {
  const include = (o.include ?? []).map(globToRegExp);
  const exclude = (o.exclude ?? []).map(globToRegExp);
  const skip = new Set((o.skip ?? []).map((p) => resolve(p)));
  const files = await listFiles(root);
  const all = new Set(files);
  const chosen = files.filter((path) => {
    if (skip.has(join(root, ...path.split('/')))) return false;
    if (exclude.some((re) => re.test(path))) return false;
    if (include.length > 0 && !include.some((re) => re.test(path))) return false;
    return !excludedByDefault(path, all);
  });
  const buf = Buffer.allocUnsafe(READ_CHUNK_BYTES);
  const entries = chosen.map(
    (path): ManifestEntry => ({
      url: urlOf(path),
      // The strong ETag the static handler sends: `"` + the file's base64url sha256 + `"`.
      revision: isHashedName(path) ? null : `"${hashFileSync(join(root, ...path.split('/')), buf)}"`,
    }),
  );
  return entries.sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
}

/** Runs the command; resolves with the exit code. */
/** The flags of `sw-manifest` (checked against --help and the README: test/cli/help.test.ts). */
export const SW_MANIFEST_FLAGS = {
  out: { type: 'string' },
  include: { type: 'string', multiple: true },
  exclude: { type: 'string', multiple: true },
  help: { type: 'boolean', short: 'h' },
} as const satisfies FlagTable;

export async function swManifestCommand(args: string[], io: SwManifestIo): Promise<number> {
  let values: { out?: string; include?: string[]; exclude?: string[]; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseFlags(args, SW_MANIFEST_FLAGS, true) as {
      values: typeof values;
      positionals: string[];
    });
  } catch (err) {
    io.stderr.write(`gatehouse sw-manifest: ${forTerminal((err as Error).message)}\n${USAGE}`);
    return EXIT_USAGE;
  }
  if (values.help) {
    io.stdout.write(USAGE);
    return EXIT_OK;
  }
  const usage = (msg: string) => {
    io.stderr.write(`gatehouse sw-manifest: ${forTerminal(msg)}\n${USAGE}`);
    return EXIT_USAGE;
  };
  if (positionals.length !== 1) return usage('expected one DIR');
  for (const g of [...(values.include ?? []), ...(values.exclude ?? [])]) {
    if (g === '') return usage('a glob cannot be empty');
  }
  const root = resolve(io.cwd, positionals[0]!);
  const st = await stat(root).catch(() => undefined);
  if (!st?.isDirectory()) return usage(`not a directory: ${positionals[0]}`);
  const out = values.out !== undefined ? resolve(io.cwd, values.out) : undefined;
  let manifest: ManifestEntry[];
  try {
    manifest = await buildManifest(root, {
      include: values.include ?? [],
      exclude: values.exclude ?? [],
      skip: out ? [out] : [],
    });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    io.stderr.write(
      `gatehouse sw-manifest: ${forTerminal(`cannot read ${e.path ? relative(io.cwd, e.path) || '.' : root}: ${e.code ?? e.message}`)}\n`,
    );
    return EXIT_FAILURE;
  }
  // URLs are percent-encoded already; U+2028/9 would end a line in the .js module form.
  const json = jsonForTerminal(manifest, 2);
  // A .js/.mjs FILE is a module a module service worker imports (`import precache from './precache.js'`).
  const text = out && /\.m?js$/.test(out) ? `export default ${json};\n` : `${json}\n`;
  if (out === undefined) {
    io.stdout.write(text);
    return EXIT_OK;
  }
  try {
    await writeFile(out, text);
  } catch (err) {
    io.stderr.write(
      `gatehouse sw-manifest: --out ${forTerminal(values.out ?? '')}: ${(err as NodeJS.ErrnoException).code}\n`,
    );
    return EXIT_FAILURE;
  }
  io.stderr.write(
    `gatehouse sw-manifest: ${manifest.length} files -> ${forTerminal(relative(io.cwd, out) || out)}\n`,
  );
  return EXIT_OK;
}
