// The storage tiers of the caching fetch (lookup order: memory, then each `stores` tier, then the
// network). A tier keeps, per target URI, the stored responses for it (one per Vary variant,
// RFC 9111 §4.1) as plain values, so a persistent tier can serialise them as they are.
import type { HeaderMap, StoredResponse } from '../cache/types.js';

/** One stored response with what the cache needs to serve and match it again (RFC 9111 §3, §4.1). */
export interface CachedResponse extends StoredResponse {
  readonly statusText: string;
  /** The request header fields it was selected with, lowercase (for Vary, §4.1). */
  readonly requestHeaders: HeaderMap;
  readonly body: Uint8Array;
}

/** The stored responses for one target URI: one per Vary variant, most recent first. */
export type CachedVariants = readonly CachedResponse[];

/**
 * A storage tier. Keys are absolute URLs without a fragment. Any method may return a promise.
 * A tier must not change a value after `put` (the caller may keep serving it).
 */
export interface CacheTier {
  /** A short name for stats() (e.g. 'memory', 'disk'). */
  readonly name: string;
  get(key: string): CachedVariants | undefined | Promise<CachedVariants | undefined>;
  put(key: string, variants: CachedVariants): void | Promise<void>;
  delete(key: string): void | Promise<void>;
  /** Every key held (used by invalidate(predicate)). */
  keys(): Iterable<string> | Promise<Iterable<string>>;
  clear(): void | Promise<void>;
  /** Bytes held, when the tier knows (stats()). */
  sizeBytes?(): number | Promise<number>;
}

/**
 * What an entry costs the heap beyond its text and body bytes (V8, 64-bit), measured by
 * test/client/memory-accounting.test.ts (heap freed by clear() over 20,000 tiny entries): the key's
 * Map slot, holder object and variants array; each response object with its two header maps and its
 * Uint8Array with ArrayBuffer; each header field's property slot and string headers.
 */
const KEY_OVERHEAD_BYTES = 160;
const VARIANT_OVERHEAD_BYTES = 256;
const FIELD_OVERHEAD_BYTES = 48;

/** Bytes one URL's variants cost in memory: bodies, header text and the per-object overheads above. */
export function variantsBytes(key: string, variants: CachedVariants): number {
  let n = key.length + KEY_OVERHEAD_BYTES;
  for (const v of variants) {
    n += v.body.byteLength + v.statusText.length + VARIANT_OVERHEAD_BYTES;
    for (const [k, val] of Object.entries(v.headers)) n += k.length + val.length + FIELD_OVERHEAD_BYTES;
    for (const [k, val] of Object.entries(v.requestHeaders))
      n += k.length + val.length + FIELD_OVERHEAD_BYTES;
  }
  return n;
}

/**
 * An in-memory tier, least recently used first out, bounded in bytes (variantsBytes: what entries cost). A Map keeps
 * insertion order, so a read re-inserts its key to mark it most recent; eviction takes the first keys.
 * A value larger than the bound is not kept.
 */
export interface MemoryTier extends CacheTier {
  sizeBytes(): number;
  readonly maxBytes: number;
}

export function memoryTier(maxBytes: number): MemoryTier {
  if (!(Number.isFinite(maxBytes) && maxBytes >= 0)) throw new RangeError('maxMemoryBytes: a number >= 0');
  const map = new Map<string, { variants: CachedVariants; bytes: number }>();
  let total = 0;
  const remove = (key: string): void => {
    const e = map.get(key);
    if (e === undefined) return;
    total -= e.bytes;
    map.delete(key);
  };
  return {
    name: 'memory',
    maxBytes,
    get(key) {
      const e = map.get(key);
      if (e === undefined) return undefined;
      map.delete(key);
      map.set(key, e);
      return e.variants;
    },
    put(key, variants) {
      remove(key);
      const bytes = variantsBytes(key, variants);
      if (bytes > maxBytes) return;
      map.set(key, { variants, bytes });
      total += bytes;
      for (const oldest of map.keys()) {
        if (total <= maxBytes) break;
        remove(oldest);
      }
    },
    delete: remove,
    keys: () => [...map.keys()],
    clear() {
      map.clear();
      total = 0;
    },
    sizeBytes: () => total,
  };
}
