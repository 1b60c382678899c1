// Validators of static files (RFC 9110 §8.8): which entity-tag a file version gets before its first
// response, and the weak `W/"size-mtime"` form. Pure: sizes, times and modes come in as plain values.

/** Characters of base64url (RFC 4648 §5) sha256 a content hash keeps (what a strong ETag quotes). */
export const CONTENT_HASH_CHARS = 27;

const CONTENT_HASH = /^[A-Za-z0-9_-]{27}$/;

/** True for a well-formed content hash: exactly 27 base64url characters (nothing to escape in a header). */
export function isContentHash(value: unknown): value is string {
  return typeof value === 'string' && CONTENT_HASH.test(value);
}

/**
 * `W/"<size hex>-<mtime ms hex>[-<coding>]"`: a weak validator (RFC 9110 §8.8.3) from what stat says,
 * nginx's form. Cheap and known at once, but two versions of the same size written within one
 * millisecond share it, and replicas with other mtimes differ.
 */
export function weakFileEtag(sizeBytes: number, mtimeMs: number, coding = ''): string {
  return `W/"${sizeBytes.toString(16)}-${Math.floor(mtimeMs).toString(16)}${coding && `-${coding}`}"`;
}

/**
 * Where a strong ETag's content hash comes from, for one file version:
 * - `memory`: the bytes are in memory anyway; hash them now.
 * - `known`: this process or a hash manifest (server/static/hash-manifest.ts) already has it.
 * - `inline`: read and hash the file before the first response (small enough to be cheap).
 * - `background`: answer at once with the weak validator, hash in the background, switch when done.
 * - `weak`: static.etag is weak; no content hash is needed for the ETag.
 */
export type HashPlan = 'memory' | 'known' | 'inline' | 'background' | 'weak';

export interface HashPlanInput {
  readonly etagMode: 'strong' | 'weak';
  /** The file's bytes are held in memory (up to static.maxCachedFileBytes). */
  readonly inMemory: boolean;
  /** A hash for exactly this version (inode, size, mtime, ctime) is already known. */
  readonly known: boolean;
  readonly sizeBytes: number;
  /** static.hashInlineMaxBytes: larger files go the background route. */
  readonly inlineMaxBytes: number;
}

export function planContentHash(i: HashPlanInput): HashPlan {
  if (i.etagMode === 'weak') return 'weak';
  if (i.inMemory) return 'memory';
  if (i.known) return 'known';
  return i.sizeBytes <= i.inlineMaxBytes ? 'inline' : 'background';
}

/**
 * True when a file of this size may have been answered with its weak validator (by this process
 * before its hash was known, by a replica or before a restart): If-None-Match keeps matching that
 * tag while the version is unchanged (weak comparison, RFC 9110 §13.1.2), so a client holding it
 * gets 304, not the whole file again, after the switch to the strong tag.
 */
export function mayHaveServedWeak(i: Omit<HashPlanInput, 'known'>): boolean {
  return i.etagMode === 'strong' && !i.inMemory && i.sizeBytes > i.inlineMaxBytes;
}
