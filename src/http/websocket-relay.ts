// WebSocket decisions shared by the endpoints and the proxy's message relay (pure): the client's
// subprotocol offer (RFC 6455 §4.1) and the close code a relay passes on (RFC 6455 §7.4).
import { isToken, splitList } from './lists.js';

export type SubprotocolOffer = { kind: 'offered'; protocols: string[] } | { kind: 'malformed' };

/**
 * Sec-WebSocket-Protocol as the client sent it: RFC 6455 §4.1, 1#token with each value once, in the
 * client's order. Absent: nothing offered. Empty, a non-token or a repeat: malformed (ws answers 400).
 */
export function parseSubprotocolOffer(field: string | undefined): SubprotocolOffer {
  if (field === undefined) return { kind: 'offered', protocols: [] };
  const protocols = splitList(field);
  if (protocols.length === 0) return { kind: 'malformed' };
  const seen = new Set<string>();
  for (const p of protocols) {
    if (!isToken(p) || seen.has(p)) return { kind: 'malformed' };
    seen.add(p);
  }
  return { kind: 'offered', protocols };
}

/** RFC 6455 §7.4.1: 1001 Going Away, 1011 Internal Error. */
const GOING_AWAY = 1001;
const INTERNAL_ERROR = 1011;

/**
 * The code a relay sends on to the other side when one side's connection closed with `code`
 * (`toUpstream`: the client's close, going to the upstream). undefined: a Close without a status.
 * - 1005 (the Close had no status, §7.1.5) goes on as a Close without one.
 * - 1006 (no Close at all) and 1015 (TLS failure) MUST NOT be sent (§7.4.1): the upstream's becomes
 *   1011 for the client (the proxy lost its upstream), the client's 1001 for the upstream (the client went).
 * - Any other code defined for the wire (§7.4.1, §7.4.2: 1000-1003, 1007-1014, 3000-4999) passes as is;
 *   a code outside those (a host lets none through) is treated as abnormal.
 */
export function relayedCloseCode(code: number, toUpstream: boolean): number | undefined {
  if (code === 1005) return undefined;
  const onWire =
    (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999);
  if (onWire) return code;
  return toUpstream ? GOING_AWAY : INTERNAL_ERROR;
}
