// Location (RFC 9110 §10.2.2): a URI reference; a relative one is resolved against the target URI.
// Pure: `new URL` is the WHATWG parser, the one browsers use when they follow the field.

export type LocationResult =
  /** A reference within the request's own origin, sent as an absolute-path reference (`/a/b?q#f`). */
  | { readonly kind: 'path'; readonly location: string }
  /** An absolute http(s) URL the caller gave, sent in its serialised form. */
  | { readonly kind: 'absolute'; readonly location: string }
  | { readonly kind: 'invalid'; readonly reason: string };

// Two stand-in origins (RFC 6761 .invalid): the server never knows its own origin for sure (Host
// can be spoofed), so a relative reference is resolved against the target path under both. A
// reference that keeps neither origin names an authority of its own (`//h`, `/\h`).
const BASE_A = 'http://a.invalid';
const BASE_B = 'http://b.invalid';
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

function invalid(reason: string): LocationResult {
  return { kind: 'invalid', reason };
}

/** Parses with the WHATWG parser; null when it refuses. */
function parse(reference: string, base?: string): URL | null {
  try {
    return new URL(reference, base);
  } catch {
    return null;
  }
}

/**
 * Resolves a Location reference given by application code against the request target (origin-form
 * path and query). Relative references must stay on the request's origin and come back as an
 * absolute path (RFC 9110 §10.2.2 allows a relative reference; an absolute path does not depend on
 * the Host header). Absolute references must be http(s) with an authority and no userinfo
 * (RFC 9110 §4.2.1, §4.2.4). Control characters anywhere are refused: the WHATWG parser would
 * silently drop tabs and line breaks, hiding a header injection attempt.
 */
export function resolveLocation(reference: string, requestTarget: string): LocationResult {
  if (reference === '') return invalid('is empty');
  for (let i = 0; i < reference.length; i++) {
    const c = reference.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return invalid('holds a control character (CR, LF, NUL, TAB...)');
  }
  if (reference.charCodeAt(0) === 0x20 || reference.charCodeAt(reference.length - 1) === 0x20) {
    return invalid('has leading or trailing spaces');
  }
  // RFC 3986 §4.3: a scheme makes it absolute (a relative path with a colon in its first segment
  // is written `./a:b`, §4.2).
  const scheme = SCHEME.exec(reference);
  if (scheme !== null) {
    const name = scheme[0].slice(0, -1).toLowerCase();
    if (name !== 'http' && name !== 'https') return invalid(`has the scheme ${name}:, not http: or https:`);
    // RFC 9110 §4.2.1: http(s) URIs have an authority; the WHATWG parser would also take `http:x`.
    if (!reference.startsWith('//', scheme[0].length))
      return invalid('is an http(s) URL without //authority');
    const url = parse(reference);
    if (url === null) return invalid('is not a valid URL');
    if (url.username !== '' || url.password !== '') return invalid('holds userinfo (RFC 9110 §4.2.4)');
    return { kind: 'absolute', location: url.href };
  }
  const path = requestTarget.charCodeAt(0) === 0x2f ? requestTarget : '/';
  const a = parse(reference, BASE_A + path);
  const b = parse(reference, BASE_B + path);
  if (a === null || b === null) return invalid('is not a valid URI reference');
  if (a.origin !== BASE_A || b.origin !== BASE_B) {
    return invalid('names an authority without a scheme; give an absolute http(s) URL for another origin');
  }
  // A path starting with `//` would be read as a network-path reference (RFC 3986 §4.2): `/.` keeps
  // it a path, as the WHATWG serialiser does for host-less URLs.
  const p = a.pathname.startsWith('//') ? `/.${a.pathname}` : a.pathname;
  return { kind: 'path', location: p + a.search + a.hash };
}
