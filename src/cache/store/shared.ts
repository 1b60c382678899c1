// Helpers shared by the store implementations (not exported from the package).
import { getHeader } from '../types.js';
import {
  type BodySource,
  CacheStoreError,
  type EntryBody,
  type EntryMeta,
  type PurgeFilter,
  type StoredEntry,
  type StoreOptions,
} from './types.js';

/** What shedLeastRecent needs of an LRU (lru-cache's LRUCache with a size calculation). */
export interface SheddableLru {
  readonly calculatedSize: number;
  readonly size: number;
  pop(): unknown;
}

/** What a shed of `fraction` (0-1, clamped) leaves of `bytes`. */
export const keptAfterShed = (bytes: number, fraction: number): number =>
  bytes * (1 - Math.min(1, Math.max(0, fraction)));

/**
 * Memory pressure (issue 40): drops the least recently used entries of `lru` until `fraction` of its
 * bytes are gone; returns the bytes dropped. Its dispose hook unindexes each as an eviction would.
 */
export function shedLeastRecent(lru: SheddableLru, fraction: number): number {
  const before = lru.calculatedSize;
  const keep = keptAfterShed(before, fraction);
  while (lru.size > 0 && lru.calculatedSize > keep) lru.pop();
  return before - lru.calculatedSize;
}

/** Validates the shared options once, in a store's factory. */
export function checkStoreOptions(options: StoreOptions): void {
  const { maxSizeBytes, maxEntryBytes } = options;
  if (!Number.isSafeInteger(maxSizeBytes) || maxSizeBytes <= 0) {
    throw new CacheStoreError(
      'bad_store_options',
      `maxSizeBytes must be a positive integer, got ${maxSizeBytes}`,
    );
  }
  if (!Number.isSafeInteger(maxEntryBytes) || maxEntryBytes < 0 || maxEntryBytes > maxSizeBytes) {
    throw new CacheStoreError(
      'bad_store_options',
      `maxEntryBytes must be an integer from 0 to maxSizeBytes (${maxSizeBytes}), got ${maxEntryBytes}`,
    );
  }
  const { maxVariantsPerKey } = options;
  if (
    maxVariantsPerKey !== undefined &&
    !(Number.isSafeInteger(maxVariantsPerKey) && maxVariantsPerKey >= 1)
  ) {
    throw new CacheStoreError(
      'bad_store_options',
      `maxVariantsPerKey must be a positive integer, got ${maxVariantsPerKey}`,
    );
  }
}

/** Iterates a body source; a whole body is one chunk. */
export async function* bodyChunks(body: BodySource): AsyncGenerator<Uint8Array, void, undefined> {
  if (body instanceof Uint8Array) yield body;
  else yield* body;
}

/** Whether an entry is past its `discardAfterMs` at `nowMs`. */
export function isDiscarded(meta: EntryMeta, nowMs: number): boolean {
  return meta.discardAfterMs !== undefined && nowMs > meta.discardAfterMs;
}

/** Newest response first (§4.1), ties in the given order. */
export function newestFirst(entries: StoredEntry[]): StoredEntry[] {
  return entries.sort((a, b) => b.meta.response.responseTimeMs - a.meta.response.responseTimeMs);
}

/** Whether an entry of `key` with `tags` falls under `filter`. */
function purgeMatches(filter: PurgeFilter, key: string, tags: readonly string[] | undefined): boolean {
  if ('tag' in filter) return tags?.includes(filter.tag) ?? false;
  return 'all' in filter || key.startsWith(filter.keyPrefix);
}

interface PutTicket {
  readonly tags: readonly string[] | undefined;
  invalidated: boolean;
}

/**
 * Puts in flight per primary key, so that `delete(key)` (invalidation, RFC 9111 §4.4) and `purge` also
 * cancel responses still streaming in: they were fetched before the invalidation and must not land
 * after it.
 */
export class InflightPuts {
  readonly #byKey = new Map<string, Set<PutTicket>>();

  /** Registers a put; call the returned `finish` when it ends, whatever the outcome. */
  begin(
    key: string,
    tags: readonly string[] | undefined,
  ): { readonly ticket: { readonly invalidated: boolean }; finish(): void } {
    const ticket: PutTicket = { tags, invalidated: false };
    let set = this.#byKey.get(key);
    if (!set) this.#byKey.set(key, (set = new Set()));
    set.add(ticket);
    const byKey = this.#byKey;
    return {
      ticket,
      finish() {
        set.delete(ticket);
        if (set.size === 0 && byKey.get(key) === set) byKey.delete(key);
      },
    };
  }

  /** Marks every put in flight for `key` as invalidated. */
  invalidate(key: string): void {
    for (const ticket of this.#byKey.get(key) ?? []) ticket.invalidated = true;
  }

  /** Marks every put in flight matching `filter` as invalidated. Scans: puts in flight are few. */
  invalidateMatching(filter: PurgeFilter): void {
    for (const [key, tickets] of this.#byKey) {
      for (const ticket of tickets) if (purgeMatches(filter, key, ticket.tags)) ticket.invalidated = true;
    }
  }
}

/** Node's Buffer when there is one (a Buffer body is written to a socket without a conversion). */
const NodeBuffer = (globalThis as { Buffer?: { allocUnsafeSlow(size: number): Uint8Array } }).Buffer;

/** The chunks copied into one array (they may be views into larger, pooled buffers). */
export function concat(chunks: readonly Uint8Array[], totalBytes: number): Uint8Array {
  const out = NodeBuffer !== undefined ? NodeBuffer.allocUnsafeSlow(totalBytes) : new Uint8Array(totalBytes);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  if (offset !== totalBytes) throw new RangeError(`concat: ${offset} bytes given, ${totalBytes} stated`);
  return out;
}

/** A body held in memory, yielded as one chunk. The caller must not modify it. */
export function wholeBody(body: Uint8Array): EntryBody {
  return {
    bodyBytes: body.byteLength,
    whole: body,
    async close() {},
    async *[Symbol.asyncIterator]() {
      if (body.byteLength > 0) yield body;
    },
  };
}

/** The variants of one primary key (see VariantIndex). */
interface KeyVariants<T> {
  /** By secondary key (§4.1, `meta.varyKey`), least recently used first; each with the Vary it was indexed under. */
  readonly bySecondary: Map<string, { readonly item: T; readonly vary: string }>;
  /** How many variants carry each response Vary value ('' for none): usually one value per key. */
  readonly varyCounts: Map<string, number>;
}

/**
 * The variants of each primary key, indexed by secondary key, so that selecting one (§4.1) costs a
 * map lookup per distinct response Vary value of the key, however many variants are stored; the
 * order of use gives the least recently used variant when a key is over its cap.
 */
export class VariantIndex<T> {
  readonly #byKey = new Map<string, KeyVariants<T>>();

  get(key: string, secondary: string): T | undefined {
    return this.#byKey.get(key)?.bySecondary.get(secondary)?.item;
  }

  count(key: string): number {
    return this.#byKey.get(key)?.bySecondary.size ?? 0;
  }

  /** The least recently used variant of `key`. */
  oldest(key: string): T | undefined {
    const first = this.#byKey.get(key)?.bySecondary.values().next();
    return first === undefined || first.done ? undefined : first.value.item;
  }

  /** Indexes `item` under `key` and `secondary`, replacing what was there; `vary` is its response Vary. */
  add(key: string, secondary: string, vary: string, item: T): void {
    let k = this.#byKey.get(key);
    if (k === undefined) this.#byKey.set(key, (k = { bySecondary: new Map(), varyCounts: new Map() }));
    this.remove(key, secondary);
    k.bySecondary.set(secondary, { item, vary });
    k.varyCounts.set(vary, (k.varyCounts.get(vary) ?? 0) + 1);
  }

  /** Removes the variant under `secondary`, when it is `item` (any item when omitted). */
  remove(key: string, secondary: string, item?: T): void {
    const k = this.#byKey.get(key);
    const found = k?.bySecondary.get(secondary);
    if (k === undefined || found === undefined || (item !== undefined && found.item !== item)) return;
    k.bySecondary.delete(secondary);
    const n = (k.varyCounts.get(found.vary) ?? 1) - 1;
    if (n === 0) k.varyCounts.delete(found.vary);
    else k.varyCounts.set(found.vary, n);
    if (k.bySecondary.size === 0) this.#byKey.delete(key);
  }

  /** Marks a variant used (most recent); a key's only variant already is. */
  touch(key: string, secondary: string): void {
    const m = this.#byKey.get(key)?.bySecondary;
    if (m === undefined || m.size < 2) return;
    const found = m.get(secondary);
    if (found === undefined) return;
    m.delete(secondary);
    m.set(secondary, found);
  }

  /**
   * The common case of one stored variant and no Vary, without allocating: its item when `key` has
   * exactly one variant and it was stored without Vary (any request selects it, §4.1); null when the
   * key has variants of another shape (use `candidates`); undefined when none is stored.
   */
  sole(key: string): T | null | undefined {
    const k = this.#byKey.get(key);
    if (k === undefined) return undefined;
    if (k.bySecondary.size !== 1) return null;
    const only = k.bySecondary.get('');
    return only !== undefined && only.vary === '' ? only.item : null;
  }

  /**
   * The candidates a request selects: for each distinct Vary value of `key`, the variant under the
   * request's secondary key for it (`secondaryKey`, null: no match, §4.1 `Vary: *`). `any` is some
   * variant of the key (undefined: none stored).
   */
  candidates(
    key: string,
    secondaryKey: (vary: string | undefined) => string | null,
  ): { found: { secondary: string; item: T }[]; any: T | undefined } {
    const k = this.#byKey.get(key);
    const found: { secondary: string; item: T }[] = [];
    if (k === undefined) return { found, any: undefined };
    for (const vary of k.varyCounts.keys()) {
      const secondary = secondaryKey(vary === '' ? undefined : vary);
      if (secondary === null) continue;
      const hit = k.bySecondary.get(secondary);
      if (hit !== undefined) found.push({ secondary, item: hit.item });
    }
    const first = k.bySecondary.values().next();
    return { found, any: first.done ? undefined : first.value.item };
  }
}

/** The Vary value a variant is indexed under ('' for none). */
export function varyOf(meta: EntryMeta): string {
  return getHeader(meta.response.headers, 'vary') ?? '';
}
