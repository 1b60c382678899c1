// May a response be stored at all? RFC 9111 §3 (with §3.5 for Authorization and §4.2.2 for the
// heuristically cacheable status codes).
import { fieldNames, hasDirective, parseCacheControl } from '../http/cache-control.js';
import { getHeader } from './types.js';
/**
 * Status codes defined as heuristically cacheable (RFC 9110 §15.1, listed in RFC 9111 §4.2.2).
 */
export const HEURISTICALLY_CACHEABLE_STATUSES = new Set([
    200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501,
]);
/**
 * Status codes this cache understands (§3: "the cache understands the response status code"): the
 * final codes of RFC 9110 §15 plus RFC 6585 (428, 429, 431, 511). 306 is unused (§15.4.7).
 */
const UNDERSTOOD_STATUSES = new Set([
    200, 201, 202, 203, 204, 205, 206, 300, 301, 302, 303, 304, 305, 307, 308, 400, 401, 402, 403, 404, 405,
    406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 421, 422, 426, 428, 429, 431, 500, 501, 502,
    503, 504, 505, 511,
]);
export function isHeuristicallyCacheable(status) {
    return HEURISTICALLY_CACHEABLE_STATUSES.has(status);
}
const NO_OMIT = Object.freeze([]);
/** RFC 9111 §3: whether the response may be stored, and if not, the first rule that forbids it. */
export function isStorable(input) {
    const { status, shared } = input;
    // §3: "the request method is understood by the cache". We cache GET and HEAD only; POST responses
    // are cacheable in principle (RFC 9110 §9.3.3) but reusable only via Content-Location: not supported.
    if (input.method !== 'GET' && input.method !== 'HEAD')
        return no('method-not-cacheable');
    // §3: "the response status code is final" (RFC 9110 §15: 1xx is interim).
    if (!Number.isInteger(status) || status < 200 || status > 599)
        return no('status-not-final');
    const res = parseCacheControl(getHeader(input.responseHeaders, 'cache-control'));
    const understood = UNDERSTOOD_STATUSES.has(status);
    const mustUnderstand = hasDirective(res, 'must-understand');
    // §3: for 206, 304, or with must-understand (§5.2.2.3), the status code must be understood.
    if (mustUnderstand && !understood)
        return no('status-not-understood');
    // §3 / §3.3: a 206 may only be stored by a cache that stores partial content; this layer keeps
    // complete responses only, so a 206 is never stored as a complete response.
    if (status === 206)
        return no('partial-content');
    // §4.3.4: a 304 updates stored responses (see validate.ts); it is not itself a response to store.
    if (status === 304)
        return no('not-modified');
    // §5.2.1.5: request no-store forbids storing any response to it.
    const req = parseCacheControl(getHeader(input.requestHeaders, 'cache-control'));
    if (hasDirective(req, 'no-store'))
        return no('no-store-request');
    // §3 / §5.2.2.5: response no-store; §5.2.2.3: ignored under must-understand when we understand the
    // status (checked above: reaching here with must-understand means it is understood).
    if (hasDirective(res, 'no-store') && !mustUnderstand)
        return no('no-store-response');
    let omitHeaders = NO_OMIT;
    if (shared && hasDirective(res, 'private')) {
        // §5.2.2.7: unqualified private forbids a shared cache; private="a, b" only forbids those fields.
        const names = fieldNames(res, 'private');
        if (names === null || names.length === 0)
            return no('private-in-shared-cache');
        omitHeaders = names;
    }
    // §3.5: a shared cache stores a response to an authorized request only when the response says so.
    if (shared &&
        getHeader(input.requestHeaders, 'authorization') !== undefined &&
        !hasDirective(res, 'must-revalidate') &&
        !hasDirective(res, 'public') &&
        !hasDirective(res, 's-maxage')) {
        return no('authorization-in-shared-cache');
    }
    if (!hasExplicitCacheability(res, input, shared))
        return no('no-explicit-cacheability');
    return { ok: true, omitHeaders };
}
/** §3, the last bullet: at least one thing that makes the response cacheable. */
function hasExplicitCacheability(res, input, shared) {
    if (hasDirective(res, 'public'))
        return true; // §5.2.2.9
    if (!shared && hasDirective(res, 'private'))
        return true; // §5.2.2.7, private caches only
    if (getHeader(input.responseHeaders, 'expires') !== undefined)
        return true; // §5.3 (even invalid)
    if (hasDirective(res, 'max-age'))
        return true; // §5.2.2.1
    if (shared && hasDirective(res, 's-maxage'))
        return true; // §5.2.2.10
    for (const ext of input.storableExtensions ?? NO_OMIT) {
        if (hasDirective(res, ext))
            return true; // §5.2.3
    }
    return isHeuristicallyCacheable(input.status); // §4.2.2
}
function no(reason) {
    return { ok: false, reason };
}
