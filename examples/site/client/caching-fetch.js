// createCachingFetch: a fetch-compatible function with a private HTTP cache (RFC 9111 with
// `shared: false`) in front of it. Decisions come from the engine (src/cache); this file only orders
// them: lookup (memory, then the `stores` tiers), serve or revalidate, go to the network, store.
// Lookup order and request modes follow the Fetch standard's HTTP-network-or-cache fetch.
import { matchesVary, selectsByLanguage } from '../cache/vary.js';
import { cacheKey, fromNetwork, invalidateAfterUnsafe, rangeOf, revalidate, revalidateCoalesced, serveDecision, tierGet, upstreamRequest, } from './cache-network.js';
import { partialFetch } from './cache-partial.js';
import { isPartial } from './cache-pieces.js';
import { forwardResponse, headerMap, makeResponse, readToEnd, serveStored } from './cache-response.js';
import { memoryTier } from './cache-tier.js';
import { REDIRECT_STATUSES, redirectStep } from './redirect.js';
const DEFAULT_MEMORY_BYTES = 50 * 1024 * 1024;
const DEFAULT_ENTRY_BYTES = 5 * 1024 * 1024;
const DEFAULT_TIER_TIMEOUT_MS = 2000;
/** Fetch: these request fields make a default-mode request no-store. */
const CONDITIONAL_FIELDS = [
    'if-modified-since',
    'if-none-match',
    'if-unmodified-since',
    'if-match',
    'if-range',
];
export function createCachingFetch(options = {}) {
    const underlying = options.fetch ?? globalThis.fetch;
    if (typeof underlying !== 'function')
        throw new TypeError('createCachingFetch: no fetch function available');
    const maxMemoryBytes = options.maxMemoryBytes ?? DEFAULT_MEMORY_BYTES;
    const maxEntryBytes = options.maxEntryBytes ?? DEFAULT_ENTRY_BYTES;
    if (!(Number.isFinite(maxEntryBytes) && maxEntryBytes >= 0))
        throw new RangeError('maxEntryBytes: a number >= 0');
    const tierTimeoutMs = options.tierTimeoutMs ?? DEFAULT_TIER_TIMEOUT_MS;
    if (!(tierTimeoutMs > 0))
        throw new RangeError('tierTimeoutMs: a number > 0');
    const tiers = [memoryTier(maxMemoryBytes), ...(options.stores ?? [])];
    const s = {
        // Called plainly, not as s.fetch(): a browser's fetch throws Illegal invocation on another `this`.
        fetch: (input, init) => underlying(input, init),
        tiers,
        maxEntryBytes,
        now: options.now ?? Date.now,
        name: options.cacheName ?? 'gatehouse-client',
        freshness: options.freshness,
        staleIfUnreachableSec: options.staleIfUnreachableSec ?? 300,
        tierTimeoutMs,
        inflight: new Map(),
        background: new Set(),
        refreshing: new Set(),
        revalidating: new Map(),
        counts: { hits: 0, misses: 0, revalidations: 0, coalesced: 0, stored: 0, bypassed: 0 },
        tierHits: tiers.map(() => 0),
    };
    const cachingFetch = ((input, init) => followStored(s, input, init));
    cachingFetch.invalidate = (target) => invalidate(s, target);
    cachingFetch.clear = () => eachTier(s, 'clear', (t) => t.clear());
    cachingFetch.stats = () => stats(s);
    cachingFetch.idle = async () => {
        while (s.background.size > 0)
            await Promise.allSettled([...s.background]);
    };
    return cachingFetch;
}
/**
 * A 3xx answering a request that follows redirects (a stored one, stored when a request said
 * `redirect: 'manual'`, or one a non-following `options.fetch` returned): followed here as Fetch's
 * HTTP-redirect fetch (§4.4) would, each hop through the cache (redirect.ts decides).
 */
async function followStored(s, input, init) {
    let res = await handle(s, input, init);
    if (!REDIRECT_STATUSES.has(res.status))
        return res;
    const req = input instanceof Request ? input : undefined;
    const mode = init?.redirect ?? req?.redirect ?? 'follow';
    let method = (init?.method ?? req?.method ?? 'GET').toUpperCase();
    // Request(input, init): init's headers replace the input's.
    const headers = new Headers(init?.headers ?? req?.headers);
    let body = init?.body ?? null;
    for (let count = 0;; count++) {
        const step = redirectStep({
            mode,
            status: res.status,
            location: res.headers.get('location'),
            currentUrl: res.url,
            method,
            count,
        });
        if (step.kind === 'return')
            return res;
        await res.body?.cancel();
        if (step.kind === 'error')
            throw new TypeError(`createCachingFetch: ${step.reason}`);
        for (const name of step.dropFields)
            headers.delete(name);
        method = step.method;
        if (step.dropBody)
            body = null;
        // §4.4 step 11: a body that cannot be sent again (a stream, a Request's) is a network error.
        const resend = method !== 'GET' && method !== 'HEAD';
        if (resend && (body instanceof ReadableStream || (req?.body != null && init?.body === undefined)))
            throw new TypeError('createCachingFetch: a redirect would resend a stream body');
        res = await handle(s, step.url, { ...init, method, headers, body, redirect: 'follow' });
        Object.defineProperty(res, 'redirected', { value: true, enumerable: true });
    }
}
async function handle(s, input, init = {}) {
    // `cache` is ours to interpret, never handed to Request (it refuses only-if-cached outside same-origin mode).
    const { cache: initMode, reload, ...rest } = init;
    const request = new Request(input, rest);
    let mode = initMode ?? (input instanceof Request ? input.cache : 'default');
    const reqHeaders = headerMap(request.headers);
    const up = { request, reqHeaders, key: cacheKey(request.url), extra: {} };
    if (request.method === 'HEAD' && !CONDITIONAL_FIELDS.some((f) => reqHeaders[f] !== undefined)) {
        const stored = await headFromStored(s, up, mode);
        if (stored !== null)
            return stored;
    }
    if (request.method !== 'GET') {
        s.counts.bypassed++;
        const res = await s.fetch(upstreamRequest(up, {}));
        if (request.method !== 'HEAD')
            await invalidateAfterUnsafe(s, request, res);
        return withStatus(s, up, res, 'fwd=method');
    }
    // Fetch, HTTP-network-or-cache fetch: a request with its own preconditions is not answered from
    // (nor stored in) the cache.
    if (mode === 'default' && CONDITIONAL_FIELDS.some((f) => reqHeaders[f] !== undefined))
        mode = 'no-store';
    if (reload === 'forced')
        mode = 'reload';
    if (reload === 'normal' && mode === 'default')
        mode = 'no-cache';
    if (mode === 'no-store' || mode === 'reload') {
        // Fetch: no-store and reload send Pragma and Cache-Control `no-cache` unless the request has its own.
        if (reqHeaders.pragma === undefined)
            up.extra.pragma = 'no-cache';
        if (reqHeaders['cache-control'] === undefined)
            up.extra['cache-control'] = 'no-cache';
        if (mode === 'no-store') {
            s.counts.bypassed++;
            return withStatus(s, up, await s.fetch(upstreamRequest(up, {})), 'fwd=bypass');
        }
        // The new response replaces only the variant this request selects (§4.1); the others stay.
        return fromNetwork(s, up, 'request', await peek(s, up.key));
    }
    // Fetch: no-cache asks for revalidation with `Cache-Control: max-age=0`.
    if (mode === 'no-cache' && reqHeaders['cache-control'] === undefined)
        up.extra['cache-control'] = 'max-age=0';
    const variants = await lookup(s, up.key);
    const match = variants?.find((v) => matchesVary(v.headers.vary, v.requestHeaders, reqHeaders));
    const missReason = variants === undefined || variants.length === 0 ? 'uri-miss' : 'vary-miss';
    if (match === undefined && mode === 'default' && variants !== undefined && reqHeaders['accept-language']) {
        const byLanguage = languageHit(s, up, variants);
        if (byLanguage !== null)
            return byLanguage;
    }
    if (match === undefined) {
        if (mode === 'only-if-cached' ||
            /(^|[\s,])only-if-cached($|[\s,;=])/i.test(reqHeaders['cache-control'] ?? ''))
            return gatewayTimeout(s, up, missReason);
        return fromNetwork(s, up, missReason, variants);
    }
    // RFC 9111 §3.3: a stored variant holding pieces of the representation (cache-partial.ts).
    if (isPartial(match))
        return partialFetch(s, up, variants ?? [], match, mode);
    if (mode === 'force-cache' || mode === 'only-if-cached')
        return hit(s, up, match, 'hit');
    if (mode === 'no-cache') {
        // RFC 8246 §2: a private cache may answer a reload with a fresh `immutable` response unvalidated.
        const d = serveDecision(s, up, match, s.now());
        if (d.kind === 'fresh' && d.immutable)
            return hit(s, up, match, 'hit; detail=immutable', d.omitHeaders);
        return revalidate(s, up, variants ?? [], match, 'request');
    }
    return decide(s, up, variants ?? [], match);
}
/**
 * A fresh variant selected by Content-Language (selectsByLanguage) for a request no variant matched by
 * §4.1; null when there is none (a stale one is not revalidated for a request it was not selected by).
 */
function languageHit(s, up, variants) {
    const alt = variants.find((v) => !isPartial(v) && selectsByLanguage(v.headers.vary, v.requestHeaders, v.headers, up.reqHeaders));
    if (alt === undefined)
        return null;
    const d = serveDecision(s, up, alt, s.now());
    return d.kind === 'fresh' ? hit(s, up, alt, 'hit', d.omitHeaders) : null;
}
/** Default mode with a matching stored response: RFC 9111 §4 through the engine's decideServe. */
function decide(s, up, variants, match) {
    const nowMs = s.now();
    const d = serveDecision(s, up, match, nowMs);
    switch (d.kind) {
        case 'fresh':
            return hit(s, up, match, 'hit', d.omitHeaders);
        case 'stale-ok':
            if (d.reason === 'stale-while-revalidate') {
                // RFC 5861 §3: serve the stale response now and refresh it in the background, once per URL.
                if (!s.refreshing.has(up.key)) {
                    s.refreshing.add(up.key);
                    const job = revalidate(s, up, variants, match, 'stale')
                        .then((r) => readToEnd(r.body, s.maxEntryBytes))
                        .catch(() => undefined)
                        .finally(() => {
                        s.refreshing.delete(up.key);
                        s.background.delete(job);
                    });
                    s.background.add(job);
                }
                return hit(s, up, match, 'hit; detail=stale-while-revalidate', d.omitHeaders);
            }
            return hit(s, up, match, 'hit', d.omitHeaders);
        case 'revalidate':
            // Followers decide again on what the leader stored, without coalescing a second time.
            return revalidateCoalesced(s, up, variants, match, () => afterCoalesced(s, up));
        case 'miss-only-if-cached':
            return gatewayTimeout(s, up, 'stale');
    }
}
/** After waiting for another request's revalidation: serve what it left if fresh, else revalidate. */
async function afterCoalesced(s, up) {
    const variants = (await lookup(s, up.key)) ?? [];
    const match = variants.find((v) => matchesVary(v.headers.vary, v.requestHeaders, up.reqHeaders));
    if (match === undefined)
        return fromNetwork(s, up, 'uri-miss', variants);
    const d = serveDecision(s, up, match, s.now());
    if (d.kind === 'fresh')
        return hit(s, up, match, 'fwd=stale; collapsed', d.omitHeaders);
    return revalidate(s, up, variants, match, 'stale');
}
/**
 * RFC 9111 §4 (and RFC 9110 §9.3.2): a stored response to GET may answer a HEAD, when it could be
 * used as is for a GET (fresh, or any stored one for force-cache / only-if-cached). Null: go upstream.
 */
async function headFromStored(s, up, mode) {
    if (mode !== 'default' && mode !== 'force-cache' && mode !== 'only-if-cached')
        return null;
    const match = (await lookup(s, up.key))?.find((v) => matchesVary(v.headers.vary, v.requestHeaders, up.reqHeaders));
    if (match === undefined || isPartial(match))
        return mode === 'only-if-cached' ? gatewayTimeout(s, up, 'uri-miss') : null;
    let omit = [];
    if (mode === 'default') {
        const d = serveDecision(s, up, match, s.now());
        if (d.kind !== 'fresh')
            return null;
        omit = d.omitHeaders;
    }
    s.counts.hits++;
    return serveStored(up.request.url, match, s.now(), `${s.name}; hit`, omit, true);
}
function hit(s, up, stored, status, omit) {
    s.counts.hits++;
    return serveStored(up.request.url, stored, s.now(), `${s.name}; ${status}`, omit, false, rangeOf(up));
}
/** RFC 9111 §5.2.1.7 / Fetch only-if-cached: nothing usable stored -> 504. */
function gatewayTimeout(s, up, reason) {
    s.counts.misses++;
    return makeResponse(up.request.url, 504, 'Gateway Timeout', { 'cache-status': `${s.name}; fwd=${reason}; detail=only-if-cached` }, null);
}
/** The stored variants of `key` from the first tier holding any, uncounted and not promoted. */
async function peek(s, key) {
    for (const tier of s.tiers) {
        try {
            const found = await tierGet(s, tier, key);
            if (found !== undefined && found.length > 0)
                return found;
        }
        catch {
            // a failing tier is skipped
        }
    }
    return undefined;
}
/** Memory first, then each tier in order; a lower-tier hit is promoted to memory. */
async function lookup(s, key) {
    for (let i = 0; i < s.tiers.length; i++) {
        const tier = s.tiers[i];
        let found;
        try {
            found = await tierGet(s, tier, key);
        }
        catch {
            continue; // a failing tier is skipped, never fatal
        }
        if (found === undefined || found.length === 0)
            continue;
        s.tierHits[i]++;
        if (i > 0)
            await s.tiers[0].put(key, found);
        return found;
    }
    return undefined;
}
function withStatus(s, up, res, status) {
    return forwardResponse(up.request.url, res, res.body, `${s.name}; ${status}`);
}
async function invalidate(s, target) {
    const removed = new Set();
    const key = typeof target === 'function' ? '' : cacheKey(new URL(String(target), globalThis.location?.href).href);
    await eachTier(s, 'invalidate', async (tier) => {
        if (typeof target === 'function') {
            for (const k of [...(await tier.keys())]) {
                if (!target(k))
                    continue;
                await tier.delete(k);
                removed.add(k);
            }
            return;
        }
        if ((await tierGet(s, tier, key)) === undefined)
            return;
        await tier.delete(key);
        removed.add(key);
    });
    return removed.size;
}
/** Runs `op` on every tier, each even when an earlier one failed; then one AggregateError of the failures. */
async function eachTier(s, what, op) {
    const errors = [];
    const failed = [];
    for (const tier of s.tiers) {
        try {
            await op(tier);
        }
        catch (err) {
            errors.push(err);
            failed.push(tier.name);
        }
    }
    if (errors.length > 0)
        throw new AggregateError(errors, `createCachingFetch ${what}: tier ${failed.join(', ')} failed`);
}
async function stats(s) {
    const tiers = [];
    for (let i = 0; i < s.tiers.length; i++) {
        const t = s.tiers[i];
        tiers.push({
            name: t.name,
            hits: s.tierHits[i],
            bytes: t.sizeBytes === undefined ? null : await t.sizeBytes(),
        });
    }
    return { ...s.counts, tiers };
}
