// Cache-Control (RFC 9111 §5.2) and delta-seconds (RFC 9111 §1.2.2).
import { COMMA, DQUOTE, EQUALS, isOws, isTchar, nextComma, skipQuoted } from './chars.js';
import { isToken, quote, splitList, unquote } from './lists.js';

/**
 * Parsed Cache-Control. Directive names are lowercase; a value is the argument text (quoted-strings
 * already unquoted) or `true` for a directive without an argument.
 */
export interface CacheControl {
  readonly directives: ReadonlyMap<string, string | true>;
  /** Every directive name that appeared more than once (RFC 9111 §4.2.1). */
  readonly duplicates: ReadonlySet<string>;
}

/** RFC 9111 §1.2.2: the value to use when delta-seconds overflows (2^31). */
export const DELTA_SECONDS_MAX = 2147483648;

const EMPTY: CacheControl = Object.freeze({
  directives: new Map<string, string | true>(),
  duplicates: new Set<string>(),
});

/**
 * Parses Cache-Control (RFC 9111 §5.2): `cache-directive = token [ "=" ( token / quoted-string ) ]`,
 * comma-separated. Several field lines (an array) are one list (RFC 9110 §5.3). Names are
 * case-insensitive (§5.2) and lowercased. The first occurrence of a name is kept and the name is
 * recorded in `duplicates` (§4.2.1 lets a cache treat conflicting duplicates as stale). Malformed
 * members (no name, whitespace around "=", an empty or non-token unquoted argument, a bad
 * quoted-string, trailing junk) are skipped. Never throws.
 * Absent or empty input returns one shared empty result: do not mutate what you get back.
 */
export function parseCacheControl(value: string | readonly string[] | undefined): CacheControl {
  if (value === undefined) return EMPTY;
  const v = typeof value === 'string' ? value : value.join(',');
  const len = v.length;
  if (len === 0) return EMPTY;
  const directives = new Map<string, string | true>();
  let duplicates: Set<string> | undefined;
  let i = 0;
  while (i < len) {
    const c = v.charCodeAt(i);
    if (c === COMMA || isOws(c)) {
      i++;
      continue;
    }
    const nameStart = i;
    while (i < len && isTchar(v.charCodeAt(i))) i++;
    const nameEnd = i;
    let arg: string | true | null = nameEnd > nameStart ? true : null;
    if (arg !== null && i < len && v.charCodeAt(i) === EQUALS) {
      i++;
      arg = null;
      if (i < len && v.charCodeAt(i) === DQUOTE) {
        const q = skipQuoted(v, i, len);
        if (q > 0) {
          arg = unquote(v.slice(i, q)); // RFC 9111 §5.2: either argument form is accepted
          i = q;
        }
      } else {
        const valueStart = i;
        while (i < len && isTchar(v.charCodeAt(i))) i++;
        if (i > valueStart) arg = v.slice(valueStart, i);
      }
    }
    // The member must end here: OWS, then a comma or the end.
    let k = i;
    while (k < len && isOws(v.charCodeAt(k))) k++;
    if (k < len && v.charCodeAt(k) !== COMMA) arg = null;
    if (arg !== null) {
      const name = v.slice(nameStart, nameEnd).toLowerCase(); // §5.2: names are case-insensitive
      if (directives.has(name)) (duplicates ??= new Set()).add(name);
      else directives.set(name, arg);
    }
    i = nextComma(v, k, len);
  }
  if (directives.size === 0 && duplicates === undefined) return EMPTY;
  return { directives, duplicates: duplicates ?? EMPTY.duplicates };
}

/**
 * delta-seconds (RFC 9111 §1.2.2): `1*DIGIT`. Values beyond 2^31 saturate at 2147483648.
 * Anything else (empty, a sign, a decimal point, spaces) is null.
 */
export function parseDeltaSeconds(s: string): number | null {
  const len = s.length;
  if (len === 0) return null;
  let n = 0;
  for (let i = 0; i < len; i++) {
    const d = s.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) return null;
    if (n < DELTA_SECONDS_MAX) n = n * 10 + d; // stop growing once saturated; keep validating
  }
  return Math.min(n, DELTA_SECONDS_MAX); // §1.2.2: overflow -> 2^31
}

/** Value of a directive as delta-seconds (`max-age`, `s-maxage`, ...), or null when absent or invalid. */
export function deltaSeconds(cc: CacheControl, name: string): number | null {
  const v = getDirective(cc, name);
  return typeof v === 'string' ? parseDeltaSeconds(v) : null;
}

/** True when the directive is present, with or without an argument. */
export function hasDirective(cc: CacheControl, name: string): boolean {
  return getDirective(cc, name) !== undefined;
}

/**
 * The field names of a qualified `no-cache="a, b"` or `private="x"` (RFC 9111 §5.2.2.4, §5.2.2.7),
 * lowercased; members that are not tokens are dropped. Null when the directive is absent or has no
 * argument (the unqualified form applies to the whole response).
 */
export function fieldNames(cc: CacheControl, name: string): string[] | null {
  const v = getDirective(cc, name);
  if (typeof v !== 'string') return null;
  const out: string[] = [];
  for (const member of splitList(v)) {
    if (isToken(member)) out.push(member.toLowerCase());
  }
  return out;
}

function getDirective(cc: CacheControl, name: string): string | true | undefined {
  const v = cc.directives.get(name);
  return v !== undefined ? v : cc.directives.get(name.toLowerCase());
}

/**
 * Formats directives as a Cache-Control value: `public, max-age=60, private="set-cookie"`.
 * Names are lowercased and must be tokens; `true` gives a bare directive; numbers must be
 * non-negative integers (delta-seconds); strings that are not tokens are sent as quoted-strings.
 * `false`, `null` and `undefined` values are skipped, so `{ 'no-store': cond }` works.
 * Throws TypeError for an invalid name, number or unrepresentable string (a config-time error).
 */
export function formatCacheControl(
  directives:
    | Iterable<readonly [string, string | true]>
    | Record<string, string | number | boolean | undefined>,
): string {
  let out = '';
  const entries: Iterable<readonly [string, unknown]> =
    Symbol.iterator in directives
      ? (directives as Iterable<readonly [string, string | true]>)
      : Object.entries(directives);
  for (const [rawName, value] of entries) {
    if (value === false || value === undefined || value === null) continue;
    if (!isToken(rawName))
      throw new TypeError(`Cache-Control directive name ${JSON.stringify(rawName)} is not a token`);
    const name = rawName.toLowerCase();
    let text: string;
    if (value === true) {
      text = name;
    } else if (typeof value === 'number') {
      if (!Number.isSafeInteger(value) || value < 0) {
        throw new TypeError(`Cache-Control ${name}=${value}: delta-seconds must be a non-negative integer`);
      }
      text = name + '=' + value;
    } else if (typeof value === 'string') {
      text = name + '=' + (isToken(value) ? value : quote(value)); // RFC 9111 §5.2 token / quoted-string
    } else {
      throw new TypeError(`Cache-Control ${name}: unsupported value type ${typeof value}`);
    }
    out = out.length === 0 ? text : out + ', ' + text;
  }
  return out;
}
