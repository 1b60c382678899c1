// Helpers shared by the store implementations (not exported from the package).
import {
  type BodySource,
  CacheStoreError,
  type EntryBody,
  type EntryMeta,
  type PurgeFilter,
  type StoredEntry,
  type StoreOptions,
} from './types.js';

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
