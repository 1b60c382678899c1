// The caching fetch's disk tier in Node: the cache engine's disk store (src/cache/store/disk.ts) in
// the CacheTier shape of gatehouse-http/client. Exported from the main package (it uses node:), so
// the browser entry never reaches it: `createCachingFetch({ stores: [await diskTier(dir)] })`.

import { type DiskStore, openDiskCache } from '../../cache/store/disk.js';
import type { EntryCache } from '../../cache/store/entry-cache.js';
import { getHeader, type HeaderMap } from '../../cache/types.js';
import { varyKey } from '../../cache/vary.js';
import { isPartial } from '../cache-pieces.js';
import type { CachedResponse, CachedVariants, CacheTier } from '../cache-tier.js';

export interface DiskTierOptions {
  /** Bound of the folder in bytes (bodies plus meta). Default 256 MiB. */
  readonly maxSizeBytes?: number;
  /** A larger body is not stored. Default 8 MiB. */
  readonly maxEntryBytes?: number;
}

export interface DiskTier extends CacheTier {
  /** Closes the store (pending writes finish first). */
  close(): Promise<void>;
}

/** Opens (creating if needed) a disk tier in `dir`, a folder of its own. */
export async function diskTier(dir: string, options: DiskTierOptions = {}): Promise<DiskTier> {
  const store = await openDiskCache({
    dir,
    maxSizeBytes: options.maxSizeBytes ?? 256 * 1024 * 1024,
    maxEntryBytes: options.maxEntryBytes ?? 8 * 1024 * 1024,
  });
  return {
    name: 'disk',
    get: (key) => read(store, key),
    put: (key, variants) => write(store, key, variants),
    delete: (key) => store.delete(key),
    keys: () => store.store.keys(),
    clear: async () => {
      await store.purge({ all: true });
    },
    sizeBytes: () => store.sizeBytes(),
    close: () => store.close(),
  };
}

async function read(store: EntryCache<DiskStore>, key: string): Promise<CachedVariants | undefined> {
  const entries = await store.getVariants(key);
  const out: CachedResponse[] = [];
  for (const entry of entries) {
    const body = await store.openBody(entry);
    if (body === null) continue;
    const chunks: Uint8Array[] = [];
    for await (const c of body) chunks.push(c);
    const bytes = Buffer.concat(chunks);
    out.push({
      ...entry.meta.response,
      statusText: '',
      requestHeaders: entry.meta.varyHeaders,
      body: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      // A partial entry's pieces (RFC 9111 §3.3, src/client/cache-pieces.ts) travel in its metadata.
      ...(entry.meta.partial === undefined ? {} : { partial: entry.meta.partial }),
    });
  }
  if (out.length === 0) return undefined;
  return out.sort((a, b) => b.responseTimeMs - a.responseTimeMs);
}

/** The tier holds a URL's whole variant list: the old entries go, the given ones are put. */
async function write(store: EntryCache<DiskStore>, key: string, variants: CachedVariants): Promise<void> {
  await store.delete(key);
  for (const v of [...variants].reverse()) {
    const vary = getHeader(v.headers, 'vary');
    const secondary = varyKey(vary, v.requestHeaders);
    if (secondary === null) continue; // Vary: * never matches (§4.1)
    await store.put(
      key,
      {
        response: {
          status: v.status,
          headers: v.headers,
          requestTimeMs: v.requestTimeMs,
          responseTimeMs: v.responseTimeMs,
        },
        varyKey: secondary,
        varyHeaders: varyFields(vary, v.requestHeaders),
        ...(isPartial(v) ? { partial: v.partial } : {}),
      },
      v.body,
    );
  }
}

/** The request fields named by Vary, as the request carried them (§4.1). */
function varyFields(vary: string | undefined, requestHeaders: HeaderMap): Record<string, string> {
  const out: Record<string, string> = {};
  if (vary === undefined) return out;
  for (const name of vary.split(',')) {
    const n = name.trim().toLowerCase();
    const value = getHeader(requestHeaders, n);
    if (n !== '' && value !== undefined) out[n] = value;
  }
  return out;
}
