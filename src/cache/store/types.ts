// The store interface of the HTTP cache: what a store keeps (RFC 9111 §3) and the operations the
// proxy's shared cache and the client's private cache need. Stores hold entries; every decision
// (storable? fresh? which variant?) is made by the pure functions in ../ before a store is called.
//
// Streaming: a response body reaches the cache once, while it is also being sent to the client. The
// proxy tees the upstream stream: one branch goes to the client, the other is handed to `put` as an
// AsyncIterable. A store only consumes what it is given, at its own pace (the disk store awaits each
// write), and may stop early (body over `maxEntryBytes`, an invalidation, close). So the tee must
// never make the client wait on the store: the cache branch gets its own queue (at most
// `maxEntryBytes` deep; overflow ends it as an error), and once `put` settles the tee drops that
// branch and keeps serving the client. A store never holds more than `maxEntryBytes` of one body.
import type { HeldPieces } from '../pieces.js';
import type { HeaderMap, StoredResponse } from '../types.js';

/** What a store keeps about an entry besides its body. Plain JSON-compatible values. */
export interface EntryMeta {
  /** The stored response: status, headers, and the exchange times of §4.2.3. */
  readonly response: StoredResponse;
  /**
   * The secondary key of §4.1 (`varyKey(response Vary, request headers)` from ../vary.ts; '' without
   * Vary). A put replaces an existing entry of the same primary key with the same `varyKey`. A
   * response with `Vary: *` (varyKey null) never matches (§4.1): do not store it.
   */
  readonly varyKey: string;
  /** The request header fields named by the response's Vary, as the request carried them (§4.1). */
  readonly varyHeaders: HeaderMap;
  /**
   * Local time after which the entry is useless (not even stale-if-error or revalidation applies); the
   * caller computes it from the freshness decisions. Lookups skip such an entry and `prune` drops it.
   * Undefined: kept until evicted or deleted.
   */
  readonly discardAfterMs?: number;
  /**
   * The stored response is stale whatever its freshness says (RFC 9111 §4.3.5: a HEAD answer that
   * disagrees with it); it is revalidated before it is served again.
   */
  readonly markedStale?: true;
  /**
   * Purge tags (surrogate keys, from `Cache-Tag`), already parsed and lowercased by the caller: a
   * `purge({ tag })` removes every entry listing `tag`. Undefined or empty: purged by key only.
   */
  readonly tags?: readonly string[];
  /**
   * A partial entry (RFC 9111 §3.3): the body holds only these pieces of the representation, and
   * `response` is the newest piece's (status 206, without Content-Range and Content-Length). Served
   * only through ../pieces.ts, never as it is.
   */
  readonly partial?: HeldPieces;
}

/** One stored response of a primary key: a Vary variant. */
export interface StoredEntry {
  /** The primary cache key (method + URI) it was stored under. */
  readonly key: string;
  /** Chosen by the store when the entry is put; unique among all entries of the store. */
  readonly id: string;
  readonly meta: EntryMeta;
  /** Length of the stored body in bytes. */
  readonly bodyBytes: number;
}

/** The request's secondary key (§4.1) for a response Vary value; null when no response with it matches. */
export type SecondaryKeyOf = (vary: string | undefined) => string | null;

/** What findVariant found. */
export interface VariantMatch {
  /** The selected entry, if any. */
  readonly entry: StoredEntry | undefined;
  /** Some live entry of the key (its Vary names the fields that tell variants apart); undefined when none is stored. */
  readonly any: StoredEntry | undefined;
}

/** A body to store: whole, or streamed. Chunks must not be modified after they are yielded. */
export type BodySource = Uint8Array | AsyncIterable<Uint8Array>;

/**
 * Result of `put`. Not stored:
 * - `too-large`: the body passed `maxEntryBytes` (or body plus meta passed `maxSizeBytes`); the store
 *   stopped reading it and kept nothing.
 * - `invalidated`: `delete(key)` (an unsafe request invalidated the URI, §4.4) or a `purge` matching
 *   the key or tags ran while the body was streaming, so the response, older than the invalidation, is
 *   discarded.
 * - `closed`: the store was closed meanwhile.
 * - `unavailable`: a shared store's server (Redis) could not be reached in time; nothing was stored.
 * - `invalid`: the memory store refused an entry it could not serve (see `onInvalidEntry`).
 */
export type PutResult =
  | { readonly stored: true; readonly entry: StoredEntry }
  | {
      readonly stored: false;
      readonly reason: 'too-large' | 'invalidated' | 'closed' | 'unavailable' | 'invalid';
    };

/**
 * Which entries `purge` removes. A purge is an invalidation: matching puts still streaming resolve
 * `invalidated`.
 */
export type PurgeFilter =
  /** Every entry whose `meta.tags` includes `tag`: exact, case-sensitive (the caller lowercases). */
  | { readonly tag: string }
  /** Every entry whose primary key starts with `keyPrefix` (keys carry the method: `GET https://…`). */
  | { readonly keyPrefix: string }
  /** Every entry. */
  | { readonly all: true };

/**
 * An opened body. Iterate it once; reading to the end, breaking out of `for await`, or an error
 * releases it. When the body is not read (HEAD, client gone), call `close()`.
 */
export interface EntryBody extends AsyncIterable<Uint8Array> {
  readonly bodyBytes: number;
  /**
   * The whole body, when the store already holds it in memory: a reader may use it instead of
   * iterating (one write instead of a stream). Never modify it.
   */
  readonly whole?: Uint8Array;
  close(): Promise<void>;
}

/**
 * A cache store. Several entries (Vary variants) per primary key, each with its own `id`. Sizes are
 * bounded: the store evicts least recently used entries to stay under its byte bound.
 */
export interface CacheStore {
  /**
   * True when `put` can fail after it began for reasons no caller can foresee (I/O: a full or broken
   * disk), so whether a response is stored is known only once `put` settles. The proxy's Cache-Status
   * then never says `stored` (RFC 9211 §2.5) on the response that is being stored, whose head goes out
   * before that, but `detail=storing`. Absent: a put that began only fails when its body source does.
   */
  readonly putMayFail?: boolean;
  /**
   * Optional, with `putMayFail`: false when a put begun now is known not to be stored (a shared
   * store's server is unreachable or hung), so Cache-Status claims no write (`detail=store-unavailable`
   * instead of `detail=storing`). Absent: as if true.
   */
  canWrite?(): boolean;
  /**
   * The entries stored under `key`, newest response first (by `response.responseTimeMs`; §4.1: "the
   * most recent response"). Counts as a use of each for eviction. Entries past `discardAfterMs` are
   * dropped, not returned.
   */
  getVariants(key: string): Promise<StoredEntry[]>;
  /**
   * Optional: getVariants without a promise, for stores that answer from memory, so a cache hit is
   * served in the tick its request arrived. Same results and side effects as getVariants.
   */
  getVariantsSync?(key: string): StoredEntry[];
  /**
   * The entry of `key` a request selects (§4.1), without listing the variants: for each distinct
   * response Vary value stored under `key` (usually one), `secondaryKey(vary)` gives the request's
   * secondary key (`varyKey(vary, requestHeaders)`; null when it cannot match), which is looked up in
   * an index; the newest response among the hits wins. The cost does not grow with the number of
   * variants. Counts as a use of the entry found; an entry past `discardAfterMs` is dropped, not found.
   * The caller still checks the entry's current Vary (an updateMeta may have changed it).
   */
  findVariant(key: string, secondaryKey: SecondaryKeyOf): Promise<VariantMatch>;
  /** Optional: findVariant without a promise (see getVariantsSync). */
  findVariantSync?(key: string, secondaryKey: SecondaryKeyOf): VariantMatch;
  /**
   * Optional: openBody without a promise (see getVariantsSync). Null when the entry is gone;
   * undefined when the store cannot answer without I/O (a body on disk): then call openBody.
   */
  openBodySync?(entry: StoredEntry): EntryBody | null | undefined;
  /**
   * Stores a response under `key`, replacing the entry with the same `meta.varyKey` once the new body
   * is complete. Reads `body` until its end or until it passes `maxEntryBytes` (then returns
   * `{ stored: false, reason: 'too-large' }` and keeps nothing). Rejects, keeping nothing, when the
   * body source throws or the store fails to write.
   */
  put(key: string, meta: EntryMeta, body: BodySource): Promise<PutResult>;
  /**
   * Opens the body of an entry returned by `getVariants`, or null when it is gone (evicted, deleted,
   * or its data was lost): treat that as a miss. Once opened, the body stays readable even if the
   * entry is evicted meanwhile.
   */
  openBody(entry: StoredEntry): Promise<EntryBody | null>;
  /**
   * Replaces an entry's metadata (§4.3.4 freshening after a 304), keeping its body. Returns the
   * updated entry, or null when the entry is gone.
   */
  updateMeta(key: string, id: string, meta: EntryMeta): Promise<StoredEntry | null>;
  /** Deletes one entry, or every entry of `key` (invalidation, §4.4) when `id` is omitted. */
  delete(key: string, id?: string): Promise<void>;
  /**
   * Removes every entry matching `filter` (a purge API: PURGE of a URL, a URL prefix, a `Cache-Tag`)
   * and invalidates matching puts in flight. Returns how many entries were removed. Tag purges look
   * the tag up in an index; prefix and `all` purges scan the keys.
   */
  purge(filter: PurgeFilter): Promise<number>;
  /**
   * Housekeeping: drops entries past `discardAfterMs`, enforces the byte bound, and persists what a
   * store keeps lazily (the disk store's access times). Returns how many entries were dropped.
   */
  prune(): Promise<number>;
  /**
   * Waits for running operations (a put still streaming stops at its next chunk, resolving `closed`),
   * persists lazy state and releases resources. Later calls reject with `store_closed`; `close` again
   * is a no-op.
   */
  close(): Promise<void>;
  /** Bytes currently accounted to entries: bodies plus (approximate, for memory) metadata. */
  sizeBytes(): number;
  /**
   * Optional: sizeBytes read afresh, for a store others write to (redis: the shared total); the last
   * known size when the read fails.
   */
  readSizeBytes?(): Promise<number>;
}

/** Options shared by every store. */
export interface StoreOptions {
  /** Byte bound of the whole store; least recently used entries are evicted beyond it. */
  readonly maxSizeBytes: number;
  /** Bodies longer than this are not stored (streamed through by the caller). At most `maxSizeBytes`. */
  readonly maxEntryBytes: number;
  /**
   * At most this many variants (secondary keys, §4.1) per primary key: a put of a new variant beyond
   * it evicts the least recently used variant of that key. Default unbounded.
   */
  readonly maxVariantsPerKey?: number;
  /** The clock for `discardAfterMs` and access times; injected for tests. Default `Date.now`. */
  readonly nowMs?: () => number;
  /**
   * Called with the primary key and a one-line reason when the store meets an entry that must not be
   * served (../entry-check.ts: a status outside 200-599, a field that is not a token or field value, a
   * body over `maxEntryBytes`): read back from Redis or a disk file, or given to the memory store's
   * `put`. The entry is a miss (dropped); the caller logs and counts it.
   */
  readonly onInvalidEntry?: (key: string, reason: string) => void;
}

/** Misuse of a store (bad options, use after close). Stable `code`. */
export class CacheStoreError extends Error {
  readonly code: 'bad_store_options' | 'store_closed' | 'purge_incomplete';
  constructor(code: CacheStoreError['code'], message: string) {
    super(message);
    this.name = 'CacheStoreError';
    this.code = code;
  }
}

/**
 * A purge or delete removed `purged` entries from the index (they are never served again; the disk
 * store tombstones them, so not after a restart either) but could not remove the files of `errors` of
 * them (a filesystem fault); `cause` is the first failure.
 */
export class PurgeIncompleteError extends CacheStoreError {
  readonly purged: number;
  readonly errors: number;
  constructor(purged: number, errors: number, cause: unknown) {
    super('purge_incomplete', `${errors} of ${purged} purged entries left files behind`);
    this.name = 'PurgeIncompleteError';
    this.purged = purged;
    this.errors = errors;
    this.cause = cause;
  }
}
