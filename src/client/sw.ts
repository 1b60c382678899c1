// gatehouse-http/sw: a versioned service-worker cache. Call versionedCache() at the top level of a module
// service worker; it installs the install, activate and fetch handlers (the decisions are in
// sw-strategy.ts, pure; this file is the I/O around them):
//   install   precaches the list into `${name}-${version}` (unchanged entries copied from the previous
//             version's cache, the others downloaded), then waits (or skipWaiting when asked);
//   activate  deletes every other `${name}-*` cache and claims the open pages;
//   fetch     hashed names cache-first, HTML and navigations network-first, the rest through
//             `options.fetch` (the caching fetch once wired), another origin untouched.
import { createCachingFetch } from './caching-fetch.js';
import {
  cacheNameOf,
  cachesToDelete,
  chooseStrategy,
  invalidationTargets,
  normalisePrecache,
  type PrecacheItem,
  planPrecache,
  type RequestFacts,
  type Revisions,
  recordedRevision,
  type Strategy,
  swStorable,
} from './sw-strategy.js';

export type {
  PrecacheItem,
  PrecacheStep,
  RequestFacts,
  ResponseFacts,
  Storability,
  Strategy,
} from './sw-strategy.js';
export {
  cacheNameOf,
  cachesToDelete,
  chooseStrategy,
  invalidationTargets,
  planPrecache,
  recordedRevision,
  swStorable,
} from './sw-strategy.js';

/** A precache entry: a URL, or a URL with its revision (what `gatehouse sw-manifest` writes). */
export type PrecacheEntry = string | { readonly url: string; readonly revision?: string | null };

export type FetchFunction = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;

/** An event with waitUntil (install, activate). */
export interface ExtendableEventLike {
  waitUntil(p: Promise<unknown>): void;
}

/** A fetch event, as far as the worker reads it. */
export interface FetchEventLike extends ExtendableEventLike {
  readonly request: Request;
  respondWith(r: Promise<Response>): void;
}

/** The service-worker global the handlers are installed on (`self`; a test double in unit tests). */
export interface ServiceWorkerGlobalLike {
  addEventListener(type: 'install' | 'activate', listener: (e: ExtendableEventLike) => void): void;
  addEventListener(type: 'fetch', listener: (e: FetchEventLike) => void): void;
  addEventListener(type: 'message', listener: (e: { readonly data: unknown }) => void): void;
  readonly caches: CacheStorage;
  readonly clients: { claim(): Promise<void> };
  readonly location: { readonly href: string; readonly origin: string };
  skipWaiting(): Promise<void>;
  fetch?: FetchFunction;
}

export interface VersionedCacheOptions {
  /** The cache family: caches are named `${name}-${version}`, and activation deletes every other `${name}-*`. */
  readonly name: string;
  /** This worker's version; change it (and so the worker file) to roll out a new precache. */
  readonly version: string;
  /** URLs to store at install (relative to the worker's URL), e.g. the output of `gatehouse sw-manifest`. */
  readonly precache?: readonly PrecacheEntry[];
  /**
   * The network for everything the worker sends. Default: the global fetch, with the requests the
   * strategies leave (not hashed, not HTML, unsafe methods) through a `createCachingFetch()` over it,
   * so the lookup order is worker cache, memory, network. A given function is used as is for all.
   */
  readonly fetch?: FetchFunction;
  /**
   * Take over at once when installed, instead of waiting until no page uses the old version
   * (default false: an open page keeps the version it loaded with; see the README).
   */
  readonly skipWaiting?: boolean;
  /** A precached URL answering navigations the cache has no copy of when offline (e.g. '/' for an SPA). */
  readonly navigationFallback?: string;
  /** The global the handlers go on (default `self`); for tests. */
  readonly global?: ServiceWorkerGlobalLike;
}

/** What versionedCache returns: the cache's name and the steps, for pages or tests to call. */
export interface VersionedCache {
  readonly cacheName: string;
  /** The install step (precache); the install handler runs it. */
  install(): Promise<void>;
  /** The activate step (delete other versions, claim clients). */
  activate(): Promise<void>;
  /** The answer to a request, or undefined when the worker leaves it to the browser. */
  handle(request: Request): Promise<Response> | undefined;
}

/** Where a cache keeps its precache record (url -> revision). A dot path: the server never serves one. */
const META_PATH = '/.gatehouse-sw-precache';

async function readRevisions(cache: Cache, metaUrl: string): Promise<Revisions> {
  const r = await cache.match(metaUrl);
  if (!r) return new Map();
  try {
    const obj = (await r.json()) as Record<string, string | null>;
    return new Map(Object.entries(obj));
  } catch {
    return new Map();
  }
}

function factsOf(request: Request, origin: string): RequestFacts {
  return {
    method: request.method,
    url: request.url,
    mode: request.mode,
    destination: request.destination,
    cacheMode: request.cache,
    accept: request.headers.get('accept'),
    range: request.headers.get('range'),
    origin,
  };
}

/** Puts `response` under `request` when swStorable allows it; true when stored. */
async function storeIfStorable(cache: Cache, request: Request, response: Response): Promise<boolean> {
  const verdict = swStorable({
    requestMethod: request.method,
    requestCacheControl: request.headers.get('cache-control'),
    status: response.status,
    type: response.type,
    redirected: response.redirected,
    cacheControl: response.headers.get('cache-control'),
    vary: response.headers.get('vary'),
  });
  if (verdict.kind !== 'store') return false;
  await cache.put(request, response);
  return true;
}

interface PrecacheContext {
  readonly g: ServiceWorkerGlobalLike;
  readonly name: string;
  readonly cacheName: string;
  readonly items: readonly PrecacheItem[];
  readonly metaUrl: string;
  readonly net: FetchFunction;
  readonly skipWaiting: boolean;
}

/**
 * Install: stores every precache entry in the current cache (kept, copied from another version's
 * cache when the revision matches, else downloaded), then the record of revisions. One failed
 * download fails the install, so a version is all there or not installed (the old one stays).
 */
async function precache(ctx: PrecacheContext): Promise<void> {
  const { g, name, cacheName, items, metaUrl, net } = ctx;
  const cache = await g.caches.open(cacheName);
  const current = await readRevisions(cache, metaUrl);
  const others = await Promise.all(
    cachesToDelete(await g.caches.keys(), name, cacheName).map(async (n) => ({
      cacheName: n,
      revisions: await readRevisions(await g.caches.open(n), metaUrl),
    })),
  );
  const record: Record<string, string | null> = {};
  await Promise.all(
    planPrecache(items, current, others).map(async (step) => {
      if (step.kind === 'keep') {
        record[step.url] = step.revision;
        return;
      }
      if (step.kind === 'copy') {
        const old = await (await g.caches.open(step.from)).match(step.url);
        if (old) {
          await cache.put(step.url, old);
          record[step.url] = step.revision;
          return;
        }
      }
      // A revisioned or unhashed file is revalidated past the HTTP cache, so a stale copy is not stored.
      const request = new Request(step.url, { cache: step.revision === null ? 'default' : 'no-cache' });
      const response = await net(request);
      if (!response.ok) throw new Error(`versionedCache: precache ${step.url}: HTTP ${response.status}`);
      const stored = await storeIfStorable(cache, request, response.clone());
      // A no-store or private file is never stored, even when listed; it is fetched each time.
      if (stored)
        record[step.url] = recordedRevision(
          step.revision,
          response.headers.get('etag'),
          response.headers.get('content-encoding'),
        );
    }),
  );
  await cache.put(
    metaUrl,
    new Response(JSON.stringify(record), {
      headers: { 'content-type': 'application/json', 'cache-control': 'no-cache' },
    }),
  );
  if (ctx.skipWaiting) await g.skipWaiting();
}

/** A navigation, or a request asking for HTML first: the ones navigationFallback answers. */
function isPageLoad(request: Request): boolean {
  return request.mode === 'navigate' || /^\s*text\/html\b/i.test(request.headers.get('accept') ?? '');
}

/**
 * Installs the handlers of a versioned cache on the service-worker global and returns its name and
 * steps. Throws TypeError on a bad option (empty name or version, a precache entry of another origin).
 */
export function versionedCache(options: VersionedCacheOptions): VersionedCache {
  const { name, version } = options;
  if (typeof name !== 'string' || name === '')
    throw new TypeError('versionedCache: name must be a non-empty string');
  if (typeof version !== 'string' || version === '')
    throw new TypeError('versionedCache: version must be a non-empty string');
  const g = options.global ?? (globalThis as unknown as ServiceWorkerGlobalLike);
  const base = g.location.href;
  const origin = g.location.origin;
  const cacheName = cacheNameOf(name, version);
  const items: PrecacheItem[] = normalisePrecache(options.precache ?? [], base);
  const metaUrl = new URL(META_PATH, origin).href;
  const fallbackUrl =
    options.navigationFallback !== undefined ? new URL(options.navigationFallback, base).href : undefined;
  const net: FetchFunction =
    options.fetch ?? ((input, init) => (g.fetch ?? globalThis.fetch).call(globalThis, input, init));
  // Spec 3.4: what the worker's strategies leave (the rest, unsafe methods) goes through the private
  // caching fetch, so the lookup order is worker cache, memory, network. A given `fetch` is used as is.
  const rest: FetchFunction = options.fetch ?? createCachingFetch({ fetch: net });
  const skipWaiting = options.skipWaiting === true;

  const install = () => precache({ g, name, cacheName, items, metaUrl, net, skipWaiting });

  const activate = async (): Promise<void> => {
    // Spec 9: the other versions go, then this worker takes the open pages.
    await Promise.all(cachesToDelete(await g.caches.keys(), name, cacheName).map((n) => g.caches.delete(n)));
    await g.clients.claim();
  };

  /** A runtime store: a failed put (quota, a disk fault) costs the copy, never the answer. */
  const storeQuietly = async (request: Request, response: Response): Promise<void> => {
    try {
      await storeIfStorable(await g.caches.open(cacheName), request, response.clone());
    } catch {}
  };

  /** The worker's cache answers (Vary honoured: no ignoreVary); the metadata entry is never an answer. */
  const fromCache = async (request: Request): Promise<Response | undefined> => {
    if (request.url === metaUrl) return undefined;
    return (await g.caches.open(cacheName)).match(request);
  };

  const answer = async (strategy: Strategy, request: Request): Promise<Response> => {
    switch (strategy.kind) {
      case 'cache-first': {
        const hit = await fromCache(request);
        if (hit) return hit;
        const response = await net(request);
        await storeQuietly(request, response);
        return response;
      }
      case 'network-first': {
        let response: Response;
        try {
          response = await net(request);
        } catch (err) {
          // Offline (a network error, not an HTTP status): the stored copy, else the fallback page.
          const hit = await fromCache(request);
          if (hit) return hit;
          const fallback =
            fallbackUrl && isPageLoad(request) ? await fromCache(new Request(fallbackUrl)) : undefined;
          if (fallback) return fallback;
          throw err;
        }
        await storeQuietly(request, response);
        return response;
      }
      case 'fetch': {
        try {
          return await rest(request);
        } catch (err) {
          const hit = strategy.reason === 'other' ? await fromCache(request) : undefined;
          if (hit) return hit;
          throw err;
        }
      }
      case 'unsafe': {
        const response = await rest(request);
        const h = response.headers;
        const targets = invalidationTargets(
          response.status,
          request.url,
          h.get('location'),
          h.get('content-location'),
          origin,
        );
        if (targets.length > 0) {
          const cache = await g.caches.open(cacheName);
          await Promise.all(targets.map((t) => cache.delete(t)));
        }
        return response;
      }
      case 'pass-through':
        return net(request);
    }
  };

  const handle = (request: Request): Promise<Response> | undefined => {
    const strategy = chooseStrategy(factsOf(request, origin));
    return strategy.kind === 'pass-through' ? undefined : answer(strategy, request);
  };

  g.addEventListener('install', (e) => e.waitUntil(install()));
  g.addEventListener('activate', (e) => e.waitUntil(activate()));
  // A page may ask a waiting version to take over now (after asking its user): { type: 'SKIP_WAITING' }.
  g.addEventListener('message', (e) => {
    if ((e.data as { type?: unknown } | null)?.type === 'SKIP_WAITING') void g.skipWaiting();
  });
  g.addEventListener('fetch', (e) => {
    const p = handle(e.request);
    if (p) e.respondWith(p);
  });
  return { cacheName, install, activate, handle };
}
