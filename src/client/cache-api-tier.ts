// A caching-fetch tier on the browser's Cache API (in a page or a service worker): one Cache named
// `name`. Per URL key, one JSON entry at `https://gatehouse-client.invalid/<key>/meta` holds the
// variants' metadata (everything but the body) and a write id; each body is an entry of its own at
// `.../<key>/<id>/<i>`. A put writes the new bodies under a fresh id, then the meta (the commit
// point), then removes the old bodies, so a reader never pairs one write's meta with another's bodies.
import type { CachedResponse, CacheTier } from './cache-tier.js';

export interface CacheApiTierOptions {
  /** The CacheStorage to use. Default globalThis.caches. */
  readonly caches?: CacheStorage;
}

/** The synthetic origin of the tier's entries (.invalid never resolves, RFC 2606 §2). */
const BASE = 'https://gatehouse-client.invalid/';
const META = '/meta';

type VariantMeta = Omit<CachedResponse, 'body'>;
interface MetaRecord {
  readonly id: string;
  readonly variants: readonly VariantMeta[];
}

const prefix = (key: string): string => `${BASE}${encodeURIComponent(key)}`;
const bodyUrl = (key: string, id: string, i: number): string => `${prefix(key)}/${id}/${i}`;

export function cacheApiTier(name = 'gatehouse-client', options: CacheApiTierOptions = {}): CacheTier {
  const storage = options.caches ?? (globalThis as { caches?: CacheStorage }).caches;
  if (storage === undefined || typeof storage.open !== 'function')
    throw new TypeError('cacheApiTier: no Cache API here (globalThis.caches); pass options.caches');
  let opened: Promise<Cache> | undefined;
  const cache = (): Promise<Cache> => (opened ??= storage.open(name));

  const readMeta = async (c: Cache, key: string): Promise<MetaRecord | undefined> => {
    const res = await c.match(prefix(key) + META);
    if (res === undefined) return undefined;
    try {
      const m = (await res.json()) as MetaRecord;
      return typeof m.id === 'string' && Array.isArray(m.variants) ? m : undefined;
    } catch {
      return undefined; // unreadable meta: as if absent
    }
  };
  const dropBodies = (c: Cache, key: string, m: MetaRecord): Promise<unknown> =>
    Promise.all(m.variants.map((_, i) => c.delete(bodyUrl(key, m.id, i))));

  return {
    name: 'cache-api',
    async get(key) {
      const c = await cache();
      const m = await readMeta(c, key);
      if (m === undefined || m.variants.length === 0) return undefined;
      const out: CachedResponse[] = [];
      for (const [i, v] of m.variants.entries()) {
        const res = await c.match(bodyUrl(key, m.id, i));
        if (res === undefined) return undefined; // evicted by the browser or a newer put: a miss
        out.push({ ...v, body: new Uint8Array(await res.arrayBuffer()) });
      }
      return out;
    },
    async put(key, variants) {
      const c = await cache();
      const old = await readMeta(c, key);
      const id = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
      const metas: VariantMeta[] = [];
      for (const [i, { body, ...meta }] of variants.entries()) {
        await c.put(bodyUrl(key, id, i), new Response(body as BodyInit));
        metas.push(meta);
      }
      const record: MetaRecord = { id, variants: metas };
      await c.put(
        prefix(key) + META,
        new Response(JSON.stringify(record), { headers: { 'content-type': 'application/json' } }),
      );
      if (old !== undefined) await dropBodies(c, key, old);
    },
    async delete(key) {
      const c = await cache();
      const m = await readMeta(c, key);
      await c.delete(prefix(key) + META);
      if (m !== undefined) await dropBodies(c, key, m);
    },
    async keys() {
      const out: string[] = [];
      for (const req of await (await cache()).keys()) {
        const url = req.url;
        if (!(url.startsWith(BASE) && url.endsWith(META))) continue;
        const enc = url.slice(BASE.length, -META.length);
        if (!enc.includes('/')) out.push(decodeURIComponent(enc));
      }
      return out;
    },
    async clear() {
      opened = undefined;
      await storage.delete(name);
    },
  };
}
