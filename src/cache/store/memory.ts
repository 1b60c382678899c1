// Memory store: a byte-bounded LRU (lru-cache) of entries with their whole bodies. Imports nothing
// from node:, so the client's private cache can use it in browsers too.
import { LRUCache } from 'lru-cache';
import { storedEntryProblem } from '../entry-check.js';
import {
  bodyChunks,
  checkStoreOptions,
  concat,
  InflightPuts,
  isDiscarded,
  newestFirst,
  VariantIndex,
  varyOf,
  wholeBody,
} from './shared.js';
import {
  type BodySource,
  type CacheStore,
  CacheStoreError,
  type EntryBody,
  type EntryMeta,
  type PurgeFilter,
  type PutResult,
  type SecondaryKeyOf,
  type StoredEntry,
  type StoreOptions,
  type VariantMatch,
} from './types.js';

export type MemoryStoreOptions = StoreOptions;

interface MemoryRecord {
  readonly entry: StoredEntry;
  /** The body, read-only, with `whole` set; shared by every reader (iterating it allocates nothing shared). */
  readonly body: EntryBody;
  /** The match that selects this entry (made once: the hit path allocates none). */
  readonly match: VariantMatch;
}

const NO_MATCH: VariantMatch = Object.freeze({ entry: undefined, any: undefined });

const recordOf = (entry: StoredEntry, body: EntryBody): MemoryRecord => ({
  entry,
  body,
  match: Object.freeze({ entry, any: entry }),
});

/** Fixed per-entry overhead counted on top of the strings (objects, maps, the LRU's slots). */
const META_OVERHEAD_BYTES = 256;

/** Approximate bytes the metadata of an entry holds: its strings as UTF-16, plus a fixed overhead. */
export function approxMetaBytes(key: string, meta: EntryMeta): number {
  let chars = key.length + meta.varyKey.length;
  for (const [name, value] of Object.entries(meta.response.headers)) chars += name.length + value.length;
  for (const [name, value] of Object.entries(meta.varyHeaders)) chars += name.length + value.length;
  for (const tag of meta.tags ?? []) chars += tag.length;
  return 2 * chars + META_OVERHEAD_BYTES;
}

/** A memory store bounded to `maxSizeBytes` (bodies plus approximate metadata). */
export function createMemoryStore(options: MemoryStoreOptions): CacheStore {
  return new MemoryStore(options);
}

class MemoryStore implements CacheStore {
  readonly #maxSizeBytes: number;
  readonly #maxEntryBytes: number;
  readonly #onInvalid: ((key: string, reason: string) => void) | undefined;
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
  readonly #inflight = new InflightPuts();
  #closed = false;

  constructor(options: MemoryStoreOptions) {
    checkStoreOptions(options);
    this.#maxSizeBytes = options.maxSizeBytes;
    this.#maxEntryBytes = options.maxEntryBytes;
    this.#onInvalid = options.onInvalidEntry;
    this.#nowMs = options.nowMs ?? Date.now;
    this.#maxVariants = options.maxVariantsPerKey ?? Number.POSITIVE_INFINITY;
    this.#lru = new LRUCache<string, MemoryRecord>({
      maxSize: options.maxSizeBytes,
      // 'set' is an updateMeta replacing the record under the same id: the entry stays under its key,
      // and updateMeta tags it with the new meta's tags after the set.
      dispose: (record, _id, reason) => {
        if (reason === 'set') this.#untag(record.entry);
        else this.#unindex(record.entry);
      },
    });
  }

  async getVariants(key: string): Promise<StoredEntry[]> {
    return this.getVariantsSync(key);
  }

  getVariantsSync(key: string): StoredEntry[] {
    this.#assertOpen();
    const ids = this.#idsByKey.get(key);
    if (!ids) return [];
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

  async findVariant(key: string, secondaryKey: SecondaryKeyOf): Promise<VariantMatch> {
    return this.findVariantSync(key, secondaryKey);
  }

  findVariantSync(key: string, secondaryKey: SecondaryKeyOf): VariantMatch {
    this.#assertOpen();
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
      return record.match;
    }
    const { found, any } = this.#variants.candidates(key, secondaryKey);
    const nowMs = this.#nowMs();
    let best: StoredEntry | undefined;
    let bestSecondary = '';
    for (const { secondary, item: id } of found) {
      const record = this.#lru.get(id); // a use: moves it to the recent end
      if (!record) continue;
      if (isDiscarded(record.entry.meta, nowMs)) {
        this.#lru.delete(id);
        continue;
      }
      const t = record.entry.meta.response.responseTimeMs;
      if (best === undefined || t > best.meta.response.responseTimeMs) {
        best = record.entry;
        bestSecondary = secondary;
      }
    }
    if (best !== undefined) this.#variants.touch(key, bestSecondary);
    return { entry: best, any: best ?? (any === undefined ? undefined : this.#lru.peek(any)?.entry) };
  }

  async put(key: string, meta: EntryMeta, body: BodySource): Promise<PutResult> {
    this.#assertOpen();
    const inflight = this.#inflight.begin(key, meta.tags);
    try {
      const chunks: Uint8Array[] = [];
      let bodyBytes = 0;
      for await (const chunk of bodyChunks(body)) {
        bodyBytes += chunk.byteLength;
        if (bodyBytes > this.#maxEntryBytes) return { stored: false, reason: 'too-large' }; // stops the source
        if (this.#closed) return { stored: false, reason: 'closed' };
        chunks.push(chunk);
      }
      if (this.#closed) return { stored: false, reason: 'closed' };
      if (inflight.ticket.invalidated) return { stored: false, reason: 'invalidated' };
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
      // A copy: the caller's chunks may be views into larger (pooled) buffers.
      const whole = concat(chunks, bodyBytes);
      this.#lru.set(entry.id, recordOf(entry, wholeBody(whole)), { size: sizeBytes });
      addToIndex(this.#idsByKey, key, entry.id);
      this.#variants.add(key, meta.varyKey, varyOf(meta), entry.id);
      this.#tag(entry);
      return { stored: true, entry };
    } finally {
      inflight.finish();
    }
  }

  async openBody(entry: StoredEntry): Promise<EntryBody | null> {
    return this.openBodySync(entry);
  }

  openBodySync(entry: StoredEntry): EntryBody | null {
    this.#assertOpen();
    const record = this.#lru.peek(entry.id);
    if (!record || record.entry.key !== entry.key) return null;
    return record.body; // one read-only view per record, shared by every reader
  }

  async updateMeta(key: string, id: string, meta: EntryMeta): Promise<StoredEntry | null> {
    this.#assertOpen();
    const record = this.#lru.peek(id);
    if (!record || record.entry.key !== key) return null;
    const entry: StoredEntry = { ...record.entry, meta };
    const sizeBytes = entry.bodyBytes + approxMetaBytes(key, meta);
    const problem = storedEntryProblem(meta, entry.bodyBytes, this.#maxEntryBytes);
    if (problem !== undefined) this.#onInvalid?.(key, problem);
    if (problem !== undefined || sizeBytes > this.#maxSizeBytes) {
      this.#lru.delete(id);
      return null;
    }
    this.#lru.set(id, recordOf(entry, record.body), { size: sizeBytes }); // untags the old meta
    this.#tag(entry);
    return entry;
  }

  async delete(key: string, id?: string): Promise<void> {
    this.#assertOpen();
    if (id === undefined) {
      this.#inflight.invalidate(key);
      for (const each of [...(this.#idsByKey.get(key) ?? [])]) this.#lru.delete(each);
    } else if (this.#lru.peek(id)?.entry.key === key) {
      this.#lru.delete(id);
    }
  }

  async purge(filter: PurgeFilter): Promise<number> {
    this.#assertOpen();
    this.#inflight.invalidateMatching(filter);
    let ids: string[];
    if ('tag' in filter) {
      ids = [...(this.#idsByTag.get(filter.tag) ?? [])];
    } else {
      ids = [];
      for (const [key, keyIds] of this.#idsByKey) {
        if ('all' in filter || key.startsWith(filter.keyPrefix)) ids.push(...keyIds);
      }
    }
    let removed = 0;
    for (const id of ids) if (this.#lru.delete(id)) removed++; // the dispose hook unindexes
    return removed;
  }

  async prune(): Promise<number> {
    this.#assertOpen();
    const nowMs = this.#nowMs();
    const discarded: string[] = [];
    for (const [id, record] of this.#lru.entries()) {
      if (isDiscarded(record.entry.meta, nowMs)) discarded.push(id);
    }
    for (const id of discarded) this.#lru.delete(id);
    return discarded.length; // the byte bound holds at every set
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#lru.clear();
  }

  sizeBytes(): number {
    return this.#lru.calculatedSize;
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

  #assertOpen(): void {
    if (this.#closed) throw new CacheStoreError('store_closed', 'the memory cache store is closed');
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
