// Freshness lifetime and current age: RFC 9111 §4.2.
import { DELTA_SECONDS_MAX, deltaSeconds, hasDirective, parseCacheControl, parseDeltaSeconds, } from '../http/cache-control.js';
import { parseCacheDate } from './dates.js';
import { isHeuristicallyCacheable } from './storable.js';
import { getHeader } from './types.js';
export const DEFAULT_HEURISTIC_CAP_SEC = 86_400;
export const DEFAULT_HEURISTIC_FRACTION = 0.1;
/**
 * The freshness lifetime of a stored response and where it came from, in the order of §4.2.1:
 * s-maxage (shared caches only), max-age, Expires minus Date, then a heuristic (§4.2.2).
 */
export function freshness(stored, shared, opts) {
    const cc = parseCacheControl(getHeader(stored.headers, 'cache-control'));
    // §4.2.1: "If the cache is shared and the s-maxage response directive is present, use its value".
    if (shared && hasDirective(cc, 's-maxage'))
        return fromDirective(cc, 's-maxage');
    // §4.2.1: "If the max-age response directive is present, use its value".
    if (hasDirective(cc, 'max-age'))
        return fromDirective(cc, 'max-age');
    const expires = getHeader(stored.headers, 'expires');
    if (expires !== undefined) {
        // §4.2.1: Expires minus Date; with no (valid) Date, the time the message was received
        // (RFC 9110 §6.6.1). §5.3: an invalid Expires (e.g. "0", or two joined field lines) is a time in
        // the past: already stale.
        const expiresMs = parseCacheDate(expires, stored.responseTimeMs);
        if (expiresMs === null)
            return { lifetimeSec: 0, source: 'expires' };
        const dateMs = dateValueMs(stored);
        return { lifetimeSec: Math.max(0, (expiresMs - dateMs) / 1000), source: 'expires' };
    }
    // §4.2.2: heuristics only without explicit expiry, and only for a heuristically cacheable status
    // or a response marked explicitly cacheable (public, §5.2.2.9).
    if (isHeuristicallyCacheable(stored.status) || hasDirective(cc, 'public')) {
        const lastModifiedMs = parseCacheDate(getHeader(stored.headers, 'last-modified'), stored.responseTimeMs);
        if (lastModifiedMs !== null) {
            const fraction = opts?.heuristicFraction ?? DEFAULT_HEURISTIC_FRACTION;
            const capSec = opts?.heuristicCapSec ?? DEFAULT_HEURISTIC_CAP_SEC;
            const intervalSec = Math.max(0, (dateValueMs(stored) - lastModifiedMs) / 1000);
            // §4.2.2: "no more than some fraction of the interval since that time" (typically 10%).
            return { lifetimeSec: Math.min(capSec, Math.floor(intervalSec * fraction)), source: 'heuristic' };
        }
    }
    return { lifetimeSec: 0, source: 'none' };
}
/** §4.2.1 freshness_lifetime in seconds (see `freshness` for the source). */
export function freshnessLifetimeSec(stored, shared, opts) {
    return freshness(stored, shared, opts).lifetimeSec;
}
/**
 * §4.2.1: "When there is more than one value present for a given directive ... either the first
 * occurrence should be used or the response should be considered stale." We consider it stale.
 * Departure: a present directive whose argument is not delta-seconds is also stale (the RFC says
 * nothing; treating it as absent would let a later, weaker rule make the response fresh).
 */
function fromDirective(cc, name) {
    const sec = deltaSeconds(cc, name);
    if (sec === null || cc.duplicates.has(name))
        return { lifetimeSec: 0, source: 'conflict' };
    return { lifetimeSec: sec, source: name };
}
/** §4.2.3 date_value; a response without a valid Date is dated when it was received (RFC 9110 §6.6.1). */
function dateValueMs(stored) {
    return parseCacheDate(getHeader(stored.headers, 'date'), stored.responseTimeMs) ?? stored.responseTimeMs;
}
/**
 * §4.2.3 age_value: the Age header as delta-seconds; 0 when absent. §5.1: "If the field value is a
 * list, a recipient SHOULD use the first member" (several field lines count as one comma-joined
 * line, RFC 9110 §5.3) and "a recipient SHOULD ignore" an invalid value (a sign, a fraction,
 * parameters): the age is then computed without it (0 here, so apparent_age and response_delay
 * still count).
 */
function ageValueSec(stored) {
    const age = getHeader(stored.headers, 'age');
    if (age === undefined)
        return 0;
    const comma = age.indexOf(',');
    return parseDeltaSeconds((comma === -1 ? age : age.slice(0, comma)).trim()) ?? 0;
}
/**
 * The current age in seconds, exactly as §4.2.3 computes it (fractional: the clock is in ms):
 *   apparent_age = max(0, response_time - date_value)
 *   response_delay = response_time - request_time
 *   corrected_age_value = age_value + response_delay
 *   corrected_initial_age = max(apparent_age, corrected_age_value)
 *   resident_time = now - response_time
 *   current_age = corrected_initial_age + resident_time
 * Format it with ageFieldValue.
 */
export function currentAgeSec(stored, nowMs) {
    const apparentAgeSec = Math.max(0, (stored.responseTimeMs - dateValueMs(stored)) / 1000);
    const responseDelaySec = (stored.responseTimeMs - stored.requestTimeMs) / 1000;
    const correctedAgeValueSec = ageValueSec(stored) + responseDelaySec;
    const correctedInitialAgeSec = Math.max(apparentAgeSec, correctedAgeValueSec);
    const residentTimeSec = (nowMs - stored.responseTimeMs) / 1000;
    return correctedInitialAgeSec + residentTimeSec;
}
/** §4.2: fresh when freshness_lifetime > current_age. */
export function isFresh(stored, nowMs, shared, opts) {
    return freshnessLifetimeSec(stored, shared, opts) > currentAgeSec(stored, nowMs);
}
/** §5.1: the Age field value to send for a current age (seconds, possibly fractional or Infinity). */
export function ageFieldValue(ageSec) {
    return String(ageFieldSeconds(ageSec));
}
/** The whole seconds ageFieldValue sends. */
export function ageFieldSeconds(ageSec) {
    // §1.2.2: a delta-seconds too large to represent is sent as 2147483648 (2^31).
    return Math.min(DELTA_SECONDS_MAX, Math.max(0, Math.floor(ageSec)));
}
/**
 * The local time (ms) at which a stored response stops being fresh: fresh while
 * lifetime > corrected_initial_age + (now - response_time) (§4.2, §4.2.3). RFC 9211 §2.6 ttl is this
 * minus now.
 */
export function freshEndMs(stored, shared, opts) {
    const initialAgeSec = currentAgeSec(stored, stored.responseTimeMs);
    if (!Number.isFinite(initialAgeSec))
        return Number.NEGATIVE_INFINITY;
    return stored.responseTimeMs + (freshnessLifetimeSec(stored, shared, opts) - initialAgeSec) * 1000;
}
