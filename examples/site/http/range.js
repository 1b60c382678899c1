// Range requests (RFC 9110 §14): the Range header, Content-Range, multipart/byteranges framing.
import { COMMA, equalsLowerAt, isOws } from './chars.js';
const IGNORE = Object.freeze({ kind: 'ignore' });
const UNSATISFIABLE = Object.freeze({ kind: 'unsatisfiable' });
const DEFAULT_MAX_RANGES = 16;
/** Positions at or above 2^53 are not exact in a double; they are compared as digit strings. */
const SAFE_LIMIT = 2 ** 53;
/**
 * Parses a Range header against a representation of `sizeBytes` bytes (RFC 9110 §14.1.1, §14.2).
 * - `ignore`: serve 200. A unit other than `bytes` (§14.2: MUST ignore an unknown unit), a syntax
 *   error anywhere (§14.2: MAY ignore an invalid ranges-specifier), a range with first > last, or
 *   more than `maxRanges` specs.
 * - `unsatisfiable`: serve 416 with `Content-Range: bytes *\/size` (formatUnsatisfiedRange).
 * - `ranges`: sorted ascending, overlapping and adjacent ranges coalesced (§14.2, §15.3.7.2); clamped
 *   to the representation, so every range has 0 <= start <= end < sizeBytes.
 * OWS is accepted around each range-spec, not inside one. Never throws.
 * Departure: RFC 9110 §14.1.1 calls a non-zero suffix-range satisfiable on an empty representation,
 * but no 206 can describe zero bytes, so for size 0 every range is unsatisfiable (416 `bytes *\/0`).
 */
export function parseRange(value, sizeBytes, opts) {
    const fast = parseSingleFast(value, sizeBytes);
    if (fast !== undefined)
        return fast;
    return parseRangeGeneral(value, sizeBytes, opts?.maxRanges ?? DEFAULT_MAX_RANGES);
}
/**
 * Fast path for `bytes=a-b` and `bytes=a-` (lowercase unit, no spaces, up to 15 digits each).
 * Returns undefined when the value is not of that shape and the general parser must decide.
 */
function parseSingleFast(v, size) {
    const len = v.length;
    if (len < 8 || !v.startsWith('bytes='))
        return undefined;
    let i = 6;
    let a = 0;
    while (i < len) {
        const d = v.charCodeAt(i) - 0x30;
        if (d < 0 || d > 9)
            break;
        a = a * 10 + d;
        i++;
    }
    if (i === 6 || i > 21 || i >= len || v.charCodeAt(i) !== 0x2d)
        return undefined;
    const lastStart = ++i;
    let b = 0;
    while (i < len) {
        const d = v.charCodeAt(i) - 0x30;
        if (d < 0 || d > 9)
            return undefined;
        b = b * 10 + d;
        i++;
    }
    if (i - lastStart > 15)
        return undefined;
    const open = i === lastStart;
    if (!open && a > b)
        return IGNORE; // §14.1.1: last-pos < first-pos makes the header invalid
    if (a >= size)
        return UNSATISFIABLE; // §14.1.1: first-pos must be < the current length
    return { kind: 'ranges', ranges: [{ start: a, end: open || b >= size ? size - 1 : b }] }; // §14.1.1 clamp
}
/** Scratch for readDigits: value, and the digit span for exact comparison of huge numbers. */
const num = { value: 0, start: 0, end: 0 };
/** Reads 1*DIGIT at i into `num`; returns the index after the digits (== i when there are none). */
function readDigits(v, i, end) {
    let n = 0;
    const start = i;
    while (i < end) {
        const d = v.charCodeAt(i) - 0x30;
        if (d < 0 || d > 9)
            break;
        n = n * 10 + d;
        i++;
    }
    num.value = n;
    num.start = start;
    num.end = i;
    return i;
}
/** Compares two digit strings as integers; -1, 0 or 1. Used only beyond 2^53. */
function compareDigitSpans(v, aStart, aEnd, bStart, bEnd) {
    while (aStart < aEnd - 1 && v.charCodeAt(aStart) === 0x30)
        aStart++;
    while (bStart < bEnd - 1 && v.charCodeAt(bStart) === 0x30)
        bStart++;
    const al = aEnd - aStart;
    const bl = bEnd - bStart;
    if (al !== bl)
        return al < bl ? -1 : 1;
    for (let k = 0; k < al; k++) {
        const d = v.charCodeAt(aStart + k) - v.charCodeAt(bStart + k);
        if (d !== 0)
            return d < 0 ? -1 : 1;
    }
    return 0;
}
function parseRangeGeneral(v, size, maxRanges) {
    const len = v.length;
    let i = 0;
    while (i < len && isOws(v.charCodeAt(i)))
        i++;
    let end = len;
    while (end > i && isOws(v.charCodeAt(end - 1)))
        end--;
    const eq = v.indexOf('=', i);
    // §14.1: ranges-specifier = range-unit "=" range-set; §14.1: range units are case-insensitive.
    if (eq < 0 || eq >= end || !equalsLowerAt(v, i, eq, 'bytes'))
        return IGNORE;
    i = eq + 1;
    let count = 0;
    let ranges;
    while (i < end) {
        const c = v.charCodeAt(i);
        if (c === COMMA || isOws(c)) {
            i++; // §5.6.1.2: empty list elements and OWS around commas are allowed
            continue;
        }
        if (++count > maxRanges)
            return IGNORE; // §14.2: a server MAY ignore a Range with too many ranges
        let start;
        let last;
        if (c === 0x2d) {
            // suffix-range = "-" suffix-length (§14.1.1): the LAST n bytes
            i = readDigits(v, i + 1, end);
            if (num.start === num.end)
                return IGNORE;
            const n = num.value;
            if (n === 0 || size === 0) {
                start = -1; // §14.1.1: a zero suffix-length is unsatisfiable
                last = -1;
            }
            else {
                start = n >= size ? 0 : size - n; // §14.1.1: shorter than n -> the whole representation
                last = size - 1;
            }
        }
        else {
            // int-range = first-pos "-" [ last-pos ] (§14.1.1)
            i = readDigits(v, i, end);
            if (num.start === num.end || i >= end || v.charCodeAt(i) !== 0x2d)
                return IGNORE;
            const first = num.value;
            const firstStart = num.start;
            const firstEnd = num.end;
            i = readDigits(v, i + 1, end);
            if (num.start !== num.end) {
                const lastPos = num.value;
                const invalid = first >= SAFE_LIMIT && lastPos >= SAFE_LIMIT
                    ? compareDigitSpans(v, firstStart, firstEnd, num.start, num.end) > 0
                    : first > lastPos;
                if (invalid)
                    return IGNORE; // §14.1.1: last-pos < first-pos: invalid
                last = lastPos >= size ? size - 1 : lastPos; // §14.1.1: clamp to the current length
            }
            else {
                last = size - 1; // open range: to the end
            }
            start = first;
            if (first >= size)
                start = -1; // §14.1.1: first-pos >= length is unsatisfiable
        }
        // The spec must end here: OWS, then a comma or the end.
        while (i < end && isOws(v.charCodeAt(i)))
            i++;
        if (i < end && v.charCodeAt(i) !== COMMA)
            return IGNORE;
        if (start >= 0)
            (ranges ??= []).push({ start, end: last });
    }
    if (count === 0)
        return IGNORE; // §14.1.1: range-set = 1#range-spec
    if (ranges === undefined)
        return UNSATISFIABLE; // §14.1.1, §15.5.17: none satisfiable -> 416
    return { kind: 'ranges', ranges: ranges.length === 1 ? ranges : coalesce(ranges) };
}
/** Sorts and merges overlapping or adjacent ranges (RFC 9110 §14.2, §15.3.7.2: a server MAY coalesce). */
function coalesce(ranges) {
    ranges.sort((x, y) => x.start - y.start);
    const out = [];
    let cur = ranges[0];
    for (let k = 1; k < ranges.length; k++) {
        const r = ranges[k];
        if (r.start <= cur.end + 1) {
            if (r.end > cur.end)
                cur = { start: cur.start, end: r.end };
        }
        else {
            out.push(cur);
            cur = r;
        }
    }
    out.push(cur);
    return out;
}
/** `Content-Range: bytes 0-99/1000` (RFC 9110 §14.4). */
export function formatContentRange(r, sizeBytes) {
    return 'bytes ' + r.start + '-' + r.end + '/' + sizeBytes;
}
const CONTENT_RANGE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (?:(\d{1,15})-(\d{1,15})\/(\d{1,15}|\*)|\*\/(\d{1,15}))$/;
/**
 * Parses a byte `Content-Range` (RFC 9110 §14.4): `bytes first-last/complete`, `bytes first-last/*` or
 * `bytes *\/complete`. Null for another unit (compared case-insensitively, §14.1), bad syntax, a
 * first-pos after the last-pos, or a last-pos not below the complete length ("invalid", §14.4).
 * Positions are limited to 15 digits (exact in a double).
 */
export function parseContentRange(value) {
    const m = CONTENT_RANGE.exec(value.trim());
    if (m === null || m[1].toLowerCase() !== 'bytes')
        return null;
    if (m[5] !== undefined)
        return { kind: 'unsatisfied', completeLength: Number(m[5]) };
    const start = Number(m[2]);
    const end = Number(m[3]);
    if (start > end)
        return null;
    if (m[4] === '*')
        return { kind: 'range', start, end };
    const completeLength = Number(m[4]);
    if (end >= completeLength)
        return null;
    return { kind: 'range', start, end, completeLength };
}
/** `Content-Range: bytes *\/1000` for a 416 response (RFC 9110 §14.4, §15.5.17). */
export function formatUnsatisfiedRange(sizeBytes) {
    return 'bytes */' + sizeBytes;
}
/** RFC 2046 §5.1.1 bchars: DIGIT / ALPHA / "'" / "(" / ")" / "+" / "_" / "," / "-" / "." / "/" / ":" / "=" / "?" / SP. */
function isBoundaryChar(c) {
    return ((c >= 0x30 && c <= 0x39) ||
        (c >= 0x41 && c <= 0x5a) ||
        (c >= 0x61 && c <= 0x7a) ||
        (c >= 0x27 && c <= 0x29) || // ' ( )
        (c >= 0x2b && c <= 0x2f) || // + , - . /
        c === 0x3a ||
        c === 0x3d ||
        c === 0x3f ||
        c === 0x5f ||
        c === 0x20);
}
/**
 * Framing for a multipart/byteranges body (RFC 9110 §14.6, RFC 2046 §5.1.1). The response's
 * Content-Type is `multipart/byteranges; boundary=BOUNDARY`; each part carries the representation's
 * Content-Type (omitted when `contentType` is undefined or empty) and its Content-Range.
 * The first part starts with `--BOUNDARY` (an empty preamble); later parts start with CRLF, which
 * RFC 2046 attaches to the delimiter. Throws TypeError for a boundary that RFC 2046 does not allow
 * (1-70 bchars, not ending in a space) or a content type with non-ASCII text, since the byte length
 * is computed from the string length.
 */
export function multipartByterangesParts(ranges, sizeBytes, contentType, boundary) {
    const bl = boundary.length;
    if (bl === 0 || bl > 70 || boundary.charCodeAt(bl - 1) === 0x20) {
        throw new TypeError('multipart boundary must be 1-70 characters and not end with a space (RFC 2046 §5.1.1)');
    }
    for (let k = 0; k < bl; k++) {
        if (!isBoundaryChar(boundary.charCodeAt(k)))
            throw new TypeError(`invalid multipart boundary character at ${k}`);
    }
    const ct = contentType ?? '';
    for (let k = 0; k < ct.length; k++) {
        const c = ct.charCodeAt(k);
        if (c > 0x7e || (c < 0x20 && c !== 0x09))
            throw new TypeError('multipart part Content-Type must be printable ASCII');
    }
    const typeLine = ct.length > 0 ? 'Content-Type: ' + ct + '\r\n' : '';
    const headers = [];
    let contentLength = 0;
    for (let k = 0; k < ranges.length; k++) {
        const r = ranges[k];
        const h = (k === 0 ? '--' : '\r\n--') +
            boundary +
            '\r\n' +
            typeLine +
            'Content-Range: ' +
            formatContentRange(r, sizeBytes) +
            '\r\n\r\n';
        headers.push(h);
        contentLength += h.length + (r.end - r.start + 1);
    }
    const trailer = '\r\n--' + boundary + '--\r\n';
    contentLength += trailer.length;
    return { headers, trailer, contentLength };
}
