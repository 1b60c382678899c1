// The service-worker cache's decisions, as pure functions over plain values: which strategy answers a
// request, whether a response may enter the worker's cache, which caches activation deletes, what
// install must download, and which URLs an unsafe method invalidates. sw.ts applies them (the I/O).
import { hasDirective, parseCacheControl } from '../http/cache-control.js';
import { isHashedName } from '../http/hashed-name.js';
const CACHE_FIRST = { kind: 'cache-first' };
const NETWORK_FIRST = { kind: 'network-first' };
const UNSAFE = { kind: 'unsafe' };
/** RFC 9110 §9.2.1: GET, HEAD, OPTIONS and TRACE are safe; the others may change the resource. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);
/** True for a page load or a request that asks for HTML first. */
function wantsHtml(f, path) {
    if (f.mode === 'navigate' || f.destination === 'document' || f.destination === 'iframe')
        return true;
    if (path.endsWith('.html') || path.endsWith('.htm'))
        return true;
    return f.accept !== null && /^\s*text\/html\b/i.test(f.accept);
}
/**
 * The strategy for a request. In order: another origin or scheme passes through untouched; a method
 * other than GET goes to the network and invalidates (only GET responses are stored); HTML and
 * navigations are network-first; `cache: 'no-store'` and Range requests go to the network unstored
 * (the Cache API holds whole 200s only); hashed names (the server's rule) are cache-first; the rest
 * goes through `options.fetch`.
 */
export function chooseStrategy(f) {
    let url;
    try {
        url = new URL(f.url);
    }
    catch {
        return { kind: 'pass-through', reason: 'not-http' };
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
        return { kind: 'pass-through', reason: 'not-http' };
    // Another origin's responses are its own (CORS, credentials, opaque bodies): not ours to cache.
    if (url.origin !== f.origin)
        return { kind: 'pass-through', reason: 'cross-origin' };
    const method = f.method.toUpperCase();
    if (method !== 'GET')
        return SAFE_METHODS.has(method) ? { kind: 'fetch', reason: 'other' } : UNSAFE;
    // Fetch standard: `no-store` asks that no cache be read or written.
    if (f.cacheMode === 'no-store')
        return { kind: 'fetch', reason: 'no-store-mode' };
    if (wantsHtml(f, url.pathname))
        return NETWORK_FIRST;
    // cache.match ignores Range and cache.put refuses 206 (Service Workers §Cache): ranges go unstored.
    if (f.range !== null)
        return { kind: 'fetch', reason: 'range' };
    if (isHashedName(url.pathname))
        return CACHE_FIRST;
    return { kind: 'fetch', reason: 'other' };
}
const STORE = { kind: 'store' };
const skip = (reason) => ({
    kind: 'skip',
    reason,
});
/**
 * Whether a response may enter the worker's cache. Only a 200 to a GET, seen (not opaque), not
 * redirected, without `no-store` (RFC 9111 §5.2.2.5) or `private` (§5.2.2.7: the worker's cache
 * outlives the session and is readable by every page of the origin, so `private` is kept out of it
 * too, as the issue asks), with no `no-store` in the request and no `Vary: *` (§4.1: never matches).
 */
export function swStorable(r) {
    if (r.requestMethod.toUpperCase() !== 'GET')
        return skip('not-get');
    if (r.type === 'opaque' || r.type === 'opaqueredirect' || r.type === 'error')
        return skip('opaque');
    if (r.status !== 200)
        return skip('status');
    if (r.redirected)
        return skip('redirected');
    const cc = parseCacheControl(r.cacheControl ?? undefined);
    if (hasDirective(cc, 'no-store'))
        return skip('no-store');
    if (hasDirective(cc, 'private'))
        return skip('private');
    if (hasDirective(parseCacheControl(r.requestCacheControl ?? undefined), 'no-store'))
        return skip('request-no-store');
    if (r.vary?.split(',').some((v) => v.trim() === '*'))
        return skip('vary-star');
    return STORE;
}
/** The full name of a version's cache. */
export function cacheNameOf(name, version) {
    return `${name}-${version}`;
}
/** The caches activation deletes: every `${name}-*` but the current one; caches of other names stay. */
export function cachesToDelete(allNames, name, current) {
    const prefix = `${name}-`;
    return allNames.filter((n) => n !== current && n.startsWith(prefix));
}
/**
 * True when a stored copy recorded with `stored` may stand for an entry wanting `wanted`: the same
 * revision, or, with no revision on either side, a hashed name (the URL is the revision). An entry
 * without a revision and without a hash in its name is always downloaded: nothing says it is unchanged.
 */
function sameRevision(url, wanted, stored) {
    if (stored === undefined)
        return false;
    if (wanted !== null)
        return stored === wanted;
    return stored === null && isHashedName(new URL(url).pathname);
}
/**
 * Install's plan: per entry keep (the current cache has it), copy (another `${name}-*` cache has
 * it: an unchanged file is not downloaded again on a version change) or download.
 */
export function planPrecache(items, current, others) {
    return items.map(({ url, revision }) => {
        if (sameRevision(url, revision, current.get(url)))
            return { kind: 'keep', url, revision };
        const from = others.find((o) => sameRevision(url, revision, o.revisions.get(url)));
        if (from)
            return { kind: 'copy', url, revision, from: from.cacheName };
        return { kind: 'download', url, revision };
    });
}
/**
 * The revision to record for a downloaded entry: the manifest's, unless the server's strong ETag says
 * the bytes are another version (the file changed after the manifest was made); then null, so the
 * next install downloads it again. Only an identity response's ETag is compared: each content coding
 * has its own tag (RFC 9110 §8.8.3), and the manifest holds the identity one.
 */
export function recordedRevision(wanted, etag, contentEncoding = null) {
    if (wanted === null || etag === null || etag.startsWith('W/'))
        return wanted;
    if (contentEncoding !== null && contentEncoding.trim().toLowerCase() !== 'identity')
        return wanted;
    return etag === wanted ? wanted : null;
}
/**
 * RFC 9111 §4.4: a non-error response to an unsafe method invalidates the target URI and the
 * same-origin Location and Content-Location URIs. Absolute URLs; empty for an error status.
 */
export function invalidationTargets(status, url, location, contentLocation, origin) {
    if (status < 200 || status >= 400)
        return [];
    const out = [url];
    for (const ref of [location, contentLocation]) {
        if (ref === null)
            continue;
        try {
            const u = new URL(ref, url);
            if (u.origin === origin)
                out.push(u.href);
        }
        catch { }
    }
    return out;
}
/** Normalises the precache list against the worker's URL: absolute URLs, first occurrence of each kept. */
export function normalisePrecache(list, base) {
    const seen = new Map();
    list.forEach((e, i) => {
        const raw = typeof e === 'string' ? e : e?.url;
        if (typeof raw !== 'string' || raw === '')
            throw new TypeError(`versionedCache: precache[${i}]: expected a URL or { url, revision }`);
        const revision = typeof e === 'string' ? null : (e.revision ?? null);
        if (revision !== null && typeof revision !== 'string')
            throw new TypeError(`versionedCache: precache[${i}].revision: expected a string`);
        const u = new URL(raw, base);
        u.hash = '';
        if (u.origin !== new URL(base).origin)
            throw new TypeError(`versionedCache: precache[${i}]: ${raw} is another origin's (not precached)`);
        if (!seen.has(u.href))
            seen.set(u.href, { url: u.href, revision });
    });
    return [...seen.values()];
}
