import { invalidationUris } from '../cache/invalidate.js';
import { DEFAULT_MAX_PIECES_PER_ENTRY } from '../cache/pieces.js';
import { decideServe } from '../cache/request.js';
import { isStorable } from '../cache/storable.js';
import { conditionalHeaders, freshenStored, selectValidated, storedHeaderFields } from '../cache/validate.js';
import { matchesVary, varyKey } from '../cache/vary.js';
import { isPartial, pieceEntry } from './cache-pieces.js';
import { forwardResponse, headerMap, makeResponse, serveStored, storeThrough, } from './cache-response.js';
const NOT_STORED = Promise.resolve(null);
const noFollow = () => null;
/** At most this many Vary variants are kept per URL (most recent first). */
const MAX_VARIANTS = 16;
/** RFC 5861 §4: the statuses after which stale-if-error may serve a stale response. */
const ORIGIN_ERRORS = new Set([500, 502, 503, 504]);
/**
 * `tier.get(key)`, rejected after `s.tierTimeoutMs` when it has not settled (the caller skips the
 * tier, as a failing one). A synchronous answer (the memory tier) is returned as it is, no timer.
 */
export function tierGet(s, tier, key) {
    const r = tier.get(key);
    if (typeof r?.then !== 'function')
        return r;
    return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`tier ${tier.name}: get timed out after ${s.tierTimeoutMs} ms`)), s.tierTimeoutMs);
        r.then((v) => {
            clearTimeout(timer);
            resolve(v);
        }, (err) => {
            clearTimeout(timer);
            reject(err);
        });
    });
}
/** A GET's Range to answer from a stored response (RFC 9110 §14.2: Range is ignored on other methods). */
export function rangeOf(up) {
    const range = up.reqHeaders.range;
    if (range === undefined || up.request.method !== 'GET')
        return undefined;
    return { range, ifRange: up.reqHeaders['if-range'] };
}
/** The cache key: the absolute URL without its fragment (RFC 9111 §2, RFC 3986 §3.5). */
export function cacheKey(url) {
    const hash = url.indexOf('#');
    return hash === -1 ? url : url.slice(0, hash);
}
/** The request as it goes upstream, with `extra` and `more` fields set. */
export function upstreamRequest(up, more) {
    const headers = new Headers(up.request.headers);
    for (const [k, v] of Object.entries(up.extra))
        headers.set(k, v);
    for (const [k, v] of Object.entries(more))
        headers.set(k, v);
    // The browser's own HTTP cache must not answer behind ours (undici accepts and ignores it).
    return new Request(up.request, { headers, cache: 'no-store' });
}
/**
 * A miss (or a reload): goes to the network and stores what may be stored. Plain misses of identical
 * requests share one network request: the others wait and are served what it stored.
 */
export async function fromNetwork(s, up, reason, variants) {
    s.counts.misses++;
    const coalescible = reason !== 'request' && Object.keys(up.extra).length === 0;
    if (!coalescible)
        return (await networkAndStore(s, up, `fwd=${reason}`, variants)).response;
    const ck = coalesceKey(up);
    const leader = s.inflight.get(ck);
    if (leader !== undefined) {
        const lead = await leader;
        if (lead !== null) {
            const status = `${s.name}; fwd=${reason}; collapsed`;
            // Its body still arriving: read along with it; already stored: served from storage.
            const along = lead.follow(status);
            let stored = along === null ? await lead.stored : null;
            // A partial entry is only served through cache-partial.ts.
            if (stored !== null && isPartial(stored))
                stored = null;
            if (along !== null || stored !== null) {
                s.counts.coalesced++;
                return along ?? serveStored(up.request.url, stored, s.now(), status);
            }
        }
        return (await networkAndStore(s, up, `fwd=${reason}`, variants)).response;
    }
    let settle = () => undefined;
    const done = () => s.inflight.delete(ck);
    s.inflight.set(ck, new Promise((resolve) => (settle = resolve)));
    try {
        const out = await networkAndStore(s, up, `fwd=${reason}`, variants);
        // Others join it until its body is stored or dropped (then each goes to the network).
        settle(out);
        void out.stored.then(done);
        return out.response;
    }
    catch (err) {
        settle(null);
        done();
        throw err;
    }
}
/** Identical requests: the same URL and the same request fields. */
export function coalesceKey(up) {
    return `${up.key}\n${JSON.stringify(Object.entries(up.reqHeaders).sort())}`;
}
/**
 * revalidate, shared by concurrent identical requests: while one is in flight, the others wait for it
 * and then decide again on what it stored (`again`); only the first sends a conditional request.
 */
export async function revalidateCoalesced(s, up, variants, match, again) {
    const ck = coalesceKey(up);
    const leader = s.revalidating.get(ck);
    if (leader !== undefined) {
        await leader.catch(() => undefined);
        s.counts.coalesced++;
        return again();
    }
    const own = revalidate(s, up, variants, match, 'stale');
    s.revalidating.set(ck, own);
    try {
        return await own;
    }
    finally {
        s.revalidating.delete(ck);
    }
}
/** Sends the request (with `more` fields) and stores the response if RFC 9111 §3 allows. */
async function networkAndStore(s, up, status, variants, more = {}) {
    const requestTimeMs = s.now();
    const res = await s.fetch(upstreamRequest(up, more));
    return store(s, up, res, requestTimeMs, status, variants);
}
/** Never stored: an event stream is endless by design (HTML §9.2, server-sent events). */
const EVENT_STREAM = /^\s*text\/event-stream\s*(;|$)/i;
/**
 * Stores `res` if §3 allows, through a copy of its body taken as the caller reads it (storeThrough):
 * resolves on the response head, as fetch does. `stored` settles once the body has ended (the entry)
 * or the copy was dropped (null).
 */
export async function store(s, up, res, requestTimeMs, status, variants) {
    const responseHeaders = headerMap(res.headers);
    // §3.3: a 206 is stored as the piece it holds (cache-pieces.ts); storable as its 200 would be.
    const partial = res.status === 206;
    const ok = isStorable({
        method: 'GET',
        requestHeaders: up.reqHeaders,
        status: partial ? 200 : res.status,
        responseHeaders,
        shared: false,
    });
    // Departure: a response reached through redirects is not stored (it answers another URL).
    const storable = ok.ok &&
        res.status >= 200 &&
        res.status <= 599 &&
        !res.redirected &&
        varyKey(responseHeaders.vary, up.reqHeaders) !== null &&
        res.type !== 'opaque' &&
        !EVENT_STREAM.test(responseHeaders['content-type'] ?? '');
    const forward = (body, detail) => forwardResponse(up.request.url, res, body, `${s.name}; ${status}${detail}`);
    if (!storable)
        return { response: forward(res.body, ''), stored: NOT_STORED, follow: noFollow };
    const length = Number(responseHeaders['content-length'] ?? Number.NaN);
    if (length > s.maxEntryBytes)
        return { response: forward(res.body, '; detail=too-large'), stored: NOT_STORED, follow: noFollow };
    let settle = () => undefined;
    const stored = new Promise((resolve) => (settle = resolve));
    // idle() waits for bodies still being stored.
    s.background.add(stored);
    void stored.then(() => s.background.delete(stored));
    const keep = async (bytes) => {
        if (bytes === null)
            return settle(null);
        if (partial)
            return settle(await keepPiece(s, up, variants, responseHeaders, bytes, requestTimeMs));
        const entry = {
            status: res.status,
            statusText: res.statusText,
            headers: storedHeaderFields(responseHeaders),
            requestHeaders: up.reqHeaders,
            requestTimeMs,
            responseTimeMs: s.now(),
            body: bytes,
        };
        // §4.1 / §3: the new response replaces the stored ones this request would have selected.
        settle((await putVariant(s, up, variants, entry)) ? entry : null);
    };
    if (res.body === null) {
        // Nothing to stream: stored before the caller gets it.
        await keep(new Uint8Array(0));
        return { response: forward(null, '; stored'), stored, follow: noFollow };
    }
    const body = storeThrough(res.body, s.maxEntryBytes, keep);
    return {
        response: forward(body.stream, '; stored'),
        stored,
        follow: (cacheStatus) => {
            const branch = body.branch();
            return branch === null ? null : forwardResponse(up.request.url, res, branch, cacheStatus);
        },
    };
}
/**
 * Stores a 206's piece (pieceEntry), combined with the variant's stored pieces (§3.4), in place of the
 * variants this request selects. The entry, or null when it was not stored.
 */
async function keepPiece(s, up, variants, responseHeaders, bytes, requestTimeMs) {
    const selects = (v) => matchesVary(v.headers.vary, v.requestHeaders, up.reqHeaders);
    const entry = pieceEntry({
        prior: (variants ?? []).find(selects),
        headers: storedHeaderFields(responseHeaders),
        body: bytes,
        requestHeaders: up.reqHeaders,
        requestTimeMs,
        responseTimeMs: s.now(),
        limits: { maxPieces: DEFAULT_MAX_PIECES_PER_ENTRY, maxBytes: s.maxEntryBytes },
    });
    if (entry === null)
        return null;
    return (await putVariant(s, up, variants, entry)) ? entry : null;
}
/** Puts `entry` in place of the stored variants this request selects (§4.1); false when it failed. */
export async function putVariant(s, up, variants, entry) {
    const others = (variants ?? []).filter((v) => !matchesVary(v.headers.vary, v.requestHeaders, up.reqHeaders));
    try {
        await putAll(s, up.key, [entry, ...others].slice(0, MAX_VARIANTS));
        s.counts.stored++;
        return true;
    }
    catch {
        return false;
    }
}
/** Writes through to every tier; a failing lower tier does not fail the request. */
async function putAll(s, key, variants) {
    for (let i = 0; i < s.tiers.length; i++) {
        try {
            await s.tiers[i].put(key, variants);
        }
        catch (err) {
            if (i === 0)
                throw err;
        }
    }
}
async function deleteAll(s, key) {
    for (const t of s.tiers) {
        try {
            await t.delete(key);
        }
        catch {
            // a failing tier keeps its copy; nothing else to do from here
        }
    }
}
/**
 * Validates `match` (§4.3.1): a conditional request with its validators; a 304 freshens the stored
 * responses it selects (§4.3.4) and serves `match`; an origin error may serve it stale (RFC 5861 §4);
 * anything else is a new response, stored if allowed. `fwd` is the RFC 9211 reason: 'stale' or
 * 'request' (a reload of a response that may have been fresh).
 */
export async function revalidate(s, up, variants, match, fwd) {
    s.counts.revalidations++;
    const requestTimeMs = s.now();
    let res;
    try {
        res = await s.fetch(upstreamRequest(up, conditionalHeaders([match])));
    }
    catch {
        const stale = staleOnError(s, up, match, true, `fwd=${fwd}`);
        if (stale !== null)
            return stale;
        // §5.2.2.2: a disconnected cache that may not reuse the stale response generates an error,
        // 504. (With nothing stored, the network error is the caller's, as with fetch.)
        return makeResponse(up.request.url, 504, 'Gateway Timeout', { 'cache-status': `${s.name}; fwd=${fwd}; detail=unreachable` }, null);
    }
    if (ORIGIN_ERRORS.has(res.status)) {
        const stale = staleOnError(s, up, match, false, `fwd=${fwd}; fwd-status=${res.status}`);
        if (stale !== null) {
            await res.body?.cancel();
            return stale;
        }
    }
    if (res.status !== 304)
        return (await store(s, up, res, requestTimeMs, `fwd=${fwd}; fwd-status=${res.status}`, variants))
            .response;
    const notModified = headerMap(res.headers);
    // §4.3.4 for the one response we asked about (selectValidated returns it, the same object).
    const selected = selectValidated([match], notModified);
    if (selected.length === 0) {
        // §4.3.4: the 304 updates nothing stored: make the request again unconditionally.
        return (await networkAndStore(s, up, `fwd=${fwd}`, variants)).response;
    }
    const responseTimeMs = s.now();
    const freshened = variants.map((v) => selected.includes(v) ? { ...v, ...freshenStored(v, notModified, requestTimeMs, responseTimeMs) } : v);
    await putAll(s, up.key, freshened);
    const served = freshened[variants.indexOf(selected.includes(match) ? match : selected[0])];
    const status = `${s.name}; fwd=${fwd}; fwd-status=304`;
    return serveStored(up.request.url, served, s.now(), status, [], false, rangeOf(up));
}
/** The engine's decision (RFC 9111 §4, private-cache rules) on serving `match` for this request; with
 *  `unreachable` set, after an origin error (RFC 5861 §4, §4.2.4 disconnected). */
export function serveDecision(s, up, match, nowMs, unreachable) {
    return decideServe({
        stored: match,
        requestHeaders: up.reqHeaders,
        nowMs,
        shared: false,
        freshness: s.freshness,
        ...(unreachable === undefined
            ? {}
            : { originError: true, originUnreachable: unreachable, disconnectedStaleSec: s.staleIfUnreachableSec }),
    });
}
/** RFC 5861 §4 / §4.2.4: the stored response when an origin error allows serving it stale, else null. */
function staleOnError(s, up, match, unreachable, status) {
    const nowMs = s.now();
    const d = serveDecision(s, up, match, nowMs, unreachable);
    if (d.kind !== 'stale-ok')
        return null;
    s.counts.hits++;
    return serveStored(up.request.url, match, nowMs, `${s.name}; ${status}; detail=${d.reason}`, d.omitHeaders);
}
/** §4.4: a non-error response to an unsafe method invalidates the target and same-origin Location / Content-Location. */
export async function invalidateAfterUnsafe(s, request, res) {
    const uris = invalidationUris({
        method: request.method,
        status: res.status,
        targetUri: request.url,
        responseHeaders: headerMap(res.headers),
    });
    for (const uri of uris)
        await deleteAll(s, cacheKey(uri));
}
