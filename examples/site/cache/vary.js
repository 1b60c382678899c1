// Secondary cache keys from Vary: RFC 9111 §4.1.
import { splitList } from '../http/lists.js';
import { getHeader } from './types.js';
/**
 * The secondary key of a request for a response carrying `responseVary` (§4.1), or null when Vary
 * contains `*`, which "always fails to match". Field names are case-insensitive (RFC 9110 §5.1) and
 * sorted, so `Accept, Origin` and `origin, accept` give one key. Values are normalised only as §4.1
 * allows: OWS around list commas and at the ends is removed and empty list members dropped ("adding
 * or removing whitespace"); Accept-Language and Accept-Encoding are also case- and order-normalised
 * ("normalizing ... in a way that is known to have identical semantics"); other values compare
 * case-sensitively. An absent field is distinct from an empty one (§4.1: absent matches only absent).
 * No Vary (or an empty one) gives the empty key ''.
 */
export function varyKey(responseVary, requestHeaders) {
    if (responseVary === undefined)
        return '';
    const names = varyNames(responseVary);
    if (names === null)
        return null;
    if (names.length === 0)
        return '';
    const parts = [];
    for (const name of names) {
        const value = getHeader(requestHeaders, name);
        parts.push(name, value === undefined ? null : normalise(name, value));
    }
    return JSON.stringify(parts); // unambiguous whatever the values contain
}
/** Parsed Vary values: few distinct ones occur, and every lookup of a varied response needs one. */
const namesMemo = new Map();
const NAMES_MEMO_MAX = 256;
/** The field names of a Vary value, lowercased, unique and sorted; null when it contains `*`. */
function varyNames(vary) {
    let names = namesMemo.get(vary);
    if (names !== undefined)
        return names;
    const set = new Set();
    let star = false;
    for (const member of splitList(vary)) {
        // §4.1: "A stored response with a Vary header field value containing a member '*' always fails to match."
        if (member === '*')
            star = true;
        set.add(member.toLowerCase());
    }
    names = star ? null : [...set].sort();
    if (namesMemo.size >= NAMES_MEMO_MAX)
        namesMemo.clear();
    namesMemo.set(vary, names);
    return names;
}
/**
 * Whitespace around commas and at the ends removed (RFC 9110 §5.6.1 list syntax); case kept. The
 * preference lists of RFC 9110 §12.5 are normalised further (see normalisePreferences).
 */
function normalise(name, value) {
    const members = splitList(value);
    if (PREFERENCE_FIELDS.has(name))
        return normalisePreferences(members) ?? members.join(',');
    return members.join(',');
}
/** Fields whose members are case-insensitive tokens with an optional weight (RFC 9110 §12.5.3-4). */
const PREFERENCE_FIELDS = new Set(['accept-language', 'accept-encoding']);
const MEMBER = /^([A-Za-z0-9*][A-Za-z0-9*_.+-]*)(?:[ \t]*;[ \t]*[qQ]=(0(?:\.\d{0,3})?|1(?:\.0{0,3})?))?$/;
/**
 * `en, de` and `DE,en;q=1` ask for the same thing: language ranges and codings are case-insensitive
 * (RFC 4647 §2, RFC 9110 §8.4.1) and members of equal weight are equally preferred (RFC 9110 §12.4.2),
 * so members are lowercased and sorted by weight, then name; `q=1` is the default and dropped. Null
 * when a member has any other shape (the value is then compared as it is).
 */
function normalisePreferences(members) {
    const parsed = [];
    for (const m of members) {
        const r = MEMBER.exec(m);
        if (r === null)
            return null;
        parsed.push([r[1].toLowerCase(), r[2] === undefined ? 1 : Number(r[2])]);
    }
    parsed.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return parsed.map(([n, q]) => (q === 1 ? n : `${n};q=${q}`)).join(',');
}
/**
 * §4.1: whether a new request matches the request that a stored response was selected with: every
 * field named by the stored response's Vary has an equivalent value in both (or is absent in both).
 */
export function matchesVary(storedVary, storedRequestHeaders, newRequestHeaders) {
    if (storedVary === undefined)
        return true;
    const names = varyNames(storedVary);
    if (names === null)
        return false;
    // The same raw values normalise the same: only differing ones need the full comparison.
    let same = true;
    for (const name of names) {
        if (getHeader(storedRequestHeaders, name) !== getHeader(newRequestHeaders, name)) {
            same = false;
            break;
        }
    }
    return same || varyKey(storedVary, storedRequestHeaders) === varyKey(storedVary, newRequestHeaders);
}
/**
 * The single most preferred language range of an Accept-Language value (RFC 9110 §12.5.4), lowercased:
 * the one member with the highest weight, above 0, not `*`. Null when there is none, when several
 * share the highest weight (the origin may pick any of them) or when a member has another shape.
 */
export function preferredLanguage(acceptLanguage) {
    if (acceptLanguage === undefined)
        return null;
    let best = null;
    let bestQ = 0;
    let tie = false;
    for (const m of splitList(acceptLanguage)) {
        const r = MEMBER.exec(m);
        if (r === null)
            return null;
        const q = r[2] === undefined ? 1 : Number(r[2]);
        if (q > bestQ) {
            best = r[1].toLowerCase();
            bestQ = q;
            tie = false;
        }
        else if (q === bestQ && q > 0)
            tie = true;
    }
    return tie || best === '*' ? null : best;
}
/**
 * Selection by Content-Language, beyond §4.1 matching (an optimal cache, cache-tests.fyi
 * `vary-normalise-lang-select`): a stored response that varies on Accept-Language may answer a request
 * whose Accept-Language differs when its Content-Language is one language tag equal to the request's
 * single most preferred language (preferredLanguage): an origin that negotiates by weight (RFC 9110
 * §12.5.4) and has that language sends it. Every other field the Vary names must match as in §4.1.
 */
export function selectsByLanguage(storedVary, storedRequestHeaders, storedResponseHeaders, newRequestHeaders) {
    if (storedVary === undefined)
        return false;
    const names = varyNames(storedVary);
    if (names === null || !names.includes('accept-language'))
        return false;
    const contentLanguage = splitList(getHeader(storedResponseHeaders, 'content-language') ?? '');
    if (contentLanguage.length !== 1)
        return false;
    const top = preferredLanguage(getHeader(newRequestHeaders, 'accept-language'));
    if (top === null || top !== contentLanguage[0].toLowerCase())
        return false;
    for (const name of names) {
        if (name === 'accept-language')
            continue;
        const a = getHeader(storedRequestHeaders, name);
        const b = getHeader(newRequestHeaders, name);
        if (a !== b && (a === undefined || b === undefined || normalise(name, a) !== normalise(name, b)))
            return false;
    }
    return true;
}
