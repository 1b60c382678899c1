// IP addresses and ranges: strict parsing, canonical text (RFC 5952), prefix matching.
// Every address is held as 16 bytes; IPv4 is stored IPv4-mapped (::ffff:a.b.c.d, RFC 4291 §2.5.5.2),
// so an IPv4 range matches a plain IPv4 peer and the same peer seen through a dual-stack socket.

/** 16 bytes, network order. IPv4 addresses are IPv4-mapped. */
export type IpBytes = Uint8Array;

/** A CIDR range over the 16-byte form: IPv4 `/n` is stored as `/(96 + n)`. */
export interface IpRange {
  readonly bytes: IpBytes;
  readonly prefixBits: number;
}

export type IpRangeResult =
  | { readonly kind: 'ok'; readonly ranges: readonly IpRange[] }
  | { readonly kind: 'invalid'; readonly reason: string };

/**
 * Named ranges accepted wherever an address or CIDR is (trustProxy, allow, deny).
 * loopback: RFC 1122 §3.2.1.3, RFC 4291 §2.5.3. private: RFC 1918 and unique local (RFC 4193).
 * linklocal: RFC 3927, RFC 4291 §2.5.6.
 */
export const IP_KEYWORDS: Readonly<Record<string, readonly string[]>> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  private: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
};

const DOT = 0x2e;
const COLON = 0x3a;

/** True when the 16 bytes are an IPv4-mapped address (::ffff:0:0/96). */
export function isIpv4Mapped(b: IpBytes): boolean {
  for (let i = 0; i < 10; i++) if (b[i] !== 0) return false;
  return b[10] === 0xff && b[11] === 0xff;
}

/** Parses dotted-quad IPv4 in s[start, end) into out[at..at+4). Strict: four decimal parts 0-255
 *  without leading zeros (`010` is octal to inet_aton and decimal to others: refused). */
function parseIpv4Into(s: string, start: number, end: number, out: IpBytes, at: number): boolean {
  let part = 0;
  let i = start;
  while (part < 4) {
    const partStart = i;
    let n = 0;
    while (i < end) {
      const d = s.charCodeAt(i) - 0x30;
      if (d < 0 || d > 9) break;
      n = n * 10 + d;
      i++;
      if (i - partStart > 3) return false;
    }
    const len = i - partStart;
    if (len === 0 || n > 255 || (len > 1 && s.charCodeAt(partStart) === 0x30)) return false;
    out[at + part] = n;
    part++;
    if (part < 4) {
      if (i >= end || s.charCodeAt(i) !== DOT) return false;
      i++;
    }
  }
  return i === end;
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  if (l >= 0x61 && l <= 0x66) return l - 0x61 + 10;
  return -1;
}

/** RFC 4291 §2.2 text forms: 8 groups, one `::`, an embedded IPv4 tail. */
function parseIpv6(s: string, start: number, end: number): IpBytes | null {
  const head: number[] = [];
  const tail: number[] = [];
  let groups = head;
  let seenDoubleColon = false;
  let i = start;
  if (end - start < 2) return null;
  if (s.charCodeAt(i) === COLON) {
    if (s.charCodeAt(i + 1) !== COLON) return null; // a lone leading ':'
    seenDoubleColon = true;
    groups = tail;
    i += 2;
    if (i === end) return new Uint8Array(16); // '::'
  }
  let v4Tail: IpBytes | null = null;
  while (i < end) {
    const groupStart = i;
    let v = 0;
    while (i < end) {
      const h = hexValue(s.charCodeAt(i));
      if (h < 0) break;
      v = (v << 4) | h;
      i++;
    }
    const len = i - groupStart;
    if (i < end && s.charCodeAt(i) === DOT) {
      // The last 32 bits as dotted IPv4 (RFC 4291 §2.2 form 3).
      v4Tail = new Uint8Array(4);
      if (!parseIpv4Into(s, groupStart, end, v4Tail, 0)) return null;
      i = end;
      break;
    }
    if (len === 0 || len > 4) return null;
    groups.push(v);
    if (i === end) break;
    if (s.charCodeAt(i) !== COLON) return null;
    i++;
    if (i < end && s.charCodeAt(i) === COLON) {
      if (seenDoubleColon) return null;
      seenDoubleColon = true;
      groups = tail;
      i++;
      if (i === end) break;
    } else if (i === end) {
      return null; // a trailing single ':'
    }
  }
  const words = head.length + tail.length + (v4Tail ? 2 : 0);
  if (seenDoubleColon ? words > 7 : words !== 8) return null;
  const out = new Uint8Array(16);
  let w = 0;
  for (const g of head) {
    out[w * 2] = g >> 8;
    out[w * 2 + 1] = g & 0xff;
    w++;
  }
  w = 8 - tail.length - (v4Tail ? 2 : 0);
  for (const g of tail) {
    out[w * 2] = g >> 8;
    out[w * 2 + 1] = g & 0xff;
    w++;
  }
  if (v4Tail) out.set(v4Tail, 12);
  return out;
}

/**
 * Parses an IPv4 or IPv6 address into 16 bytes (IPv4 mapped), or null. A zone index (`fe80::1%eth0`,
 * RFC 6874) is accepted and ignored. No brackets, no port, no CIDR suffix.
 */
export function parseIp(s: string): IpBytes | null {
  let end = s.length;
  if (end === 0 || end > 64) return null;
  const pct = s.indexOf('%');
  if (pct !== -1) {
    if (pct === end - 1) return null;
    end = pct;
  }
  if (s.indexOf(':') === -1 || s.indexOf(':') > end) {
    if (pct !== -1) return null; // zones belong to IPv6
    const out = new Uint8Array(16);
    out[10] = 0xff;
    out[11] = 0xff;
    return parseIpv4Into(s, 0, end, out, 12) ? out : null;
  }
  return parseIpv6(s, 0, end);
}

/**
 * Canonical text: dotted quad for IPv4 and IPv4-mapped addresses (the same client either way);
 * RFC 5952 §4 for IPv6: lowercase, no leading zeros, the longest run of two or more zero groups
 * (the first on a tie) as `::`.
 */
export function formatIp(b: IpBytes): string {
  if (isIpv4Mapped(b)) return `${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
  const words: number[] = [];
  for (let i = 0; i < 16; i += 2) words.push((b[i]! << 8) | b[i + 1]!);
  let bestStart = -1;
  let bestLen = 1; // RFC 5952 §4.2.2: a single zero group is not compressed
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (ws: number[]) => ws.map((w) => w.toString(16)).join(':');
  if (bestStart < 0) return hex(words);
  return `${hex(words.slice(0, bestStart))}::${hex(words.slice(bestStart + bestLen))}`;
}

/** parseIp then formatIp; null when `s` is not an address. */
export function canonicalIp(s: string): string | null {
  const b = parseIp(s);
  return b ? formatIp(b) : null;
}

/** True when the first `bits` bits of a and b agree. */
function prefixEquals(a: IpBytes, b: IpBytes, bits: number): boolean {
  const whole = bits >> 3;
  for (let i = 0; i < whole; i++) if (a[i] !== b[i]) return false;
  const rest = bits & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (a[whole]! & mask) === (b[whole]! & mask);
}

/** Copies `b` with every bit after the first `bits` cleared. */
export function maskIp(b: IpBytes, bits: number): IpBytes {
  const out = new Uint8Array(16);
  const whole = bits >> 3;
  out.set(b.subarray(0, whole));
  const rest = bits & 7;
  if (rest !== 0 && whole < 16) out[whole] = b[whole]! & ((0xff << (8 - rest)) & 0xff);
  return out;
}

export function inRange(addr: IpBytes, range: IpRange): boolean {
  return prefixEquals(addr, range.bytes, range.prefixBits);
}

function parseOne(entry: string): IpRange | string {
  const slash = entry.indexOf('/');
  const addrText = slash === -1 ? entry : entry.slice(0, slash);
  if (addrText.includes('%')) return 'zone indexes are not allowed in ranges';
  const bytes = parseIp(addrText);
  if (!bytes) return 'not an IPv4/IPv6 address, a CIDR range or one of loopback, private, linklocal';
  const v4 = !addrText.includes(':');
  const max = v4 ? 32 : 128;
  let bits = max;
  if (slash !== -1) {
    const p = entry.slice(slash + 1);
    if (!/^(?:0|[1-9]\d{0,2})$/.test(p) || Number(p) > max) return `prefix length must be 0-${max}`;
    bits = Number(p);
  }
  const prefixBits = v4 ? 96 + bits : bits;
  const masked = maskIp(bytes, prefixBits);
  if (!prefixEquals(masked, bytes, 128)) {
    // A typo guard: 10.1.2.3/8 usually means 10.0.0.0/8 but might mean 10.1.2.3/32.
    // An IPv6 entry gets an IPv6 suggestion: formatIp writes a mapped address as a dotted quad.
    const text = !v4 && isIpv4Mapped(masked) ? `::ffff:${formatIp(masked)}` : formatIp(masked);
    return `host bits are set; did you mean ${text}/${bits}?`;
  }
  return { bytes: masked, prefixBits };
}

/**
 * Parses one range entry: an address (a /32 or /128 range), a CIDR (`10.0.0.0/8`, `2001:db8::/32`,
 * `::ffff:10.0.0.0/104`), or a keyword from IP_KEYWORDS. Host bits after the prefix are refused.
 */
export function parseIpRange(entry: string): IpRangeResult {
  const keyword = IP_KEYWORDS[entry.toLowerCase()];
  const parts = keyword ?? [entry.trim()];
  const ranges: IpRange[] = [];
  for (const p of parts) {
    const r = parseOne(p);
    if (typeof r === 'string') return { kind: 'invalid', reason: r };
    ranges.push(r);
  }
  return { kind: 'ok', ranges };
}

/** A matcher over ranges. Empty ranges match nothing. */
export function createIpMatcher(ranges: readonly IpRange[]): (addr: IpBytes) => boolean {
  if (ranges.length === 0) return () => false;
  return (addr) => {
    for (const r of ranges) if (prefixEquals(addr, r.bytes, r.prefixBits)) return true;
    return false;
  };
}

/**
 * Parses a list of range entries; throws TypeError naming the first bad entry (callers validate
 * config with parseIpRange first, so this is a programming error).
 */
export function compileIpRanges(entries: readonly string[]): (addr: IpBytes) => boolean {
  const ranges: IpRange[] = [];
  for (const e of entries) {
    const r = parseIpRange(e);
    if (r.kind === 'invalid') throw new TypeError(`${JSON.stringify(e)}: ${r.reason}`);
    ranges.push(...r.ranges);
  }
  return createIpMatcher(ranges);
}
