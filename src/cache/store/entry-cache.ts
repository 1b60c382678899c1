// The cache's side of a store: what the shared cache (src/server/proxy/cache/) and the private
// cache's disk tier call, built on a store's four operations (types.ts). Here, once for every store:
// a streamed body is read within `maxEntryBytes` and handed over whole; a response whose URI was
// invalidated or purged while it streamed in is not stored (RFC 9111 §4.4), whichever instance of a
// shared store invalidated it; the size the store reports is kept; calls after close reject.
// Browser-safe: no node: imports.
import { bodyChunks, checkStoreOptions, concat, InflightPuts } from './shared.js';
import {
  type BodySource,
  type CacheStore,
  CacheStoreError,
  type EntryBody,
  type EntryMeta,
  type PurgeFilter,
  type PutResult,
  type SecondaryKeyOf,
  type Selected,
  type StoredEntry,
  type StoreHooks,
  type StoreOptions,
} from './types.js';

/** A store that may hold resources to release (files, a subscription). */
export type OwnedStore = CacheStore & { close?(): Promise<void> };

export interface EntryCacheOptions extends StoreOptions {
  /** Names the store in errors ("the memory cache store is closed"). */
  readonly name: string;
  /**
   * True when a put can fail after it began for reasons no caller can foresee (I/O: a full or broken
   * disk, an unreachable Redis), so whether a response is stored is known only once the put settles:
   * the proxy's Cache-Status then never says `stored` (RFC 9211 §2.5) on the response being stored.
   */
  readonly putMayFail?: boolean;
  /** Other instances write to the store too (Redis): readSizeBytes asks it afresh. */
  readonly shared?: boolean;
}

/** What the store reports through its hooks, kept from before the store exists (it may report while opening). */
interface Reported {
  sizeBytes: number;
  reachable: boolean;
  readonly inflight: InflightPuts;
}

const TOO_LARGE: PutResult = Object.freeze({ stored: false, reason: 'too-large' });
const CLOSED: PutResult = Object.freeze({ stored: false, reason: 'closed' });
const INVALIDATED: PutResult = Object.freeze({ stored: false, reason: 'invalidated' });
const NO_MATCH: Selected = Object.freeze({ entry: undefined, any: undefined });
const ALL = Object.freeze({ all: true }) as { readonly all: true };
const EXPIRED = Object.freeze({ expired: true }) as { readonly expired: true };

function reportTo(options: EntryCacheOptions): { reported: Reported; storeOptions: StoreOptions } {
  checkStoreOptions(options);
  const reported: Reported = { sizeBytes: 0, reachable: true, inflight: new InflightPuts() };
  const hooks: StoreHooks = {
    onSizeBytes: (bytes) => {
      reported.sizeBytes = bytes;
    },
    onReachable: (up) => {
      reported.reachable = up;
    },
    onRemovedElsewhere: (which) => {
      if ('key' in which) reported.inflight.invalidate(which.key);
      else reported.inflight.invalidateMatching(which);
    },
  };
  return { reported, storeOptions: { ...options, ...hooks } };
}

/** An entry cache over a store made now; `make` gets the options with the hooks to report through. */
export function entryCache<S extends OwnedStore>(
  options: EntryCacheOptions,
  make: (storeOptions: StoreOptions) => S,
): EntryCache<S> {
  const { reported, storeOptions } = reportTo(options);
  return new EntryCache(make(storeOptions), options, reported);
}

/** An entry cache over a store opened with I/O (disk, Redis); see entryCache. */
export async function openEntryCache<S extends OwnedStore>(
  options: EntryCacheOptions,
  open: (storeOptions: StoreOptions) => Promise<S>,
): Promise<EntryCache<S>> {
  const { reported, storeOptions } = reportTo(options);
  return new EntryCache(await open(storeOptions), options, reported);
}

/** An entry cache over a store that peeks (memory, disk): the sync reads are there. */
export type PeekingEntryCache<S extends OwnedStore> = EntryCache<S> &
  Required<Pick<EntryCache<S>, 'getVariantsSync' | 'findVariantSync' | 'openBodySync'>>;

/**
 * The operations the cache uses, each one or two store calls. The sync reads exist when the store
 * can peek (its index is in memory): the hit path then takes no promise.
 */
export class EntryCache<S extends OwnedStore = OwnedStore> {
  readonly store: S;
  readonly putMayFail: boolean;
  /** The entries of `key`, newest response first (§4.1); each counts as a use. */
  readonly getVariantsSync?: (key: string) => readonly StoredEntry[];
  /** The entry of `key` a request selects (§4.1), with its body when it is in memory. */
  readonly findVariantSync?: (key: string, secondaryKey: SecondaryKeyOf) => Selected;
  /** The body of an entry: null when it is gone, undefined when it would take I/O (use openBody). */
  readonly openBodySync?: (entry: StoredEntry) => EntryBody | null | undefined;
  readonly #o: EntryCacheOptions;
  readonly #reported: Reported;
  #closed = false;

  constructor(store: S, options: EntryCacheOptions, reported: Reported) {
    this.store = store;
    this.putMayFail = options.putMayFail === true;
    this.#o = options;
    this.#reported = reported;
    if (store.peek === undefined) {
      this.getVariantsSync = undefined;
      this.findVariantSync = undefined;
      this.openBodySync = undefined;
      return;
    }
    // A store that peeks answers every select and all read (types.ts), so the fallbacks never apply.
    this.getVariantsSync = (key) => {
      this.#assertOpen();
      return store.peek!(key, ALL) ?? [];
    };
    this.findVariantSync = (key, select) => {
      this.#assertOpen();
      return store.peek!(key, { select }) ?? NO_MATCH;
    };
    this.openBodySync = (entry) => {
      this.#assertOpen();
      return store.peek!(entry.key, { body: entry });
    };
  }

  /** The entries of `key`, newest response first (§4.1); each counts as a use. */
  async getVariants(key: string): Promise<readonly StoredEntry[]> {
    this.#assertOpen();
    return this.store.get(key, ALL);
  }

  /** The entry of `key` a request selects (§4.1), with its body when the store holds it in memory. */
  async findVariant(key: string, select: SecondaryKeyOf): Promise<Selected> {
    this.#assertOpen();
    return this.store.get(key, { select });
  }

  /** The body of an entry a read or put returned; null when it is gone (a miss). */
  async openBody(entry: StoredEntry): Promise<EntryBody | null> {
    this.#assertOpen();
    return this.store.get(entry.key, { body: entry });
  }

  /**
   * Stores a response under `key`, replacing the entry with the same `meta.varyKey` once the whole
   * body is in. Reads `body` until its end or until it passes `maxEntryBytes` (then `too-large`, the
   * source stopped). Rejects, keeping nothing, when the body source throws or the store fails.
   */
  async put(key: string, meta: EntryMeta, body: BodySource): Promise<PutResult> {
    this.#assertOpen();
    const inflight = this.#reported.inflight.begin(key, meta.tags);
    try {
      const chunks: Uint8Array[] = [];
      let bodyBytes = 0;
      for await (const chunk of bodyChunks(body)) {
        bodyBytes += chunk.byteLength;
        if (bodyBytes > this.#o.maxEntryBytes) return TOO_LARGE; // stops the source
        if (this.#closed) return CLOSED;
        chunks.push(chunk);
      }
      if (this.#closed) return CLOSED;
      if (inflight.ticket.invalidated) return INVALIDATED;
      // One copy the store owns: the caller's chunks may be views into larger (pooled) buffers.
      const whole = concat(chunks, bodyBytes);
      const wanted = () => !this.#closed && !inflight.ticket.invalidated;
      const r = await this.store.put(key, { meta, body: whole, wanted });
      return !r.stored && this.#closed ? CLOSED : r;
    } finally {
      inflight.finish();
    }
  }

  /** Replaces an entry's metadata, keeping its body (§4.3.4); null when the entry is gone. */
  async updateMeta(key: string, id: string, meta: EntryMeta): Promise<StoredEntry | null> {
    this.#assertOpen();
    const r = await this.store.put(key, { meta, id });
    return r.stored ? r.entry : null;
  }

  /** Deletes one entry, or every entry of `key` (invalidation, §4.4) when `id` is omitted. */
  async delete(key: string, id?: string): Promise<void> {
    this.#assertOpen();
    if (id === undefined) this.#reported.inflight.invalidate(key);
    await this.store.delete(id === undefined ? { key } : { key, id });
  }

  /** Removes every entry matching `filter`, puts in flight included; resolves how many entries went. */
  async purge(filter: PurgeFilter): Promise<number> {
    this.#assertOpen();
    this.#reported.inflight.invalidateMatching(filter);
    return this.store.delete(filter);
  }

  /** Drops entries past `discardAfterMs`, enforces the byte bound, persists lazy state. */
  async prune(): Promise<number> {
    this.#assertOpen();
    return this.store.delete(EXPIRED);
  }

  /** Memory pressure: the store drops `fraction` of what it holds in memory (CacheStore.shed). */
  shed(fraction: number): number {
    return this.#closed ? 0 : (this.store.shed?.(fraction) ?? 0);
  }

  /** Bytes the store accounts to entries, as it last reported them. */
  sizeBytes(): number {
    return this.#reported.sizeBytes;
  }

  /** sizeBytes, asking a shared store afresh (a prune: its reply carries the shared total). */
  async readSizeBytes(): Promise<number> {
    if (this.#o.shared === true && !this.#closed) await this.prune().catch(() => 0);
    return this.#reported.sizeBytes;
  }

  /** False while a put begun now is known not to be stored (a shared store's server is unreachable). */
  canWrite(): boolean {
    return !this.#closed && this.#reported.reachable;
  }

  /** Stops puts still streaming (they resolve `closed`), then closes the store. Later calls reject. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.store.close?.();
  }

  #assertOpen(): void {
    if (this.#closed) throw new CacheStoreError('store_closed', `the ${this.#o.name} cache store is closed`);
  }
}
