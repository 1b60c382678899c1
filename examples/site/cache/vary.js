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
