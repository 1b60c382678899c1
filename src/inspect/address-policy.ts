// Where `gatehouse check` may connect: used as a library inside a service, following a
// site's redirects into the service's own network is server-side request forgery. Pure: the address
// is the one a socket is about to connect to (after DNS), classified and admitted or refused here;
// live.ts applies it in the connect's `lookup` hook and before connecting to an IP literal.
import { compileIpRanges, parseIp } from '../http/ip.js';

export type AddressClass = 'loopback' | 'private' | 'link-local' | 'public';

// RFC 1122 §3.2.1.3 and RFC 4291 §2.5.2-3: loopback, and the unspecified address (0.0.0.0/8, ::),
// which Linux connects to the host itself.
const isLoopback = compileIpRanges(['loopback', '0.0.0.0/8', '::/128']);
// RFC 1918, RFC 4193 unique local, RFC 6598 shared (carrier-grade NAT), RFC 3879 deprecated site-local.
const isPrivate = compileIpRanges(['private', '100.64.0.0/10', 'fec0::/10']);
// RFC 3927, RFC 4291 §2.5.6: link-local, where cloud metadata services answer (169.254.169.254).
const isLinkLocal = compileIpRanges(['linklocal']);

/** The class of an IP address (IPv4, IPv6, IPv4-mapped IPv6); an unparsable one counts as loopback. */
export function classifyAddress(address: string): AddressClass {
  const b = parseIp(address.startsWith('[') ? address.slice(1, -1) : address);
  if (b === null) return 'loopback'; // never reached for Node's lookup results; refused, not guessed
  if (isLoopback(b)) return 'loopback';
  if (isPrivate(b)) return 'private';
  if (isLinkLocal(b)) return 'link-local';
  return 'public';
}

/** What one check has connected to so far. */
export interface AddressState {
  /** The class of the first address connected to (the URL given). */
  start: AddressClass | undefined;
  /** A public address was connected to. */
  publicSeen: boolean;
}

export type Admission = { kind: 'admit' } | { kind: 'refuse'; reason: string };

/**
 * May the check connect to an address of this class? The URL given is always admitted (checking a
 * local development server works). After it, a non-public address is refused when a public one was
 * connected to before (a public site redirecting into the network), or when it is another class than
 * the URL given (a local server sending the checker into the LAN or to the metadata service).
 * `allowPrivate` (--allow-private) admits everything.
 */
export function admitAddress(state: AddressState, cls: AddressClass, allowPrivate: boolean): Admission {
  if (allowPrivate || state.start === undefined || cls === 'public') return { kind: 'admit' };
  if (state.publicSeen) return { kind: 'refuse', reason: `a ${cls} address after a public one` };
  if (cls !== state.start) return { kind: 'refuse', reason: `a ${cls} address from a ${state.start} one` };
  return { kind: 'admit' };
}

/** Records a connection that was admitted. */
export function noteAddress(state: AddressState, cls: AddressClass): void {
  state.start ??= cls;
  if (cls === 'public') state.publicSeen = true;
}
