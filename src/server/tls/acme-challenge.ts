// The HTTP-01 responder (RFC 8555 §8.3) for the plain-HTTP listener: GET
// /.well-known/acme-challenge/<token> answers the token's key authorization. Pure: a lookup in the
// manager's table, no I/O.

export interface AcmeChallenges {
  /** The key authorization for an HTTP-01 token (RFC 8555 §8.3), or undefined. Tokens are base64url. */
  get(token: string): string | undefined;
}

export const ACME_CHALLENGE_PREFIX = '/.well-known/acme-challenge/';

/**
 * A token as RFC 8555 §8.3 makes it: base64url (RFC 4648 §5) without padding. 256 characters is far
 * beyond the 128 bits (22 characters) a CA uses and bounds the lookup. Anything else (dots, slashes,
 * percent escapes, `=` padding) can never be a token, so it is refused before the table is consulted.
 */
const TOKEN = /^[A-Za-z0-9_-]{1,256}$/;

export type AcmeChallengeAnswer =
  /** The key authorization, as the body (RFC 8555 §8.3: `token || '.' || thumbprint`). */
  | { kind: 'answer'; status: 200; body: string; contentType: 'application/octet-stream' }
  /** A challenge path with no such token, or one that cannot be a token. */
  | { kind: 'unknown-token'; status: 404 }
  /** A challenge path with a method other than GET or HEAD (RFC 9110 §15.5.6: Allow is required). */
  | { kind: 'method-not-allowed'; status: 405; allow: 'GET, HEAD' };

/**
 * Answers a request on the plain-HTTP listener if its path is in the challenge folder; `undefined`
 * means "not a challenge path, carry on" (the https redirect). `path` is the request target as
 * received (origin-form, RFC 9112 §3.2.1): no decoding, no dot-segment removal, and a query makes
 * it no token, so `/.well-known/acme-challenge/%2e%2e` or `.../a/../b` never reaches the table.
 */
export function answerAcmeChallenge(
  challenges: AcmeChallenges,
  method: string,
  path: string,
): AcmeChallengeAnswer | undefined {
  if (!path.startsWith(ACME_CHALLENGE_PREFIX)) return undefined;
  if (method !== 'GET' && method !== 'HEAD')
    return { kind: 'method-not-allowed', status: 405, allow: 'GET, HEAD' };
  const token = path.slice(ACME_CHALLENGE_PREFIX.length);
  if (!TOKEN.test(token)) return { kind: 'unknown-token', status: 404 };
  const body = challenges.get(token);
  // `__proto__` is a valid token shape: the manager's table is a Map (own entries only), and a
  // table that hands back anything but a string (an object's prototype member) is not trusted.
  if (typeof body !== 'string') return { kind: 'unknown-token', status: 404 };
  return { kind: 'answer', status: 200, body, contentType: 'application/octet-stream' };
}
