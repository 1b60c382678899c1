// A request whose stored variant holds pieces of the representation (RFC 9111 §3.3, §3.4): held bytes
// are answered from the pieces, a request for more asks the network for the missing span only (with
// If-Range), and an answer with the same strong validator is combined (../cache/pieces.ts).
import { combinePieces, completionFits, completionProblem, DEFAULT_MAX_PIECES_PER_ENTRY, heldProblem, ifRangeFor, missingOf, pieceOf, rangeHeaderFor, sliceHeld, spanOf, strongValidatorOf, } from '../cache/pieces.js';
import { storedHeaderFields } from '../cache/validate.js';
import { fromNetwork, putVariant, serveDecision, store, upstreamRequest, } from './cache-network.js';
import { entryFor } from './cache-pieces.js';
import { forwardResponse, headerMap, makeResponse, serveStored } from './cache-response.js';
const ONLY_IF_CACHED = /(^|[\s,])only-if-cached($|[\s,;=])/i;
/**
 * Answers `up` from the partial entry `match` when it holds the bytes asked for (a 206, or the 200 of
 * a complete set), else completes it from the network (completeMissing) or goes to the network as a
 * miss. `mode` is the request's Fetch cache mode (default, force-cache, only-if-cached, no-cache).
 */
export async function partialFetch(s, up, variants, match, mode) {
    const held = match.partial;
    // A tier's copy whose pieces disagree with its body (damaged, or written by other code) is a miss.
    if (heldProblem(held, match.body.byteLength) !== undefined)
        return fromNetwork(s, up, 'uri-miss', variants);
    const range = up.reqHeaders.range;
    const onlyCached = mode === 'only-if-cached' || ONLY_IF_CACHED.test(up.reqHeaders['cache-control'] ?? '');
    const span = spanOf(range, held.lengthBytes);
    if (span.kind === 'other')
        return onlyCached ? gatewayTimeout(s, up) : fromNetwork(s, up, 'partial', variants);
    let usable = mode === 'force-cache' || mode === 'only-if-cached';
    let omit = [];
    if (mode === 'default') {
        const d = serveDecision(s, up, match, s.now());
        usable = d.kind === 'fresh' || d.kind === 'stale-ok';
        if (d.kind === 'fresh' || d.kind === 'stale-ok')
            omit = d.omitHeaders;
    }
    const c = missingOf(held, span.start, span.end);
    if (usable && c.kind === 'held') {
        s.counts.hits++;
        const part = sliceHeld(held, match.body, span.start, span.end);
        return serveStored(up.request.url, sliceAnswer(match, range === undefined ? null : span, part), s.now(), `${s.name}; hit`, omit);
    }
    if (onlyCached)
        return gatewayTimeout(s, up);
    if (!usable)
        return fromNetwork(s, up, 'stale', variants);
    // Nothing of the range held, or too much missing to keep beside the pieces: a plain miss.
    const nothingHeld = range !== undefined && c.kind === 'missing' && c.start === span.start && c.end === span.end;
    if (c.kind === 'held' || nothingHeld || !completionFits(held, c.start, c.end, s.maxEntryBytes))
        return fromNetwork(s, up, 'partial', variants);
    return completeMissing(s, up, variants, match, { ...span, full: range === undefined }, c);
}
/** The stored response answering `span` of the pieces (a 206 with Content-Range), or the whole as a 200. */
function sliceAnswer(match, span, part) {
    if (span === null)
        return { ...match, status: 200, statusText: 'OK', body: part };
    const headers = {
        ...match.headers,
        'content-range': `bytes ${span.start}-${span.end}/${match.partial.lengthBytes}`,
    };
    return { ...match, headers, body: part };
}
function gatewayTimeout(s, up) {
    s.counts.misses++;
    return makeResponse(up.request.url, 504, 'Gateway Timeout', { 'cache-status': `${s.name}; fwd=partial; detail=only-if-cached` }, null);
}
/** Reads a body to its end, or null past `maxBytes` (then the rest is cancelled). */
async function readBytes(res, maxBytes) {
    if (res.body === null)
        return new Uint8Array(0);
    const reader = res.body.getReader();
    const chunks = [];
    let n = 0;
    for (;;) {
        const { done, value } = await reader.read();
        if (done)
            break;
        n += value.byteLength;
        if (n > maxBytes) {
            await reader.cancel();
            return null;
        }
        chunks.push(value);
    }
    const out = new Uint8Array(n);
    let at = 0;
    for (const c of chunks) {
        out.set(c, at);
        at += c.byteLength;
    }
    return out;
}
/**
 * §3.3: asks the network for [missing.start, missing.end] with If-Range (the stored strong validator,
 * RFC 9110 §13.1.5): a 200 (a changed representation, or Range ignored) is stored and returned; a 206
 * is checked (completionProblem), combined with the same strong validator (combinePieces) and the
 * client's span answered from the pieces. Anything else is never mixed: the request goes to the
 * network once more, as a miss.
 */
async function completeMissing(s, up, variants, match, want, missing) {
    const held = match.partial;
    s.counts.misses++;
    const more = {
        range: rangeHeaderFor(missing.start, missing.end, held.lengthBytes),
    };
    const ifRange = ifRangeFor(match.headers);
    if (ifRange !== undefined)
        more['if-range'] = ifRange;
    const requestTimeMs = s.now();
    const res = await s.fetch(upstreamRequest(up, more));
    const status = `fwd=partial; fwd-status=${res.status}`;
    if (res.status === 200)
        return (await store(s, up, res, requestTimeMs, status, variants)).response;
    if (res.status >= 500)
        return forwardResponse(up.request.url, res, res.body, `${s.name}; ${status}`);
    const body = res.status === 206 ? await readBytes(res, missing.end - missing.start + 1) : null;
    if (body === null)
        await res.body?.cancel().catch(() => undefined);
    const headers = headerMap(res.headers);
    const piece = body === null ? null : pieceOf(headers, body.byteLength);
    const combined = piece === null ||
        completionProblem(piece, missing.start, missing.end, held.lengthBytes) !== undefined ||
        !piece.ok
        ? null
        : combinePieces({ held, body: match.body, validator: strongValidatorOf(match.headers) }, { ...piece, body: body, validator: strongValidatorOf(headers) }, { maxPieces: DEFAULT_MAX_PIECES_PER_ENTRY, maxBytes: s.maxEntryBytes });
    // Only the same strong validator combines (§3.4); then the span is held.
    if (combined?.kind !== 'combined' || missingOf(combined.held, want.start, want.end).kind !== 'held')
        return fromNetwork(s, up, 'partial', variants);
    const entry = entryFor(combined.held, combined.body, combined.complete, storedHeaderFields(headers), up.reqHeaders, requestTimeMs, s.now());
    await putVariant(s, up, variants, entry);
    const part = sliceHeld(combined.held, combined.body, want.start, want.end);
    const answer = {
        ...entry,
        status: 206,
        statusText: 'Partial Content',
        partial: combined.held,
    };
    return serveStored(up.request.url, sliceAnswer(answer, want.full ? null : want, part), s.now(), `${s.name}; ${status}`);
}
