// Header rewriting for a reverse proxy: hop-by-hop removal (RFC 9110 §7.6.1), Via (§7.6.3),
// X-Forwarded-* and Forwarded (RFC 7239). Pure: plain header records in, plain records out.
import { parseForwarded } from './forwarded.js';

export type HeaderRecord = Record<string, string | string[] | undefined>;

/** Hop-by-hop fields that never cross a proxy (RFC 9110 §7.6.1, RFC 9112 §9.6, §7.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
]);

export function isHopByHop(name: string): boolean {
  return HOP_BY_HOP.has(name);
}

const NO_TOKENS: ReadonlySet<string> = new Set();

/** Field names listed in Connection (RFC 9110 §7.6.1): those are hop-by-hop too. */
export function connectionTokens(value: string | string[] | undefined): Set<string> {
  const out = new Set<string>();
  if (value === undefined) return out;
  for (const v of Array.isArray(value) ? value : [value]) {
    for (const t of v.split(',')) {
      const n = t.trim().toLowerCase();
      if (n) out.add(n);
    }
  }
  return out;
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function joined(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v.join(', ') : v;
}

/** The Connection tokens of `headers` that name a field not already hop-by-hop: a shared empty set
 *  for the usual values (none, keep-alive, close with no field named close), allocating nothing. */
function listedFields(headers: HeaderRecord): ReadonlySet<string> {
  const value = headers.connection;
  if (value === undefined) return NO_TOKENS;
  if (typeof value === 'string' && value.length <= 10) {
    const v = value.toLowerCase();
    if (v === 'keep-alive' || (v === 'close' && headers.close === undefined)) return NO_TOKENS;
  }
  return connectionTokens(value);
}

/** Copies `headers` without hop-by-hop fields; `keep` names survive (e.g. upgrade for WebSocket). */
export function stripHopByHop(
  headers: HeaderRecord,
  keep?: ReadonlySet<string>,
): Record<string, string | string[]> {
  const listed = listedFields(headers);
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const v = headers[name];
    // RFC 9113 §8.3: HTTP/2 pseudo-header fields (:authority, :path, ...) are not fields to forward.
    if (v === undefined || name.charCodeAt(0) === 0x3a) continue;
    if ((HOP_BY_HOP.has(name) || listed.has(name)) && !keep?.has(name)) continue;
    out[name] = v;
  }
  // RFC 9110 §10.1.4: "TE: trailers" says the client accepts trailers; that much may pass.
  const te = first(headers.te);
  if (te !== undefined && /(^|,)\s*trailers\s*(;|,|$)/i.test(te) && !listed.has('te')) out.te = 'trailers';
  return out;
}

/** An RFC 7239 node: IPv6 in brackets and quoted, IPv4 as is, `unknown` when absent. */
export function forwardedNode(address: string | undefined): string {
  if (!address) return 'unknown';
  const a = address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
  return a.includes(':') ? `"[${a}]"` : a;
}

function forwardedValue(v: string): string {
  // RFC 7239 §4: token or quoted-string
  return /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(v) ? v : `"${v.replace(/["\\]/g, '\\$&')}"`;
}

export interface ForwardInput {
  /** Request headers as received (lowercase names). */
  readonly headers: HeaderRecord;
  /** Socket peer address. */
  readonly peer: string | undefined;
  /** Whether the peer is a trusted proxy (then its X-Forwarded-* are kept and extended). */
  readonly peerTrusted: boolean;
  /** `http` or `https`, as the client reached us. */
  readonly proto: 'http' | 'https';
  /** The upstream's authority, for changeOrigin. */
  readonly upstreamHost: string;
  readonly changeOrigin: boolean;
  readonly xForwarded: boolean;
  readonly forwarded: boolean;
  /** Our Via pseudonym, e.g. `gatehouse`. */
  readonly via: string | undefined;
  /** The client's protocol version for Via (RFC 9110 §7.6.3): "1.1", "1.0", or "2" for HTTP/2. */
  readonly viaVersion?: string | undefined;
  /** Keep Upgrade/Connection for a WebSocket pass-through. */
  readonly upgrade?: boolean;
}

const KEEP_UPGRADE = new Set(['upgrade', 'connection']);

/** The request headers to send upstream. */
export function upstreamRequestHeaders(i: ForwardInput): Record<string, string | string[]> {
  const out = stripHopByHop(i.headers, i.upgrade ? KEEP_UPGRADE : undefined);
  if (i.upgrade) {
    out.connection = 'Upgrade';
    out.upgrade = first(i.headers.upgrade) ?? 'websocket';
  }
  // undici refuses Expect; Node already answered 100-continue to the client (RFC 9110 §10.1.1).
  delete out.expect;
  const host = first(i.headers.host);
  // A proxy must send Host (RFC 9112 §3.2): `Connection: host` cannot remove it. The fields below
  // are ours to regenerate, whatever Connection lists (RFC 9110 §7.6.1 lets the sender drop them,
  // not the recipient's own).
  if (i.changeOrigin) out.host = i.upstreamHost;
  else if (host !== undefined) out.host = host;
  const peer = i.peer ?? '';
  const peerAddr = peer.startsWith('::ffff:') && peer.includes('.') ? peer.slice(7) : peer;
  if (i.xForwarded) {
    // Append to X-Forwarded-For only what a trusted proxy said; otherwise start afresh.
    const xff = joined(i.headers['x-forwarded-for']);
    out['x-forwarded-for'] = i.peerTrusted && xff ? `${xff}, ${peerAddr}` : peerAddr;
    const xfh = first(i.headers['x-forwarded-host']);
    const xfp = first(i.headers['x-forwarded-proto']);
    if (i.peerTrusted && xfh) out['x-forwarded-host'] = xfh;
    else if (host) out['x-forwarded-host'] = host;
    else delete out['x-forwarded-host'];
    out['x-forwarded-proto'] = i.peerTrusted && xfp ? xfp : i.proto;
  } else {
    delete out['x-forwarded-for'];
    delete out['x-forwarded-host'];
    delete out['x-forwarded-proto'];
  }
  if (i.forwarded) {
    // RFC 7239 §4: append our element; an untrusted client's list is not believed.
    const parts = [`for=${forwardedNode(peerAddr)}`];
    if (host) parts.push(`host=${forwardedValue(host)}`);
    parts.push(`proto=${i.proto}`);
    const prev = joined(i.headers.forwarded);
    const ours = parts.join(';');
    const combined = i.peerTrusted && prev ? `${prev}, ${ours}` : ours;
    // A trusted hop's malformed value (an open quoted-string, RFC 7239 §4) would swallow our element:
    // then the next hop gets ours alone.
    out.forwarded = combined === ours || parseForwarded(combined).at(-1) != null ? combined : ours;
  } else if (!i.peerTrusted) delete out.forwarded;
  if (i.via) out.via = appendVia(i.headers.via, i.via, i.viaVersion);
  return out;
}

/** RFC 9110 §7.6.3: add our hop to Via. */
export function appendVia(
  existing: string | string[] | undefined,
  pseudonym: string,
  version = '1.1',
): string {
  const prev = joined(existing);
  return prev ? `${prev}, ${version} ${pseudonym}` : `${version} ${pseudonym}`;
}

export interface ResponseRewrite {
  /** Upstream origin, e.g. http://127.0.0.1:3000 */
  readonly upstreamOrigin: string;
  /** The public origin the client used, e.g. https://example.com */
  readonly publicOrigin: string;
  /** Path prefix that maps to the upstream's root ('' when not stripped). */
  readonly publicPrefix: string;
  readonly upstreamPrefix: string;
}

/** Rewrites a Location that points at the upstream to the public address (opt-in). */
export function rewriteLocation(location: string, r: ResponseRewrite): string {
  let rest: string | undefined;
  const absolute = location.startsWith(r.upstreamOrigin);
  if (absolute) rest = location.slice(r.upstreamOrigin.length);
  else if (location.startsWith('/') && !location.startsWith('//')) rest = location;
  if (rest === undefined || (rest !== '' && !rest.startsWith('/') && !rest.startsWith('?'))) return location;
  if (rest === '' || rest.startsWith('?')) rest = `/${rest}`;
  // The upstream's base path is cut only at a segment boundary (RFC 3986 §3.3): /api covers /api,
  // /api/x and /api?q, never /apix or /api.evil.com.
  const p = r.upstreamPrefix;
  if (p && rest.startsWith(p)) {
    const next = rest.charCodeAt(p.length);
    if (Number.isNaN(next)) rest = '/';
    else if (next === 47 /* / */) rest = rest.slice(p.length);
    else if (next === 63 /* ? */) rest = `/${rest.slice(p.length)}`;
  }
  const path = r.publicPrefix + (rest === '/' && r.publicPrefix ? '/' : rest);
  // A path starting with '//' would be read as another host (RFC 3986 §4.2): send it absolute.
  return location.startsWith('/') && !path.startsWith('//') ? path : r.publicOrigin + path;
}

/** Rewrites Set-Cookie Domain (upstream host -> public host) and Path (upstream prefix -> public prefix). */
export function rewriteSetCookie(
  cookie: string,
  upstreamHost: string,
  publicHost: string,
  publicPrefix: string,
): string {
  // The first piece is the cookie-pair, never an attribute (RFC 6265 §4.1.1), whatever its name.
  return cookie
    .split(';')
    .map((part, i) => {
      const eq = part.indexOf('=');
      if (i === 0 || eq === -1) return part;
      const name = part.slice(0, eq).trim().toLowerCase();
      const value = part.slice(eq + 1).trim();
      const lead = part.slice(0, part.length - part.trimStart().length);
      if (name === 'domain' && value.replace(/^\./, '').toLowerCase() === upstreamHost.toLowerCase()) {
        return `${lead}Domain=${publicHost}`;
      }
      if (name === 'path' && publicPrefix && value.startsWith('/')) {
        return `${lead}Path=${publicPrefix}${value === '/' ? '' : value}`;
      }
      return part;
    })
    .join(';');
}

/** Interim responses forwarded per request at most; more abort the exchange (504). */
export const MAX_INTERIM_RESPONSES = 32;

export type InterimDecision =
  | { readonly kind: 'forward' }
  | { readonly kind: 'drop' }
  | { readonly kind: 'abort'; readonly reason: 'too-many' };

/**
 * What a proxy does with the `count`-th (1-based) interim response of one exchange.
 * RFC 9110 §15.2: a proxy MUST forward 1xx responses it did not ask for, except to an HTTP/1.0
 * client, which cannot parse them; 101 only answers an upgrade (RFC 9110 §15.2.2). Bounded so a
 * storm of them cannot hold the exchange open (the final head is also bounded by time).
 */
export function interimDecision(i: {
  readonly status: number;
  readonly count: number;
  readonly clientHttp10: boolean;
  readonly max?: number;
}): InterimDecision {
  if (i.count > (i.max ?? MAX_INTERIM_RESPONSES)) return { kind: 'abort', reason: 'too-many' };
  if (i.status === 101 || i.clientHttp10) return { kind: 'drop' };
  return { kind: 'forward' };
}

const REASONS: Record<number, string> = {
  100: 'Continue',
  102: 'Processing',
  103: 'Early Hints',
};

/**
 * The serialized head of an interim response (RFC 9112 §4), its fields minus hop-by-hop ones.
 * The upstream's parser already refused CR/LF in names and values; the reason phrase is ours.
 */
export function formatInterimHead(status: number, headers: HeaderRecord): string {
  let head = `HTTP/1.1 ${status} ${REASONS[status] ?? 'Informational'}\r\n`;
  const fields = stripHopByHop(headers);
  for (const name in fields) {
    const v = fields[name]!;
    if (Array.isArray(v)) for (const x of v) head += `${name}: ${x}\r\n`;
    else head += `${name}: ${v}\r\n`;
  }
  return `${head}\r\n`;
}
