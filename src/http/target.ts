// Host and request-target validation and canonicalisation (RFC 9112 §3.2, RFC 3986 §3.2.2, §5.2.4,
// §6.2.2). Pure: the server rewrites `req.url` and `Host` to what these return, so routing, auth, the
// cache key and what goes upstream all read one value, and a cache key can never name a URL other than
// the one fetched.
//
// Choices where the RFCs leave room (documented in the README):
// - Host: a DNS-style reg-name (letters, digits, `-`, `_`, `.`), a dotted-quad IPv4 address or an
//   `[IPv6]` literal; percent-encoded and sub-delim characters in a reg-name (legal in RFC 3986, never in
//   DNS) are refused, so are IPvFuture literals and zone ids. The host is lowercased, one trailing dot is
//   dropped (`example.com.` is `example.com`), an empty port (`host:`) and the default port of the scheme
//   are dropped (RFC 3986 §6.2.3); a port is 1-65535, written back without leading zeros.
// - A reg-name whose last label is numeric (`127.1`, `1.2.3.256`, `0x7f.0.0.1`) is refused: the WHATWG URL
//   parser (our cache key) would read it as an IPv4 address, RFC 3986 as a name.
// - Target: `%2e`/`%2E` and other unreserved characters are decoded (§6.2.2.2), remaining escapes
//   uppercased (§6.2.2.1), dot segments removed (§5.2.4); empty segments (`//`) are kept, as RFC 3986
//   does. `..` that would climb above the root, a raw backslash, a `#`, a control byte and a malformed
//   `%` escape in the path are refused (400); escapes in the query are left as sent. Other bytes outside RFC 3986 (`"`, `<`, `>`, `^`, `` ` ``, `{`, `|`, `}`,
//   bytes >= 0x80) and `'` in the query are percent-encoded, so the canonical target is also a fixed point
//   of the WHATWG URL serialiser the cache key uses.

export type AuthorityResult =
  | {
      readonly kind: 'ok';
      /** `host[:port]`, lowercase, default port dropped: the value the server uses as Host. */
      readonly authority: string;
      /** The host alone (`[v6]` bracketed). */
      readonly host: string;
      readonly port: number | undefined;
    }
  | { readonly kind: 'bad'; readonly reason: string };

export type TargetResult =
  /** origin-form or absolute-form: `path` is canonical origin-form (path plus `?query`). */
  | { readonly kind: 'origin'; readonly path: string; readonly authority: string | undefined }
  /** asterisk-form (`OPTIONS *`, RFC 9112 §3.2.4). */
  | { readonly kind: 'asterisk' }
  | { readonly kind: 'bad'; readonly reason: string };

const MAX_HOST_LENGTH = 255; // RFC 1035 §2.3.4 (253 + a trailing dot, with room)

const bad = (reason: string) => ({ kind: 'bad', reason }) as const;

/** reg-name characters we accept: ALPHA / DIGIT / "-" / "_" / "." (lowercased by the caller). */
function isNameChar(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x5f || c === 0x2e;
}

/** RFC 3986 §3.2.2 dec-octet x4 (no leading zeros); null when not a dotted quad. */
function parseIpv4(s: string): string | null {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  for (const p of parts) {
    if (!/^(?:0|[1-9][0-9]{0,2})$/.test(p) || Number(p) > 255) return null;
  }
  return s;
}

/** RFC 3986 §3.2.2 IPv6address (no zone, no IPvFuture) -> RFC 5952 text, or null. */
function parseIpv6(s: string): string | null {
  if (s.length < 2 || s.length > 45 || !/^[0-9a-f:.]+$/.test(s)) return null;
  let groups: string[];
  let tail: number[] = [];
  const lastColon = s.lastIndexOf(':');
  let head = s;
  if (s.indexOf('.', lastColon) !== -1) {
    const v4 = parseIpv4(s.slice(lastColon + 1));
    if (v4 === null) return null;
    const o = v4.split('.').map(Number);
    tail = [(o[0]! << 8) | o[1]!, (o[2]! << 8) | o[3]!];
    head = s.slice(0, lastColon + 1);
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1);
  }
  const dbl = head.indexOf('::');
  if (dbl !== -1 && head.indexOf('::', dbl + 1) !== -1) return null;
  const toWords = (part: string): number[] | null => {
    if (part === '') return [];
    const out: number[] = [];
    for (const g of part.split(':')) {
      if (!/^[0-9a-f]{1,4}$/.test(g)) return null;
      out.push(Number.parseInt(g, 16));
    }
    return out;
  };
  if (dbl === -1) {
    const w = toWords(head);
    if (w === null || w.length + tail.length !== 8) return null;
    groups = [...w, ...tail].map((n) => n.toString(16));
  } else {
    const a = toWords(head.slice(0, dbl));
    const b = toWords(head.slice(dbl + 2));
    if (a === null || b === null) return null;
    const fill = 8 - a.length - b.length - tail.length;
    if (fill < 1) return null;
    groups = [...a, ...new Array<number>(fill).fill(0), ...b, ...tail].map((n) => n.toString(16));
  }
  // RFC 5952 §4.2: the longest run of two or more zero groups (the first on a tie) becomes `::`.
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (bestStart < 0) return groups.join(':');
  return `${groups.slice(0, bestStart).join(':')}::${groups.slice(bestStart + bestLen).join(':')}`;
}

/**
 * Validates a Host field value or the authority of an absolute-form target (RFC 9112 §3.2:
 * `Host = uri-host [ ":" port ]`, RFC 3986 §3.2.2) and returns it normalised. `defaultPort` (80 for
 * http, 443 for https) is dropped when given.
 */
export function parseAuthority(value: string, defaultPort?: number): AuthorityResult {
  if (value.length === 0) return bad('empty Host');
  if (value.length > MAX_HOST_LENGTH + 6) return bad('Host too long');
  let host: string;
  let rest: string;
  if (value.charCodeAt(0) === 0x5b /* [ */) {
    const close = value.indexOf(']');
    if (close === -1) return bad('unterminated IPv6 literal');
    const v6 = parseIpv6(value.slice(1, close).toLowerCase());
    if (v6 === null) return bad('invalid IPv6 literal');
    host = `[${v6}]`;
    rest = value.slice(close + 1);
  } else {
    const colon = value.indexOf(':');
    const name = (colon === -1 ? value : value.slice(0, colon)).toLowerCase();
    rest = colon === -1 ? '' : value.slice(colon);
    for (let i = 0; i < name.length; i++) {
      if (!isNameChar(name.charCodeAt(i))) return bad('invalid character in Host');
    }
    host = name.endsWith('.') ? name.slice(0, -1) : name;
    if (host.length === 0 || host.length > MAX_HOST_LENGTH) return bad('invalid host name');
    const labels = host.split('.');
    if (labels.some((l) => l === '')) return bad('empty label in host name');
    // WHATWG "ends in a number": such a name is an IPv4 address to browsers and to our cache key.
    const last = labels[labels.length - 1]!;
    if (/^(?:[0-9]+|0x[0-9a-f]*)$/.test(last) && parseIpv4(host) === null) {
      return bad('invalid IPv4 address');
    }
  }
  let port: number | undefined;
  if (rest.length > 0) {
    if (rest.charCodeAt(0) !== 0x3a /* : */) return bad('invalid character after host');
    const digits = rest.slice(1);
    if (digits.length > 0) {
      // port = *DIGIT (RFC 3986 §3.2.3); more than five digits or over 65535 cannot name a port.
      if (!/^[0-9]{1,5}$/.test(digits)) return bad('invalid port');
      port = Number(digits);
      if (port === 0 || port > 65535) return bad('invalid port');
      if (port === defaultPort) port = undefined;
    }
  }
  return { kind: 'ok', authority: port === undefined ? host : `${host}:${port}`, host, port };
}

// Per byte: 0 keep, 1 percent-encode, 2 refuse. Path chars are RFC 3986 pchar plus "/" (§3.3).
const PATH_CLASS = new Uint8Array(256);
const QUERY_CLASS = new Uint8Array(256);
{
  for (let c = 0; c < 256; c++) {
    const keep =
      (c >= 0x41 && c <= 0x5a) ||
      (c >= 0x61 && c <= 0x7a) ||
      (c >= 0x30 && c <= 0x39) ||
      "-._~!$&'()*+,;=:@/%".includes(String.fromCharCode(c));
    const cls = c < 0x21 || c === 0x7f ? 2 : c === 0x5c || c === 0x23 ? 2 : keep ? 0 : 1;
    PATH_CLASS[c] = cls;
    QUERY_CLASS[c] = cls;
  }
  QUERY_CLASS[0x3f] = 0; // "?" is a query char (§3.4)
  QUERY_CLASS[0x27] = 1; // "'": the WHATWG serialiser encodes it in a special scheme's query
}

const HEX = '0123456789ABCDEF';

function hexVal(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  if (l >= 0x61 && l <= 0x66) return l - 0x61 + 10;
  return -1;
}

/** Unreserved (RFC 3986 §2.3): decoded when escaped (§6.2.2.2). */
function isUnreserved(c: number): boolean {
  return (
    (c >= 0x41 && c <= 0x5a) ||
    (c >= 0x61 && c <= 0x7a) ||
    (c >= 0x30 && c <= 0x39) ||
    c === 0x2d ||
    c === 0x2e ||
    c === 0x5f ||
    c === 0x7e
  );
}

/**
 * Normalises escapes and odd bytes of one component; null when a byte must be refused. `path`: escapes
 * must be well formed, unreserved ones are decoded and hex is uppercased; in the query escapes are
 * left as sent (nothing decodes them on the way to the cache key or upstream).
 */
function normaliseComponent(s: string, classes: Uint8Array, path: boolean): string | null {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 0xff) return null; // not a byte: Node gives the target as latin1
    const cls = classes[c]!;
    if (cls === 2) return null;
    if (cls === 1) {
      out += `%${HEX[c >> 4]}${HEX[c & 15]}`;
      continue;
    }
    if (c !== 0x25 /* % */ || !path) {
      out += s[i];
      continue;
    }
    const h = i + 2 < s.length ? hexVal(s.charCodeAt(i + 1)) : -1;
    const l = h === -1 ? -1 : hexVal(s.charCodeAt(i + 2));
    if (l === -1) return null; // RFC 3986 §2.1: "%" starts exactly two hex digits
    const byte = (h << 4) | l;
    out += isUnreserved(byte) ? String.fromCharCode(byte) : `%${HEX[h]}${HEX[l]}`;
    i += 2;
  }
  return out;
}

/** RFC 3986 §5.2.4 over a path whose `%2e` are already dots (empty segments kept). Null: above root. */
function removeDotSegments(path: string): string | null {
  const segs = path.split('/');
  const out: string[] = [];
  for (let i = 1; i < segs.length; i++) {
    const s = segs[i]!;
    const last = i === segs.length - 1;
    if (s === '.' || s === '..') {
      if (s === '..' && out.pop() === undefined) return null;
      if (last) out.push('');
      continue;
    }
    out.push(s);
  }
  return `/${out.join('/')}`;
}

/** ASCII characters a canonical target keeps as they are (RFC 3986 §3.3 pchar and "/", no "%"). */
const PLAIN = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&()*+,;=:@/')
  PLAIN[c.charCodeAt(0)] = 1;

/**
 * True for an origin-form target that is already canonical (the common case: nothing to rewrite): a "/"
 * then plain characters, "?" (the query, RFC 3986 §3.4, may hold more of them), no escape, and no "/."
 * anywhere (a possible dot segment: the full parse decides). One pass, no regular expression: this runs
 * for every request.
 */
export function isCanonicalOriginForm(target: string): boolean {
  const n = target.length;
  if (n === 0 || target.charCodeAt(0) !== 0x2f) return false;
  for (let i = 1; i < n; i++) {
    const c = target.charCodeAt(i);
    if (c === 0x2e) {
      if (target.charCodeAt(i - 1) === 0x2f) return false;
    } else if (c >= 128 || (PLAIN[c] === 0 && c !== 0x3f)) return false;
  }
  return true;
}

/** The canonical origin-form of a path plus optional query, or a reason to refuse it. */
export function canonicalOriginForm(
  target: string,
): { kind: 'ok'; path: string } | { kind: 'bad'; reason: string } {
  if (target.charCodeAt(0) !== 0x2f) return bad('request target must start with "/"');
  if (isCanonicalOriginForm(target)) return { kind: 'ok', path: target };
  const q = target.indexOf('?');
  const rawPath = q === -1 ? target : target.slice(0, q);
  const path = normaliseComponent(rawPath, PATH_CLASS, true);
  if (path === null) return bad('invalid character or escape in the path');
  let query = '';
  if (q !== -1) {
    const n = normaliseComponent(target.slice(q + 1), QUERY_CLASS, false);
    if (n === null) return bad('invalid character or escape in the query');
    query = `?${n}`;
  }
  const resolved = removeDotSegments(path);
  if (resolved === null) return bad('path climbs above the root');
  return { kind: 'ok', path: resolved + query };
}

/** http and https: the schemes whose absolute-form we serve (RFC 9112 §3.2.2). */
const ABSOLUTE = /^(https?):\/\/([^/?#]*)/i;

/**
 * Parses a request-target (RFC 9112 §3.2) into the canonical origin-form. Absolute-form
 * (`http://host/path`, `https://...`) gives its authority, which replaces Host (§3.2.2); asterisk-form
 * only for OPTIONS (§3.2.4); authority-form (CONNECT, §3.2.3) and other schemes are refused.
 */
export function parseRequestTarget(method: string, target: string, defaultPort?: number): TargetResult {
  if (method === 'CONNECT') return bad('CONNECT is not supported');
  if (target === '*') return method === 'OPTIONS' ? { kind: 'asterisk' } : bad('"*" is only for OPTIONS');
  if (target.charCodeAt(0) === 0x2f) {
    const r = canonicalOriginForm(target);
    return r.kind === 'ok' ? { kind: 'origin', path: r.path, authority: undefined } : r;
  }
  const m = ABSOLUTE.exec(target);
  if (m === null) return bad('unsupported request-target form');
  const rawAuthority = m[2]!;
  if (rawAuthority.includes('@')) return bad('userinfo in the request target');
  const a = parseAuthority(rawAuthority, defaultPort);
  if (a.kind === 'bad') return a;
  const rest = target.slice(m[0].length);
  // path-abempty: an empty path is "/" (RFC 9112 §3.2.1).
  const r = canonicalOriginForm(rest === '' || rest.charCodeAt(0) === 0x3f ? `/${rest}` : rest);
  return r.kind === 'ok' ? { kind: 'origin', path: r.path, authority: a.authority } : r;
}
