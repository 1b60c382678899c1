// Verified `?v=` cache busting: a version value in the query pins a file for a year only when it is a
// prefix of the file's content hash (the base64url sha256 its strong ETag is made of). Pure string work.

/** Shortest `v` accepted: 8 base64url characters are 48 bits, too many to guess for one file. */
export const MIN_VERSION_CHARS = 8;
/** Length of the `v` that assetUrl and `gatehouse hash` produce (60 bits). */
export const ASSET_URL_VERSION_CHARS = 10;

/** One query parameter looked up by name: absent, given once (raw, not percent-decoded), or repeated. */
export type QueryParam =
  | { readonly kind: 'absent' }
  | { readonly kind: 'one'; readonly value: string }
  | { readonly kind: 'repeated' };

const ABSENT: QueryParam = { kind: 'absent' };
const REPEATED: QueryParam = { kind: 'repeated' };

/**
 * The value of `name` in `url`'s query (after the first `?`, before any `#`), split on `&` as in
 * application/x-www-form-urlencoded. Names compare exactly (case-sensitive, not decoded); a member
 * without `=` has the empty value. No allocation unless the name occurs as `name=` or bare.
 */
export function queryParam(url: string, name: string): QueryParam {
  const q = url.indexOf('?');
  if (q === -1 || url.indexOf(name, q + 1) === -1) return ABSENT;
  let end = url.indexOf('#', q);
  if (end === -1) end = url.length;
  let found: string | undefined;
  let start = q + 1;
  while (start <= end) {
    let amp = url.indexOf('&', start);
    if (amp === -1 || amp > end) amp = end;
    // RFC 3986 §3.4 leaves the query's syntax to the application; `name` or `name=value` per member.
    if (url.startsWith(name, start)) {
      const after = start + name.length;
      if (after === amp || (after < amp && url.charCodeAt(after) === 61) /* = */) {
        if (found !== undefined) return REPEATED;
        found = after === amp ? '' : url.slice(after + 1, amp);
      }
    }
    start = amp + 1;
  }
  return found === undefined ? ABSENT : { kind: 'one', value: found };
}

/**
 * True when `value` names this content: at least MIN_VERSION_CHARS, at most the hash's length, and a
 * prefix of `contentHash`, compared exactly (base64url is case-sensitive; nothing is decoded).
 */
export function versionMatches(value: string, contentHash: string): boolean {
  return (
    value.length >= MIN_VERSION_CHARS && value.length <= contentHash.length && contentHash.startsWith(value)
  );
}

/** versionMatches over the one value of `name` in `url`; absent, repeated (ambiguous) or empty -> false. */
export function urlVersionMatches(url: string, name: string, contentHash: string): boolean {
  const p = queryParam(url, name);
  return p.kind === 'one' && versionMatches(p.value, contentHash);
}
