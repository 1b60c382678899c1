// assetUrl: the versioned URL of a file under a root, `/app.js?v=<10 characters of its content hash>`,
// which the static handler pins for a year (resources.ts verifies `v` against the same hash).
import { join, resolve, sep } from 'node:path';
import { ASSET_URL_VERSION_CHARS } from '../../http/asset-version.js';
import { isInside, resolveFilePath } from '../../http/request-path.js';
import type { FileAccess, FileStats } from '../files/access.js';
import { nodeFiles } from '../files/node.js';
import { hashFile, type StaticOptions } from './files.js';

/** What assetUrl reads from a server made by createServer (structural, so static/ needs no app import). */
export interface AssetUrlServer {
  readonly options: {
    readonly root: string;
    readonly static: Pick<StaticOptions, 'dotfiles' | 'followSymlinks' | 'versionParam'>;
  };
}

/** A path assetUrl cannot version: outside the root, hidden, not a file. `code` is stable. */
export class AssetPathError extends Error {
  constructor(
    readonly code: 'bad_path' | 'hidden' | 'not_found' | 'not_a_file' | 'outside_root' | 'unreadable',
    readonly path: string,
    /** One line, without the path. */
    readonly reason: string,
  ) {
    super(`assetUrl: ${JSON.stringify(path)}: ${reason}`);
    this.name = 'AssetPathError';
  }
}

/**
 * `/path?v=<first 10 base64url characters of the file's sha256>`, the URL the server pins for a year.
 * `rootOrServer`: a folder (defaults of the static handler: dotfiles hidden, symlinks kept inside, `v`)
 * or a server from createServer (its root, dotfiles, symlink and versionParam settings).
 * `path`: the file's path under the root with `/` separators (`/app.js` or `app.js`), not
 * percent-encoded (`%` is a literal character) and without `?` or `#`. It is resolved like a request
 * path: `..` may not leave the root. The result is percent-encoded as a URL path.
 * `files`: what the file is read through (the static handler's `files` option), node:fs by default.
 */
export async function assetUrl(
  rootOrServer: string | AssetUrlServer,
  path: string,
  files: FileAccess = nodeFiles,
): Promise<string> {
  return (await assetVersion(rootOrServer, path, files)).url;
}

/** What assetUrl found: the URL, the file, its content hash and the stat of the version hashed. */
export interface AssetVersion {
  readonly url: string;
  readonly absPath: string;
  readonly hash: string;
  /** Undefined when the file changed while it was hashed (the URL is still the bytes read). */
  readonly stats: FileStats | undefined;
}

/** assetUrl, with the file's path, full content hash and stats (for a hash manifest entry). */
export async function assetVersion(
  rootOrServer: string | AssetUrlServer,
  path: string,
  files: FileAccess = nodeFiles,
): Promise<AssetVersion> {
  const server = typeof rootOrServer === 'string' ? undefined : rootOrServer.options;
  const root = resolve(server?.root ?? (rootOrServer as string));
  const dotfiles = server?.static.dotfiles ?? 'ignore';
  const followSymlinks = server?.static.followSymlinks ?? false;
  const param = server?.static.versionParam ?? 'v';
  if (typeof path !== 'string' || path === '')
    throw new AssetPathError('bad_path', String(path), 'empty path');
  if (/[?#]/.test(path)) {
    throw new AssetPathError('bad_path', path, 'a file path, not a URL (no ? or #)');
  }
  // Percent-encode, then resolve exactly like a request target (RFC 3986 §5.2.4 dot segments).
  let raw: string;
  try {
    raw = encodeURI(`/${path.replace(/^\/+/, '')}`);
  } catch {
    throw new AssetPathError('bad_path', path, 'not well-formed Unicode');
  }
  const r = resolveFilePath(raw, dotfiles === 'allow');
  if (r.kind === 'bad') throw new AssetPathError('bad_path', path, r.reason);
  if (r.kind === 'hidden') throw new AssetPathError('hidden', path, 'a dotfile, not served');
  const abs = r.path === '/' ? root : join(root, r.path);
  const before = await files.stat(abs);
  if (before === undefined) throw new AssetPathError('not_found', path, `no such file under ${root}`);
  if (!before.isFile() || r.trailingSlash) throw new AssetPathError('not_a_file', path, 'not a file');
  let hash: string;
  let after: FileStats | undefined;
  try {
    // As the static handler: a symlink leaving the root is not served unless followSymlinks.
    if (!followSymlinks && !isInside(await files.realPath(root), await files.realPath(abs), sep)) {
      throw new AssetPathError('outside_root', path, `a symlink leaving ${root}`);
    }
    hash = await hashFile(files, abs);
    after = await files.stat(abs);
  } catch (err) {
    if (err instanceof AssetPathError) throw err;
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new AssetPathError('unreadable', path, `cannot read: ${code}`);
  }
  const same =
    after !== undefined &&
    before.ino === after.ino &&
    before.size === after.size &&
    before.mtimeMs === after.mtimeMs &&
    before.ctimeMs === after.ctimeMs;
  return {
    url: `${encodeURI(r.path)}?${param}=${hash.slice(0, ASSET_URL_VERSION_CHARS)}`,
    absPath: abs,
    hash,
    stats: same ? after : undefined,
  };
}
