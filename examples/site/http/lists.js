// Field value building blocks: lists, tokens, quoted strings, parameters (RFC 9110 §5.6).
import { BACKSLASH, COMMA, DQUOTE, EQUALS, equalsLowerAt, isFieldValueChar, isOws, isQdtext, isQuotedPairChar, isTchar, nextComma, SEMI, skipOws, skipQuoted, trimOwsEnd, } from './chars.js';
/**
 * Splits a comma-separated list (RFC 9110 §5.6.1). Commas inside quoted-strings do not split
 * (backslash escapes honoured), OWS around elements is trimmed and empty elements are dropped
 * (§5.6.1.2: a recipient MUST accept and ignore empty elements).
 */
export function splitList(value) {
    const out = [];
    const len = value.length;
    let start = 0;
    while (start <= len) {
        const comma = nextComma(value, start, len);
        const s = skipOws(value, start, comma);
        const e = trimOwsEnd(value, s, comma);
        if (e > s)
            out.push(s === 0 && e === len ? value : value.slice(s, e));
        start = comma + 1;
    }
    return out;
}
/** RFC 9110 §5.6.2: token = 1*tchar. */
export function isToken(s) {
    const len = s.length;
    if (len === 0)
        return false;
    for (let i = 0; i < len; i++) {
        if (!isTchar(s.charCodeAt(i)))
            return false;
    }
    return true;
}
/**
 * Decodes a quoted-string (RFC 9110 §5.6.4): the whole of `s` must be one quoted-string.
 * Returns the unescaped content, or null when `s` is not a well-formed quoted-string.
 */
export function unquote(s) {
    const len = s.length;
    if (len < 2 || s.charCodeAt(0) !== DQUOTE || s.charCodeAt(len - 1) !== DQUOTE)
        return null;
    const last = len - 1;
    let out = '';
    let segStart = 1;
    for (let i = 1; i < last; i++) {
        const c = s.charCodeAt(i);
        if (c === BACKSLASH) {
            // §5.6.4 quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text )
            if (i + 1 >= last || !isQuotedPairChar(s.charCodeAt(i + 1)))
                return null;
            out += s.slice(segStart, i);
            segStart = i + 1;
            i++;
        }
        else if (!isQdtext(c)) {
            return null; // includes an unescaped DQUOTE before the end
        }
    }
    return segStart === 1 ? s.slice(1, last) : out + s.slice(segStart, last);
}
/**
 * Encodes `s` as a quoted-string (RFC 9110 §5.6.4), escaping DQUOTE and backslash.
 * Throws TypeError when `s` holds a code unit no field value may carry (CR, LF, NUL, DEL, > 0xFF):
 * such text cannot be represented and must not reach a header.
 */
export function quote(s) {
    let out = '"';
    let segStart = 0;
    const len = s.length;
    for (let i = 0; i < len; i++) {
        const c = s.charCodeAt(i);
        if (c === DQUOTE || c === BACKSLASH) {
            out += s.slice(segStart, i) + '\\';
            segStart = i;
        }
        else if (!isFieldValueChar(c)) {
            throw new TypeError(`quote: code unit 0x${c.toString(16)} at ${i} cannot appear in a quoted-string`);
        }
    }
    return out + (segStart === 0 ? s : s.slice(segStart)) + '"';
}
/**
 * Parses `;name=value` parameters (RFC 9110 §5.6.6). Names are lowercased, values are tokens or
 * quoted-strings (unquoted here). Malformed parameters are skipped; the first occurrence of a name
 * wins. Text before the first `;` that is not a `name=value` pair (e.g. the `text/html` of a media
 * type) is skipped, so a whole `type/subtype; a=b` value may be passed.
 */
export function parseParameters(s) {
    const out = new Map();
    const len = s.length;
    let i = 0;
    while (i < len) {
        i = skipOws(s, i, len);
        if (i >= len)
            break;
        if (s.charCodeAt(i) === SEMI) {
            i++;
            continue;
        }
        // parameter-name "=" parameter-value; §5.6.6 allows no whitespace around "="
        const nameStart = i;
        while (i < len && isTchar(s.charCodeAt(i)))
            i++;
        const nameEnd = i;
        let value = null;
        if (nameEnd > nameStart && i < len && s.charCodeAt(i) === EQUALS) {
            i++;
            if (i < len && s.charCodeAt(i) === DQUOTE) {
                const q = skipQuoted(s, i, len);
                if (q > 0) {
                    value = unquote(s.slice(i, q));
                    i = q;
                }
            }
            else {
                const vStart = i;
                while (i < len && isTchar(s.charCodeAt(i)))
                    i++;
                if (i > vStart)
                    value = s.slice(vStart, i);
            }
            const after = skipOws(s, i, len);
            if (after < len && s.charCodeAt(after) !== SEMI)
                value = null; // trailing junk: malformed
        }
        if (value !== null) {
            const name = s.slice(nameStart, nameEnd).toLowerCase();
            if (!out.has(name))
                out.set(name, value);
        }
        i = nextSemi(s, i, len);
    }
    return out;
}
/** Index of the next `;` outside a quoted-string at or after `i`, or `end`. */
function nextSemi(s, i, end) {
    for (let k = i; k < end; k++) {
        const c = s.charCodeAt(k);
        if (c === SEMI)
            return k;
        if (c === DQUOTE) {
            const q = skipQuoted(s, k, end);
            if (q < 0)
                return end;
            k = q - 1;
        }
    }
    return end;
}
/**
 * True when the list `value` (RFC 9110 §5.6.1) has a member equal to `token`, ignoring ASCII case
 * (tokens such as Connection options and Vary field names are case-insensitive, §7.6.1, §12.5.5).
 * Does not allocate per member.
 */
export function listIncludesToken(value, token) {
    if (value === undefined)
        return false;
    const lower = token.toLowerCase();
    const len = value.length;
    let start = 0;
    while (start <= len) {
        const comma = nextCommaFast(value, start, len);
        const s = skipOws(value, start, comma);
        if (equalsLowerAt(value, s, trimOwsEnd(value, s, comma), lower))
            return true;
        start = comma + 1;
    }
    return false;
}
/** nextComma with a quick path for the common quote-free member. */
function nextCommaFast(s, i, end) {
    for (let k = i; k < end; k++) {
        const c = s.charCodeAt(k);
        if (c === COMMA)
            return k;
        if (c === DQUOTE)
            return nextComma(s, k, end);
    }
    return end;
}
/** Trims OWS (SP / HTAB) from both ends; returns `s` itself when there is nothing to trim. */
export function trimOws(s) {
    const len = s.length;
    if (len === 0 || (!isOws(s.charCodeAt(0)) && !isOws(s.charCodeAt(len - 1))))
        return s;
    const start = skipOws(s, 0, len);
    return s.slice(start, trimOwsEnd(s, start, len));
}
