// The fields of a `101 Switching Protocols` (RFC 9110 §15.2.2, §7.8) that its writer did not make:
// which of the request steps' response fields may go on it. Shared by the WebSocket endpoints and the
// proxy's pass-through of an upstream's 101.
import { isHopByHop } from './proxy-headers.js';

/** A response field's value as a server holds it (Node's setHeader values). */
export type FieldValue = string | number | readonly string[];

/**
 * The request steps' response fields that go on a `101 Switching Protocols` written by another
 * writer (ws for an endpoint, the pass-through for an upstream's 101), one [name, value] per line.
 * Left out: hop-by-hop fields (RFC 9110 §7.6.1; the switch's own Connection/Upgrade are the
 * writer's), framing fields (a 101 ends its head, no content: RFC 9110 §15.2, RFC 9112 §6.3) and
 * the handshake's own Sec-WebSocket-* fields (RFC 6455 §4.2.2), which only the writer may set.
 */
export function switchFields(
  fields: ReadonlyArray<readonly [name: string, value: FieldValue]>,
): [string, string][] {
  const out: [string, string][] = [];
  for (const [name, value] of fields) {
    const lower = name.toLowerCase();
    if (isHopByHop(lower) || NOT_ON_SWITCH.has(lower) || lower.startsWith('sec-websocket-')) continue;
    if (typeof value === 'object') for (const v of value) out.push([name, v]);
    else out.push([name, String(value)]);
  }
  return out;
}

const NOT_ON_SWITCH = new Set(['content-length']);
