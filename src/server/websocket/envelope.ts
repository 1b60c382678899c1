// The message convention (pure): `{ "type": string, ... }` envelopes and the application ping.

/** A message following `{ "type": string, ... }`; any other text or binary message is opaque. */
export type Envelope = { type: string } & Record<string, unknown>;

const PING_BYTES = Buffer.from('ping');
const BACKSLASH = 0x5c;

/** Index of the first byte that is not JSON whitespace (RFC 8259 §2). */
function skipJsonWs(data: Buffer): number {
  let i = 0;
  while (i < data.length) {
    const c = data[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
    i++;
  }
  return i;
}

/** Parses a text message as an envelope; undefined for anything else (non-JSON, arrays, no type). */
export function parseEnvelope(data: Buffer): Envelope | undefined {
  if (data[skipJsonWs(data)] !== 0x7b) return undefined; // not '{': not an object, no parse
  let v: unknown;
  try {
    v = JSON.parse(data.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  return typeof (v as { type?: unknown }).type === 'string' ? (v as Envelope) : undefined;
}

/**
 * True for a text message `{"type":"ping", ...}`. Cheap checks first, since echo runs this on every
 * message: an object starts with `{`, and one whose type is "ping" contains the bytes `ping` or a
 * backslash (a JSON escape); only such messages are parsed.
 */
export function isAppPing(data: Buffer): boolean {
  if (data[skipJsonWs(data)] !== 0x7b) return false;
  if (data.indexOf(PING_BYTES) === -1 && data.indexOf(BACKSLASH) === -1) return false;
  return parseEnvelope(data)?.type === 'ping';
}
