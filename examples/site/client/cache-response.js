// Between Fetch objects and the cache's plain values: header maps, bodies read up to a bound, and the
// Responses served from storage with Age (RFC 9111 §5.1) and Cache-Status (RFC 9211).
import { ageFieldValue, currentAgeSec } from '../cache/freshness.js';
import { multipartBody, multipartFor, storedRangeDecision } from '../cache/stored-range.js';
import { formatContentRange } from '../http/range.js';
/**
 * Lowercase header map; several field lines are already joined by Headers (RFC 9110 §5.3). Built with
 * Object.fromEntries, which defines own properties: a field named `__proto__` (a valid token, RFC 9110
 * §5.1) is kept as a field, where `out[name] = value` silently dropped it.
 */
export function headerMap(headers) {
    const fields = [];
    headers.forEach((value, name) => {
        fields.push([name, value]);
    });
    return Object.fromEntries(fields);
}
/** Statuses whose Response must have a null body (Fetch: null body status). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
/** A fresh Response for `url` (bodies are single-use), with the given header fields. */
export function makeResponse(url, status, statusText, headers, body) {
    const res = new Response(NULL_BODY.has(status) ? null : body, { status, statusText, headers });
    // A constructed Response has url ''; fetch callers read it (Fetch: response URL).
    Object.defineProperty(res, 'url', { value: url, enumerable: true });
    return res;
}
/**
 * A stored response served now: its stored fields, Age (§4.2.3, §5.1) and our Cache-Status member;
 * with `range`, a 206 or 416 from a stored 200 when the Range applies (ranged).
 */
export function serveStored(url, stored, nowMs, cacheStatus, omitHeaders = [], head = false, range) {
    const headers = new Headers();
    for (const [name, value] of Object.entries(stored.headers)) {
        if (name === 'age' || name === 'cache-status' || omitHeaders.includes(name))
            continue;
        headers.set(name, value);
    }
    // §5.1 / §4: "the cache ... MUST generate an Age header field" when serving a stored response.
    headers.set('age', ageFieldValue(currentAgeSec(stored, nowMs)));
    headers.set('cache-status', appendStatus(stored.headers['cache-status'], cacheStatus));
    if (range !== undefined && !head) {
        const res = ranged(url, stored, headers, range);
        if (res !== null)
            return res;
    }
    // The stored bytes are never handed out: Fetch copies a BufferSource body ("a copy of the bytes").
    // A HEAD gets the GET's header fields and no content (RFC 9110 §9.3.2).
    return makeResponse(url, stored.status, stored.statusText, headers, head ? null : stored.body);
}
/**
 * RFC 9110 §14 against the stored response (storedRangeDecision): a 206 with one range or
 * multipart/byteranges (§14.6), a 416 with `Content-Range: bytes *\/len` (§15.5.17), or null for the
 * whole response.
 */
function ranged(url, stored, headers, r) {
    const bytes = stored.body;
    const d = storedRangeDecision({
        range: r.range,
        ifRange: r.ifRange,
        status: stored.status,
        headers: stored.headers,
        sizeBytes: bytes.byteLength,
    });
    if (d.kind === 'full')
        return null;
    if (d.kind === 'unsatisfiable') {
        for (const name of ['content-type', 'content-encoding', 'content-length'])
            headers.delete(name);
        headers.set('content-range', d.contentRange);
        return makeResponse(url, 416, 'Range Not Satisfiable', headers, null);
    }
    const ranges = d.ranges;
    let body;
    if (ranges.length === 1) {
        const one = ranges[0];
        headers.set('content-range', formatContentRange(one, bytes.byteLength));
        body = bytes.subarray(one.start, one.end + 1);
    }
    else {
        const { boundary, parts } = multipartFor(bytes, ranges, headers.get('content-type') ?? undefined);
        headers.set('content-type', `multipart/byteranges; boundary=${boundary}`);
        body = multipartBody(bytes, ranges, parts);
    }
    headers.set('content-length', String(body.byteLength));
    return makeResponse(url, 206, 'Partial Content', headers, body);
}
/** A network response passed on with our Cache-Status member after any upstream ones (RFC 9211 §2). */
export function forwardResponse(url, res, body, cacheStatus) {
    // Fetch can receive a status Response cannot be built with (e.g. 999): handed on as it came.
    if (res.status < 200 || res.status > 599)
        return res;
    const headers = new Headers(res.headers);
    headers.set('cache-status', appendStatus(res.headers.get('cache-status') ?? undefined, cacheStatus));
    return makeResponse(res.url || url, res.status, res.statusText, headers, body);
}
/** RFC 9211 §2: members are listed from the origin towards the user; ours is the last. */
function appendStatus(upstream, ours) {
    return upstream === undefined || upstream.trim() === '' ? ours : `${upstream}, ${ours}`;
}
/**
 * The body as the caller reads it, with a copy kept for the cache (a tee whose store branch holds at
 * most `maxBytes`): the stream reads ahead of the caller up to `maxBytes` queued (its high-water
 * mark), so a body within the bound is stored even if the caller never reads it; past the bound the
 * copy is dropped and reading goes at the readers' pace. `keep(bytes)` runs before any reader sees
 * the end, so a body read to its end is a stored one; an error calls `keep(null)`. `branch()` adds a
 * reader (a collapsed request) that gets the copy so far, then every chunk; the source is cancelled
 * (and the copy dropped) when every reader has cancelled.
 */
export function storeThrough(body, maxBytes, keep) {
    const reader = body.getReader();
    let chunks = [];
    let total = 0;
    let ended = false;
    const readers = new Set();
    /** One read at a time, whichever reader pulls. */
    let pump = Promise.resolve();
    const drop = async () => {
        if (chunks === null)
            return;
        chunks = null;
        await keep(null);
    };
    const finish = (how) => {
        ended = true;
        for (const c of readers) {
            try {
                how(c);
            }
            catch { }
        }
        readers.clear();
    };
    /** Reads one chunk and hands it to every reader (and the copy). */
    const step = async () => {
        if (ended)
            return;
        let r;
        try {
            r = await reader.read();
        }
        catch (err) {
            await drop();
            return finish((c) => c.error(err));
        }
        if (r.done) {
            if (chunks !== null) {
                const bytes = new Uint8Array(total);
                let at = 0;
                for (const part of chunks) {
                    bytes.set(part, at);
                    at += part.byteLength;
                }
                chunks = null;
                await keep(bytes);
            }
            return finish((c) => c.close());
        }
        if (chunks !== null) {
            total += r.value.byteLength;
            // A copy: a reader may change the chunk it is handed.
            if (total > maxBytes)
                await drop();
            else
                chunks.push(r.value.slice());
        }
        let first = true;
        for (const c of readers) {
            c.enqueue(first ? r.value : r.value.slice());
            first = false;
        }
    };
    const source = (init) => {
        let own;
        return {
            start(c) {
                own = c;
                init(c);
            },
            pull: () => {
                pump = pump.then(step);
                return pump;
            },
            async cancel(reason) {
                if (own !== undefined)
                    readers.delete(own);
                if (readers.size > 0 || ended)
                    return;
                // Every reader is done with it: the copy goes too (a partial body is never stored).
                ended = true;
                await drop();
                await reader.cancel(reason);
            },
        };
    };
    const stream = new ReadableStream(source((c) => readers.add(c)), 
    // One byte over the bound: a caller that never reads still learns that the copy is dropped.
    { highWaterMark: maxBytes + 1, size: (chunk) => chunk.byteLength });
    return {
        stream,
        branch() {
            const sofar = chunks;
            if (sofar === null || ended)
                return null;
            return new ReadableStream(source((c) => {
                for (const part of sofar)
                    c.enqueue(part.slice());
                readers.add(c);
            }), { highWaterMark: 0 });
        },
    };
}
/** Reads `body` to its end, or cancels it once more than `maxBytes` went by (a background refresh). */
export async function readToEnd(body, maxBytes) {
    if (body === null)
        return;
    const reader = body.getReader();
    for (let n = 0;;) {
        const { done, value } = await reader.read();
        if (done)
            return;
        n += value.byteLength;
        if (n > maxBytes)
            return reader.cancel();
    }
}
