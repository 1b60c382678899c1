// Conditional requests (RFC 9110 §13): the precondition evaluation order of §13.2.2 and If-Range.
import { parseHttpDate } from './dates.js';
import { entityTagListMatches, isStar, parseEntityTag } from './etag.js';
import { trimOws } from './lists.js';
const PROCEED = Object.freeze({ kind: 'proceed' });
const NOT_MODIFIED = Object.freeze({ kind: 'not-modified' });
const PRECONDITION_FAILED = Object.freeze({ kind: 'precondition-failed' });
const NOT_MODIFIED_ALIAS = Object.freeze({ kind: 'not-modified', viaAlias: true });
/**
 * Whether a request carries any of the four precondition fields of RFC 9110 §13.1.1-§13.1.4 (If-Range,
 * §13.1.5, only matters with Range). Without them evaluatePreconditions is always `proceed`, so the
 * common unconditional GET skips it.
 */
export function hasPreconditions(headers) {
    return (headers['if-none-match'] !== undefined ||
        headers['if-modified-since'] !== undefined ||
        headers['if-match'] !== undefined ||
        headers['if-unmodified-since'] !== undefined);
}
function isGetOrHead(method) {
    return method === 'GET' || method === 'HEAD';
}
/**
 * Evaluates If-Match, If-Unmodified-Since, If-None-Match and If-Modified-Since in the order of
 * RFC 9110 §13.2.2 (steps 1-4; step 5, If-Range, is evaluateIfRange). A representation "exists" when
 * it has an entity-tag or a Last-Modified. Returns one of four frozen constants; never allocates.
 * `not-modified` means 304 (GET/HEAD only), `precondition-failed` means 412.
 */
export function evaluatePreconditions(input) {
    const { method, header, etag, lastModifiedMs } = input;
    const exists = etag !== undefined || lastModifiedMs !== undefined;
    const ifMatch = header('if-match');
    if (ifMatch !== undefined) {
        // §13.2.2 step 1, §13.1.1: `*` is true when a current representation exists; otherwise true only
        // when a listed tag matches by STRONG comparison. False -> 412.
        const ok = isStar(ifMatch) ? exists : etag !== undefined && entityTagListMatches(ifMatch, etag, true);
        if (!ok)
            return PRECONDITION_FAILED;
    }
    else {
        // §13.2.2 step 2, §13.1.4: only when If-Match is absent; an invalid date (or a list of dates)
        // is ignored, and so is the field when the resource has no modification date.
        const ius = header('if-unmodified-since');
        if (ius !== undefined && lastModifiedMs !== undefined) {
            const date = parseHttpDate(ius, input.nowMs);
            if (date !== null && lastModifiedMs > date)
                return PRECONDITION_FAILED;
        }
    }
    const ifNoneMatch = header('if-none-match');
    if (ifNoneMatch !== undefined) {
        // §13.2.2 step 3, §13.1.2: WEAK comparison; `*` matches any current representation. A match is
        // "condition false": 304 for GET/HEAD, 412 for other methods. When If-None-Match is present,
        // If-Modified-Since is ignored even if nothing matched (§13.1.3; DESIGN.md "304 precedence").
        const star = isStar(ifNoneMatch);
        const matched = star ? exists : etag !== undefined && entityTagListMatches(ifNoneMatch, etag, false);
        if (!matched) {
            // §13.1.2 weak comparison: the same version's earlier weak tag still identifies it.
            const alias = input.weakAlias;
            if (alias === undefined || star || !entityTagListMatches(ifNoneMatch, alias, false))
                return PROCEED;
            return isGetOrHead(method) ? NOT_MODIFIED_ALIAS : PRECONDITION_FAILED;
        }
        return isGetOrHead(method) ? NOT_MODIFIED : PRECONDITION_FAILED;
    }
    // §13.2.2 step 4, §13.1.3: If-Modified-Since only for GET/HEAD; ignored when the date is invalid or
    // the representation has no modification date. Not modified since -> 304.
    if (isGetOrHead(method) && lastModifiedMs !== undefined) {
        const ims = header('if-modified-since');
        if (ims !== undefined) {
            const date = parseHttpDate(ims, input.nowMs);
            if (date !== null && lastModifiedMs <= date)
                return NOT_MODIFIED;
        }
    }
    return PROCEED;
}
/**
 * If-Range (RFC 9110 §13.1.5, §13.2.2 step 5): true means "apply the Range header" (206/416), false
 * means "ignore Range and send 200 with the full representation". Absent -> true. An entity-tag must
 * match by STRONG comparison (a weak tag in If-Range never matches); an HTTP-date must equal the
 * Last-Modified exactly. Anything unparsable -> false.
 */
export function evaluateIfRange(input) {
    const { ifRange, etag, lastModifiedMs } = input;
    if (ifRange === undefined)
        return true;
    const v = trimOws(ifRange);
    const c0 = v.charCodeAt(0);
    // §13.1.5: an entity-tag starts with DQUOTE or W/; anything else is read as an HTTP-date.
    if (c0 === 0x22 || (c0 === 0x57 && v.charCodeAt(1) === 0x2f)) {
        if (etag === undefined)
            return false;
        if (v === etag)
            return c0 === 0x22; // fast path; our tag equals theirs, strong only
        const tag = parseEntityTag(v);
        const ours = parseEntityTag(etag);
        return tag !== null && ours !== null && !tag.weak && !ours.weak && tag.opaque === ours.opaque; // §8.8.3.2 strong
    }
    if (lastModifiedMs === undefined)
        return false;
    const date = parseHttpDate(v, input.nowMs);
    if (date === null || date !== lastModifiedMs)
        return false; // §13.1.5: exact match only
    // §8.8.2.2: a modification time within the current second is weak; If-Range needs a strong validator.
    return input.nowMs === undefined || lastModifiedMs <= input.nowMs - 1000;
}
