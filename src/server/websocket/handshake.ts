// The handshake decision (pure): RFC 6455 §4.2.1 checks and the origin policy. (The fields a 101
// carries beside the handshake's own: src/http/switch-fields.ts.)
import { parseSubprotocolOffer } from '../../http/websocket-relay.js';
import { ERRORS, type ErrorEntry } from '../core/errors.js';

/** RFC 9110 §15.5.22; not in the shared error catalogue (yet). */
const UPGRADE_REQUIRED: ErrorEntry = { status: 426, code: 'upgrade_required', title: 'Upgrade Required' };
/** RFC 6455 §4.1: the key is the base64 of 16 random bytes. */
const KEY = /^[+/0-9A-Za-z]{22}==$/;
const DIGITS = /^\d+$/;

export type HandshakeDecision =
  | { kind: 'accept' }
  | { kind: 'refuse'; entry: ErrorEntry; detail: string; headers?: Record<string, string> };

/**
 * Checks an upgrade request against RFC 6455 §4.2.1 and the endpoint's origin policy, in order:
 * method, Upgrade, Sec-WebSocket-Key, Sec-WebSocket-Version, Origin. One status and message each.
 */
export function checkHandshake(i: {
  method: string | undefined;
  header: (name: string) => string | undefined;
  requireOrigin: boolean;
  originAllowed: (origin: string) => boolean;
}): HandshakeDecision {
  // §4.2.1 item 1: the method MUST be GET. §4.2.1 asks for "such as 400", not 405.
  if (i.method !== 'GET') {
    return refusal(ERRORS.badRequest, 'A WebSocket handshake must be a GET request.');
  }
  // §4.2.1 item 3: Upgrade is "websocket", ASCII case-insensitive (ws accepts nothing else either).
  if (i.header('upgrade')?.trim().toLowerCase() !== 'websocket') {
    return refusal(ERRORS.badRequest, 'The Upgrade header must be "websocket".');
  }
  const key = i.header('sec-websocket-key');
  if (key === undefined || !KEY.test(key.trim())) {
    return refusal(ERRORS.badRequest, 'Missing or invalid Sec-WebSocket-Key header.');
  }
  const version = i.header('sec-websocket-version')?.trim();
  if (version === undefined || !DIGITS.test(version)) {
    return refusal(ERRORS.badRequest, 'Missing or invalid Sec-WebSocket-Version header.');
  }
  // §4.2.2 / §4.4: a version we do not speak gets 426 and the versions we do. 426 needs Upgrade, and
  // Upgrade needs the "upgrade" connection option (RFC 9110 §15.5.22, §7.8).
  if (version !== '13') {
    return refusal(UPGRADE_REQUIRED, `WebSocket version ${version} is not supported; use 13.`, {
      'Sec-WebSocket-Version': '13',
      Upgrade: 'websocket',
      Connection: 'Upgrade, close',
    });
  }
  // §10.2: browsers always send Origin; a request without one comes from a non-browser client.
  const origin = i.header('origin');
  if (origin === undefined) {
    if (i.requireOrigin) return refusal(ERRORS.forbidden, 'This endpoint requires an Origin header.');
  } else if (!i.originAllowed(origin)) {
    return refusal(ERRORS.forbidden, 'The Origin of this WebSocket handshake is not allowed.');
  }
  return { kind: 'accept' };
}

function refusal(entry: ErrorEntry, detail: string, headers?: Record<string, string>): HandshakeDecision {
  return headers ? { kind: 'refuse', entry, detail, headers } : { kind: 'refuse', entry, detail };
}

/**
 * True when `origin` names the host the request was sent to (its Host header): the handshake then
 * cannot come from a cross-site page (cross-site WebSocket hijacking), so no allow-list is needed.
 * The scheme is not compared (a page on https may talk to ws behind a TLS-terminating proxy).
 */
export function isSameOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined || origin === 'null') return false;
  let u: URL;
  try {
    u = new URL(origin);
  } catch {
    return false;
  }
  const defaultPort = u.protocol === 'https:' ? '443' : u.protocol === 'http:' ? '80' : undefined;
  if (defaultPort === undefined) return false;
  const h = host.trim().toLowerCase();
  // URL lowercases the host and drops the scheme's default port; Host may still carry it.
  return u.host === h || (u.port === '' && `${u.host}:${defaultPort}` === h);
}

/** RFC 6455 §4.2.2 /subprotocol/: the first of ours (our preference order) that the client offered. */
export function firstOffered(ours: readonly string[], offered: ReadonlySet<string>): string | undefined {
  for (const p of ours) if (offered.has(p)) return p;
  // Never agree to a subprotocol we do not speak; the client decides whether to go on without one.
  return undefined;
}

export type SubprotocolChoice =
  | { kind: 'chosen'; protocol: string | undefined }
  | { kind: 'refuse'; entry: ErrorEntry; detail: string };

/**
 * The subprotocol of a handshake whose Sec-WebSocket-Protocol is read here (on the runtimes' own servers;
 * ws reads it on Node): RFC 6455 §4.1, 1#token, each offered once; malformed -> 400, as ws answers.
 */
export function chooseSubprotocol(field: string | undefined, ours: readonly string[]): SubprotocolChoice {
  const offer = parseSubprotocolOffer(field);
  if (offer.kind === 'malformed') {
    return { kind: 'refuse', entry: ERRORS.badRequest, detail: 'Invalid Sec-WebSocket-Protocol header.' };
  }
  return { kind: 'chosen', protocol: firstOffered(ours, new Set(offer.protocols)) };
}
