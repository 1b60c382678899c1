// Disk store: one folder, two files per entry, and an index in memory rebuilt from the files on open.
//
// Files: `<name>.body` holds the body and `<name>.json` a MetaFile (key, id, bodyBytes, meta), where
// <name> is sha256(key NUL id) in hex. Each is written to a unique `<name>.<random>.tmp` and renamed
// into place, body first: the rename of the meta file commits the entry. An entry exists exactly when
// a valid meta file names its own key and id and has a body file of the stated length; on open
// everything else that carries our names (temp files, bodies without meta, corrupt or short entries)
// is deleted. Files whose names are not ours are never touched.
//
// Tombstones: when an entry leaves the index but its meta file cannot be deleted (a filesystem
// fault), its name is appended to `purged.tombstones`, so that the next open drops it instead of
// serving it again (a purge or invalidation must survive a restart); the open retries deleting its
// files and keeps only the names whose meta file is still there. Names are never reused (the id is a
// random UUID), so a tombstone never hides a later entry of the same key.
//
// No fsync: after a power loss an entry may be lost (a short body is dropped on open), never served
// wrong. Eviction is least recently used by byte size (bodies plus meta files). Access order lives in
// memory and is persisted lazily as the meta files' mtimes (on prune and close); on open entries are
// ranked by mtime. Purge tags live in the meta files; the tag index is rebuilt from them on open. One
// process owns a folder at a time: the index is in this process's memory.
//
// Memory tier: the bodies of recently used small entries are also kept in memory (`memoryCacheBytes`,
// least recently used out first), so a hit on them reads no file and can be answered synchronously.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import {
  appendFile,
  type FileHandle,
  lstat,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { storedEntryProblem } from '../entry-check.js';
import { openEntryCache, type PeekingEntryCache } from './entry-cache.js';
import {
  checkStoreOptions,
  isDiscarded,
  keptAfterShed,
  newestFirst,
  VariantIndex,
  varyOf,
  wholeBody,
} from './shared.js';
import {
  type CacheStore,
  type EntryBody,
  type EntryMeta,
  type PurgeFilter,
  PurgeIncompleteError,
  type PutResult,
  type Read,
  type ReadResult,
  type Removal,
  type SecondaryKeyOf,
  type Selected,
  type StoredEntry,
  type StoreOptions,
  type Write,
} from './types.js';

export interface DiskStoreOptions extends StoreOptions {
  /** The folder; created if missing. Give the store a folder of its own. */
  readonly dir: string;
  /**
   * Bytes of bodies also kept in memory, most recently used first (default 16 MiB, at most
   * maxSizeBytes; 0 turns it off). Bodies over MEMORY_ENTRY_MAX_BYTES are always read from their file.
   */
  readonly memoryCacheBytes?: number;
}

export const DEFAULT_MEMORY_CACHE_BYTES = 16 * 1024 * 1024;
/** Larger bodies are streamed from their file, never held whole in memory. */
export const MEMORY_ENTRY_MAX_BYTES = 1024 * 1024;

/** The JSON of a meta file. `version` changes when the layout does; other versions are discarded. */
interface MetaFile {
  readonly version: 1;
  readonly key: string;
  readonly id: string;
  readonly bodyBytes: number;
  readonly meta: EntryMeta;
}

interface DiskRecord {
  entry: StoredEntry;
  /** File name stem: sha256(key NUL id) in hex. */
  readonly name: string;
  /** Size of the meta file. */
  metaBytes: number;
  lastAccessMs: number;
  /** The latest meta file write; updateMeta writes chain on it so the newest lands last. */
  metaWrite: Promise<unknown>;
}

const ENTRY_FILE = /^([0-9a-f]{64})\.(json|body)$/;
const TEMP_FILE = /^(?:[0-9a-f]{64}|purged\.tombstones)\.[0-9a-f]{12}\.tmp$/;
/** Names (file stems) of entries out of the index whose meta file could not be deleted, one a line. */
const TOMBSTONE_FILE = 'purged.tombstones';
const NAME = /^[0-9a-f]{64}$/;
/** Files handled at once when opening, persisting access times. */
const IO_PARALLEL = 16;
const READ_CHUNK_BYTES = 64 * 1024;

/**
 * Opens (creating if needed) a disk store in `options.dir`: rebuilds the index from the meta files,
 * deletes leftovers of interrupted writes and corrupt entries, and evicts down to `maxSizeBytes`.
 */
export async function openDiskStore(options: DiskStoreOptions): Promise<DiskStore> {
  checkStoreOptions(options);
  const { dir } = options;
  await makeDir(dir);
  const metaNames: string[] = [];
  const bodyNames = new Set<string>();
  const garbage: string[] = [];
  for (const file of await readdir(dir)) {
    const m = ENTRY_FILE.exec(file);
    if (m) {
      if (m[2] === 'json') metaNames.push(m[1]!);
      else bodyNames.add(m[1]!);
    } else if (TEMP_FILE.test(file)) {
      garbage.push(file);
    }
  }
  const tombstones = await readTombstones(dir);
  const loaded: DiskRecord[] = [];
  await forEachLimit(metaNames, async (name) => {
    const record = tombstones.has(name) ? null : await loadRecord(dir, name, options);
    if (record) loaded.push(record);
    else garbage.push(`${name}.json`, `${name}.body`);
    bodyNames.delete(name);
  });
  for (const name of bodyNames) garbage.push(`${name}.body`); // bodies whose meta never landed
  // A file that cannot be deleted (a filesystem fault) does not stop the open: it is not indexed.
  await forEachLimit(garbage, (file) => rm(join(dir, file), { force: true }).catch(() => {}));
  await pruneTombstones(dir, tombstones);
  loaded.sort((a, b) => a.lastAccessMs - b.lastAccessMs);
  const store = new DiskStore(options, loaded);
  await store.delete(EXPIRED);
  return store;
}

/**
 * The disk store behind the cache's operations (entry-cache.ts). Any file write may fail (a full
 * disk, a folder gone): `putMayFail`.
 */
export async function openDiskCache(options: DiskStoreOptions): Promise<PeekingEntryCache<DiskStore>> {
  const name = `disk (${options.dir})`;
  const cache = await openEntryCache({ ...options, name, putMayFail: true }, (o) =>
    openDiskStore({ ...options, ...o }),
  );
  return cache as PeekingEntryCache<DiskStore>;
}

const EXPIRED = Object.freeze({ expired: true }) as { readonly expired: true };
const GONE: PutResult = Object.freeze({ stored: false, reason: 'gone' });
const INVALIDATED: PutResult = Object.freeze({ stored: false, reason: 'invalidated' });

/** A disk-backed cache store, from `openDiskStore`. */
export class DiskStore implements CacheStore {
  /** The folder the store keeps its files in. */
  readonly dir: string;
  readonly #maxSizeBytes: number;
  readonly #maxEntryBytes: number;
  readonly #onInvalid: ((key: string, reason: string) => void) | undefined;
  readonly #onSize: ((bytes: number) => void) | undefined;
  readonly #nowMs: () => number;
  /** Every entry by id, least recently used first (a Map keeps insertion order). */
  readonly #lru = new Map<string, DiskRecord>();
  readonly #byKey = new Map<string, Map<string, DiskRecord>>();
  /** Entries listing each purge tag, so a tag purge does not scan every entry. */
  readonly #byTag = new Map<string, Set<DiskRecord>>();
  /** The entries of each primary key by secondary key (§4.1), in order of use. */
  readonly #variantIndex = new VariantIndex<DiskRecord>();
  readonly #maxVariants: number;
  /** Entries whose lastAccessMs is not yet on disk as the meta file's mtime. */
  readonly #unsavedAccess = new Set<DiskRecord>();
  /** Operations running, so that close() can wait for them. */
  readonly #running = new Set<Promise<unknown>>();
  #totalBytes = 0;
  #closed = false;
  /** The last append to the tombstone file; appends chain on it. */
  #tombstoneWrite: Promise<unknown> = Promise.resolve();
  /** The memory tier: bodies by entry, least recently used first, and their total size. */
  readonly #hot = new Map<DiskRecord, EntryBody>();
  #hotBytes = 0;
  readonly #hotMaxBytes: number;
  /** Bodies up to this size go into the memory tier; -1 when it is off. */
  readonly #hotMaxEntryBytes: number;

  constructor(options: DiskStoreOptions, records: readonly DiskRecord[]) {
    this.dir = options.dir;
    this.#maxSizeBytes = options.maxSizeBytes;
    this.#maxEntryBytes = options.maxEntryBytes;
    this.#onInvalid = options.onInvalidEntry;
    this.#onSize = options.onSizeBytes;
    this.#nowMs = options.nowMs ?? Date.now;
    this.#maxVariants = options.maxVariantsPerKey ?? Number.POSITIVE_INFINITY;
    this.#hotMaxBytes = Math.min(
      options.memoryCacheBytes ?? DEFAULT_MEMORY_CACHE_BYTES,
      options.maxSizeBytes,
    );
    this.#hotMaxEntryBytes = this.#hotMaxBytes > 0 ? Math.min(MEMORY_ENTRY_MAX_BYTES, this.#hotMaxBytes) : -1;
    for (const record of records) {
      // Two entries for one variant (a crash between commit and removal of the replaced one): keep
      // the newer response.
      const twin = this.#findVariant(record.entry.key, record.entry.meta.varyKey);
      if (twin) {
        const older =
          twin.entry.meta.response.responseTimeMs > record.entry.meta.response.responseTimeMs ? record : twin;
        if (older === record) {
          this.#track(this.#removeFiles(record.name));
          continue;
        }
        this.#unindex(twin);
        this.#track(this.#removeFiles(twin.name));
      }
      this.#index(record);
    }
  }

  get<R extends Read>(key: string, read: R): Promise<ReadResult<R>> {
    return this.#track(this.#get(key, read) as Promise<ReadResult<R>>);
  }

  /**
   * The index is in memory: select and all reads are answered without waiting for discarded files
   * to go; a body read only from the memory tier (undefined: it takes a file read, use get).
   */
  peek<R extends Read>(key: string, read: R): ReadResult<R> | undefined {
    if ('body' in read) {
      const record = this.#lru.get(read.body.id);
      if (!record || record.entry.key !== read.body.key) return undefined;
      return this.#hotGet(record) as ReadResult<R> | undefined;
    }
    const { found, discarded } = 'select' in read ? this.#select(key, read.select) : this.#variants(key);
    if (discarded.length > 0) void this.#track(this.#discard(discarded));
    return found as ReadResult<R>;
  }

  put(key: string, write: Write): Promise<PutResult> {
    return this.#track('id' in write ? this.#updateMeta(key, write.id, write.meta) : this.#put(key, write));
  }

  delete(which: Removal): Promise<number> {
    const removal =
      'key' in which
        ? this.#delete(which.key, which.id)
        : 'expired' in which
          ? this.#prune()
          : this.#purge(which);
    return this.#track(removal);
  }

  /** Waits for running operations, persists the access times and forgets the index (the files stay). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
    await this.#saveAccessTimes();
    this.#lru.clear();
    this.#byKey.clear();
    this.#byTag.clear();
    this.#hot.clear();
    this.#hotBytes = 0;
    this.#addBytes(-this.#totalBytes);
  }

  /** The primary keys held (the client's disk tier lists them for invalidate(predicate)). */
  keys(): string[] {
    return [...this.#byKey.keys()];
  }

  async #get(key: string, read: Read): Promise<Selected | readonly StoredEntry[] | EntryBody | null> {
    if ('body' in read) return this.#openBody(read.body);
    const { found, discarded } = 'select' in read ? this.#select(key, read.select) : this.#variants(key);
    if (discarded.length > 0) await this.#discard(discarded);
    return found;
  }

  /**
   * The entry of `key` a request selects (§4.1) with its body when in the memory tier, a use, and the
   * hits past discardAfterMs.
   */
  #select(key: string, secondaryKey: SecondaryKeyOf): { found: Selected; discarded: DiskRecord[] } {
    const { found, any } = this.#variantIndex.candidates(key, secondaryKey);
    const nowMs = this.#nowMs();
    const discarded: DiskRecord[] = [];
    let best: { secondary: string; item: DiskRecord } | undefined;
    for (const hit of found) {
      if (isDiscarded(hit.item.entry.meta, nowMs)) discarded.push(hit.item);
      else if (
        best === undefined ||
        hit.item.entry.meta.response.responseTimeMs > best.item.entry.meta.response.responseTimeMs
      )
        best = hit;
    }
    if (best === undefined) {
      const other = any !== undefined && !discarded.includes(any) ? any.entry : undefined;
      return { found: { entry: undefined, any: other }, discarded };
    }
    this.#touch(best.item, nowMs);
    this.#variantIndex.touch(key, best.secondary);
    const entry = best.item.entry;
    return { found: { entry, any: entry, body: this.#hotGet(best.item) }, discarded };
  }

  /** The live entries of `key`, newest first (each a use), and those past discardAfterMs. */
  #variants(key: string): { found: StoredEntry[]; discarded: DiskRecord[] } {
    const found: StoredEntry[] = [];
    const discarded: DiskRecord[] = [];
    const variants = this.#byKey.get(key);
    if (!variants) return { found, discarded };
    const nowMs = this.#nowMs();
    for (const record of variants.values()) {
      if (isDiscarded(record.entry.meta, nowMs)) {
        discarded.push(record);
      } else {
        this.#touch(record, nowMs);
        found.push(record.entry);
      }
    }
    return { found: found.length > 1 ? newestFirst(found) : found, discarded };
  }

  async #put(
    key: string,
    {
      meta,
      body,
      wanted,
    }: { readonly meta: EntryMeta; readonly body: Uint8Array; readonly wanted?: () => boolean },
  ): Promise<PutResult> {
    const id = randomUUID();
    const name = entryName(key, id);
    const bodyPath = this.#path(name, 'body');
    let tempPath: string | undefined = this.#tempPath(name);
    let handle: FileHandle | undefined;
    /** Not to be indexed: an invalidation or a close came meanwhile. */
    const unwanted = () => this.#closed || wanted?.() === false;
    try {
      if (unwanted()) return INVALIDATED;
      const bodyBytes = body.byteLength;
      const metaJson = JSON.stringify({ version: 1, key, id, bodyBytes, meta } satisfies MetaFile);
      if (bodyBytes + Buffer.byteLength(metaJson) > this.#maxSizeBytes)
        return { stored: false, reason: 'too-large' };
      handle = await open(tempPath, 'wx');
      await writeAll(handle, body);
      await handle.close();
      handle = undefined;
      if (unwanted()) return INVALIDATED;
      await rename(tempPath, bodyPath);
      tempPath = undefined;
      try {
        await this.#writeAtomic(name, 'json', metaJson);
      } catch (error) {
        await rm(bodyPath, { force: true });
        throw error;
      }
      // Committed on disk; now in the index, unless an invalidation or close came meanwhile.
      if (unwanted()) {
        await this.#removeFiles(name);
        return INVALIDATED;
      }
      const entry: StoredEntry = { key, id, meta, bodyBytes };
      const record: DiskRecord = {
        entry,
        name,
        metaBytes: Buffer.byteLength(metaJson),
        lastAccessMs: this.#nowMs(),
        metaWrite: Promise.resolve(),
      };
      // The new response replaces the stored one it would be selected in place of (same secondary key).
      const replaced = this.#findVariant(key, meta.varyKey);
      if (replaced) this.#unindex(replaced);
      // A new variant beyond the cap evicts the least recently used one of the key.
      const overCap: DiskRecord[] = [];
      while (this.#variantIndex.count(key) >= this.#maxVariants) {
        const oldest = this.#variantIndex.oldest(key)!;
        this.#unindex(oldest);
        overCap.push(oldest);
      }
      this.#index(record);
      this.#unsavedAccess.add(record);
      // A small body is kept in the memory tier too (the cache handed over a copy of its own).
      this.#hotSet(record, body);
      const evicted = this.#evictOverBound();
      await this.#discard([...(replaced ? [replaced] : []), ...overCap, ...evicted]);
      return { stored: true, entry };
    } finally {
      if (handle) await handle.close().catch(() => {});
      if (tempPath) await rm(tempPath, { force: true });
    }
  }

  async #openBody(entry: StoredEntry): Promise<EntryBody | null> {
    const record = this.#lru.get(entry.id);
    if (record && record.entry.key !== entry.key) return null;
    const hot = record && this.#hotGet(record);
    if (hot) return hot;
    let handle: FileHandle;
    try {
      handle = await open(this.#path(record?.name ?? entryName(entry.key, entry.id), 'body'), 'r');
    } catch (error) {
      if (!isNotFound(error)) throw error;
      if (record && this.#lru.get(entry.id) === record) await this.#discard([record]); // data lost: a miss
      return null;
    }
    const { size } = await handle.stat();
    if (size !== entry.bodyBytes) {
      // Replaced under us (its meta file states the length): not served.
      this.#onInvalid?.(entry.key, `body file of ${size} bytes, ${entry.bodyBytes} listed`);
      await handle.close();
      if (record && this.#lru.get(entry.id) === record) await this.#discard([record]);
      return null;
    }
    if (record && size <= this.#hotMaxEntryBytes) {
      // Small enough for the memory tier: read whole, keep it, serve it.
      let whole: Uint8Array;
      try {
        whole = await readWhole(handle, size);
      } finally {
        await handle.close();
      }
      this.#hotSet(record, whole);
      return wholeBody(whole);
    }
    return fileBody(handle, size);
  }

  async #updateMeta(key: string, id: string, meta: EntryMeta): Promise<PutResult> {
    const record = this.#byKey.get(key)?.get(id);
    if (!record) return GONE;
    const write = record.metaWrite.then(async (): Promise<PutResult> => {
      if (this.#lru.get(id) !== record) return GONE; // deleted or replaced while waiting
      const metaJson = JSON.stringify({
        version: 1,
        key,
        id,
        bodyBytes: record.entry.bodyBytes,
        meta,
      } satisfies MetaFile);
      await this.#writeAtomic(record.name, 'json', metaJson); // the body file is not touched
      if (this.#lru.get(id) !== record) {
        // Deleted while writing: our rename may have put the meta file back.
        await this.#removeFiles(record.name);
        return GONE;
      }
      const entry: StoredEntry = { ...record.entry, meta };
      this.#untag(record);
      record.entry = entry;
      this.#tag(record);
      const metaBytes = Buffer.byteLength(metaJson);
      this.#addBytes(metaBytes - record.metaBytes);
      record.metaBytes = metaBytes;
      this.#touch(record, this.#nowMs());
      const evicted = this.#evictOverBound();
      await this.#discard(evicted);
      return evicted.includes(record) ? GONE : { stored: true, entry };
    });
    record.metaWrite = write.catch(() => {});
    return write;
  }

  async #delete(key: string, id?: string): Promise<number> {
    const variants = this.#byKey.get(key);
    const records = id === undefined ? [...(variants?.values() ?? [])] : [variants?.get(id)];
    const found = records.filter((r): r is DiskRecord => r !== undefined);
    if (found.length > 0) await this.#dropAll(found);
    return found.length;
  }

  async #purge(filter: PurgeFilter): Promise<number> {
    let matched: DiskRecord[];
    if ('tag' in filter) {
      matched = [...(this.#byTag.get(filter.tag) ?? [])];
    } else {
      matched = [];
      for (const [key, variants] of this.#byKey) {
        if ('all' in filter || key.startsWith(filter.keyPrefix)) matched.push(...variants.values());
      }
    }
    await this.#dropAll(matched); // unindexes at once; removing the meta file makes it last
    return matched.length;
  }

  async #prune(): Promise<number> {
    const nowMs = this.#nowMs();
    const discarded = [...this.#lru.values()].filter((r) => isDiscarded(r.entry.meta, nowMs));
    for (const record of discarded) this.#unindex(record);
    const evicted = this.#evictOverBound();
    await this.#discard([...discarded, ...evicted]); // unindexing twice is a no-op
    await this.#saveAccessTimes();
    return discarded.length + evicted.length;
  }

  #findVariant(key: string, varyKey: string): DiskRecord | undefined {
    return this.#variantIndex.get(key, varyKey);
  }

  #index(record: DiskRecord): void {
    const { key, id } = record.entry;
    this.#lru.set(id, record);
    let variants = this.#byKey.get(key);
    if (!variants) this.#byKey.set(key, (variants = new Map()));
    variants.set(id, record);
    this.#variantIndex.add(key, record.entry.meta.varyKey, varyOf(record.entry.meta), record);
    this.#tag(record);
    this.#addBytes(record.entry.bodyBytes + record.metaBytes);
  }

  #unindex(record: DiskRecord): void {
    const { key, id } = record.entry;
    if (this.#lru.get(id) !== record) return;
    this.#lru.delete(id);
    const variants = this.#byKey.get(key);
    variants?.delete(id);
    if (variants?.size === 0) this.#byKey.delete(key);
    this.#variantIndex.remove(key, record.entry.meta.varyKey, record);
    this.#untag(record);
    this.#unsavedAccess.delete(record);
    this.#addBytes(-(record.entry.bodyBytes + record.metaBytes));
    this.#hotDelete(record);
  }

  #addBytes(bytes: number): void {
    this.#totalBytes += bytes;
    this.#onSize?.(this.#totalBytes);
  }

  /** The record's body from the memory tier (a use), if it is there. */
  #hotGet(record: DiskRecord): EntryBody | undefined {
    const body = this.#hot.get(record);
    if (body !== undefined) {
      this.#hot.delete(record);
      this.#hot.set(record, body);
    }
    return body;
  }

  /** Puts an indexed record's body in the memory tier, evicting the least recently used beyond its bound. */
  #hotSet(record: DiskRecord, whole: Uint8Array): void {
    if (whole.byteLength > this.#hotMaxEntryBytes || this.#lru.get(record.entry.id) !== record) return;
    this.#hotDelete(record);
    this.#hot.set(record, wholeBody(whole));
    this.#hotBytes += whole.byteLength;
    this.#hotTrim(this.#hotMaxBytes);
  }

  /** Memory pressure: the memory tier's least recently used bodies go (the files stay). */
  shed(fraction: number): number {
    const before = this.#hotBytes;
    this.#hotTrim(keptAfterShed(before, fraction));
    return before - this.#hotBytes;
  }

  /** Drops the memory tier's least recently used bodies until it holds at most `maxBytes`. */
  #hotTrim(maxBytes: number): void {
    for (const [r, body] of this.#hot) {
      if (this.#hotBytes <= maxBytes) break;
      this.#hot.delete(r);
      this.#hotBytes -= body.bodyBytes;
    }
  }

  #hotDelete(record: DiskRecord): void {
    const body = this.#hot.get(record);
    if (body === undefined) return;
    this.#hot.delete(record);
    this.#hotBytes -= body.bodyBytes;
  }

  #tag(record: DiskRecord): void {
    for (const tag of record.entry.meta.tags ?? []) {
      let records = this.#byTag.get(tag);
      if (!records) this.#byTag.set(tag, (records = new Set()));
      records.add(record);
    }
  }

  #untag(record: DiskRecord): void {
    for (const tag of record.entry.meta.tags ?? []) {
      const records = this.#byTag.get(tag);
      records?.delete(record);
      if (records?.size === 0) this.#byTag.delete(tag);
    }
  }

  #touch(record: DiskRecord, nowMs: number): void {
    this.#lru.delete(record.entry.id);
    this.#lru.set(record.entry.id, record);
    record.lastAccessMs = nowMs;
    this.#unsavedAccess.add(record);
  }

  /** Unindexes least recently used entries until the bound holds; returns them (files still there). */
  #evictOverBound(): DiskRecord[] {
    const evicted: DiskRecord[] = [];
    let remainingBytes = this.#totalBytes;
    for (const record of this.#lru.values()) {
      if (remainingBytes <= this.#maxSizeBytes) break;
      evicted.push(record);
      remainingBytes -= record.entry.bodyBytes + record.metaBytes;
    }
    for (const record of evicted) this.#unindex(record); // after the loop: it deletes from #lru
    return evicted;
  }

  /**
   * Housekeeping (expired, replaced, evicted, lost entries): unindexes the records and deletes their
   * files. A file that cannot be deleted fails nothing here: the entry is out of the index and
   * tombstoned (see #removeFiles), and the next open tries again.
   */
  async #discard(records: readonly DiskRecord[]): Promise<void> {
    for (const record of records) this.#unindex(record);
    await Promise.allSettled(records.map((r) => this.#removeFiles(r.name)));
  }

  /**
   * Deletes and purges: the records leave the index whatever happens to their files; every record's
   * files are tried, and failures are reported together (PurgeIncompleteError).
   */
  async #dropAll(records: readonly DiskRecord[]): Promise<void> {
    for (const record of records) this.#unindex(record);
    const results = await Promise.allSettled(records.map((r) => this.#removeFiles(r.name)));
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed.length > 0) throw new PurgeIncompleteError(records.length, failed.length, failed[0]!.reason);
  }

  /**
   * Meta first: without it the entry no longer exists, whatever happens to the body removal. When the
   * meta file cannot be deleted, the entry is tombstoned (it stays gone after a restart) and its body
   * is still tried (without it the entry is unusable on open too); the removal error is rethrown.
   */
  async #removeFiles(name: string): Promise<void> {
    try {
      await rm(this.#path(name, 'json'), { force: true });
    } catch (error) {
      const tombstoned = this.#entomb(name).then(
        () => undefined,
        (tombError: unknown) => tombError,
      );
      await rm(this.#path(name, 'body'), { force: true }).catch(() => {});
      const tombError = await tombstoned;
      if (tombError === undefined) throw error;
      throw new AggregateError(
        [error, tombError],
        'cache entry files and its tombstone could not be written',
      );
    }
    await rm(this.#path(name, 'body'), { force: true });
  }

  /** Appends `name` to the tombstone file (appends one after another). */
  #entomb(name: string): Promise<void> {
    const write = this.#tombstoneWrite.then(() => appendFile(join(this.dir, TOMBSTONE_FILE), `${name}\n`));
    this.#tombstoneWrite = write.catch(() => {});
    return write;
  }

  /**
   * Best effort: access order only ranks entries for eviction after a restart, so a meta file that is
   * gone (removed meanwhile) or cannot be touched (a filesystem fault) just keeps its old rank.
   */
  async #saveAccessTimes(): Promise<void> {
    const records = [...this.#unsavedAccess];
    this.#unsavedAccess.clear();
    await forEachLimit(records, async (record) => {
      const seconds = record.lastAccessMs / 1000;
      await utimes(this.#path(record.name, 'json'), seconds, seconds).catch(() => {});
    });
  }

  async #writeAtomic(name: string, ext: 'json', data: string): Promise<void> {
    const tempPath = this.#tempPath(name);
    try {
      await writeFile(tempPath, data, { flag: 'wx' });
      await rename(tempPath, this.#path(name, ext));
    } catch (error) {
      await rm(tempPath, { force: true });
      throw error;
    }
  }

  #path(name: string, ext: 'json' | 'body'): string {
    return join(this.dir, `${name}.${ext}`);
  }

  #tempPath(name: string): string {
    return join(this.dir, `${name}.${randomBytes(6).toString('hex')}.tmp`);
  }

  #track<T>(operation: Promise<T>): Promise<T> {
    this.#running.add(operation);
    const untrack = () => this.#running.delete(operation);
    operation.then(untrack, untrack);
    return operation;
  }
}

function entryName(key: string, id: string): string {
  return createHash('sha256').update(key).update('\0').update(id).digest('hex');
}

/**
 * Reads one entry's meta file and checks its body; null when the entry is unusable, including when
 * its files cannot be read (a directory in its place, an I/O error): a cache entry may be lost, and
 * one bad entry must not stop the store from opening.
 */
async function loadRecord(dir: string, name: string, options: DiskStoreOptions): Promise<DiskRecord | null> {
  const metaPath = join(dir, `${name}.json`);
  try {
    const [text, metaStat] = await Promise.all([readFile(metaPath, 'utf8'), stat(metaPath)]);
    const file = parseMetaFile(text);
    if (!file || entryName(file.key, file.id) !== name) return null;
    // The files may have been written by anyone: an entry that cannot be served is dropped, reported.
    const problem = storedEntryProblem(file.meta, file.bodyBytes, options.maxEntryBytes);
    if (problem !== undefined) {
      options.onInvalidEntry?.(file.key, problem);
      return null;
    }
    const bodyStat = await stat(join(dir, `${name}.body`));
    if (!bodyStat.isFile() || bodyStat.size !== file.bodyBytes) return null;
    return {
      entry: { key: file.key, id: file.id, meta: file.meta, bodyBytes: file.bodyBytes },
      name,
      metaBytes: Buffer.byteLength(text),
      lastAccessMs: metaStat.mtimeMs,
      metaWrite: Promise.resolve(),
    };
  } catch {
    return null;
  }
}

/**
 * The names in the tombstone file. Lines that are not names (a torn last line) are skipped. A file
 * that exists but cannot be read stops the open: better no cache than purged entries served again.
 */
async function readTombstones(dir: string): Promise<Set<string>> {
  let text: string;
  try {
    text = await readFile(join(dir, TOMBSTONE_FILE), 'utf8');
  } catch (error) {
    if (isNotFound(error)) return new Set();
    throw error;
  }
  return new Set(text.split('\n').filter((line) => NAME.test(line)));
}

/**
 * After the open tried to delete the tombstoned entries: keeps the names whose meta file is still
 * there, rewritten atomically, or removes the file when none is left. A failure keeps the old file
 * (a superset: it hides nothing that lives).
 */
async function pruneTombstones(dir: string, tombstones: ReadonlySet<string>): Promise<void> {
  if (tombstones.size === 0) return;
  const left: string[] = [];
  await forEachLimit([...tombstones], async (name) => {
    try {
      await lstat(join(dir, `${name}.json`));
      left.push(name);
    } catch (error) {
      if (!isNotFound(error)) left.push(name);
    }
  });
  if (left.length === tombstones.size) return;
  const path = join(dir, TOMBSTONE_FILE);
  if (left.length === 0) {
    await rm(path, { force: true }).catch(() => {});
    return;
  }
  const tempPath = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(tempPath, left.map((name) => `${name}\n`).join(''), { flag: 'wx' });
    await rename(tempPath, path);
  } catch {
    await rm(tempPath, { force: true }).catch(() => {});
  }
}

/** The meta file's content when it has the expected shape, else null. */
function parseMetaFile(text: string): MetaFile | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isRecord(value) || value.version !== 1) return null;
  if (typeof value.key !== 'string' || typeof value.id !== 'string') return null;
  if (typeof value.bodyBytes !== 'number') return null;
  // The entry itself (status, fields, body length) is checked by storedEntryProblem.
  return value as unknown as MetaFile;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/**
 * mkdir -p without `{ recursive: true }`, whose Node implementation never settles when a parent exists
 * but its child cannot be made and reports ENOENT (a dangling symlink, a path under /proc): it walks up
 * to the deepest existing folder, then creates downwards, and any error on the way is final.
 */
async function makeDir(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let p = resolve(dir); ; ) {
    try {
      if ((await stat(p)).isDirectory()) break;
      throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${p}'`), { code: 'ENOTDIR', path: p });
    } catch (error) {
      if (!isNotFound(error)) throw error;
      const parent = dirname(p);
      if (parent === p) throw error;
      missing.push(p);
      p = parent;
    }
  }
  for (const p of missing.reverse()) {
    try {
      await mkdir(p);
    } catch (error) {
      // Made meanwhile by someone else is fine; anything else (ENOENT here included) is final.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !(await stat(p)).isDirectory()) throw error;
    }
  }
}

/** The first `size` bytes of an open file. */
async function readWhole(handle: FileHandle, size: number): Promise<Uint8Array> {
  const buffer = Buffer.allocUnsafeSlow(size); // kept: not a slice of Node's shared pool
  let position = 0;
  while (position < size) {
    const { bytesRead } = await handle.read(buffer, position, size - position, position);
    if (bytesRead === 0) throw new Error(`cache body file ended at ${position} of ${size} bytes`);
    position += bytesRead;
  }
  return buffer;
}

async function writeAll(handle: FileHandle, chunk: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < chunk.byteLength) {
    const { bytesWritten } = await handle.write(chunk, offset, chunk.byteLength - offset);
    offset += bytesWritten;
  }
}

async function forEachLimit<T>(items: readonly T[], fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(IO_PARALLEL, items.length) }, worker));
}

/**
 * A body read from an open file. The file is opened before this is returned, so evicting the entry
 * afterwards (unlinking the file) does not disturb the read.
 */
function fileBody(handle: FileHandle, bodyBytes: number): EntryBody {
  let started = false;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await handle.close();
  };
  async function* chunks(): AsyncGenerator<Uint8Array, void, undefined> {
    try {
      let position = 0;
      while (position < bodyBytes) {
        const buffer = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, bodyBytes - position));
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
        if (bytesRead === 0) throw new Error(`cache body file ended at ${position} of ${bodyBytes} bytes`);
        position += bytesRead;
        yield bytesRead === buffer.length ? buffer : buffer.subarray(0, bytesRead);
      }
    } finally {
      await close();
    }
  }
  return {
    bodyBytes,
    close,
    [Symbol.asyncIterator]() {
      if (started || closed) throw new Error('a cache entry body can be read only once');
      started = true;
      return chunks();
    },
  };
}
