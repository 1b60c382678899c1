// Validation: conditional requests (RFC 9111 §4.3.1), freshening with a 304 (§4.3.4, §3.2).
import { formatEntityTag, parseEntityTag, strongMatch, weakMatch } from '../http/etag.js';
import { splitList } from '../http/lists.js';
import { parseCacheDate } from './dates.js';
import { getHeader } from './types.js';
/**
 * The precondition fields for validating `storedVariants`, the stored responses for one target URI
 * (§4.3.1): If-None-Match lists the entity tags of all of them, strong and weak, deduplicated ("MUST
 * send the relevant entity tags"). If-Modified-Since carries the stored Last-Modified text when a
 * single stored response is validated and it has no ETag.
 * Departure: §4.3.1 says SHOULD send Last-Modified beside the tags too. We do not, because a server
 * evaluating If-None-Match ignores If-Modified-Since (RFC 9110 §13.2.2), so it would never count.
 * An empty result means there is nothing to validate with: make an unconditional request.
 */
export function conditionalHeaders(storedVariants) {
    const tags = [];
    for (const variant of storedVariants) {
        const tag = etagOf(variant);
        if (tag === null)
            continue;
        const text = formatEntityTag(tag);
        if (!tags.includes(text))
            tags.push(text);
    }
    if (tags.length > 0)
        return { 'if-none-match': tags.join(', ') };
    const only = storedVariants.length === 1 ? storedVariants[0] : undefined;
    if (only !== undefined) {
        const lastModified = getHeader(only.headers, 'last-modified');
        if (lastModified !== undefined && parseCacheDate(lastModified, only.responseTimeMs) !== null) {
            return { 'if-modified-since': lastModified.trim() };
        }
    }
    return {};
}
/** Hop-by-hop fields (RFC 9110 §7.6.1): never stored (§3.1), so never copied from a 304 either. */
const HOP_BY_HOP = new Set([
    'connection',
    'proxy-connection',
    'keep-alive',
    'te',
    'trailer',
    'transfer-encoding',
    'upgrade',
]);
/** The field names a message's Connection lists (RFC 9110 §7.6.1): hop-by-hop too. */
function connectionOptions(headers) {
    const connection = getHeader(headers, 'connection');
    return new Set(connection === undefined ? [] : splitList(connection).map(lower));
}
/**
 * §3.1: the header fields of a response as a cache stores them: without hop-by-hop fields and the
 * fields its Connection names (RFC 9110 §7.6.1), nor Proxy-Authenticate / Proxy-Authentication-Info /
 * Proxy-Authorization.
 */
export function storedHeaderFields(headers) {
    const listed = connectionOptions(headers);
    const kept = [];
    for (const [name, value] of Object.entries(headers)) {
        if (HOP_BY_HOP.has(name) || listed.has(name) || name.startsWith('proxy-a'))
            continue;
        kept.push([name, value]);
    }
    // Object.fromEntries defines own properties: a field named `__proto__` stays a field.
    return Object.fromEntries(kept);
}
/**
 * Fields a 304 does not update (§3.2): Content-Length (named there); the fields excepted from
 * storage by §3.1 (hop-by-hop above, and the proxy's own Proxy-Authenticate, Proxy-Authentication-Info,
 * Proxy-Authorization); and, as §3.2 permits for "fields necessary to assure integrity of the stored
 * response", the framing of the stored content and its digest: Content-Encoding, Content-Range and
 * Content-MD5 (RFC 1864: a digest of the stored bytes, which a 304 does not resend).
 */
const NOT_UPDATED = new Set([
    'content-length',
    'content-encoding',
    'content-range',
    'content-md5',
    'proxy-authenticate',
    'proxy-authentication-info',
    'proxy-authorization',
]);
/**
 * The stored response's header fields updated with a 304's (§4.3.4 -> §3.2): each field of the 304
 * replaces or adds to the stored ones, except those in NOT_UPDATED, hop-by-hop fields and fields the
 * 304's Connection names (RFC 9110 §7.6.1).
 * Departure: Age is always taken from the 304 (dropped when it has none). Age describes the exchange
 * that produced it, and after freshening §4.2.3 measures from the 304's exchange times; keeping the
 * old Age would count it twice.
 */
export function freshenHeaders(stored, notModifiedHeaders) {
    const fields = [];
    for (const [name, value] of Object.entries(stored.headers)) {
        if (name !== 'age')
            fields.push([name, value]);
    }
    const listed = connectionOptions(notModifiedHeaders);
    for (const [name, value] of Object.entries(notModifiedHeaders)) {
        if (NOT_UPDATED.has(name) || HOP_BY_HOP.has(name) || listed.has(name))
            continue;
        fields.push([name, value]);
    }
    // The 304's value wins (the later entry); own properties, so a field named `__proto__` stays a field.
    return Object.fromEntries(fields);
}
/**
 * A stored response freshened by a 304 received at `responseTimeMs` for a request sent at
 * `requestTimeMs`: the headers per freshenHeaders, the exchange times of the 304 (§4.2.3 then ages
 * it from this exchange).
 */
export function freshenStored(stored, notModifiedHeaders, requestTimeMs, responseTimeMs) {
    return {
        status: stored.status,
        headers: freshenHeaders(stored, notModifiedHeaders),
        requestTimeMs,
        responseTimeMs,
    };
}
/**
 * §4.3.4: the stored responses a 304 selects for update.
 * - The 304 has a strong ETag: every stored response with the same strong ETag.
 * - It has a weak ETag: the most recent stored response whose ETag matches weakly.
 * - It has no ETag but a Last-Modified: the most recent stored response without an ETag whose
 *   Last-Modified is the same instant. (We cannot tell whether that date is a strong validator,
 *   RFC 9110 §8.8.2.2, so it gets the weak rule.)
 * - It has no validator: the only stored response, if there is exactly one and it has none.
 * An empty result means the 304 updates nothing: the caller must make an unconditional request.
 */
export function selectForUpdate(storedVariants, notModifiedHeaders) {
    const etagText = getHeader(notModifiedHeaders, 'etag');
    if (etagText !== undefined) {
        const tag = parseEntityTag(etagText);
        if (tag === null)
            return []; // an invalid validator identifies nothing
        if (!tag.weak)
            return storedVariants.filter((v) => matchTag(v, tag, strongMatch));
        return mostRecent(storedVariants.filter((v) => matchTag(v, tag, weakMatch)));
    }
    const lastModifiedText = getHeader(notModifiedHeaders, 'last-modified');
    if (lastModifiedText !== undefined) {
        const ms = parseCacheDate(lastModifiedText);
        if (ms === null)
            return [];
        return mostRecent(storedVariants.filter((v) => getHeader(v.headers, 'etag') === undefined &&
            parseCacheDate(getHeader(v.headers, 'last-modified'), v.responseTimeMs) === ms));
    }
    const only = storedVariants.length === 1 ? storedVariants[0] : undefined;
    if (only !== undefined &&
        getHeader(only.headers, 'etag') === undefined &&
        getHeader(only.headers, 'last-modified') === undefined) {
        return [only];
    }
    return [];
}
/**
 * selectForUpdate for a 304 answering our own conditional request about `asked` (the stored
 * responses whose validators we sent).
 * Departure from §4.3.4's letter: a 304 without any validator answers the one response we asked
 * about (our If-None-Match / If-Modified-Since named only its validator), so it is selected even
 * though it has one. Origins often omit ETag on 304s.
 */
export function selectValidated(asked, notModifiedHeaders) {
    const noValidator = getHeader(notModifiedHeaders, 'etag') === undefined &&
        getHeader(notModifiedHeaders, 'last-modified') === undefined;
    if (noValidator)
        return asked.length === 1 ? [asked[0]] : [];
    return selectForUpdate(asked, notModifiedHeaders);
}
function etagOf(stored) {
    const text = getHeader(stored.headers, 'etag');
    return text === undefined ? null : parseEntityTag(text);
}
function matchTag(stored, tag, compare) {
    const own = etagOf(stored);
    return own !== null && compare(own, tag);
}
/** The most recently received of `candidates` (§4.3.4 "the most recent of those matching"). */
function mostRecent(candidates) {
    let best;
    for (const c of candidates) {
        if (best === undefined || c.responseTimeMs > best.responseTimeMs)
            best = c;
    }
    return best === undefined ? [] : [best];
}
function lower(s) {
    return s.toLowerCase();
}
