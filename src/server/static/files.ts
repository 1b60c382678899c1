// The file view: URL path -> resolved resource (file version, redirect, missing), with
// validators, precompressed and compressed variants, and small bodies cached in a
// byte-bounded LRU. Entries (kept from a path's second request on) are trusted for `revalidateMs`, then checked.
// Compressed variants of kept files are made off the request path (compressor.ts).
import { basename, dirname, join, sep } from 'node:path';
import { LRUCache } from 'lru-cache';
import { shedLeastRecent } from '../../cache/store/shared.js';
import type { CachePolicy, PolicyInput } from '../../http/cache-policy.js';
import { formatHttpDate } from '../../http/dates.js';
import { isInside, type PathResult, resolveFilePath } from '../../http/request-path.js';
import type { FileAccess, FileStats } from '../files/access.js';
import type { FileLookup } from '../files/view.js';
import { type Coding, type CompressionStats, Compressor, type Tier } from './compressor.js';
import { ContentHashes, hashBuffer, statFingerprint } from './content-hashes.js';
import { Doorkeeper } from './doorkeeper.js';
import { isManifestName } from './hash-manifest.js';
import { type ListingEntry, MAX_LISTED, renderListing } from './listing.js';
import { mediaInfo } from './media.js';
import { ZSTD_AVAILABLE } from './zstd.js';

export interface StaticOptions {
  spa: boolean;
  spaFallback: string;
  /** Path globs whose navigations fall back even with a dot in the last segment. */
  spaRoutes?: readonly string[];
  assetsDir: string;
  etag: 'strong' | 'weak';
  lastModified: boolean;
  index: string[];
  /** Extensions tried when nothing is at the path (`/about` -> `about.html`). */
  extensions?: readonly string[];
  /** A folder without an index file answers a listing instead of 404 (listing.ts). */
  directoryListing?: boolean;
  dotfiles: 'ignore' | 'allow';
  followSymlinks: boolean;
  precompressed: boolean;
  compress: boolean;
  compressMinBytes: number;
  /** Compressions at once, each on its own worker thread (compressor.ts); default 1. */
  compressConcurrency?: number;
  notFoundPage: string;
  memoryCacheBytes: number;
  maxCachedFileBytes: number;
  revalidateMs: number;
  trailingSlash: 'add' | 'remove' | 'ignore';
  indexRedirect: boolean;
  /** Query parameter of verified cache busting (`?v=`): see FileResource.contentHash. */
  versionParam: string;
  /** 103 Early Hints before HTML pages (server/static/early-hints.ts); max Link values per page. */
  earlyHints: { enabled: boolean; max: number };
  /** X-Frame-Options and Referrer-Policy on HTML files (see HTML_SECURITY_HEADERS). */
  htmlSecurityHeaders: boolean;
  /** Lower-cased names the header rules set, append or remove: the rules decide those (no default). */
  htmlHeadersRuled?: ReadonlySet<string>;
  /** Strong ETags of larger streamed files are hashed in the background (default 4 MiB). */
  hashInlineMaxBytes?: number;
  /** Hash manifests (server/static/hash-manifest.ts): read (default), also write, or off. */
  hashManifest?: 'read' | 'write' | 'off';
}

export const DEFAULT_HASH_INLINE_MAX_BYTES = 4 * 1024 * 1024;

/**
 * On the site's own pages by default: RFC 7034 frame protection (SAMEORIGIN: the site may frame
 * itself; CSP frame-ancestors needs a site-specific policy) and the W3C Referrer Policy default, sent
 * explicitly (§3). nosniff goes on every file already.
 */
const HTML_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Frame-Options': 'SAMEORIGIN',
  'Referrer-Policy': 'strict-origin-when-cross-origin',
};

export type { Coding, CompressionStats } from './compressor.js';

const CODING_EXT: Record<Coding, string> = { br: '.br', zstd: '.zst', gzip: '.gz' };
/** Server preference on ties (RFC 9110 §12.5.3): br (smallest at quality 11), then zstd (RFC 8878), gzip. */
const CODINGS: readonly Coding[] = ['br', 'zstd', 'gzip'];

/** zstd is compressed on the fly only where node:zlib has it; .zst siblings are served on every Node. */
export const ZSTD_ON_THE_FLY = ZSTD_AVAILABLE;
/** The codings compressed on the fly, in server preference order. */
const FLY_CODINGS: readonly Coding[] = ZSTD_AVAILABLE ? CODINGS : ['br', 'gzip'];

export interface Variant {
  readonly coding: Coding | 'identity';
  readonly etag: string;
  /** The W/"size-mtime" this version may have gone out with before its hash was known (If-None-Match). */
  readonly weakAlias: string | undefined;
  readonly size: number;
  /** In memory when small enough; otherwise streamed from `filePath`. */
  readonly body: Buffer | undefined;
  readonly filePath: string;
  /** statFingerprint of `filePath` when this variant was made (undefined for bytes made in memory). */
  readonly diskFingerprint: string | undefined;
  /** Headers of a 200 (no Expires; that is added per request). */
  readonly headers: Record<string, string>;
  /** Headers of a 304: validators, Cache-Control, Vary (RFC 9110 §15.4.5). */
  readonly headers304: Record<string, string>;
  /** The same two under FileResource.versionedPolicy; undefined when that is the normal policy. */
  readonly versioned:
    | { readonly headers: Record<string, string>; readonly headers304: Record<string, string> }
    | undefined;
}

export interface FileResource {
  readonly kind: 'file';
  readonly path: string;
  readonly absPath: string;
  readonly contentType: string;
  readonly mediaType: string;
  readonly lastModifiedMs: number | undefined;
  readonly policy: CachePolicy;
  /**
   * The policy of a request whose `?v=` is a prefix of contentHash (a verified version counts as a
   * hashed name). The same object as `policy` when that changes nothing, and for HTML: always revalidated.
   */
  readonly versionedPolicy: CachePolicy;
  /**
   * base64url sha256 of the identity bytes, first 27 characters (what the strong ETag quotes), whatever
   * content coding is served. Undefined when not computed: weak ETags with a body too big for memory.
   */
  readonly contentHash: string | undefined;
  readonly identity: Variant;
  /** Codings this resource has (siblings or compressible), in server preference order. */
  readonly codings: readonly Coding[];
  /** Siblings from the start; compressed variants once made (FileView.variant). */
  readonly variants: Map<Coding, Variant>;
  readonly fingerprint: string;
}

export type Resource =
  | FileResource
  | { readonly kind: 'redirect'; readonly location: string; readonly fingerprint: string }
  /** No file answers the path; `onDisk`: something is there all the same (a folder without an index
   *  page, a file asked for with a trailing slash, not a regular file). */
  | { readonly kind: 'missing'; readonly fingerprint: string; readonly onDisk: boolean }
  | { readonly kind: 'bad'; readonly reason: string }
  /** A dot segment, Gatehouse's own files, or a path whose real location is outside the root. */
  | { readonly kind: 'hidden' };

interface Entry {
  resource: Resource;
  checkedAtMs: number;
  sizeBytes: number;
  /** Files whose stats make up the fingerprint (the file, its siblings). */
  watch: readonly string[];
  /** A content hash is computed in the background: resolved again, not reused, at revalidation. */
  pendingHash?: boolean;
}

export interface FileViewOptions {
  readonly root: string;
  /** Every read of the disk goes through it (server/files/access.ts). */
  readonly files: FileAccess;
  readonly static: StaticOptions;
  readonly policyFor: (input: PolicyInput) => CachePolicy;
  readonly nowMs?: () => number;
  /** A hash manifest ignored or not writable, a background hash failed (one line each). */
  readonly onWarning?: (message: string) => void;
}

/**
 * What an entry costs besides its bodies, so that memoryCacheBytes bounds the heap the view holds, not
 * only its bodies. Measured as heap after full GCs per entry over 10,000 entries (Node 20, 200-byte
 * files): a file with its identity variant (objects, frozen header records, ETag, dates, fingerprints,
 * the Buffer object, the LRU's own slots) about 1.8 KB; each further variant (sibling, compressed) about
 * 1.2 KB; a 404, redirect or hidden path about 370 bytes. Over HTTP/2 each variant's two header records
 * also get their converted copies (tls/h2-exchange.ts, frozenFields): about 250 bytes more. Rounded up.
 * Path strings are counted apart.
 */
export const FILE_ENTRY_BYTES = 2304;
export const VARIANT_BYTES = 1536;
export const ENTRY_BYTES = 512;
/** Bytes per character of the strings that grow with the path (the key, absPath and what derives from
 *  them): 2, as a decoded name outside Latin-1 is a two-byte string. */
const PATH_CHAR_BYTES = 2;

export { HASH_CHARS, hashFile, statFingerprint } from './content-hashes.js';

const fp = statFingerprint;

const HIDDEN: Resource = { kind: 'hidden' };
const hiddenEntry = (checkedAtMs: number): Entry => ({
  resource: HIDDEN,
  checkedAtMs,
  sizeBytes: ENTRY_BYTES,
  watch: [],
});

function isHtml(mediaType: string): boolean {
  return mediaType === 'text/html' || mediaType === 'application/xhtml+xml';
}

export class FileView implements FileLookup {
  readonly root: string;
  private readonly opts: StaticOptions;
  private readonly policyFor: (input: PolicyInput) => CachePolicy;
  private readonly now: () => number;
  private readonly cache: LRUCache<string, Entry>;
  private readonly pending = new Map<string, Promise<Entry>>();
  /** A path is kept from its second request on (doorkeeper.ts). */
  private readonly doorkeeper = new Doorkeeper();
  private readonly maxBodyBytes: number;
  private readonly hashes: ContentHashes;
  private readonly compressor: Compressor;
  /** Codings of a file version being compressed (fast level), or that failed for it: not started again. */
  private readonly making = new WeakMap<FileResource, Map<Coding, 'making' | 'failed'>>();
  private realRoot: string | undefined;
  /** Every read of the disk goes through it (server/files/access.ts). */
  readonly access: FileAccess;
  private readonly stat: (path: string) => Promise<FileStats | undefined>;
  /** Paths named by FileAccess.watch since the last pass over the entries ('all': it could not say). */
  private noticed: Set<string> | 'all' | undefined;
  private readonly unwatch: (() => void) | undefined;

  constructor(o: FileViewOptions) {
    this.root = o.root;
    this.access = o.files;
    this.stat = (path) => o.files.stat(path);
    this.opts = o.static;
    this.policyFor = o.policyFor;
    this.now = o.nowMs ?? Date.now;
    // A floor of 64 files' metadata: with memoryCacheBytes 0 (no bodies kept) a hot page still resolves once.
    const maxSize = Math.max(o.static.memoryCacheBytes, 64 * FILE_ENTRY_BYTES);
    this.cache = new LRUCache<string, Entry>({ maxSize, sizeCalculation: (e) => e.sizeBytes });
    this.maxBodyBytes = Math.min(o.static.maxCachedFileBytes, Math.floor(o.static.memoryCacheBytes / 4));
    this.hashes = new ContentHashes({
      etag: o.static.etag,
      hashInlineMaxBytes: o.static.hashInlineMaxBytes ?? DEFAULT_HASH_INLINE_MAX_BYTES,
      hashManifest: o.static.hashManifest ?? 'read',
      files: o.files,
      onWarning: o.onWarning ?? (() => {}),
      onKnown: (abs) => this.forget(abs),
    });
    this.compressor = new Compressor({
      concurrency: o.static.compressConcurrency ?? 1,
      onWarning: o.onWarning,
    });
    this.unwatch = o.files.watch?.(o.root, (path) => this.notice(path));
  }

  /** Stops watching, background hashing and compression (server shutdown). */
  close(): void {
    this.unwatch?.();
    this.hashes.close();
    this.compressor.close();
  }

  /** What on-the-fly compression did so far, and what waits. */
  compressionStats(): CompressionStats {
    return this.compressor.stats();
  }

  /**
   * FileAccess.watch named a changed path: entries that watch it or its folder are checked at their
   * next request (their stats decide, as after revalidateMs). Notices are gathered and applied in one
   * pass over the entries (a deploy sends thousands), before the next round of I/O is read.
   */
  private notice(path: string | undefined): void {
    if (this.noticed === undefined) setImmediate(() => this.applyNotices());
    if (path === undefined) this.noticed = 'all';
    else if (this.noticed !== 'all') {
      this.noticed ??= new Set();
      this.noticed.add(path).add(dirname(path));
    }
  }

  private applyNotices(): void {
    const noticed = this.noticed;
    this.noticed = undefined;
    for (const e of this.cache.values()) {
      if (noticed === 'all' || e.watch.some((p) => noticed?.has(p))) e.checkedAtMs = Number.NEGATIVE_INFINITY;
    }
  }

  /** Drops cached views of a file (or sibling) whose hash became known: the next request resolves. */
  private forget(abs: string): void {
    const stale: string[] = [];
    for (const [key, e] of this.cache.entries()) {
      const r = e.resource;
      if (r.kind !== 'file') continue;
      if (r.absPath === abs || [...r.variants.values()].some((v) => v.filePath === abs)) stale.push(key);
    }
    for (const key of stale) this.cache.delete(key);
  }

  /** Synchronous lookup of a fresh entry; undefined when it must be (re)resolved. */
  peek(rawPath: string): Resource | undefined {
    const e = this.cache.get(rawPath);
    if (e !== undefined && this.now() - e.checkedAtMs < this.opts.revalidateMs) return e.resource;
    return undefined;
  }

  /** Resolves a raw (still percent-encoded) URL path, using and refreshing the cache. */
  async get(rawPath: string): Promise<Resource> {
    const e = this.cache.get(rawPath);
    if (e !== undefined && this.now() - e.checkedAtMs < this.opts.revalidateMs) return e.resource;
    let p = this.pending.get(rawPath);
    if (p === undefined) {
      p = this.refresh(rawPath, e).finally(() => this.pending.delete(rawPath));
      this.pending.set(rawPath, p);
    }
    return (await p).resource;
  }

  /**
   * The variant for a coding, or undefined while it is made: the caller answers identity then, as no
   * response waits for a compression. Made only for a file that is kept (from its path's second request
   * on, doorkeeper.ts), first at a fast level, then once more at the highest level in the background; a
   * job the compressor cannot queue is asked for again by a later request. The identity variant when
   * none will come (compression failed for this version, or is off after threads died).
   */
  variant(file: FileResource, coding: Coding, rawPath: string): Variant | undefined {
    const v = file.variants.get(coding);
    if (v !== undefined) return v;
    const src = file.identity.body;
    if (src === undefined || !this.compressor.available) return file.identity;
    let making = this.making.get(file);
    const state = making?.get(coding);
    if (state !== undefined) return state === 'failed' ? file.identity : undefined;
    // A file not kept yet (its first request) is not compressed: the result would be thrown away.
    if (!this.kept(rawPath, file)) return undefined;
    if (making === undefined) this.making.set(file, (making = new Map()));
    making.set(coding, 'making');
    const queued = this.compress(file, coding, rawPath, 'fast', (out, outcome) => {
      if (outcome === 'failed') making.set(coding, 'failed');
      else making.delete(coding);
      if (out === undefined || !this.kept(rawPath, file)) return;
      file.variants.set(coding, this.compressed(file, coding, out));
      this.charge(rawPath, file, VARIANT_BYTES + out.length);
      // The highest level in the background, kept when smaller.
      this.compress(file, coding, rawPath, 'best', (best) => {
        const fast = file.variants.get(coding);
        if (best === undefined || fast === undefined || best.length >= fast.size) return;
        if (!this.kept(rawPath, file)) return;
        file.variants.set(coding, this.compressed(file, coding, best));
        this.charge(rawPath, file, best.length - fast.size);
      });
    });
    if (!queued) making.delete(coding);
    return undefined;
  }

  /** Whether `file` is the cached entry of `rawPath` (what is made for it is kept). */
  private kept(rawPath: string, file: FileResource): boolean {
    return this.cache.peek(rawPath)?.resource === file;
  }

  private compress(
    file: FileResource,
    coding: Coding,
    rawPath: string,
    tier: Tier,
    done: (out: Buffer | undefined, outcome: 'ok' | 'dropped' | 'failed') => void,
  ): boolean {
    return this.compressor.submit({
      coding,
      tier,
      src: file.identity.body!,
      // mediaInfo gives textual types (and only those) a charset parameter.
      textual: file.contentType.includes('charset='),
      wanted: () => this.kept(rawPath, file),
      done,
    });
  }

  /**
   * Counts `bytes` more against memoryCacheBytes for the cached entry of `file` at `rawPath`: what is made
   * later and kept as long as the file version (a compressed variant, a page's early hints, a JSONP body).
   * Once per thing made, never per request.
   */
  charge(rawPath: string, file: FileResource, bytes: number): void {
    const e = this.cache.peek(rawPath);
    if (e === undefined || e.resource !== file) return;
    // A new object: lru-cache keeps the old size when the same value is set again (which is how the
    // bytes of compressed variants went uncounted). The LRU then evicts others if needed.
    this.cache.set(rawPath, { ...e, sizeBytes: e.sizeBytes + bytes });
  }

  /** What the view counts against memoryCacheBytes now (entries, bodies, what was charged). */
  sizeBytes(): number {
    return this.cache.calculatedSize;
  }

  /** Memory pressure: the least recently used entries go, with their bodies and what was charged. */
  shed(fraction: number): number {
    return shedLeastRecent(this.cache, fraction);
  }

  clear(): void {
    this.cache.clear();
    this.doorkeeper.clear();
  }

  private async refresh(rawPath: string, old: Entry | undefined): Promise<Entry> {
    if (old !== undefined && old.watch.length > 0 && 'fingerprint' in old.resource && !old.pendingHash) {
      const stats = await Promise.all(old.watch.map(this.stat));
      if (stats.map(fp).join('|') === old.resource.fingerprint) {
        old.checkedAtMs = this.now();
        return old;
      }
    }
    const entry = await this.resolve(rawPath);
    // Kept if it was kept before (a new version of a cached path) or asked for before (doorkeeper.ts).
    if (entry.resource.kind !== 'bad' && (old !== undefined || this.doorkeeper.seenBefore(rawPath))) {
      // The key is one more copy of the path.
      entry.sizeBytes += PATH_CHAR_BYTES * rawPath.length;
      this.cache.set(rawPath, entry);
    }
    return entry;
  }

  private async resolve(rawPath: string): Promise<Entry> {
    const checkedAtMs = this.now();
    const r: PathResult = resolveFilePath(rawPath, this.opts.dotfiles === 'allow');
    if (r.kind !== 'ok') return { resource: r, checkedAtMs, sizeBytes: ENTRY_BYTES, watch: [] };
    // The hash manifests (and their temp files) are never served, even with dotfiles allowed.
    if (isManifestName(basename(r.path))) return hiddenEntry(checkedAtMs);
    const abs = r.path === '/' ? this.root : join(this.root, r.path);
    const st = await this.stat(abs);
    const sizeBytes = ENTRY_BYTES + PATH_CHAR_BYTES * abs.length;
    const missing = (watch: string[], stats: (FileStats | undefined)[]): Entry => ({
      resource: { kind: 'missing', fingerprint: stats.map(fp).join('|'), onDisk: stats[0] !== undefined },
      checkedAtMs,
      sizeBytes,
      watch,
    });
    if (st === undefined) {
      const alt = r.path === '/' ? undefined : await this.byExtension(r.path, abs, checkedAtMs);
      return alt?.entry ?? missing([abs, ...(alt?.tried ?? [])], [st, ...(alt?.stats ?? [])]);
    }
    // A symlink out of the root is refused, not missing: a mounted handler must not pass it on to a
    // next middleware that follows it (Vite's static files, serve-static).
    if (!(await this.contained(abs))) return hiddenEntry(checkedAtMs);
    if (st.isDirectory()) {
      if (!r.trailingSlash && r.path !== '/') {
        // RFC 9110 §15.4.2: a directory lives at the slash form; relative links then resolve.
        // Built from the normalised path, never the raw target: `//evil.example` must not
        // become a protocol-relative Location.
        const location = `${r.path.split('/').map(encodeURIComponent).join('/')}/`;
        return {
          resource: { kind: 'redirect', location, fingerprint: fp(st) },
          checkedAtMs,
          sizeBytes: sizeBytes + PATH_CHAR_BYTES * location.length,
          watch: [abs],
        };
      }
      for (const name of this.opts.index) {
        const idx = join(abs, name);
        const ist = await this.stat(idx);
        if (ist?.isFile()) {
          if (!(await this.contained(idx))) return hiddenEntry(checkedAtMs);
          return this.fileEntry(`${r.path === '/' ? '' : r.path}/${name}`, idx, ist, checkedAtMs, [abs]);
        }
      }
      if (this.opts.directoryListing) return this.listingEntry(r.path, abs, st, checkedAtMs);
      // Adding an index file changes the directory's mtime, so the directory alone is watched.
      return missing([abs], [st]);
    }
    if (!st.isFile() || r.trailingSlash) return missing([abs], [st]);
    return this.fileEntry(r.path, abs, st, checkedAtMs, []);
  }

  /**
   * static.extensions: `/about` answers `about.html` when nothing is at `/about` (a file or a folder
   * there wins). The paths tried and their stats come back too: the missing entry watches them all.
   */
  private async byExtension(
    path: string,
    abs: string,
    checkedAtMs: number,
  ): Promise<{ entry?: Entry; tried: string[]; stats: (FileStats | undefined)[] } | undefined> {
    const exts = this.opts.extensions;
    if (exts === undefined || exts.length === 0) return undefined;
    const tried: string[] = [];
    const stats: (FileStats | undefined)[] = [];
    for (const ext of exts) {
      const alt = `${abs}.${ext}`;
      // The hash manifests stay hidden however they are reached (dotfiles allowed, ext json).
      if (isManifestName(basename(alt))) continue;
      const ast = await this.stat(alt);
      tried.push(alt);
      stats.push(ast);
      if (ast?.isFile() && (await this.contained(alt))) {
        // The bare path is watched too: a file or folder created there takes over.
        return { entry: await this.fileEntry(`${path}.${ext}`, alt, ast, checkedAtMs, [abs]), tried, stats };
      }
    }
    return { tried, stats };
  }

  /** static.directoryListing: a folder without an index file as an HTML page (listing.ts). */
  private async listingEntry(path: string, abs: string, st: FileStats, checkedAtMs: number): Promise<Entry> {
    const entries: ListingEntry[] = [];
    let more = 0;
    for (const d of await this.access.readDir(abs)) {
      // Never dotfiles or Gatehouse's own files, whatever static.dotfiles says.
      if (d.name.startsWith('.') || isManifestName(d.name)) continue;
      let folder = d.isDirectory();
      if (d.isSymbolicLink()) {
        const target = join(abs, d.name);
        const tst = await this.stat(target);
        if (tst === undefined || !(await this.contained(target))) continue;
        folder = tst.isDirectory();
      } else if (!folder && !d.isFile()) continue;
      if (entries.length < MAX_LISTED) entries.push({ name: d.name, folder });
      else more++;
    }
    const dirPath = path === '/' ? '/' : `${path}/`;
    const body = Buffer.from(renderListing(dirPath, entries, more));
    const lastModifiedMs = this.opts.lastModified ? Math.floor(st.mtimeMs / 1000) * 1000 : undefined;
    const policy = this.policyFor({ path: dirPath, mediaType: 'text/html' });
    const contentType = 'text/html; charset=utf-8';
    const tag = { etag: `"${hashBuffer(body)}"`, weakAlias: undefined };
    const identity = this.makeVariant(
      'identity',
      abs,
      body.length,
      body,
      tag,
      contentType,
      lastModifiedMs,
      policy,
      policy,
      false,
      undefined,
    );
    const resource: FileResource = {
      kind: 'file',
      path: dirPath,
      absPath: abs,
      contentType,
      mediaType: 'text/html',
      lastModifiedMs,
      policy,
      versionedPolicy: policy,
      contentHash: undefined,
      identity,
      codings: [],
      variants: new Map(),
      // The folder's mtime moves when an entry is added, removed or renamed.
      fingerprint: fp(st),
    };
    return {
      resource,
      checkedAtMs,
      sizeBytes: FILE_ENTRY_BYTES + body.length + PATH_CHAR_BYTES * abs.length,
      watch: [abs],
    };
  }

  /** Symlinks leaving the root are refused unless followSymlinks. */
  private async contained(abs: string): Promise<boolean> {
    if (this.opts.followSymlinks) return true;
    try {
      this.realRoot ??= await this.access.realPath(this.root);
      return isInside(this.realRoot, await this.access.realPath(abs), sep);
    } catch {
      return false;
    }
  }

  private async fileEntry(
    path: string,
    abs: string,
    st: FileStats,
    checkedAtMs: number,
    extraWatch: string[],
  ): Promise<Entry> {
    const info = mediaInfo(path);
    const policy = this.policyFor({ path, mediaType: info.mediaType });
    // HTML is always revalidated, whatever its query says.
    const versionedPolicy = isHtml(info.mediaType)
      ? policy
      : this.policyFor({ path, mediaType: info.mediaType, versioned: true });
    const lastModifiedMs = this.opts.lastModified ? Math.floor(st.mtimeMs / 1000) * 1000 : undefined;
    // The body and the precompressed siblings' stats at once (one wait, not four).
    const [body, siblingStats] = await Promise.all([
      st.size <= this.maxBodyBytes ? this.access.readSized(abs, st.size) : undefined,
      this.opts.precompressed ? Promise.all(CODINGS.map((c) => this.stat(abs + CODING_EXT[c]))) : [],
    ]);
    // Siblings are ignored when older than the file they encode.
    const siblings = new Map<Coding, { path: string; st: FileStats }>();
    for (let k = 0; k < siblingStats.length; k++) {
      const sst = siblingStats[k];
      const sp = abs + CODING_EXT[CODINGS[k]!];
      if (sst?.isFile() && sst.mtimeMs >= st.mtimeMs && (await this.contained(sp))) {
        siblings.set(CODINGS[k]!, { path: sp, st: sst });
      }
    }
    const compressible =
      this.opts.compress && info.compressible && body !== undefined && st.size >= this.opts.compressMinBytes;
    const codings: Coding[] =
      siblings.size > 0 ? CODINGS.filter((c) => siblings.has(c)) : compressible ? [...FLY_CODINGS] : [];
    const vary = codings.length > 0;
    const make = (
      coding: Coding | 'identity',
      filePath: string,
      vst: FileStats,
      vbody: Buffer | undefined,
      tag: { etag: string; weakAlias: string | undefined },
    ) =>
      this.makeVariant(
        coding,
        filePath,
        vst.size,
        vbody,
        tag,
        info.contentType,
        lastModifiedMs,
        policy,
        versionedPolicy,
        vary,
        fp(vst),
      );

    const identityTag = await this.hashes.tagFor(abs, st, body);
    let pendingHash = identityTag.pending;
    const identity = make('identity', abs, st, body, identityTag);
    // The strong ETag is the content hash (undefined while a large file's is computed: its `?v=` is
    // not verified yet). In weak mode it is computed only when it can matter and the bytes are in
    // memory anyway (a streamed file is not read twice: its `?v=` is not verified).
    const contentHash =
      this.opts.etag === 'strong'
        ? identityTag.hash
        : versionedPolicy !== policy && body !== undefined
          ? hashBuffer(body)
          : undefined;
    const variants = new Map<Coding, Variant>();
    // absPath and the watch list's names built from it (`path` is mostly the key itself).
    let sizeBytes = FILE_ENTRY_BYTES + (body?.length ?? 0) + PATH_CHAR_BYTES * abs.length;
    for (const [c, s] of siblings) {
      const sbody =
        s.st.size <= this.maxBodyBytes ? await this.access.readSized(s.path, s.st.size) : undefined;
      sizeBytes += VARIANT_BYTES + (sbody?.length ?? 0);
      const tag = await this.hashes.tagFor(s.path, s.st, sbody, c);
      pendingHash ||= tag.pending;
      variants.set(c, make(c, s.path, s.st, sbody, tag));
    }
    const watch = this.opts.precompressed ? [abs, ...CODINGS.map((c) => abs + CODING_EXT[c])] : [abs];
    const resource: FileResource = {
      kind: 'file',
      path,
      absPath: abs,
      contentType: info.contentType,
      mediaType: info.mediaType,
      lastModifiedMs,
      policy,
      versionedPolicy,
      contentHash,
      identity,
      codings,
      variants,
      fingerprint: [st, ...(this.opts.precompressed ? siblingStats : [])].map(fp).join('|'),
    };
    if (extraWatch.length) {
      // Index files: a change of the directory (file added/removed) re-resolves too.
      const dirStats = await Promise.all(extraWatch.map(this.stat));
      (resource as { fingerprint: string }).fingerprint += `|${dirStats.map(fp).join('|')}`;
    }
    return { resource, checkedAtMs, sizeBytes, watch: [...watch, ...extraWatch], pendingHash };
  }

  /** The variant of `out`, the bytes of `file` compressed with `coding`. */
  private compressed(file: FileResource, coding: Coding, out: Buffer): Variant {
    const etag =
      this.opts.etag === 'weak' ? `${file.identity.etag.slice(0, -1)}-${coding}"` : `"${hashBuffer(out)}"`;
    const h = file.identity.headers;
    return this.makeVariant(
      coding,
      file.absPath,
      out.length,
      out,
      { etag, weakAlias: undefined },
      file.contentType,
      file.lastModifiedMs,
      file.policy,
      file.versionedPolicy,
      h.Vary !== undefined,
      undefined,
    );
  }

  private makeVariant(
    coding: Coding | 'identity',
    filePath: string,
    size: number,
    body: Buffer | undefined,
    tag: { etag: string; weakAlias: string | undefined },
    contentType: string,
    lastModifiedMs: number | undefined,
    policy: CachePolicy,
    versionedPolicy: CachePolicy,
    vary: boolean,
    diskFingerprint: string | undefined,
  ): Variant {
    const { etag, weakAlias } = tag;
    const build = (p: CachePolicy) => {
      // RFC 9110 §15.4.5: a 304 carries ETag, Cache-Control and Vary (Expires and Date are added per
      // response); other metadata SHOULD NOT be sent, and Last-Modified is only useful without an ETag,
      // which every file here has (as Go's net/http, so Caddy, leaves it out).
      const v304: Record<string, string> = { ETag: etag, 'Cache-Control': p.cacheControl };
      const headers: Record<string, string> = {
        'Content-Type': contentType,
        'Content-Length': String(size),
        ETag: etag,
        'Cache-Control': p.cacheControl,
      };
      if (lastModifiedMs !== undefined) headers['Last-Modified'] = formatHttpDate(lastModifiedMs);
      // RFC 9110 §12.5.5: every response of a resource with encoded variants says so.
      if (vary) headers.Vary = v304.Vary = 'Accept-Encoding';
      headers['Accept-Ranges'] = 'bytes';
      headers['X-Content-Type-Options'] = 'nosniff';
      if (coding !== 'identity') headers['Content-Encoding'] = coding;
      if (this.opts.htmlSecurityHeaders && isHtml(contentType.split(';', 1)[0]!.trim())) {
        const ruled = this.opts.htmlHeadersRuled;
        for (const [name, value] of Object.entries(HTML_SECURITY_HEADERS))
          if (ruled?.has(name.toLowerCase()) !== true) headers[name] = value;
      }
      // Shared by every response of this version: frozen, so an adapter may keep what it derives
      // from them (tls/h2-exchange.ts) and no handler can change them for the next request.
      return { headers: Object.freeze(headers), headers304: Object.freeze(v304) };
    };
    const normal = build(policy);
    const versioned = versionedPolicy === policy ? undefined : build(versionedPolicy);
    return { coding, etag, weakAlias, size, body, filePath, diskFingerprint, ...normal, versioned };
  }
}
