// Who is the client? X-Forwarded-For lists and RFC 7239 Forwarded, read right to left from the socket
// peer through trusted proxies, and the Forwarded element a proxy appends.
import { DQUOTE, EQUALS, isTchar, SEMI, skipOws, skipQuoted, trimOwsEnd } from './chars.js';
import { formatIp, type IpBytes, parseIp } from './ip.js';
import { isToken, quote, splitList, unquote } from './lists.js';

/** One node (RFC 7239 §6): an address, `unknown` (§6.2) or an obfuscated identifier (§6.3). */
export type ForwardedNode =
  | { readonly kind: 'ip'; readonly address: string; readonly bytes: IpBytes; readonly port?: string }
  | { readonly kind: 'unknown'; readonly port?: string }
  | { readonly kind: 'obfuscated'; readonly id: string; readonly port?: string };

/** The parameters of one forwarded-element (RFC 7239 §4, §5), values unquoted. */
export interface ForwardedElement {
  readonly for?: string;
  readonly by?: string;
  readonly host?: string;
  readonly proto?: string;
}

/** Hops examined at most; beyond that the last trusted hop counts as the client. */
export const MAX_FORWARDED_HOPS = 32;

/** RFC 7239 §6.3: obfnode / obfport = "_" 1*( ALPHA / DIGIT / "." / "_" / "-" ). */
const OBFUSCATED = /^_[A-Za-z0-9._-]+$/;
/** RFC 7239 §6: node-port = port / obfport; port = 1*5DIGIT. */
const PORT = /^(?:\d{1,5}|_[A-Za-z0-9._-]+)$/;
/** RFC 3986 §3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ). */
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*$/;

/**
 * Parses a node (RFC 7239 §6): `192.0.2.43`, `192.0.2.43:47011`, `[2001:db8::1]`,
 * `[2001:db8::1]:4711`, `unknown`, `_hidden`, `_hidden:_port`. With `bareIpv6` (X-Forwarded-For)
 * an unbracketed IPv6 address is accepted too. Returns null when malformed.
 */
export function parseForwardedNode(value: string, bareIpv6 = false): ForwardedNode | null {
  let name = value;
  let port: string | undefined;
  if (value.charCodeAt(0) === 0x5b /* [ */) {
    const close = value.indexOf(']');
    if (close === -1) return null;
    name = value.slice(1, close);
    const rest = value.slice(close + 1);
    if (rest !== '') {
      if (rest.charCodeAt(0) !== 0x3a || !PORT.test(rest.slice(1))) return null;
      port = rest.slice(1);
    }
    if (!name.includes(':')) return null; // brackets hold IPv6 only
    const bytes = parseIp(name);
    if (!bytes || name.includes('%')) return null;
    return port === undefined
      ? { kind: 'ip', address: formatIp(bytes), bytes }
      : { kind: 'ip', address: formatIp(bytes), bytes, port };
  }
  const firstColon = value.indexOf(':');
  if (firstColon !== -1) {
    if (bareIpv6 && value.indexOf(':', firstColon + 1) !== -1) {
      const bytes = parseIp(value);
      return bytes && !value.includes('%') ? { kind: 'ip', address: formatIp(bytes), bytes } : null;
    }
    name = value.slice(0, firstColon);
    port = value.slice(firstColon + 1);
    if (!PORT.test(port)) return null;
  }
  const withPort = port === undefined ? {} : { port };
  if (name.toLowerCase() === 'unknown') return { kind: 'unknown', ...withPort };
  if (OBFUSCATED.test(name)) return { kind: 'obfuscated', id: name, ...withPort };
  if (name.includes(':')) return null;
  const bytes = parseIp(name);
  if (!bytes) return null;
  return { kind: 'ip', address: formatIp(bytes), bytes, ...withPort };
}

/** The text clientAddress returns for a node: the canonical address, `unknown` or the identifier. */
export function nodeText(node: ForwardedNode): string {
  return node.kind === 'ip' ? node.address : node.kind === 'unknown' ? 'unknown' : node.id;
}

/**
 * Parses X-Forwarded-For: a comma-separated list of nodes, client first (de facto; no RFC).
 * Malformed members are null so a caller walking from the right stops there.
 */
export function parseXForwardedFor(value: string): (ForwardedNode | null)[] {
  return splitList(value).map((v) => parseForwardedNode(v, true));
}

/**
 * Parses one forwarded-element (RFC 7239 §4): `pair *( ";" pair )`, pair = token "=" ( token /
 * quoted-string ), names case-insensitive. OWS around ";" is tolerated. A repeated parameter
 * (§4: MUST NOT occur more than once) or any syntax error makes the element null.
 */
function parseElement(s: string): ForwardedElement | null {
  const out: Record<string, string> = {};
  const len = s.length;
  let i = 0;
  while (i < len) {
    i = skipOws(s, i, len);
    if (i < len && s.charCodeAt(i) === SEMI) {
      i++;
      continue;
    }
    if (i >= len) break;
    const nameStart = i;
    while (i < len && isTchar(s.charCodeAt(i))) i++;
    if (i === nameStart || i >= len || s.charCodeAt(i) !== EQUALS) return null;
    const name = s.slice(nameStart, i).toLowerCase();
    i++;
    let value: string | null;
    if (i < len && s.charCodeAt(i) === DQUOTE) {
      const q = skipQuoted(s, i, len);
      if (q < 0) return null;
      value = unquote(s.slice(i, q));
      i = q;
    } else {
      const vStart = i;
      while (i < len && isTchar(s.charCodeAt(i))) i++;
      value = i > vStart ? s.slice(vStart, i) : null;
    }
    if (value === null || Object.hasOwn(out, name)) return null;
    out[name] = value;
    i = skipOws(s, i, len);
    if (i < len && s.charCodeAt(i) !== SEMI) return null;
  }
  const e: { for?: string; by?: string; host?: string; proto?: string } = {};
  if (out.for !== undefined) e.for = out.for;
  if (out.by !== undefined) e.by = out.by;
  if (out.host !== undefined) e.host = out.host;
  if (out.proto !== undefined) e.proto = out.proto;
  return e;
}

/**
 * Parses a Forwarded field value (RFC 7239 §4): a list of elements, one per proxy, oldest first.
 * Malformed elements are null (kept in place so a right-to-left walk stops at them).
 */
export function parseForwarded(value: string): (ForwardedElement | null)[] {
  return splitList(value).map(parseElement);
}

export interface ClientAddressInput {
  /** The socket peer address (`req.socket.remoteAddress`). */
  readonly peer: string;
  /** X-Forwarded-For as received (duplicates joined with ", "), or undefined. */
  readonly xff?: string | undefined;
  /** Forwarded as received, or undefined. When both are given, Forwarded is read and XFF ignored:
   *  pass only the header your proxies write, or a client can forge the other. */
  readonly forwarded?: string | undefined;
  /** Whether an address belongs to a trusted proxy. */
  readonly isTrusted: (address: IpBytes) => boolean;
}

/**
 * The address that counts as the client. An untrusted peer is the client and its headers are ignored
 * (anyone can write X-Forwarded-For). A trusted peer vouches for the hop it appended, so the walk goes
 * right to left through trusted hops and stops at the first hop that is not a trusted address:
 * that address, `unknown`, an obfuscated identifier (RFC 7239 §6.2, §6.3) or `unknown` for a
 * malformed hop. When every hop is trusted, the leftmost is the client. Addresses come back canonical
 * (formatIp): `::ffff:192.0.2.1` and `192.0.2.1` are the same client.
 */
export function clientAddress(input: ClientAddressInput): string {
  const peer = parseIp(input.peer);
  if (!peer) return input.peer;
  let client = formatIp(peer);
  if (!input.isTrusted(peer)) return client;
  if (input.forwarded !== undefined) {
    const elements = parseForwarded(input.forwarded);
    const stop = Math.max(0, elements.length - MAX_FORWARDED_HOPS);
    for (let i = elements.length - 1; i >= stop; i--) {
      const e = elements[i];
      // An element without for= says nothing about its client (RFC 7239 §5.2 makes it optional).
      const node = e?.for !== undefined ? parseForwardedNode(e.for) : null;
      if (!node) return 'unknown';
      if (node.kind !== 'ip' || !input.isTrusted(node.bytes)) return nodeText(node);
      client = node.address;
    }
    return client;
  }
  if (input.xff !== undefined) {
    // Walk the list from the right without splitting all of it (XFF has no quoted-strings).
    const s = input.xff;
    let end = s.length;
    for (let hops = 0; end > 0 && hops < MAX_FORWARDED_HOPS; ) {
      const comma = s.lastIndexOf(',', end - 1);
      const start = skipOws(s, comma + 1, end);
      const stop = trimOwsEnd(s, start, end);
      end = comma === -1 ? 0 : comma;
      if (stop === start) continue; // RFC 9110 §5.6.1.2: empty members are ignored
      hops++;
      const node = parseForwardedNode(s.slice(start, stop), true);
      if (!node) return 'unknown';
      if (node.kind !== 'ip' || !input.isTrusted(node.bytes)) return nodeText(node);
      client = node.address;
    }
  }
  return client;
}

/** A node to format: an address string, `unknown`, an obfuscated `_id`, or a parsed node. */
export type ForwardedNodeInput = string | ForwardedNode;

function formatNode(n: ForwardedNodeInput, port?: number | string): string {
  let node: ForwardedNode | null;
  if (typeof n === 'string') {
    const bytes = parseIp(n);
    if (bytes) node = { kind: 'ip', address: formatIp(bytes), bytes };
    else if (n.toLowerCase() === 'unknown') node = { kind: 'unknown' };
    else if (OBFUSCATED.test(n)) node = { kind: 'obfuscated', id: n };
    else throw new TypeError(`Forwarded: ${JSON.stringify(n)} is not an address, unknown or _obfuscated`);
  } else {
    node = n;
  }
  const p = port !== undefined ? String(port) : node.port;
  if (p !== undefined && !PORT.test(p)) throw new TypeError(`Forwarded: bad port ${JSON.stringify(p)}`);
  const name = nodeText(node);
  // RFC 7239 §6: IPv6 goes in brackets; ":" and "[" are not tchar, so such values are quoted (§4).
  const text =
    (node.kind === 'ip' && name.includes(':') ? `[${name}]` : name) + (p !== undefined ? `:${p}` : '');
  return isToken(text) ? text : `"${text}"`;
}

export interface ForwardedElementInput {
  /** The client of this hop (the peer the proxy received the request from). */
  readonly for?: ForwardedNodeInput;
  readonly forPort?: number | string;
  /** The interface the request came in on. */
  readonly by?: ForwardedNodeInput;
  /** The Host the client asked for. */
  readonly host?: string;
  /** The scheme the client used (http, https). */
  readonly proto?: string;
}

/**
 * Formats one forwarded-element (RFC 7239 §4): `for="[2001:db8::1]:4711";by=_gw;proto=https;host=...`.
 * Values that are not tokens are quoted. Throws TypeError for a value that cannot be sent (a bad
 * address, scheme or a host with control characters); callers pass request-derived data they checked.
 * Append it to a received Forwarded value with ", " only when the peer is trusted.
 */
export function formatForwardedElement(e: ForwardedElementInput): string {
  const parts: string[] = [];
  if (e.for !== undefined) parts.push(`for=${formatNode(e.for, e.forPort)}`);
  if (e.by !== undefined) parts.push(`by=${formatNode(e.by)}`);
  if (e.proto !== undefined) {
    if (!SCHEME.test(e.proto)) throw new TypeError(`Forwarded: bad proto ${JSON.stringify(e.proto)}`);
    parts.push(`proto=${e.proto.toLowerCase()}`);
  }
  if (e.host !== undefined) {
    // RFC 7239 §5.3: the Host header field value; quote() refuses CR, LF and other non-field chars.
    if (e.host === '' || e.host.includes(',') || e.host.includes(';'))
      throw new TypeError(`Forwarded: bad host ${JSON.stringify(e.host)}`);
    parts.push(`host=${isToken(e.host) ? e.host : quote(e.host)}`);
  }
  return parts.join(';');
}
