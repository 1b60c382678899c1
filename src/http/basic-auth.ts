// The Basic authentication scheme (RFC 7617) on the framework of RFC 9110 §11.
// Pure: parsing the Authorization field and building the WWW-Authenticate challenge.
import { formatCacheControl, parseCacheControl } from './cache-control.js';
import { isOws } from './chars.js';
import { quote } from './lists.js';

export type BasicCredentialsResult =
  | { readonly kind: 'credentials'; readonly userId: string; readonly password: string }
  /** No Authorization field at all. */
  | { readonly kind: 'missing' }
  /** Another scheme (Bearer, Digest, ...). */
  | { readonly kind: 'other-scheme' }
  /** Basic, but the token or the decoded user-pass is malformed. */
  | { readonly kind: 'invalid'; readonly reason: string };

const MISSING: BasicCredentialsResult = { kind: 'missing' };
const OTHER: BasicCredentialsResult = { kind: 'other-scheme' };

/** RFC 9110 §11.2: token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=". */
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;
/** Base64 proper (RFC 4648 §4), which is what RFC 7617 §2 puts in the token68. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** CTL (RFC 5234 B.1) and DEL: RFC 7617 §2 forbids them in user-id and password. */
const CONTROL = /[\x00-\x1f\x7f]/;
/** Longest credentials token we decode; beyond that it is not a password anyone typed. */
export const MAX_BASIC_TOKEN_LENGTH = 4096;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * RFC 7617 §2.1 with charset="UTF-8": user-ids are compared in Unicode Normalization Form C
 * (the UsernameCasePreserved profile of RFC 8265 §3.3 is NFC plus width mapping; we apply NFC).
 */
export function normalizeUserId(s: string): string {
  return s.normalize('NFC');
}

/**
 * RFC 7617 §2.1 with charset="UTF-8": passwords follow the OpaqueString profile (RFC 8265 §4.2):
 * non-ASCII spaces become U+0020, then NFC. Hash and verify both apply it, so a password typed on
 * a keyboard that yields a no-break space or decomposed accents still matches.
 */
export function normalizePassword(s: string): string {
  return s.replace(/\p{Zs}/gu, ' ').normalize('NFC');
}

/**
 * Parses `Authorization: Basic <base64(user-id ":" password)>` (RFC 7617 §2). The scheme name is
 * case-insensitive (RFC 9110 §11.1); the token is strict base64. The octets are decoded as UTF-8
 * (we announce charset="UTF-8", §2.1); invalid UTF-8, a missing ":" or control characters make the
 * credentials invalid. The user-id ends at the first ":" (a user-id cannot hold one, §2), so a
 * password may contain ":". Both parts come back normalised (normalizeUserId, normalizePassword).
 */
export function parseBasicAuthorization(value: string | undefined): BasicCredentialsResult {
  if (value === undefined) return MISSING;
  let i = 0;
  const len = value.length;
  while (i < len && isOws(value.charCodeAt(i))) i++;
  // auth-scheme "Basic" then 1*SP (RFC 9110 §11.4 credentials = auth-scheme [ 1*SP token68 ]).
  if (len - i < 5 || value.slice(i, i + 5).toLowerCase() !== 'basic') return OTHER;
  i += 5;
  if (i < len && value.charCodeAt(i) !== 0x20) return OTHER; // e.g. "Basicx"
  while (i < len && value.charCodeAt(i) === 0x20) i++;
  let end = len;
  while (end > i && isOws(value.charCodeAt(end - 1))) end--;
  const token = value.slice(i, end);
  if (token === '') return { kind: 'invalid', reason: 'no credentials after Basic' };
  if (token.length > MAX_BASIC_TOKEN_LENGTH) return { kind: 'invalid', reason: 'credentials too long' };
  if (!TOKEN68.test(token) || !BASE64.test(token))
    return { kind: 'invalid', reason: 'credentials are not base64' };
  const binary = atob(token);
  const bytes = new Uint8Array(binary.length);
  for (let k = 0; k < binary.length; k++) bytes[k] = binary.charCodeAt(k);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { kind: 'invalid', reason: 'credentials are not UTF-8' };
  }
  const colon = text.indexOf(':');
  if (colon === -1) return { kind: 'invalid', reason: 'no ":" between user-id and password' };
  const userId = text.slice(0, colon);
  const password = text.slice(colon + 1);
  if (CONTROL.test(text)) return { kind: 'invalid', reason: 'control characters in the credentials' };
  return { kind: 'credentials', userId: normalizeUserId(userId), password: normalizePassword(password) };
}

/** The Authorization value a client sends (for tests and clients): `Basic base64(utf8(user:pass))`. */
export function formatBasicAuthorization(userId: string, password: string): string {
  const bytes = new TextEncoder().encode(`${userId}:${password}`);
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return `Basic ${btoa(binary)}`;
}

/**
 * The challenge `Basic realm="...", charset="UTF-8"` (RFC 7617 §2, §2.1). The realm is a
 * quoted-string; throws TypeError when it holds characters no field can carry (a config error).
 */
export function formatBasicChallenge(realm: string): string {
  return `Basic realm=${quote(realm)}, charset="UTF-8"`;
}

/**
 * The Cache-Control for a response whose access depended on who asked (credentials or client
 * address). RFC 9111 §3.5 lets a shared cache store a response to a request with Authorization when
 * it says `public`, `s-maxage` or `must-revalidate`, and our static policies say `public` for assets:
 * a CDN could then hand a protected file to anyone. So `public` and `s-maxage` go and `private` is
 * added (§5.2.2.7: only private caches may store it); other directives (max-age, no-cache,
 * immutable, no-store) keep their meaning for the browser. A missing value becomes `private`.
 */
export function privateCacheControl(value: string | readonly string[] | undefined): string {
  const cc = parseCacheControl(value);
  const out: [string, string | true][] = [['private', true]];
  for (const [name, arg] of cc.directives) {
    if (name === 'public' || name === 's-maxage' || name === 'private') continue;
    out.push([name, arg]);
  }
  return formatCacheControl(out);
}
