// gatehouse-http/sw: a versioned service-worker cache. Call versionedCache() at the top level of a module
// service worker; it installs the install, activate and fetch handlers (the decisions are in
// sw-strategy.ts, pure; this file is the I/O around them):
//   install   precaches the list into `${name}-${version}` (unchanged entries copied from the previous
//             version's cache, the others downloaded), then waits (or skipWaiting when asked);
//   activate  deletes every other `${name}-*` cache and claims the open pages;
//   fetch     hashed names cache-first, HTML and navigations network-first, the rest through
//             `options.fetch` (the caching fetch once wired), another origin untouched.
import { createCachingFetch } from './caching-fetch.js';
import { cacheNameOf, cachesToDelete, chooseStrategy, invalidationTargets, normalisePrecache, planPrecache, recordedRevision, swStorable, } from './sw-strategy.js';
export { cacheNameOf, cachesToDelete, chooseStrategy, invalidationTargets, planPrecache, recordedRevision, swStorable, } from './sw-strategy.js';
/** Where a cache keeps its precache record (url -> revision). A dot path: the server never serves one. */
const META_PATH = '/.gatehouse-sw-precache';
async function readRevisions(cache, metaUrl) {
    const r = await cache.match(metaUrl);
    if (!r)
        return new Map();
    try {
        const obj = (await r.json());
        return new Map(Object.entries(obj));
    }
    catch {
        return new Map();
    }
}
function factsOf(request, origin) {
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
async function storeIfStorable(cache, request, response) {
    const verdict = swStorable({
        requestMethod: request.method,
        requestCacheControl: request.headers.get('cache-control'),
        status: response.status,
        type: response.type,
        redirected: response.redirected,
        cacheControl: response.headers.get('cache-control'),
        vary: response.headers.get('vary'),
    });
    if (verdict.kind !== 'store')
        return false;
    await cache.put(request, response);
    return true;
}
/**
 * Install: stores every precache entry in the current cache (kept, copied from another version's
 * cache when the revision matches, else downloaded), then the record of revisions. One failed
 * download fails the install, so a version is all there or not installed (the old one stays).
 */
async function precache(ctx) {
    const { g, name, cacheName, items, metaUrl, net } = ctx;
    const cache = await g.caches.open(cacheName);
    const current = await readRevisions(cache, metaUrl);
    const others = await Promise.all(cachesToDelete(await g.caches.keys(), name, cacheName).map(async (n) => ({
        cacheName: n,
        revisions: await readRevisions(await g.caches.open(n), metaUrl),
    })));
    const record = {};
    await Promise.all(planPrecache(items, current, others).map(async (step) => {
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
        if (!response.ok)
            throw new Error(`versionedCache: precache ${step.url}: HTTP ${response.status}`);
        const stored = await storeIfStorable(cache, request, response.clone());
        // A no-store or private file is never stored, even when listed; it is fetched each time.
        if (stored)
            record[step.url] = recordedRevision(step.revision, response.headers.get('etag'), response.headers.get('content-encoding'));
    }));
    await cache.put(metaUrl, new Response(JSON.stringify(record), {
        headers: { 'content-type': 'application/json', 'cache-control': 'no-cache' },
    }));
    if (ctx.skipWaiting)
        await g.skipWaiting();
}
/** A navigation, or a request asking for HTML first: the ones navigationFallback answers. */
function isPageLoad(request) {
    return request.mode === 'navigate' || /^\s*text\/html\b/i.test(request.headers.get('accept') ?? '');
}
/**
 * Installs the handlers of a versioned cache on the service-worker global and returns its name and
 * steps. Throws TypeError on a bad option (empty name or version, a precache entry of another origin).
 */
export function versionedCache(options) {
    const { name, version } = options;
    if (typeof name !== 'string' || name === '')
        throw new TypeError('versionedCache: name must be a non-empty string');
    if (typeof version !== 'string' || version === '')
        throw new TypeError('versionedCache: version must be a non-empty string');
    const g = options.global ?? globalThis;
    const base = g.location.href;
    const origin = g.location.origin;
    const cacheName = cacheNameOf(name, version);
    const items = normalisePrecache(options.precache ?? [], base);
    const metaUrl = new URL(META_PATH, origin).href;
    const fallbackUrl = options.navigationFallback !== undefined ? new URL(options.navigationFallback, base).href : undefined;
    const net = options.fetch ?? ((input, init) => (g.fetch ?? globalThis.fetch).call(globalThis, input, init));
    // Spec 3.4: what the worker's strategies leave (the rest, unsafe methods) goes through the private
    // caching fetch, so the lookup order is worker cache, memory, network. A given `fetch` is used as is.
    const rest = options.fetch ?? createCachingFetch({ fetch: net });
    const skipWaiting = options.skipWaiting === true;
    const install = () => precache({ g, name, cacheName, items, metaUrl, net, skipWaiting });
    const activate = async () => {
        // Spec 9: the other versions go, then this worker takes the open pages.
        await Promise.all(cachesToDelete(await g.caches.keys(), name, cacheName).map((n) => g.caches.delete(n)));
        await g.clients.claim();
    };
    /** A runtime store: a failed put (quota, a disk fault) costs the copy, never the answer. */
    const storeQuietly = async (request, response) => {
        try {
            await storeIfStorable(await g.caches.open(cacheName), request, response.clone());
        }
        catch { }
    };
    /** The worker's cache answers (Vary honoured: no ignoreVary); the metadata entry is never an answer. */
    const fromCache = async (request) => {
        if (request.url === metaUrl)
            return undefined;
        return (await g.caches.open(cacheName)).match(request);
    };
    const answer = async (strategy, request) => {
        switch (strategy.kind) {
            case 'cache-first': {
                const hit = await fromCache(request);
                if (hit)
                    return hit;
                const response = await net(request);
                await storeQuietly(request, response);
                return response;
            }
            case 'network-first': {
                let response;
                try {
                    response = await net(request);
                }
                catch (err) {
                    // Offline (a network error, not an HTTP status): the stored copy, else the fallback page.
                    const hit = await fromCache(request);
                    if (hit)
                        return hit;
                    const fallback = fallbackUrl && isPageLoad(request) ? await fromCache(new Request(fallbackUrl)) : undefined;
                    if (fallback)
                        return fallback;
                    throw err;
                }
                await storeQuietly(request, response);
                return response;
            }
            case 'fetch': {
                try {
                    return await rest(request);
                }
                catch (err) {
                    const hit = strategy.reason === 'other' ? await fromCache(request) : undefined;
                    if (hit)
                        return hit;
                    throw err;
                }
            }
            case 'unsafe': {
                const response = await rest(request);
                const h = response.headers;
                const targets = invalidationTargets(response.status, request.url, h.get('location'), h.get('content-location'), origin);
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
    const handle = (request) => {
        const strategy = chooseStrategy(factsOf(request, origin));
        return strategy.kind === 'pass-through' ? undefined : answer(strategy, request);
    };
    g.addEventListener('install', (e) => e.waitUntil(install()));
    g.addEventListener('activate', (e) => e.waitUntil(activate()));
    // A page may ask a waiting version to take over now (after asking its user): { type: 'SKIP_WAITING' }.
    g.addEventListener('message', (e) => {
        if (e.data?.type === 'SKIP_WAITING')
            void g.skipWaiting();
    });
    g.addEventListener('fetch', (e) => {
        const p = handle(e.request);
        if (p)
            e.respondWith(p);
    });
    return { cacheName, install, activate, handle };
}
