// The store interface of the HTTP cache: what a store keeps (RFC 9111 §3) and its four operations
// (get, put, delete, an optional synchronous peek). Stores hold entries; every decision (storable?
// fresh? which variant?) is made by the pure functions in ../ before a store is called, and what the
// cache needs beyond the four operations is built on them in entry-cache.ts.
//
// Streaming: a response body reaches the cache once, while it is also being sent to the client. The
// cache (entry-cache.ts) reads it at its own pace and may stop early (body over `maxEntryBytes`, an
// invalidation, close); a store is handed the whole body once it has arrived. So the tee must never
// make the client wait on the cache: the cache branch gets its own queue (at most `maxEntryBytes`
// deep; overflow ends it as an error), and once the put settles the tee drops that branch and keeps
// serving the client. A store never holds more than `maxEntryBytes` of one body.
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

/** What a select read found (§4.1). */
export interface VariantMatch {
  /** The selected entry, if any. */
  readonly entry: StoredEntry | undefined;
  /** Some live entry of the key (its Vary names the fields that tell variants apart); undefined when none is stored. */
  readonly any: StoredEntry | undefined;
}

/** A select read's answer: the match, with the selected entry's body when the store holds it in memory. */
export interface Selected extends VariantMatch {
  readonly body?: EntryBody | undefined;
}

/** A body to store: whole, or streamed. Chunks must not be modified after they are yielded. */
export type BodySource = Uint8Array | AsyncIterable<Uint8Array>;

/**
 * Result of a put. Not stored:
 * - `too-large`: the body passed `maxEntryBytes` (or body plus meta passed `maxSizeBytes`); nothing kept.
 * - `invalidated`: the URI was invalidated (§4.4) or purged while the body streamed in, so the
 *   response, older than the invalidation, is discarded (a store sees it as `wanted()` turning false).
 * - `closed`: the store was closed meanwhile.
 * - `unavailable`: a shared store's server (Redis) could not be reached in time; nothing was stored.
 * - `invalid`: the memory store refused an entry it could not serve (see `onInvalidEntry`).
 * - `gone`: a meta update found no such entry (evicted, deleted), or dropped it.
 */
export type PutResult =
  | { readonly stored: true; readonly entry: StoredEntry }
  | {
      readonly stored: false;
      readonly reason: 'too-large' | 'invalidated' | 'closed' | 'unavailable' | 'invalid' | 'gone';
    };

/** Which entries a purge removes. Exact tags (the caller lowercases); key prefixes include the method. */
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

/** What a get or peek reads under a primary key. Each entry it returns counts as a use (eviction). */
export type Read =
  /**
   * The entry the request selects (§4.1), without listing the variants: for each distinct response
   * Vary value stored under the key (usually one), `select(vary)` gives the request's secondary key,
   * looked up in an index; the newest response among the hits wins. Its cost does not grow with the
   * number of variants. The caller still checks the entry's current Vary (a meta update may have
   * changed it).
   */
  | { readonly select: SecondaryKeyOf }
  /** Every live entry of the key, newest response first (§4.1 "the most recent response"). */
  | { readonly all: true }
  /**
   * The body of an entry an earlier read or put returned; null when it is gone (evicted, deleted,
   * or its data was lost): a miss. Once opened, it stays readable if the entry is evicted meanwhile.
   */
  | { readonly body: StoredEntry };

/** What a read returns, by its kind. Entries past `discardAfterMs` are dropped, never returned. */
export type ReadResult<R extends Read> = R extends { readonly select: SecondaryKeyOf }
  ? Selected
  : R extends { readonly all: true }
    ? readonly StoredEntry[]
    : EntryBody | null;

/** What a put writes under a primary key. */
export type Write =
  /**
   * A response (§3) with its whole body (the caller owns no part of it any more), replacing the entry
   * with the same `meta.varyKey` (§4.1). `wanted` turns false when an invalidation or a close came
   * since the body began to arrive: then nothing is kept and the put resolves `invalidated`.
   */
  | { readonly meta: EntryMeta; readonly body: Uint8Array; readonly wanted?: () => boolean }
  /** New metadata for the entry `id`, its body kept (§4.3.4 freshening, §4.3.5 marking stale). */
  | { readonly meta: EntryMeta; readonly id: string };

/** What a delete removes; it resolves how many entries went. */
export type Removal =
  /** One entry, or every entry of `key` (invalidation, §4.4) when `id` is omitted. */
  | { readonly key: string; readonly id?: string }
  /** A purge (PURGE of a URL prefix, a `Cache-Tag`, everything): tags from an index, prefixes by a scan. */
  | PurgeFilter
  /**
   * Housekeeping: entries past `discardAfterMs`, the byte bound enforced again, and what the store
   * keeps lazily persisted (the disk store's access times).
   */
  | { readonly expired: true };

/**
 * A cache store: entries (Vary variants, §4.1) per primary key, each with its own `id`, within a byte
 * bound (least recently used out first) and at most `maxVariantsPerKey` per key. Four operations; what
 * else the cache needs (reading a streamed body within its bound, dropping puts that an invalidation
 * overtook, sizes, close) is built on them in entry-cache.ts. A store that holds resources (files, a
 * subscription) also has `close()`, which waits for its running operations.
 */
export interface CacheStore {
  get<R extends Read>(key: string, read: R): Promise<ReadResult<R>>;
  /**
   * Optional: get without a promise, for a store whose index is in memory, so a hit is served in the
   * tick its request arrived. Answers every select and all read; a body read is undefined when it
   * would take I/O (a body on disk): then call get. Same results and side effects as get.
   */
  peek?<R extends Read>(key: string, read: R): ReadResult<R> | undefined;
  /** Writes an entry, or new meta for one. Rejects, keeping nothing, when the store fails to write. */
  put(key: string, write: Write): Promise<PutResult>;
  delete(which: Removal): Promise<number>;
  /**
   * Optional, memory pressure (issue 40): drops `fraction` (0-1) of the bytes this store holds in this
   * process's memory, least recently used first (what is on disk or in Redis stays); returns the bytes
   * dropped. Synchronous, so the pressure watch frees memory in the tick it decided to.
   */
  shed?(fraction: number): number;
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
  /**
   * Called with the bytes the store accounts to entries (bodies plus approximate metadata) whenever
   * they change; a shared store (Redis) reports the shared total as each reply from its server says.
   */
  readonly onSizeBytes?: (bytes: number) => void;
  /**
   * A shared store calls this when another instance removed entries (an invalidation, §4.4, or a
   * purge): puts of matching responses still streaming in here must not land.
   */
  readonly onRemovedElsewhere?: (which: { readonly key: string } | PurgeFilter) => void;
  /** A shared store calls this when its server becomes reachable or not (a put would be `unavailable`). */
  readonly onReachable?: (up: boolean) => void;
}

/** The options a store reports through: entry-cache.ts gives them. */
export type StoreHooks = Pick<StoreOptions, 'onSizeBytes' | 'onRemovedElsewhere' | 'onReachable'>;

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
