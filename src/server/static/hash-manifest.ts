// Hash manifests: one `.gatehouse-hashes.json` per folder, written by `gatehouse hash` and `gatehouse
// precompress` (and by the server with static.hashManifest "write"), so a large file's strong ETag is
// known from the first response after a restart. An entry names a file of that folder and the version
// it was hashed at; it counts only while inode, size, mtime and ctime are all unchanged (a rewrite in
// place changes ctime even when a build pins mtimes). The file is input from disk: it is read with a
// byte bound, every field checked, and anything odd ignored whole or entry by entry, never trusted.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { isContentHash } from '../../http/file-validators.js';
import type { FileAccess, FileStats, OpenFile } from '../files/access.js';

export const MANIFEST_NAME = '.gatehouse-hashes.json';
/** A larger manifest is ignored (about 40,000 entries). */
export const MAX_MANIFEST_BYTES = 8 * 1024 * 1024;
/** `gatehouse precompress` records files from this size on: smaller ones are hashed inline cheaply. */
export const MANIFEST_MIN_FILE_BYTES = 64 * 1024;
const FORMAT = 'gatehouse-hashes';

/** The manifest and its temp files (`.gatehouse-hashes-<pid>-<random>.tmp`): never served or compressed. */
export function isManifestName(name: string): boolean {
  return name.startsWith('.gatehouse-hashes');
}
const VERSION = 1;

/** The version of one file a hash was computed for, and the hash (27 base64url characters of sha256). */
export interface ManifestEntry {
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
  readonly hash: string;
}

export type ParsedManifest =
  | { readonly ok: true; readonly entries: ReadonlyMap<string, ManifestEntry>; readonly skipped: number }
  | { readonly ok: false; readonly reason: string };

/** A plain file name of the folder: no separator, NUL, `.` or `..` (never a path to follow). */
function isEntryName(name: string): boolean {
  return (
    name.length > 0 &&
    name.length <= 255 &&
    name !== '.' &&
    name !== '..' &&
    !name.includes('/') &&
    !name.includes('\\') &&
    !name.includes('\0')
  );
}

const isStatNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;

function toEntry(v: unknown): ManifestEntry | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  const { ino, size, mtimeMs, ctimeMs, hash } = o;
  if (!isStatNumber(ino) || !isStatNumber(size) || !isStatNumber(mtimeMs) || !isStatNumber(ctimeMs)) {
    return undefined;
  }
  // The hash becomes an ETag field value: only base64url characters may pass (no quote, no CR LF).
  if (!isContentHash(hash)) return undefined;
  return { ino, size, mtimeMs, ctimeMs, hash };
}

/**
 * Parses a manifest's text. Not JSON, not our format or version -> `ok: false` with a one-line reason.
 * Entries with a bad name or field are dropped one by one (`skipped` counts them).
 */
export function parseManifest(text: string): ParsedManifest {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    return { ok: false, reason: 'not an object' };
  const d = doc as Record<string, unknown>;
  if (d.format !== FORMAT || d.version !== VERSION)
    return { ok: false, reason: 'not a version 1 hash manifest' };
  const files = d.files;
  if (typeof files !== 'object' || files === null || Array.isArray(files)) {
    return { ok: false, reason: '"files" is not an object' };
  }
  // A Map: a name like __proto__ is just a key.
  const entries = new Map<string, ManifestEntry>();
  let skipped = 0;
  for (const [name, v] of Object.entries(files)) {
    const e = isEntryName(name) ? toEntry(v) : undefined;
    if (e === undefined) skipped++;
    else entries.set(name, e);
  }
  return { ok: true, entries, skipped };
}

/** True when the entry was made for exactly this file version. */
export function entryMatches(e: ManifestEntry, st: FileStats): boolean {
  return e.ino === st.ino && e.size === st.size && e.mtimeMs === st.mtimeMs && e.ctimeMs === st.ctimeMs;
}

export function entryFor(st: FileStats, hash: string): ManifestEntry {
  return { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, hash };
}

export function formatManifest(entries: ReadonlyMap<string, ManifestEntry>): string {
  const files: Record<string, ManifestEntry> = {};
  for (const name of [...entries.keys()].sort()) {
    Object.defineProperty(files, name, { value: entries.get(name), enumerable: true });
  }
  return `${JSON.stringify({ format: FORMAT, version: VERSION, files }, null, 1)}\n`;
}

export type ReadResult =
  | { readonly kind: 'absent' }
  | { readonly kind: 'ok'; readonly entries: ReadonlyMap<string, ManifestEntry>; readonly skipped: number }
  | { readonly kind: 'ignored'; readonly reason: string };

/**
 * Reads `dir`'s manifest, at most MAX_MANIFEST_BYTES, from one open file (no size/read race; a FIFO
 * under the manifest's name does not hang, FileAccess.open).
 */
export async function readManifest(files: FileAccess, dir: string): Promise<ReadResult> {
  let fh: OpenFile;
  try {
    fh = await files.open(join(dir, MANIFEST_NAME));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR'
      ? { kind: 'absent' }
      : { kind: 'ignored', reason: `unreadable (${code})` };
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) return { kind: 'ignored', reason: 'not a regular file' };
    if (st.size > MAX_MANIFEST_BYTES)
      return { kind: 'ignored', reason: `larger than ${MAX_MANIFEST_BYTES} bytes` };
    const buf = Buffer.alloc(st.size);
    const bytesRead = await fh.read(buf, 0);
    const parsed = parseManifest(buf.subarray(0, bytesRead).toString('utf8'));
    return parsed.ok
      ? { kind: 'ok', entries: parsed.entries, skipped: parsed.skipped }
      : { kind: 'ignored', reason: parsed.reason };
  } catch (err) {
    return { kind: 'ignored', reason: `unreadable (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  } finally {
    await fh.close().catch(() => {});
  }
}

const writing = new Map<string, Promise<void>>();

/**
 * Merges `updates` into `dir`'s manifest and replaces it atomically (a dot-named temp file, then
 * rename). Entries of names no longer in the folder are dropped; an unreadable old manifest is
 * replaced. Writes to one folder are queued in this process. Rejects when the folder is not writable.
 */
export function updateManifest(
  files: FileAccess,
  dir: string,
  updates: ReadonlyMap<string, ManifestEntry>,
): Promise<void> {
  const prev = writing.get(dir) ?? Promise.resolve();
  const next = prev.then(() => writeMerged(files, dir, updates));
  // The queue's own link never rejects (the caller handles `next`).
  const tail: Promise<void> = next.then(
    () => undefined,
    () => undefined,
  );
  void tail.then(() => {
    if (writing.get(dir) === tail) writing.delete(dir);
  });
  writing.set(dir, tail);
  return next;
}

async function writeMerged(
  files: FileAccess,
  dir: string,
  updates: ReadonlyMap<string, ManifestEntry>,
): Promise<void> {
  const old = await readManifest(files, dir);
  const present = new Set((await files.readDir(dir)).map((d) => d.name));
  const merged = new Map<string, ManifestEntry>();
  if (old.kind === 'ok') for (const [n, e] of old.entries) if (present.has(n)) merged.set(n, e);
  for (const [n, e] of updates) if (isEntryName(n) && present.has(n)) merged.set(n, e);
  const temp = join(dir, `.gatehouse-hashes-${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
  try {
    await files.createFile(temp, formatManifest(merged));
    await files.rename(temp, join(dir, MANIFEST_NAME));
  } catch (err) {
    await files.remove(temp).catch(() => {});
    throw err;
  }
}
