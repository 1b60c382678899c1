// Where a file version's ETag comes from (plan in http/file-validators.ts): bytes in memory are hashed
// at once; a hash this process or a folder's hash manifest already knows is used; a file up to
// static.hashInlineMaxBytes is read and hashed before its first response; a larger one is answered at
// once with W/"size-mtime" while BackgroundHasher computes the hash, and `onKnown` tells the file view
// to switch. Only resolves (first request, a change on disk) come here, never a cached request.
import { createHash } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { LRUCache } from 'lru-cache';
import {
  CONTENT_HASH_CHARS,
  mayHaveServedWeak,
  planContentHash,
  weakFileEtag,
} from '../../http/file-validators.js';
import type { FileAccess, FileStats } from '../files/access.js';
import { BackgroundHasher, type HashJobResult } from './background-hash.js';
import {
  entryFor,
  entryMatches,
  MANIFEST_NAME,
  type ManifestEntry,
  readManifest,
  updateManifest,
} from './hash-manifest.js';

/** Characters of the base64url sha256 kept in strong ETags and compared against `?v=` (162 bits). */
export const HASH_CHARS = CONTENT_HASH_CHARS;

/** base64url (RFC 4648 §5, no padding) sha256 of a file's bytes, first HASH_CHARS characters. */
export async function hashFile(files: FileAccess, path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of files.stream(path, 0)) h.update(chunk as Buffer);
  return h.digest('base64url').slice(0, HASH_CHARS);
}

export function hashBuffer(buf: Buffer): string {
  return createHash('sha256').update(buf).digest('base64url').slice(0, HASH_CHARS);
}

/** Inode, size and mtime: a file version. */
export function statFingerprint(s: FileStats | undefined): string {
  return s ? `${s.ino}:${s.size}:${s.mtimeMs}` : '-';
}

export interface ContentHashOptions {
  readonly etag: 'strong' | 'weak';
  readonly hashInlineMaxBytes: number;
  readonly hashManifest: 'read' | 'write' | 'off';
  /** What the files, the background hashes and the manifests are read (and written) through. */
  readonly files: FileAccess;
  /** One line about a manifest ignored or not writable (once per manifest version or folder). */
  readonly onWarning: (message: string) => void;
  /** A background hash is known: cached views of this file should be resolved again. */
  readonly onKnown: (absPath: string) => void;
}

/** A variant's validators. */
export interface FileTag {
  /** The ETag field value: `"<hash>"`, or W/"size-mtime[-coding]" (weak mode, or while hashing). */
  readonly etag: string;
  /** The content hash the strong tag quotes; undefined while it is computed (or in weak mode). */
  readonly hash: string | undefined;
  /** W/"size-mtime" this version may have gone out with before; If-None-Match matches it too. */
  readonly weakAlias: string | undefined;
  /** The hash is being computed in the background: resolve again to pick it up. */
  readonly pending: boolean;
}

const MAX_KNOWN = 16_384;
const MAX_MANIFESTS = 1024;

interface KnownHash {
  readonly fingerprint: string;
  readonly ctimeMs: number;
  readonly hash: string;
}

interface CachedManifest {
  /** stat of the manifest file when read. */
  readonly key: string;
  readonly entries: ReadonlyMap<string, ManifestEntry>;
}

export class ContentHashes {
  private readonly known = new LRUCache<string, KnownHash>({ max: MAX_KNOWN });
  private readonly manifests = new LRUCache<string, CachedManifest>({ max: MAX_MANIFESTS });
  private readonly warnedUnwritable = new Set<string>();
  private readonly hasher: BackgroundHasher;

  constructor(private readonly o: ContentHashOptions) {
    this.hasher = new BackgroundHasher(
      o.files,
      statFingerprint,
      (r) => this.learned(r),
      (absPath, err) => o.onWarning(`background hash of ${absPath} failed: ${(err as Error).message}`),
    );
  }

  /** The validators of one file version; `body` is its bytes when held in memory. */
  async tagFor(abs: string, st: FileStats, body: Buffer | undefined, coding = ''): Promise<FileTag> {
    const o = this.o;
    const inMemory = body !== undefined;
    const base = { etagMode: o.etag, inMemory, sizeBytes: st.size, inlineMaxBytes: o.hashInlineMaxBytes };
    const knownHash = o.etag === 'strong' && !inMemory ? await this.lookup(abs, st) : undefined;
    const plan = planContentHash({ ...base, known: knownHash !== undefined });
    const weak = weakFileEtag(st.size, st.mtimeMs, coding);
    let hash: string;
    switch (plan) {
      case 'weak':
        return { etag: weak, hash: undefined, weakAlias: undefined, pending: false };
      case 'background':
        this.hasher.request(abs, statFingerprint(st));
        return { etag: weak, hash: undefined, weakAlias: undefined, pending: true };
      case 'memory':
        hash = hashBuffer(body!);
        break;
      case 'known':
        hash = knownHash!;
        break;
      case 'inline':
        hash = await hashFile(o.files, abs);
        break;
    }
    return { etag: `"${hash}"`, hash, weakAlias: mayHaveServedWeak(base) ? weak : undefined, pending: false };
  }

  close(): void {
    this.hasher.close();
  }

  private async lookup(abs: string, st: FileStats): Promise<string | undefined> {
    const k = this.known.get(abs);
    if (k !== undefined && k.fingerprint === statFingerprint(st) && k.ctimeMs === st.ctimeMs) return k.hash;
    if (this.o.hashManifest === 'off') return undefined;
    const entry = (await this.manifestOf(dirname(abs)))?.get(basename(abs));
    if (entry === undefined || !entryMatches(entry, st)) return undefined;
    this.known.set(abs, { fingerprint: statFingerprint(st), ctimeMs: st.ctimeMs, hash: entry.hash });
    return entry.hash;
  }

  private async manifestOf(dir: string): Promise<ReadonlyMap<string, ManifestEntry> | undefined> {
    const st = await this.o.files.stat(join(dir, MANIFEST_NAME));
    if (st === undefined) {
      this.manifests.delete(dir);
      return undefined;
    }
    const key = `${statFingerprint(st)}:${st.ctimeMs}`;
    const cached = this.manifests.get(dir);
    if (cached?.key === key) return cached.entries;
    const r: Awaited<ReturnType<typeof readManifest>> = st.isFile()
      ? await readManifest(this.o.files, dir)
      : { kind: 'ignored', reason: 'not a regular file' };
    const entries = r.kind === 'ok' ? r.entries : new Map<string, ManifestEntry>();
    // Remembered for this manifest version either way: one warning, not one per request.
    this.manifests.set(dir, { key, entries });
    if (r.kind === 'ignored') this.o.onWarning(`hash manifest in ${dir} ignored: ${r.reason}`);
    else if (r.kind === 'ok' && r.skipped > 0)
      this.o.onWarning(`hash manifest in ${dir}: ${r.skipped} malformed entries ignored`);
    return entries;
  }

  private learned(r: HashJobResult): void {
    this.known.set(r.absPath, { fingerprint: r.fingerprint, ctimeMs: r.stats.ctimeMs, hash: r.hash });
    this.o.onKnown(r.absPath);
    if (this.o.hashManifest !== 'write') return;
    const dir = dirname(r.absPath);
    updateManifest(this.o.files, dir, new Map([[basename(r.absPath), entryFor(r.stats, r.hash)]])).catch(
      (err) => {
        // A read-only folder (an image, a mount): the hashes stay in memory; one line per folder.
        if (this.warnedUnwritable.has(dir)) return;
        this.warnedUnwritable.add(dir);
        this.o.onWarning(
          `hash manifest in ${dir} not written (${(err as NodeJS.ErrnoException).code ?? 'error'}); hashes kept in memory only`,
        );
      },
    );
  }
}
