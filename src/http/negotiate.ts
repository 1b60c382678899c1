// Proactive negotiation (RFC 9110 §12): Accept-Encoding (§12.5.3) and a text/html check on Accept (§12.5.1).
import { DQUOTE, EQUALS, equalsLowerAt, isDigit, isOws, isTchar, SEMI, skipQuoted } from './chars.js';
import { splitList } from './lists.js';

/** Scratch result of parseMember: the name span and the weight in thousandths (0-1000), or -1 when invalid. */
const parsed = { nameEnd: 0, q: 1000 };

/**
 * qvalue (RFC 9110 §12.4.2): ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ), in thousandths;
 * -1 when s[start, end) is not a qvalue.
 */
function parseQvalue(s: string, start: number, end: number): number {
  const len = end - start;
  if (len === 0 || len > 5) return -1;
  const lead = s.charCodeAt(start);
  if (lead !== 0x30 && lead !== 0x31) return -1;
  if (len === 1) return lead === 0x31 ? 1000 : 0;
  if (s.charCodeAt(start + 1) !== 0x2e) return -1;
  let milli = 0;
  let scale = 100;
  for (let i = start + 2; i < end; i++) {
    const c = s.charCodeAt(i);
    if (!isDigit(c)) return -1;
    if (lead === 0x31 && c !== 0x30) return -1; // "1" allows only zeros after the point
    milli += (c - 0x30) * scale;
    scale /= 10;
  }
  return lead === 0x31 ? 1000 : milli;
}

/**
 * Parses one list member `name *( OWS ";" OWS param )` (RFC 9110 §12.5.3 codings + weight,
 * §12.5.1 media-range + parameters + weight). `name` is tchar and "/" (so media ranges fit).
 * Sets `parsed.nameEnd` and `parsed.q` (1000 when no q; -1 when the member is malformed or its
 * qvalue is invalid, in which case the member is ignored). Other parameters are accepted and skipped.
 */
function parseMember(m: string): void {
  const len = m.length;
  let i = 0;
  while (i < len) {
    const c = m.charCodeAt(i);
    if (!isTchar(c) && c !== 0x2f) break;
    i++;
  }
  parsed.nameEnd = i;
  parsed.q = i === 0 ? -1 : 1000;
  let sawQ = false;
  while (i < len && parsed.q >= 0) {
    while (i < len && isOws(m.charCodeAt(i))) i++;
    if (i >= len) break;
    if (m.charCodeAt(i) !== SEMI) {
      parsed.q = -1;
      break;
    }
    i++;
    while (i < len && isOws(m.charCodeAt(i))) i++;
    const nameStart = i;
    while (i < len && isTchar(m.charCodeAt(i))) i++;
    const pNameEnd = i;
    if (pNameEnd === nameStart) {
      if (i >= len) break; // a trailing ";" is harmless
      parsed.q = -1;
      break;
    }
    if (i >= len || m.charCodeAt(i) !== EQUALS) {
      parsed.q = -1; // §5.6.6: parameter = name "=" value, no whitespace around "="
      break;
    }
    i++;
    const valueStart = i;
    if (i < len && m.charCodeAt(i) === DQUOTE) {
      const q = skipQuoted(m, i, len);
      if (q < 0) {
        parsed.q = -1;
        break;
      }
      i = q;
    } else {
      while (i < len && isTchar(m.charCodeAt(i))) i++;
    }
    // §12.4.2: the weight parameter is "q", case-insensitive; the first one counts.
    if (!sawQ && pNameEnd - nameStart === 1 && (m.charCodeAt(nameStart) | 0x20) === 0x71) {
      sawQ = true;
      parsed.q = parseQvalue(m, valueStart, i); // invalid qvalue -> member ignored
    } else if (i === valueStart) {
      parsed.q = -1;
    }
  }
}

/** Lowercase coding name with the §8.4.1 aliases folded: x-gzip -> gzip, x-compress -> compress. */
function canonicalCoding(lower: string): string {
  if (lower === 'x-gzip') return 'gzip'; // §8.4.1.3
  if (lower === 'x-compress') return 'compress'; // §8.4.1.1
  return lower;
}

const BIT_GZIP = 1;
const BIT_DEFLATE = 2;
const BIT_BR = 4;
const BIT_ZSTD = 8;

/** Browser Accept-Encoding values that list codings without q-values, as a bit set; 0 when not one. */
function commonHeaderBits(v: string): number {
  switch (v) {
    case 'gzip, deflate, br, zstd': // Chrome 123+, Firefox 126+
      return BIT_GZIP | BIT_DEFLATE | BIT_BR | BIT_ZSTD;
    case 'gzip, deflate, br': // Safari, older Chrome/Firefox
      return BIT_GZIP | BIT_DEFLATE | BIT_BR;
    case 'gzip, deflate':
      return BIT_GZIP | BIT_DEFLATE;
    case 'gzip':
      return BIT_GZIP;
    case 'br, gzip, deflate':
      return BIT_GZIP | BIT_DEFLATE | BIT_BR;
    case 'deflate, gzip, br, zstd': // curl --compressed
      return BIT_GZIP | BIT_DEFLATE | BIT_BR | BIT_ZSTD;
    default:
      return 0;
  }
}

function codingBit(c: string): number {
  switch (c) {
    case 'gzip':
      return BIT_GZIP;
    case 'deflate':
      return BIT_DEFLATE;
    case 'br':
      return BIT_BR;
    case 'zstd':
      return BIT_ZSTD;
    default:
      return 0;
  }
}

/** Weight below every real qvalue: identity is acceptable by default but loses to any listed coding. */
const IMPLICIT_IDENTITY_Q = 0.5;

/**
 * Chooses a content coding (RFC 9110 §12.5.3). `available` lists the codings the server can send, in
 * server preference order; `identity` (no coding) is always possible and need not be listed.
 * - Absent header -> 'identity' (any coding would be acceptable; we only compress for clients that ask).
 * - A listed coding with q=0 is not acceptable; `*` matches every coding not listed; a coding neither
 *   listed nor covered by `*` is not acceptable.
 * - identity is acceptable unless `identity;q=0`, or `*;q=0` without an identity entry.
 * - A member with an invalid qvalue or syntax is ignored; of duplicate members the first counts.
 * - Highest q wins; ties go to server order, identity last.
 * Returns the chosen available entry (lowercase), 'identity', or null when nothing is acceptable
 * (the caller may answer 406, or, as §12.5.3 allows, disregard the header and send identity).
 */
export function negotiateEncoding(
  acceptEncoding: string | undefined,
  available: readonly string[],
): string | null {
  if (acceptEncoding === undefined) return 'identity';
  const bits = commonHeaderBits(acceptEncoding);
  if (bits !== 0) {
    // Fast path: every listed coding has q=1, no `*`, identity implicit (so it loses every tie).
    for (const coding of available) {
      const lower = coding.toLowerCase();
      if ((codingBit(canonicalCoding(lower)) & bits) !== 0) return lower;
    }
    return 'identity';
  }

  const weights = new Map<string, number>(); // a Map, not an array scan: members are client-controlled
  let starQ = -1;
  let identityQ = -1;
  for (const m of splitList(acceptEncoding)) {
    parseMember(m);
    if (parsed.q < 0) continue;
    const raw = m.slice(0, parsed.nameEnd);
    if (raw.includes('/')) continue; // a media range, not a coding
    const name = canonicalCoding(raw.toLowerCase()); // §8.4.1: coding names are case-insensitive
    if (weights.has(name)) continue;
    weights.set(name, parsed.q);
    if (name === '*') starQ = parsed.q;
    else if (name === 'identity') identityQ = parsed.q;
  }

  let best: string | null = null;
  let bestQ = 0;
  for (const coding of available) {
    const lower = coding.toLowerCase();
    const name = canonicalCoding(lower);
    if (name === 'identity') continue; // ranked separately, last among ties
    const q = weights.get(name) ?? starQ; // §12.5.3: "*" matches any coding not explicitly listed
    if (q > bestQ) {
      best = lower;
      bestQ = q;
    }
  }
  // §12.5.3: identity is acceptable unless excluded by "identity;q=0" or by "*;q=0" without an
  // identity entry.
  const idQ = identityQ >= 0 ? identityQ : starQ >= 0 ? starQ : IMPLICIT_IDENTITY_Q;
  if (idQ > bestQ) return 'identity';
  return best;
}

/**
 * True when Accept (RFC 9110 §12.5.1) lists `text/html` (any case, any parameters) with q > 0.
 * Wildcards (`*\/*`, `text/*`) do not count: the point is to tell a browser navigation from an API
 * client. Members with an invalid qvalue are ignored.
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  if (accept.startsWith('text/html,') || accept === 'text/html') return true; // browser navigations
  for (const m of splitList(accept)) {
    parseMember(m);
    if (parsed.q > 0 && equalsLowerAt(m, 0, parsed.nameEnd, 'text/html')) return true;
  }
  return false;
}
