// Secondary cache keys from Vary: RFC 9111 §4.1.
import { splitList } from '../http/lists.js';
import { getHeader, type HeaderMap } from './types.js';

/**
 * The secondary key of a request for a response carrying `responseVary` (§4.1), or null when Vary
 * contains `*`, which "always fails to match". Field names are case-insensitive (RFC 9110 §5.1) and
 * sorted, so `Accept, Origin` and `origin, accept` give one key. Values are normalised only as §4.1
 * allows ("adding or removing whitespace, where allowed in the header field's syntax"): OWS around
 * list commas and at the ends is removed and empty list members dropped; otherwise values compare
 * case-sensitively. An absent field is distinct from an empty one (§4.1: absent matches only absent).
 * No Vary (or an empty one) gives the empty key ''.
 */
export function varyKey(responseVary: string | undefined, requestHeaders: HeaderMap): string | null {
  if (responseVary === undefined) return '';
  const names = new Set<string>();
  for (const member of splitList(responseVary)) {
    if (member === '*') return null; // §4.1: "A stored response with a Vary header field value containing a member '*' always fails to match."
    names.add(member.toLowerCase());
  }
  if (names.size === 0) return '';
  const parts: (string | null)[] = [];
  for (const name of [...names].sort()) {
    const value = getHeader(requestHeaders, name);
    parts.push(name, value === undefined ? null : normalise(value));
  }
  return JSON.stringify(parts); // unambiguous whatever the values contain
}

/** Whitespace around commas and at the ends removed (RFC 9110 §5.6.1 list syntax); case kept. */
function normalise(value: string): string {
  return splitList(value).join(',');
}

/**
 * §4.1: whether a new request matches the request that a stored response was selected with: every
 * field named by the stored response's Vary has an equivalent value in both (or is absent in both).
 */
export function matchesVary(
  storedVary: string | undefined,
  storedRequestHeaders: HeaderMap,
  newRequestHeaders: HeaderMap,
): boolean {
  const stored = varyKey(storedVary, storedRequestHeaders);
  return stored !== null && stored === varyKey(storedVary, newRequestHeaders);
}
