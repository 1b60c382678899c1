// Entity tags (RFC 9110 §8.8.3): parsing, comparison, formatting, and an allocation-free list matcher
// for If-Match / If-None-Match.
import { COMMA, DQUOTE, isObsText, isOws, regionEquals } from './chars.js';
import { trimOws } from './lists.js';
/** RFC 9110 §8.8.3 etagc = %x21 / %x23-7E / obs-text. */
function isEtagc(c) {
    return c === 0x21 || (c >= 0x23 && c <= 0x7e) || isObsText(c);
}
/** Length of the `W/` prefix at i (2) or 0. RFC 9110 §8.8.3: weak = %s"W/", case-sensitive. */
function weakPrefixAt(s, i) {
    return s.charCodeAt(i) === 0x57 && s.charCodeAt(i + 1) === 0x2f ? 2 : 0;
}
/**
 * Parses one entity-tag (RFC 9110 §8.8.3): `"xyz"`, `W/"xyz"`, `""`. Surrounding OWS is allowed.
 * Returns null for anything else (unquoted text, lowercase `w/`, characters outside etagc).
 */
export function parseEntityTag(s) {
    const t = trimOws(s);
    const len = t.length;
    const w = weakPrefixAt(t, 0);
    if (len < w + 2 || t.charCodeAt(w) !== DQUOTE || t.charCodeAt(len - 1) !== DQUOTE)
        return null;
    for (let i = w + 1; i < len - 1; i++) {
        if (!isEtagc(t.charCodeAt(i)))
            return null;
    }
    return { weak: w === 2, opaque: w === 0 ? t : t.slice(2) };
}
/** Result of scanning one list member; module scratch so the matcher does not allocate. */
const member = { valid: false, weak: false, open: 0, close: 0, next: 0 };
/**
 * Scans the list member starting at i (not OWS, not a comma). Sets `member`: `open`/`close` bound the
 * quoted opaque-tag (close is exclusive), `next` is the index of the comma ending the member (or len).
 * An invalid member still ends at the right place: quoted spans are skipped as a whole, so a comma
 * inside quotes never splits (RFC 9110 §8.8.3: "," is an etagc).
 */
function scanMember(v, i, len) {
    const w = weakPrefixAt(v, i);
    const open = i + w;
    let valid = false;
    let k = open;
    if (v.charCodeAt(open) === DQUOTE) {
        valid = true;
        k = open + 1;
        while (k < len) {
            const c = v.charCodeAt(k);
            if (c === DQUOTE)
                break;
            if (!isEtagc(c))
                valid = false; // keep going to the closing quote
            k++;
        }
        if (k >= len) {
            valid = false; // unterminated
        }
        else {
            k++;
            member.close = k;
            while (k < len && isOws(v.charCodeAt(k)))
                k++;
            if (k < len && v.charCodeAt(k) !== COMMA)
                valid = false; // junk after the tag
        }
    }
    // Skip to the comma that ends this member, stepping over quoted spans.
    let inQuote = false;
    while (k < len) {
        const c = v.charCodeAt(k);
        if (c === DQUOTE)
            inQuote = !inQuote;
        else if (c === COMMA && !inQuote)
            break;
        k++;
    }
    member.valid = valid;
    member.weak = w === 2;
    member.open = open;
    member.next = k;
}
/**
 * Parses an If-Match / If-None-Match value (RFC 9110 §13.1.1, §13.1.2): `*` alone gives '*';
 * otherwise the valid entity-tags of the list, in order. Invalid members are skipped.
 */
export function parseEntityTagList(value) {
    if (isStar(value))
        return '*';
    const out = [];
    const len = value.length;
    let i = 0;
    while (i < len) {
        const c = value.charCodeAt(i);
        if (c === COMMA || isOws(c)) {
            i++;
            continue;
        }
        scanMember(value, i, len);
        if (member.valid)
            out.push({ weak: member.weak, opaque: value.slice(member.open, member.close) });
        i = member.next;
    }
    return out;
}
/** True when the field value is `*` (with optional surrounding OWS). */
export function isStar(value) {
    return value === '*' || (value.length > 1 && trimOws(value) === '*');
}
/**
 * True when a member of the entity-tag list `value` matches `etag`, a formatted tag such as `"abc"`
 * or `W/"abc"` (well-formed, as we generate it). `strong` selects the comparison (RFC 9110 §8.8.3.2):
 * strong for If-Match and If-Range, weak for If-None-Match. `*` is not handled here.
 * Fast paths: a value that is exactly our tag costs one string comparison, a value that does not
 * contain our opaque-tag costs one indexOf; otherwise one linear scan. Allocation-free for strong tags.
 */
export function entityTagListMatches(value, etag, strong) {
    const ew = weakPrefixAt(etag, 0);
    if (strong && ew === 2)
        return false; // §8.8.3.2: a weak tag never matches strongly
    if (value === etag)
        return true; // fast path: one tag, byte-identical
    // Fast path for the common miss (the client holds an older tag): if our opaque-tag text occurs
    // nowhere in the value, no member can match. indexOf is far cheaper than the member scan below.
    if (value.indexOf(ew === 0 ? etag : etag.slice(2)) < 0)
        return false;
    const opaqueLen = etag.length - ew;
    const len = value.length;
    let i = 0;
    while (i < len) {
        const c = value.charCodeAt(i);
        if (c === COMMA || isOws(c)) {
            i++;
            continue;
        }
        scanMember(value, i, len);
        if (member.valid &&
            !(strong && member.weak) && // §8.8.3.2: strong comparison needs both tags strong
            member.close - member.open === opaqueLen &&
            regionEquals(value, member.open, etag, ew, opaqueLen) // §8.8.3.2: opaque-tags match char by char
        ) {
            return true;
        }
        i = member.next;
    }
    return false;
}
/** RFC 9110 §8.8.3.2 strong comparison: both strong and the opaque-tags identical. */
export function strongMatch(a, b) {
    return !a.weak && !b.weak && a.opaque === b.opaque;
}
/** RFC 9110 §8.8.3.2 weak comparison: the opaque-tags identical, weakness ignored. */
export function weakMatch(a, b) {
    return a.opaque === b.opaque;
}
/** The field value of an entity-tag: `"abc"` or `W/"abc"`. */
export function formatEntityTag(t) {
    return t.weak ? 'W/' + t.opaque : t.opaque;
}
/** Checks that raw opaque text fits between the quotes (etagc only, RFC 9110 §8.8.3). */
function checkOpaque(opaque) {
    for (let i = 0; i < opaque.length; i++) {
        if (!isEtagc(opaque.charCodeAt(i))) {
            throw new TypeError(`entity-tag text may not contain code unit 0x${opaque.charCodeAt(i).toString(16)}`);
        }
    }
}
/**
 * A strong entity-tag field value from raw text: `abc` -> `"abc"`. Throws TypeError when the text holds
 * a character outside etagc (a DQUOTE, space, control or > 0xFF): compute tags at metadata time, not
 * per request, so this check costs nothing on the hot path.
 */
export function strongTag(opaque) {
    checkOpaque(opaque);
    return '"' + opaque + '"';
}
/** A weak entity-tag field value from raw text: `abc` -> `W/"abc"`. Same checks as strongTag. */
export function weakTag(opaque) {
    checkOpaque(opaque);
    return 'W/"' + opaque + '"';
}
