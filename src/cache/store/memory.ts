// Memory store: a byte-bounded LRU (lru-cache) of entries with their whole bodies. Imports nothing
// from node:, so the client's private cache can use it in browsers too.
import { LRUCache } from 'lru-cache';
import { storedEntryProblem } from '../entry-check.js';
import { entryCache, type PeekingEntryCache } from './entry-cache.js';
import {
  checkStoreOptions,
  isDiscarded,
  newestFirst,
  shedLeastRecent,
  VariantIndex,
  varyOf,
  wholeBody,
} from './shared.js';
import type {
  CacheStore,
  EntryBody,
  EntryMeta,
  PurgeFilter,
  PutResult,
  Read,
  ReadResult,
  Removal,
  SecondaryKeyOf,
  Selected,
  StoredEntry,
  StoreOptions,
  Write,
} from './types.js';

export type MemoryStoreOptions = StoreOptions;

interface MemoryRecord {
  readonly entry: StoredEntry;
  /** The body, read-only, with `whole` set; shared by every reader (iterating it allocates nothing shared). */
  readonly body: EntryBody;
  /** The select answer that is this entry with its body (made once: the hit path allocates none). */
  readonly selected: Selected;
}

const NO_MATCH: Selected = Object.freeze({ entry: undefined, any: undefined });
const NONE: readonly StoredEntry[] = Object.freeze([]);
const GONE: PutResult = Object.freeze({ stored: false, reason: 'gone' });

const recordOf = (entry: StoredEntry, body: EntryBody): MemoryRecord => ({
  entry,
  body,
  selected: Object.freeze({ entry, any: entry, body }),
});

/**
 * Fixed per-entry overhead counted on top of the strings: the entry, its record and body objects, its id,
 * the LRU's slots, the key and variant indexes. Measured (test/cache/store/memory-accounting.test.ts):
 * 2,528 B of heap for the metadata of a proxied 1 KiB response, where 256 B here counted 621 B, so a
 * "64 MiB" cache of small responses held twice that (issue 40).
 */
const META_OVERHEAD_BYTES = 2176;

/** Approximate bytes the metadata of an entry holds: its strings as UTF-16, plus a fixed overhead. */
export function approxMetaBytes(key: string, meta: EntryMeta): number {
  let chars = key.length + meta.varyKey.length;
  for (const [name, value] of Object.entries(meta.response.headers)) chars += name.length + value.length;
  for (const [name, value] of Object.entries(meta.varyHeaders)) chars += name.length + value.length;
  for (const tag of meta.tags ?? []) chars += tag.length;
  return 2 * chars + META_OVERHEAD_BYTES;
}

/** A memory store bounded to `maxSizeBytes` (bodies plus approximate metadata). */
export function createMemoryStore(options: MemoryStoreOptions): MemoryStore {
  checkStoreOptions(options);
  return new MemoryStore(options);
}

/** The memory store behind the cache's operations (entry-cache.ts). */
export function createMemoryCache(options: MemoryStoreOptions): PeekingEntryCache<MemoryStore> {
  return entryCache(
    { ...options, name: 'memory' },
    (o) => new MemoryStore(o),
  ) as PeekingEntryCache<MemoryStore>;
}

export class MemoryStore implements CacheStore {
  readonly #maxSizeBytes: number;
  readonly #maxEntryBytes: number;
  readonly #onInvalid: ((key: string, reason: string) => void) | undefined;
  readonly #onSize: ((bytes: number) => void) | undefined;
  readonly #nowMs: () => number;
  /** Entries by id, in recency order; evicts by byte size. */
  readonly #lru: LRUCache<string, MemoryRecord>;
  /** Ids of the entries of each primary key; kept in step with the LRU by its dispose hook. */
  readonly #idsByKey = new Map<string, Set<string>>();
  /** Ids of the entries listing each purge tag, so a tag purge does not scan every entry. */
  readonly #idsByTag = new Map<string, Set<string>>();
  /** Ids of the entries of each primary key by secondary key (§4.1), in order of use. */
  readonly #variants = new VariantIndex<string>();
  readonly #maxVariants: number;

  constructor(options: MemoryStoreOptions) {
    this.#maxSizeBytes = options.maxSizeBytes;
    this.#maxEntryBytes = options.maxEntryBytes;
    this.#onInvalid = options.onInvalidEntry;
    this.#onSize = options.onSizeBytes;
    this.#nowMs = options.nowMs ?? Date.now;
    this.#maxVariants = options.maxVariantsPerKey ?? Number.POSITIVE_INFINITY;
    this.#lru = new LRUCache<string, MemoryRecord>({
      maxSize: options.maxSizeBytes,
      // 'set' is a meta update replacing the record under the same id: the entry stays under its key,
      // and #update tags it with the new meta's tags after the set.
      dispose: (record, _id, reason) => {
        if (reason === 'set') this.#untag(record.entry);
        else this.#unindex(record.entry);
      },
    });
  }

  async get<R extends Read>(key: string, read: R): Promise<ReadResult<R>> {
    return this.peek(key, read);
  }

  /** Everything is in memory: every read is answered. */
  peek<R extends Read>(key: string, read: R): ReadResult<R> {
    const size = this.#lru.calculatedSize;
    const out =
      'select' in read
        ? this.#select(key, read.select)
        : 'all' in read
          ? this.#all(key)
          : this.#body(read.body);
    if (this.#lru.calculatedSize !== size) this.#onSize?.(this.#lru.calculatedSize); // dropped discarded ones
    return out as ReadResult<R>;
  }

  async put(key: string, write: Write): Promise<PutResult> {
    const r = 'id' in write ? this.#update(key, write.id, write.meta) : this.#put(key, write);
    this.#onSize?.(this.#lru.calculatedSize);
    return r;
  }

  async delete(which: Removal): Promise<number> {
    const ids =
      'key' in which
        ? which.id === undefined
          ? [...(this.#idsByKey.get(which.key) ?? [])]
          : this.#lru.peek(which.id)?.entry.key === which.key
            ? [which.id]
            : []
        : 'expired' in which
          ? this.#discardedIds()
          : this.#matching(which);
    let removed = 0;
    for (const id of ids) if (this.#lru.delete(id)) removed++; // the dispose hook unindexes
    if (removed > 0) this.#onSize?.(this.#lru.calculatedSize);
    return removed; // the byte bound holds at every set
  }

  /** Memory pressure: the least recently used entries go, as evictions (the dispose hook unindexes). */
  shed(fraction: number): number {
    const dropped = shedLeastRecent(this.#lru, fraction);
    if (dropped > 0) this.#onSize?.(this.#lru.calculatedSize);
    return dropped;
  }

  close(): Promise<void> {
    this.#lru.clear();
    return Promise.resolve();
  }

  /** The live entries of `key`, newest response first; each a use. */
  #all(key: string): readonly StoredEntry[] {
    const ids = this.#idsByKey.get(key);
    if (!ids) return NONE;
    const nowMs = this.#nowMs();
    const found: StoredEntry[] = [];
    // Deleting from a Set while iterating it is well defined (the deleted id is not visited again).
    for (const id of ids) {
      const record = this.#lru.get(id); // a use: moves it to the recent end
      if (!record) continue;
      if (isDiscarded(record.entry.meta, nowMs)) this.#lru.delete(id);
      else found.push(record.entry);
    }
    return found.length > 1 ? newestFirst(found) : found;
  }

  /** The entry a request selects (§4.1) with its body; a use of it only. */
  #select(key: string, secondaryKey: SecondaryKeyOf): Selected {
    const sole = this.#variants.sole(key);
    if (sole === undefined) return NO_MATCH;
    if (sole !== null) {
      // One variant stored without Vary: it is the selected one (the hit path allocates nothing).
      const record = this.#lru.get(sole); // a use: moves it to the recent end
      if (record === undefined) return NO_MATCH;
      if (isDiscarded(record.entry.meta, this.#nowMs())) {
        this.#lru.delete(sole);
        return NO_MATCH;
      }
      return record.selected;
    }
    const { found, any } = this.#variants.candidates(key, secondaryKey);
    const nowMs = this.#nowMs();
    let best: MemoryRecord | undefined;
    let bestSecondary = '';
    for (const { secondary, item: id } of found) {
      const record = this.#lru.get(id); // a use: moves it to the recent end
      if (!record) continue;
      if (isDiscarded(record.entry.meta, nowMs)) {
        this.#lru.delete(id);
        continue;
      }
      const t = record.entry.meta.response.responseTimeMs;
      if (best === undefined || t > best.entry.meta.response.responseTimeMs) {
        best = record;
        bestSecondary = secondary;
      }
    }
    if (best !== undefined) {
      this.#variants.touch(key, bestSecondary);
      return best.selected;
    }
    return { entry: undefined, any: any === undefined ? undefined : this.#lru.peek(any)?.entry };
  }

  #body(entry: StoredEntry): EntryBody | null {
    const record = this.#lru.peek(entry.id);
    if (!record || record.entry.key !== entry.key) return null;
    return record.body; // one read-only view per record, shared by every reader
  }

  #put(
    key: string,
    {
      meta,
      body,
      wanted,
    }: { readonly meta: EntryMeta; readonly body: Uint8Array; readonly wanted?: () => boolean },
  ): PutResult {
    if (wanted?.() === false) return { stored: false, reason: 'invalidated' };
    const bodyBytes = body.byteLength;
    // Checked once on the way in (the only way in), so the hit path reads only entries that can be
    // served, at no cost per hit (../entry-check.ts; Redis and disk check what they read back).
    const problem = storedEntryProblem(meta, bodyBytes, this.#maxEntryBytes);
    if (problem !== undefined) {
      this.#onInvalid?.(key, problem);
      return { stored: false, reason: 'invalid' };
    }
    const sizeBytes = bodyBytes + approxMetaBytes(key, meta);
    if (sizeBytes > this.#maxSizeBytes) return { stored: false, reason: 'too-large' };
    const entry: StoredEntry = { key, id: globalThis.crypto.randomUUID(), meta, bodyBytes };
    // The new response replaces the stored one it would be selected in place of (same secondary key).
    const replaced = this.#variants.get(key, meta.varyKey);
    if (replaced !== undefined) this.#lru.delete(replaced);
    // A new variant beyond the cap evicts the least recently used one of the key.
    while (this.#variants.count(key) >= this.#maxVariants) this.#lru.delete(this.#variants.oldest(key)!);
    this.#lru.set(entry.id, recordOf(entry, wholeBody(body)), { size: sizeBytes });
    addToIndex(this.#idsByKey, key, entry.id);
    this.#variants.add(key, meta.varyKey, varyOf(meta), entry.id);
    this.#tag(entry);
    return { stored: true, entry };
  }

  #update(key: string, id: string, meta: EntryMeta): PutResult {
    const record = this.#lru.peek(id);
    if (!record || record.entry.key !== key) return GONE;
    const entry: StoredEntry = { ...record.entry, meta };
    const sizeBytes = entry.bodyBytes + approxMetaBytes(key, meta);
    const problem = storedEntryProblem(meta, entry.bodyBytes, this.#maxEntryBytes);
    if (problem !== undefined) this.#onInvalid?.(key, problem);
    if (problem !== undefined || sizeBytes > this.#maxSizeBytes) {
      this.#lru.delete(id);
      return GONE;
    }
    this.#lru.set(id, recordOf(entry, record.body), { size: sizeBytes }); // untags the old meta
    this.#tag(entry);
    return { stored: true, entry };
  }

  /** Ids of the entries a purge removes. */
  #matching(filter: PurgeFilter): string[] {
    if ('tag' in filter) return [...(this.#idsByTag.get(filter.tag) ?? [])];
    const ids: string[] = [];
    for (const [key, keyIds] of this.#idsByKey) {
      if ('all' in filter || key.startsWith(filter.keyPrefix)) ids.push(...keyIds);
    }
    return ids;
  }

  #discardedIds(): string[] {
    const nowMs = this.#nowMs();
    const discarded: string[] = [];
    for (const [id, record] of this.#lru.entries()) {
      if (isDiscarded(record.entry.meta, nowMs)) discarded.push(id);
    }
    return discarded;
  }

  #unindex(entry: StoredEntry): void {
    removeFromIndex(this.#idsByKey, entry.key, entry.id);
    this.#variants.remove(entry.key, entry.meta.varyKey, entry.id);
    this.#untag(entry);
  }

  #tag(entry: StoredEntry): void {
    for (const tag of entry.meta.tags ?? []) addToIndex(this.#idsByTag, tag, entry.id);
  }

  #untag(entry: StoredEntry): void {
    for (const tag of entry.meta.tags ?? []) removeFromIndex(this.#idsByTag, tag, entry.id);
  }
}

function addToIndex(index: Map<string, Set<string>>, name: string, id: string): void {
  let ids = index.get(name);
  if (!ids) index.set(name, (ids = new Set()));
  ids.add(id);
}

function removeFromIndex(index: Map<string, Set<string>>, name: string, id: string): void {
  const ids = index.get(name);
  if (!ids) return;
  ids.delete(id);
  if (ids.size === 0) index.delete(name);
}
