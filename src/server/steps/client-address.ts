// The client address of a request: the socket peer, or what trusted proxies say in X-Forwarded-For
// (or RFC 7239 Forwarded). Trust is decided by `trustProxy` (addresses, CIDRs, keywords).
import { clientAddress, parseForwarded } from '../../http/forwarded.js';
import { compileIpRanges, formatIp, type IpBytes, parseIp } from '../../http/ip.js';
import type { ExchangeRequest, ExchangeSocket } from '../core/exchange.js';

/** Which header the trusted proxies write. Only that one is read: a client can forge the other. */
export type ForwardedHeader = 'x-forwarded-for' | 'forwarded';

export interface ClientAddressOptions {
  /** Default 'x-forwarded-for' (nginx, HAProxy, Envoy, AWS/GCP load balancers, Cloudflare). */
  readonly header?: ForwardedHeader;
}

interface PeerInfo {
  readonly address: string;
  readonly trusted: boolean;
}

/**
 * Per-socket peer facts, computed once per connection: the canonical peer address and whether it
 * is a trusted proxy. Keyed weakly, so a closed socket takes its entry with it.
 */
function peerInfoCache(isTrusted: (a: IpBytes) => boolean): (socket: ExchangeSocket) => PeerInfo {
  const cache = new WeakMap<ExchangeSocket, PeerInfo>();
  return (socket) => {
    let info = cache.get(socket);
    if (info === undefined) {
      const raw = socket.remoteAddress ?? '';
      const bytes = parseIp(raw);
      info = { address: bytes ? formatIp(bytes) : raw, trusted: bytes !== null && isTrusted(bytes) };
      // remoteAddress is undefined once the socket is destroyed: do not remember that.
      if (raw !== '') cache.set(socket, info);
    }
    return info;
  };
}

/** A trust test over `trustProxy` entries. Throws TypeError on an entry the config would refuse. */
export function createTrustTest(trust: readonly string[]): (address: IpBytes) => boolean {
  return compileIpRanges(trust);
}

/**
 * `(req) => address` for StepContext.clientAddress. Without trusted proxies it is the socket peer.
 * With them, an untrusted peer is still the client (its headers are ignored); a trusted peer's
 * header is walked right to left (http/forwarded.ts clientAddress). Addresses are canonical:
 * IPv4-mapped IPv6 peers read as IPv4, IPv6 in RFC 5952 form.
 */
export function createClientAddress(
  trust: readonly string[],
  options: ClientAddressOptions = {},
): (req: ExchangeRequest) => string {
  const isTrusted = createTrustTest(trust);
  const peerOf = peerInfoCache(isTrusted);
  if (trust.length === 0) return (req) => peerOf(req.socket).address;
  const header = options.header ?? 'x-forwarded-for';
  return (req) => {
    const peer = peerOf(req.socket);
    if (!peer.trusted) return peer.address;
    const value = req.headers[header];
    if (value === undefined) return peer.address;
    return clientAddress({
      peer: peer.address,
      ...(header === 'forwarded' ? { forwarded: String(value) } : { xff: String(value) }),
      isTrusted,
    });
  };
}

/** `(req) => boolean`: the socket peer is a trusted proxy (for the proxy's X-Forwarded-* handling). */
export function createTrustedPeer(trust: readonly string[]): (req: ExchangeRequest) => boolean {
  if (trust.length === 0) return () => false;
  const peerOf = peerInfoCache(createTrustTest(trust));
  return (req) => peerOf(req.socket).trusted;
}

/**
 * `(req) => boolean`: the client reached us over TLS. True on a TLS socket, or when a trusted peer
 * says so in the header it writes (X-Forwarded-Proto's last member, or Forwarded's last `proto=`).
 * Used for Strict-Transport-Security, which must only go out over secure transport (RFC 6797 §7.2).
 */
export function createIsSecure(
  trust: readonly string[],
  options: ClientAddressOptions = {},
): (req: ExchangeRequest) => boolean {
  const encrypted = (req: ExchangeRequest) => req.socket.encrypted === true;
  if (trust.length === 0) return encrypted;
  const peerOf = peerInfoCache(createTrustTest(trust));
  const header = options.header ?? 'x-forwarded-for';
  return (req) => {
    if (encrypted(req)) return true;
    if (!peerOf(req.socket).trusted) return false;
    if (header === 'forwarded') {
      const value = req.headers.forwarded;
      if (value === undefined) return false;
      const elements = parseForwarded(String(value));
      return elements[elements.length - 1]?.proto?.toLowerCase() === 'https';
    }
    const xfp = req.headers['x-forwarded-proto'];
    if (xfp === undefined) return false;
    const text = String(xfp);
    return (
      text
        .slice(text.lastIndexOf(',') + 1)
        .trim()
        .toLowerCase() === 'https'
    );
  };
}
