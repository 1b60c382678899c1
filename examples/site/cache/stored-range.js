// Range requests answered from a stored complete response (RFC 9111 §3.4 with RFC 9110 §14): which
// ranges to send, whether If-Range lets them apply, and the multipart/byteranges body when the whole
// body is in memory. Pure: the proxy cache and the private client cache both serve with it.
import { evaluateIfRange } from '../http/conditional.js';
import { formatEntityTag, parseEntityTag } from '../http/etag.js';
import { formatUnsatisfiedRange, multipartByterangesParts, parseRange, } from '../http/range.js';
import { parseCacheDate } from './dates.js';
import { getHeader } from './types.js';
const FULL = Object.freeze({ kind: 'full' });
/**
 * How to answer a GET with Range from a stored response the cache may use (fresh, allowed stale, or
 * just validated). Only a stored 200 without Content-Range is ranged: its stored bytes are the selected
 * representation's (RFC 9110 §14.1.2: ranges apply to the representation data, after any
 * Content-Encoding). If-Range (§13.1.5) needs a strong match: an entity-tag compared strongly (a weak
 * one never matches), or a date equal to Last-Modified that is strong because the stored Date is at
 * least one second later (§8.8.2.2, the rule for "an intermediate cache ... comparing to its cache
 * entry"); otherwise the whole response is sent.
 */
export function storedRangeDecision(input) {
    const { range, headers } = input;
    if (range === undefined || input.status !== 200)
        return FULL;
    if (getHeader(headers, 'content-range') !== undefined)
        return FULL;
    if (input.ifRange !== undefined) {
        const tag = parseEntityTag(getHeader(headers, 'etag') ?? '');
        // §8.8.2.2: without a Date the stored Last-Modified is weak, so no date form matches.
        const dateMs = parseCacheDate(getHeader(headers, 'date')) ?? undefined;
        const lastModifiedMs = dateMs === undefined ? undefined : (parseCacheDate(getHeader(headers, 'last-modified')) ?? undefined);
        const applies = evaluateIfRange({
            ifRange: input.ifRange,
            etag: tag === null ? undefined : formatEntityTag(tag),
            lastModifiedMs,
            nowMs: dateMs,
        });
        if (!applies)
            return FULL;
    }
    const d = parseRange(range, input.sizeBytes);
    if (d.kind === 'ignore')
        return FULL;
    if (d.kind === 'unsatisfiable')
        return { kind: 'unsatisfiable', contentRange: formatUnsatisfiedRange(input.sizeBytes) };
    return d;
}
/** Printable ASCII (and HTAB): what a part's Content-Type line can carry (multipartByterangesParts). */
const PRINTABLE = /^[\t\x20-\x7e]*$/;
/**
 * The framing of a multipart/byteranges answer (RFC 9110 §14.6) for the stored content `bytes`: a
 * boundary found in no part (boundaryFor), each part with the stored Content-Type. A Content-Type
 * that is not printable ASCII (obs-text, RFC 9110 §5.5) is left out of the parts rather than failing.
 */
export function multipartFor(bytes, ranges, contentType) {
    const size = bytes.byteLength;
    const boundary = boundaryFor(bytes, ranges, `gatehouse-cache-${ranges.length}-${size}`);
    const type = contentType !== undefined && PRINTABLE.test(contentType) ? contentType : undefined;
    return { boundary, parts: multipartByterangesParts(ranges, size, type, boundary) };
}
/**
 * A multipart boundary (RFC 2046 §5.1.1) that occurs nowhere in the bytes of `ranges`: the delimiter
 * "MUST NOT appear inside any of the encapsulated parts". `base` then `base-1`, `base-2`...
 */
export function boundaryFor(bytes, ranges, base) {
    for (let n = 0;; n++) {
        const boundary = n === 0 ? base : `${base}-${n}`;
        if (!ranges.some((r) => containsAscii(bytes, r.start, r.end + 1, boundary)))
            return boundary;
    }
}
/** Whether `text` (ASCII) occurs in bytes[from, to). */
function containsAscii(bytes, from, to, text) {
    const first = text.charCodeAt(0);
    const last = to - text.length;
    outer: for (let i = from; i <= last; i++) {
        if (bytes[i] !== first)
            continue;
        for (let k = 1; k < text.length; k++)
            if (bytes[i + k] !== text.charCodeAt(k))
                continue outer;
        return true;
    }
    return false;
}
/** The multipart/byteranges body (RFC 9110 §14.6) from the whole content and its framing. */
export function multipartBody(bytes, ranges, parts) {
    const out = new Uint8Array(parts.contentLength);
    let at = 0;
    const ascii = (s) => {
        // The framing is ASCII (multipartByterangesParts checks the part Content-Type).
        for (let k = 0; k < s.length; k++)
            out[at++] = s.charCodeAt(k);
    };
    for (let i = 0; i < ranges.length; i++) {
        const r = ranges[i];
        ascii(parts.headers[i]);
        out.set(bytes.subarray(r.start, r.end + 1), at);
        at += r.end - r.start + 1;
    }
    ascii(parts.trailer);
    return out;
}
