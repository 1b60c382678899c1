// Character classes and small scanning helpers shared by the parsers in this folder.
// Internal: not re-exported from index.ts. All helpers work on UTF-16 code units, which for
// header values (latin1 strings in Node) are the octets of the field value.
/** tchar (RFC 9110 §5.6.2), indexed by code point < 128. */
const TCHAR = new Uint8Array(128);
for (const ch of "!#$%&'*+-.^_`|~")
    TCHAR[ch.charCodeAt(0)] = 1;
for (let c = 0x30; c <= 0x39; c++)
    TCHAR[c] = 1;
for (let c = 0x41; c <= 0x5a; c++)
    TCHAR[c] = 1;
for (let c = 0x61; c <= 0x7a; c++)
    TCHAR[c] = 1;
export const DQUOTE = 0x22;
export const COMMA = 0x2c;
export const SEMI = 0x3b;
export const EQUALS = 0x3d;
export const BACKSLASH = 0x5c;
/** RFC 9110 §5.6.2 tchar. */
export function isTchar(c) {
    return c < 128 && TCHAR[c] === 1;
}
/** RFC 9110 §5.6.3 OWS = *( SP / HTAB ). */
export function isOws(c) {
    return c === 0x20 || c === 0x09;
}
export function isDigit(c) {
    return c >= 0x30 && c <= 0x39;
}
/** RFC 9110 §5.6.4 qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text. */
export function isQdtext(c) {
    return (c === 0x09 ||
        c === 0x20 ||
        c === 0x21 ||
        (c >= 0x23 && c <= 0x5b) ||
        (c >= 0x5d && c <= 0x7e) ||
        isObsText(c));
}
/** RFC 9110 §5.6.4 quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text ): the escaped octet. */
export function isQuotedPairChar(c) {
    return c === 0x09 || (c >= 0x20 && c <= 0x7e) || isObsText(c);
}
/** RFC 9110 §5.5 obs-text = %x80-FF. */
export function isObsText(c) {
    return c >= 0x80 && c <= 0xff;
}
/** A code unit that may appear in a field value at all: HTAB, SP, VCHAR, obs-text (RFC 9110 §5.5). */
export function isFieldValueChar(c) {
    return c === 0x09 || (c >= 0x20 && c <= 0x7e) || isObsText(c);
}
/** Index of the first non-OWS code unit in [i, end). */
export function skipOws(s, i, end) {
    while (i < end && isOws(s.charCodeAt(i)))
        i++;
    return i;
}
/** End index after dropping trailing OWS from [start, end). */
export function trimOwsEnd(s, start, end) {
    while (end > start && isOws(s.charCodeAt(end - 1)))
        end--;
    return end;
}
/** ASCII case-insensitive comparison of s[start, end) with `lower`, which must be lowercase ASCII. */
export function equalsLowerAt(s, start, end, lower) {
    if (end - start !== lower.length)
        return false;
    for (let k = 0; k < lower.length; k++) {
        let c = s.charCodeAt(start + k);
        if (c >= 0x41 && c <= 0x5a)
            c |= 0x20;
        if (c !== lower.charCodeAt(k))
            return false;
    }
    return true;
}
/** Exact comparison of a[aStart, aStart+len) with b[bStart, bStart+len), without slicing. */
export function regionEquals(a, aStart, b, bStart, len) {
    for (let k = 0; k < len; k++) {
        if (a.charCodeAt(aStart + k) !== b.charCodeAt(bStart + k))
            return false;
    }
    return true;
}
/**
 * Index just past the quoted-string that opens at `i` (s[i] is DQUOTE), honouring quoted-pair
 * (RFC 9110 §5.6.4). Returns -1 when the string is unterminated.
 */
export function skipQuoted(s, i, end) {
    for (let k = i + 1; k < end; k++) {
        const c = s.charCodeAt(k);
        if (c === BACKSLASH)
            k++;
        else if (c === DQUOTE)
            return k + 1;
    }
    return -1;
}
/** Index of the next list comma at or after `i` that is outside a quoted-string, or `end`. */
export function nextComma(s, i, end) {
    for (let k = i; k < end; k++) {
        const c = s.charCodeAt(k);
        if (c === COMMA)
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
