// Precompressing a build folder: FILE.br and FILE.gz (and FILE.zst) beside its compressible files, and each
// folder's hash manifest. The library behind `gatehouse precompress` (src/cli/precompress.ts) and the Vite
// plugin's `precompress` (src/adapters/vite.ts); it prints nothing, reporting through PrecompressEvents.
// The static handler serves a sibling only while its mtime >= the original's (files.ts), so a sibling
// here always gets such an mtime, and a sibling older than its file counts as stale.

import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, type Dirent, type Stats } from 'node:fs';
import { lstat, readdir, readFile, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import {
  type BrotliOptions,
  brotliCompress,
  createBrotliCompress,
  createGzip,
  gzip,
  type ZlibOptions,
  constants as zc,
} from 'node:zlib';
import {
  createZstdCompress,
  entryFor,
  entryMatches,
  hashFile,
  isManifestName,
  MANIFEST_MIN_FILE_BYTES,
  MANIFEST_NAME,
  type ManifestEntry,
  mediaInfo,
  nodeFiles,
  readManifest,
  updateManifest,
  zstdCompress,
} from '../server/index.js';

export type Coding = 'br' | 'gzip' | 'zstd';
export const CODINGS: readonly Coding[] = ['br', 'gzip', 'zstd'];
const CODING_EXT: Record<Coding, string> = { br: '.br', gzip: '.gz', zstd: '.zst' };
const CODING_LABEL: Record<Coding, string> = { br: 'br', gzip: 'gz', zstd: 'zst' };
/** zstd's usual maximum (20-22 are its memory-hungry "ultra" levels). */
const ZSTD_LEVEL = 19;

export const DEFAULT_MIN_BYTES = 1024;
/** Files above this size are streamed through the compressor instead of read whole. */
export const STREAM_ABOVE_BYTES = 8 * 1024 * 1024;
/** Files compressed at once. Brotli at quality 11 is CPU-bound; each file runs its codings in parallel. */
const CONCURRENCY = 2;

export interface PrecompressOptions {
  readonly dir: string;
  /** Files smaller than this are left alone. */
  readonly minBytes: number;
  /** Recompress even when the siblings are up to date. */
  readonly force: boolean;
  readonly codings: readonly Coding[];
  /** Compress to measure, but write and delete nothing. */
  readonly dryRun: boolean;
  /** Files above this size are streamed, not read whole (default STREAM_ABOVE_BYTES). */
  readonly streamAboveBytes?: number;
}

/** What happened (or, in a dry run, would happen) to one sibling file. */
export type SiblingAction =
  | { readonly kind: 'write'; readonly path: string; readonly sizeBytes: number }
  | { readonly kind: 'delete'; readonly path: string; readonly reason: 'not-smaller' };

export interface PrecompressEvents {
  /** A file starts (`done` files finished) or finishes (`done` counts it). `path` is relative, with `/`. */
  progress?(done: number, total: number, path: string): void;
  /** `path` is relative to DIR, with `/`. */
  action?(action: SiblingAction): void;
  error?(path: string, message: string): void;
}

export interface PrecompressReport {
  /** Compressible files of at least minBytes. */
  readonly candidates: number;
  /** Files that got at least one new sibling. */
  readonly written: number;
  /** Files whose siblings (for the selected codings) were all up to date. */
  readonly skipped: number;
  /** Files compressed, but no new sibling was smaller than the file. */
  readonly notWorthIt: number;
  readonly failed: number;
  /** Total size of the written files. */
  readonly originalBytes: number;
  /**
   * Per coding, what the written files weigh in that coding: the sibling's size where one is kept,
   * the file's own size where none is (a client asking for that coding gets the file as it is).
   */
  readonly codedBytes: Readonly<Record<Coding, number>>;
}

type FileOutcome =
  | { readonly kind: 'skipped' }
  | { readonly kind: 'not-worth-it' }
  | { readonly kind: 'written'; readonly originalBytes: number; readonly codedBytes: Record<Coding, number> }
  | { readonly kind: 'failed'; readonly message: string };

interface Candidate {
  readonly absPath: string;
  /** relative to DIR, `/`-separated */
  readonly path: string;
  readonly textual: boolean;
}

class FileChangedError extends Error {}

// ---------------------------------------------------------------------------------------------------------
// Finding files

/**
 * Compressible regular files under `root` of at least `minBytes`, sorted by path. Symlinks, existing .br/.gz
 * files and dot folders are skipped, except /.well-known at the top, the one dot folder the static handler
 * serves by default (http/request-path.ts).
 */
async function findCandidates(
  root: string,
  minBytes: number,
  onError: (path: string, message: string) => void,
): Promise<Candidate[]> {
  const out: Candidate[] = [];
  const walk = async (absDir: string, relDir: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(absDir, { withFileTypes: true });
    } catch (err) {
      onError(relDir || '.', errorMessage(err));
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const absPath = join(absDir, entry.name);
      const path = relDir ? `${relDir}/${entry.name}` : entry.name;
      if (entry.isSymbolicLink()) continue;
      if (entry.isDirectory()) {
        if (entry.name.startsWith('.') && !(relDir === '' && entry.name === '.well-known')) continue;
        await walk(absPath, path);
        continue;
      }
      if (!entry.isFile() || entry.name.endsWith('.br') || entry.name.endsWith('.gz')) continue;
      if (isManifestName(entry.name)) continue;
      const info = mediaInfo(entry.name);
      if (!info.compressible) continue;
      let st: Stats;
      try {
        st = await stat(absPath);
      } catch (err) {
        onError(path, errorMessage(err));
        continue;
      }
      if (st.size < minBytes) continue;
      // mediaInfo gives textual types (and only those) a charset parameter.
      out.push({ absPath, path, textual: info.contentType.includes('charset=') });
    }
  };
  await walk(root, '');
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Compressing one file

function brotliOptions(sizeBytes: number, textual: boolean): BrotliOptions {
  return {
    params: {
      [zc.BROTLI_PARAM_QUALITY]: zc.BROTLI_MAX_QUALITY,
      [zc.BROTLI_PARAM_SIZE_HINT]: Math.min(sizeBytes, 0xffff_ffff),
      [zc.BROTLI_PARAM_MODE]: textual ? zc.BROTLI_MODE_TEXT : zc.BROTLI_MODE_GENERIC,
    },
  };
}

const GZIP_OPTIONS: ZlibOptions = { level: zc.Z_BEST_COMPRESSION };
const brotliCompressAsync = promisify(brotliCompress) as (buf: Buffer, o: BrotliOptions) => Promise<Buffer>;
const gzipAsync = promisify(gzip) as (buf: Buffer, o: ZlibOptions) => Promise<Buffer>;

function compressBuffer(coding: Coding, data: Buffer, textual: boolean): Promise<Buffer> {
  if (coding === 'zstd') return zstdCompress(data, ZSTD_LEVEL);
  return coding === 'br'
    ? brotliCompressAsync(data, brotliOptions(data.length, textual))
    : gzipAsync(data, GZIP_OPTIONS);
}

function compressStream(coding: Coding, sizeBytes: number, textual: boolean) {
  if (coding === 'zstd') return createZstdCompress(ZSTD_LEVEL);
  return coding === 'br' ? createBrotliCompress(brotliOptions(sizeBytes, textual)) : createGzip(GZIP_OPTIONS);
}

function tempPathBeside(path: string): string {
  // Same folder, so the rename is atomic; a dot name, so the static handler never serves a leftover.
  return join(dirname(path), `.precompress-${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
}

/** An encoded variant: in memory (small files), in a temp file (large files), or only measured (dry run). */
interface Encoded {
  readonly sizeBytes: number;
  readonly data?: Buffer;
  readonly tempPath?: string;
}

function sameVersion(a: Stats, b: Stats): boolean {
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

async function lstatOrUndefined(path: string): Promise<Stats | undefined> {
  try {
    return await lstat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

async function unlinkIfPresent(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

async function encodeAll(
  file: Candidate,
  st: Stats,
  codings: readonly Coding[],
  opts: PrecompressOptions,
  temps: string[],
): Promise<Map<Coding, Encoded>> {
  const encoded = new Map<Coding, Encoded>();
  if (st.size <= (opts.streamAboveBytes ?? STREAM_ABOVE_BYTES)) {
    const data = await readFile(file.absPath);
    if (data.length !== st.size) throw new FileChangedError();
    await settleAll(
      codings.map(async (c) => {
        const out = await compressBuffer(c, data, file.textual);
        encoded.set(c, { sizeBytes: out.length, data: out });
      }),
    );
    return encoded;
  }
  await settleAll(
    codings.map(async (c) => {
      let sizeBytes = 0;
      const tempPath = opts.dryRun ? undefined : tempPathBeside(file.absPath);
      if (tempPath) temps.push(tempPath);
      const sink = tempPath
        ? createWriteStream(tempPath, { flags: 'wx' })
        : new Writable({ write: (_chunk, _encoding, done) => done() });
      await pipeline(
        createReadStream(file.absPath),
        compressStream(c, st.size, file.textual),
        async function* count(source: AsyncIterable<Buffer>) {
          for await (const chunk of source) {
            sizeBytes += chunk.length;
            yield chunk;
          }
        },
        sink,
      );
      encoded.set(c, tempPath ? { sizeBytes, tempPath } : { sizeBytes });
    }),
  );
  return encoded;
}

/** Like Promise.all, but waits for every task (so none is still writing when temp files are removed). */
async function settleAll(tasks: Promise<void>[]): Promise<void> {
  const results = await Promise.allSettled(tasks);
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) throw failure.reason;
}

/** Moves a finished variant into place as `siblingPath`, dated no earlier than the original. */
async function commitSibling(encoded: Encoded, siblingPath: string, original: Stats, temps: string[]) {
  let tempPath = encoded.tempPath;
  if (tempPath === undefined) {
    tempPath = tempPathBeside(siblingPath);
    temps.push(tempPath);
    await writeFile(tempPath, encoded.data ?? Buffer.alloc(0), { flag: 'wx' });
  }
  const written = await stat(tempPath);
  if (written.mtimeMs < original.mtimeMs) {
    // The original is dated in the future (clock skew, unpacked archive). Whole milliseconds plus one, so
    // the float seconds that utimes takes cannot round the sibling below the original.
    await utimes(tempPath, written.atime, new Date(Math.ceil(original.mtimeMs) + 1));
  }
  await rename(tempPath, siblingPath);
  const i = temps.indexOf(tempPath);
  if (i >= 0) temps.splice(i, 1);
}

async function precompressFile(
  file: Candidate,
  opts: PrecompressOptions,
  onAction: (action: SiblingAction) => void,
): Promise<FileOutcome> {
  const st = await lstat(file.absPath);
  if (!st.isFile()) return { kind: 'failed', message: 'no longer a regular file' };
  // A sibling is up to date when it is a regular file at least as new as the original.
  const existing = new Map<Coding, Stats | undefined>();
  const todo: Coding[] = [];
  for (const c of opts.codings) {
    const sst = await lstatOrUndefined(file.absPath + CODING_EXT[c]);
    existing.set(c, sst);
    if (opts.force || !sst?.isFile() || sst.mtimeMs < st.mtimeMs) todo.push(c);
  }
  if (todo.length === 0) return { kind: 'skipped' };

  const temps: string[] = [];
  const codedBytes: Record<Coding, number> = { br: st.size, gzip: st.size, zstd: st.size };
  let wrote = false;
  try {
    const encoded = await encodeAll(file, st, todo, opts, temps);
    // A sibling newer than the file but holding older bytes would be served as current: check the file
    // did not change while it was read.
    if (!sameVersion(st, await stat(file.absPath))) throw new FileChangedError();
    for (const c of todo) {
      const e = encoded.get(c)!;
      const siblingPath = file.absPath + CODING_EXT[c];
      const relSibling = file.path + CODING_EXT[c];
      if (e.sizeBytes >= st.size) {
        // Not worth it: serving the file as it is costs no more. A stale sibling would be ignored by the
        // server, but it is wrong, so it goes.
        if (existing.get(c) !== undefined) {
          if (!opts.dryRun) await unlinkIfPresent(siblingPath);
          onAction({ kind: 'delete', path: relSibling, reason: 'not-smaller' });
        }
        continue;
      }
      if (!opts.dryRun) await commitSibling(e, siblingPath, st, temps);
      onAction({ kind: 'write', path: relSibling, sizeBytes: e.sizeBytes });
      codedBytes[c] = e.sizeBytes;
      wrote = true;
    }
  } catch (err) {
    if (!(err instanceof FileChangedError)) throw err;
    return { kind: 'failed', message: 'changed while compressing; run again' };
  } finally {
    await Promise.all(temps.map((t) => unlinkIfPresent(t).catch(() => {})));
  }
  if (!wrote) return { kind: 'not-worth-it' };
  // Codings that were already up to date keep their sibling.
  for (const c of opts.codings) {
    const sst = existing.get(c);
    if (!todo.includes(c) && sst) codedBytes[c] = sst.size;
  }
  return { kind: 'written', originalBytes: st.size, codedBytes };
}

// ---------------------------------------------------------------------------------------------------------
// The whole folder

/** Precompresses a folder; never throws for a single file (those become `error` events and `failed`). */
export async function precompressDir(
  opts: PrecompressOptions,
  events: PrecompressEvents = {},
): Promise<PrecompressReport> {
  let failed = 0;
  const onError = (path: string, message: string) => {
    failed++;
    events.error?.(path, message);
  };
  const files = await findCandidates(opts.dir, opts.minBytes, onError);
  const report = {
    candidates: files.length,
    written: 0,
    skipped: 0,
    notWorthIt: 0,
    originalBytes: 0,
    codedBytes: { br: 0, gzip: 0, zstd: 0 },
  };
  let done = 0;
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const file = files[next++]!;
      events.progress?.(done, files.length, file.path);
      let outcome: FileOutcome;
      try {
        outcome = await precompressFile(file, opts, (a) => events.action?.(a));
      } catch (err) {
        outcome = { kind: 'failed', message: errorMessage(err) };
      }
      switch (outcome.kind) {
        case 'skipped':
          report.skipped++;
          break;
        case 'not-worth-it':
          report.notWorthIt++;
          break;
        case 'failed':
          onError(file.path, outcome.message);
          break;
        case 'written':
          report.written++;
          report.originalBytes += outcome.originalBytes;
          for (const c of CODINGS) report.codedBytes[c] += outcome.codedBytes[c];
          break;
      }
      done++;
      events.progress?.(done, files.length, file.path);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, files.length) }, worker));
  if (!opts.dryRun) await recordHashes(opts.dir, onError);
  return { ...report, failed };
}

// ---------------------------------------------------------------------------------------------------------
// Hash manifests

/**
 * Writes each folder's hash manifest (hash-manifest.ts): the content hash of every
 * regular file of at least MANIFEST_MIN_FILE_BYTES (siblings included; dot names and symlinks skipped,
 * as the server does not serve them), so the server has a large file's strong ETag from its first
 * response. Entries still matching their file are kept without reading it again.
 */
async function recordHashes(root: string, onError: (path: string, message: string) => void): Promise<void> {
  const walk = async (absDir: string, relDir: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(absDir, { withFileTypes: true });
    } catch (err) {
      onError(relDir || '.', errorMessage(err));
      return;
    }
    const old = await readManifest(nodeFiles, absDir);
    const updates = new Map<string, ManifestEntry>();
    for (const entry of entries) {
      const absPath = join(absDir, entry.name);
      const path = relDir ? `${relDir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!entry.name.startsWith('.') || (relDir === '' && entry.name === '.well-known'))
          await walk(absPath, path);
        continue;
      }
      if (!entry.isFile() || entry.name.startsWith('.')) continue;
      try {
        const before = await stat(absPath);
        if (before.size < MANIFEST_MIN_FILE_BYTES) continue;
        const kept = old.kind === 'ok' ? old.entries.get(entry.name) : undefined;
        if (kept !== undefined && entryMatches(kept, before)) continue;
        const hash = await hashFile(nodeFiles, absPath);
        const after = await stat(absPath);
        if (sameVersion(before, after) && before.ctimeMs === after.ctimeMs)
          updates.set(entry.name, entryFor(after, hash));
      } catch (err) {
        onError(path, errorMessage(err));
      }
    }
    if (updates.size === 0) return;
    try {
      await updateManifest(nodeFiles, absDir, updates);
    } catch (err) {
      onError(relDir ? `${relDir}/${MANIFEST_NAME}` : MANIFEST_NAME, errorMessage(err));
    }
  };
  await walk(root, '');
}

// ---------------------------------------------------------------------------------------------------------
// The summary line

/** `12.3 kB`: the unit of the summary and of the command's dry-run lines. */
export function formatKB(bytes: number): string {
  return `${(bytes / 1000).toFixed(1)} kB`;
}

/** `precompressed N files (M skipped, K not worth it): X kB -> br Y kB (-P%), gz Z kB (-Q%)` */
export function formatSummary(
  report: PrecompressReport,
  codings: readonly Coding[],
  dryRun: boolean,
): string {
  const n = report.written;
  const counts = [`${report.skipped} skipped`, `${report.notWorthIt} not worth it`];
  if (report.failed > 0) counts.push(`${report.failed} failed`);
  const sizes = codings.map((c) => {
    const x = report.originalBytes;
    const y = report.codedBytes[c];
    const saved = x === 0 ? 0 : Math.round((1 - y / x) * 100);
    return `${CODING_LABEL[c]} ${formatKB(y)} (-${saved}%)`;
  });
  const verb = dryRun ? 'would precompress' : 'precompressed';
  return `${verb} ${n} file${n === 1 ? '' : 's'} (${counts.join(', ')}): ${formatKB(report.originalBytes)} -> ${sizes.join(', ')}`;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
