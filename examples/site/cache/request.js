// What a request allows (RFC 9111 §5.2.1, §5.4) and whether a stored response may serve it
// (§4, §4.2.4, §5.2.2, RFC 5861, RFC 8246).
import { deltaSeconds, fieldNames, hasDirective, parseCacheControl } from '../http/cache-control.js';
import { listIncludesToken } from '../http/lists.js';
import { currentAgeSec, freshEndMs, freshnessLifetimeSec } from './freshness.js';
import { getHeader } from './types.js';
export function parseRequestDirectives(requestHeaders) {
    const raw = getHeader(requestHeaders, 'cache-control');
    const cc = parseCacheControl(raw);
    let maxStaleSec = null;
    if (hasDirective(cc, 'max-stale')) {
        // §5.2.1.2: "If no value is assigned to max-stale, then the client will accept a stale response
        // of any age." A value that is not delta-seconds makes the directive count as absent.
        maxStaleSec =
            cc.directives.get('max-stale') === true ? Number.POSITIVE_INFINITY : deltaSeconds(cc, 'max-stale');
    }
    return {
        maxAgeSec: deltaSeconds(cc, 'max-age'),
        maxStaleSec,
        minFreshSec: deltaSeconds(cc, 'min-fresh'),
        // §5.4: Pragma: no-cache counts only when the request has no Cache-Control field at all.
        noCache: hasDirective(cc, 'no-cache') ||
            (raw === undefined && listIncludesToken(getHeader(requestHeaders, 'pragma'), 'no-cache')),
        noStore: hasDirective(cc, 'no-store'),
        onlyIfCached: hasDirective(cc, 'only-if-cached'),
    };
}
const NONE = Object.freeze([]);
/** RFC 9111 §4: may the stored response be used for this request, and how. */
export function decideServe(input) {
    const { stored, nowMs, shared } = input;
    const req = parseRequestDirectives(input.requestHeaders);
    const res = parseCacheControl(getHeader(stored.headers, 'cache-control'));
    const revalidate = req.onlyIfCached
        ? { kind: 'miss-only-if-cached' }
        : { kind: 'revalidate' };
    // §4 / §5.2.1.4: request no-cache: do not use a stored response without successful validation.
    if (req.noCache)
        return revalidate;
    // §5.2.2.4: unqualified response no-cache: never reuse without validation. A qualified
    // no-cache="a, b" only withholds those fields (returned as omitHeaders).
    const noCacheFields = fieldNames(res, 'no-cache');
    if (hasDirective(res, 'no-cache') && (noCacheFields === null || noCacheFields.length === 0))
        return revalidate;
    const omitHeaders = noCacheFields ?? NONE;
    const immutable = hasDirective(res, 'immutable'); // RFC 8246 §2
    const lifetimeSec = freshnessLifetimeSec(stored, shared, input.freshness);
    const ageSec = currentAgeSec(stored, nowMs);
    // §5.2.1.1: the client is unwilling to accept a response older than max-age, fresh or stale.
    if (req.maxAgeSec !== null && ageSec > req.maxAgeSec)
        return revalidate;
    // §4.2: fresh when freshness_lifetime > current_age.
    const fresh = lifetimeSec > ageSec;
    if (fresh) {
        // §5.2.1.3: min-fresh: freshness_lifetime >= current_age + min-fresh.
        if (req.minFreshSec === null || lifetimeSec - ageSec >= req.minFreshSec) {
            return { kind: 'fresh', immutable, omitHeaders };
        }
        return revalidate;
    }
    // Stale. §5.2.2.2 must-revalidate, §5.2.2.8 proxy-revalidate (shared) and §5.2.2.10 s-maxage
    // (shared; it implies proxy-revalidate) forbid serving it stale, whatever the client or RFC 5861 say.
    if (hasDirective(res, 'must-revalidate') ||
        (shared && (hasDirective(res, 'proxy-revalidate') || hasDirective(res, 's-maxage')))) {
        return revalidate;
    }
    // §5.2.1.3: a client asking for min-fresh wants a fresh response; stale ones never qualify.
    if (req.minFreshSec !== null)
        return revalidate;
    const stalenessSec = ageSec - lifetimeSec;
    // §4.2.4 / §5.2.1.2: the client accepts this much staleness.
    if (req.maxStaleSec !== null && stalenessSec <= req.maxStaleSec) {
        return { kind: 'stale-ok', reason: 'max-stale', immutable, omitHeaders };
    }
    // RFC 5861 §3: serve stale while revalidating in the background, within the window.
    const swrSec = deltaSeconds(res, 'stale-while-revalidate');
    if (swrSec !== null && stalenessSec <= swrSec) {
        return { kind: 'stale-ok', reason: 'stale-while-revalidate', immutable, omitHeaders };
    }
    // RFC 5861 §4: after an origin error, within the window; the directive may come from either side.
    if (input.originError === true || input.originUnreachable === true) {
        const reqCc = parseCacheControl(getHeader(input.requestHeaders, 'cache-control'));
        const sieSec = Math.max(deltaSeconds(res, 'stale-if-error') ?? -1, deltaSeconds(reqCc, 'stale-if-error') ?? -1);
        if (sieSec >= 0 && stalenessSec <= sieSec) {
            return { kind: 'stale-ok', reason: 'stale-if-error', immutable, omitHeaders };
        }
    }
    // §4.2.4: "unless it is disconnected": the origin is unreachable, within the configured window.
    if (input.originUnreachable === true && stalenessSec <= (input.disconnectedStaleSec ?? 0)) {
        return { kind: 'stale-ok', reason: 'disconnected', immutable, omitHeaders };
    }
    return revalidate;
}
/**
 * The local time (ms) before which `decideServe` says `fresh`, with nothing to omit, for every request
 * without Cache-Control and Pragma (no request directives, §5.2.1, §5.4). Null when no such time
 * exists (response no-cache, §5.2.2.4). The inputs never change for a stored
 * response, so callers may memoise this per response and skip decideServe on plain requests:
 *   fresh  <=>  lifetime > corrected_initial_age + (now - response_time)   (§4.2, §4.2.3)
 */
export function plainFreshUntilMs(stored, shared, opts) {
    const res = parseCacheControl(getHeader(stored.headers, 'cache-control'));
    if (hasDirective(res, 'no-cache'))
        return null;
    const end = freshEndMs(stored, shared, opts);
    return Number.isFinite(end) ? end : null;
}
