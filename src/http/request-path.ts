// Request target -> safe relative path under the root. Pure string work; the filesystem
// checks (containment after realpath, symlinks) live in server/static/files.ts.

export type PathResult =
  | { readonly kind: 'ok'; readonly path: string; readonly trailingSlash: boolean }
  | { readonly kind: 'bad'; readonly reason: string }
  | { readonly kind: 'hidden' };

const BAD_ENCODING: PathResult = { kind: 'bad', reason: 'malformed percent-encoding in the path' };
const BAD_NUL: PathResult = { kind: 'bad', reason: 'NUL byte in the path' };
const BAD_BACKSLASH: PathResult = { kind: 'bad', reason: 'backslash in the path' };
const BAD_ABOVE_ROOT: PathResult = { kind: 'bad', reason: 'path climbs above the root' };
const BAD_ENCODED_SLASH: PathResult = { kind: 'bad', reason: 'encoded slash (%2F) in the path' };
const HIDDEN: PathResult = { kind: 'hidden' };

/** The path part of a request target (origin-form or absolute-form, RFC 9112 §3.2). */
export function targetPath(url: string): string | null {
  let start = 0;
  if (url.charCodeAt(0) !== 47 /* / */) {
    // absolute-form: scheme://authority/path
    const m = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*/.exec(url);
    if (!m) return null;
    start = m[0].length;
    if (start === url.length || url.charCodeAt(start) === 63 /* ? */) return '/';
  }
  let end = url.length;
  const q = url.indexOf('?', start);
  if (q !== -1) end = q;
  const h = url.indexOf('#', start);
  if (h !== -1 && h < end) end = h;
  return start === 0 && end === url.length ? url : url.slice(start, end);
}

/** The query of a request target: the text after `?` up to any `#`, or undefined. */
export function queryOf(url: string): string | undefined {
  const q = url.indexOf('?');
  if (q === -1) return undefined;
  const h = url.indexOf('#', q);
  return h === -1 ? url.slice(q + 1) : url.slice(q + 1, h);
}

/**
 * Decodes the path once and normalises dot segments (RFC 3986 §5.2.4).
 * Returns a path that starts with '/' and holds no '.', '..' or empty segments.
 * '..' that would climb above the root, a NUL or a backslash (decoded or not) is 'bad';
 * a dot segment other than /.well-known/ is 'hidden' unless dotfiles are allowed.
 */
export function resolveRequestPath(rawPath: string, allowDotfiles: boolean): PathResult {
  let decoded = rawPath;
  if (rawPath.includes('%')) {
    try {
      decoded = decodeURIComponent(rawPath);
    } catch {
      return BAD_ENCODING;
    }
  }
  if (decoded.includes('\0')) return BAD_NUL;
  if (decoded.includes('\\')) return BAD_BACKSLASH;
  const trailingSlash = decoded.length > 1 && decoded.endsWith('/');
  // Fast path: nothing to normalise.
  if (!decoded.includes('/.') && !decoded.includes('//')) {
    return { kind: 'ok', path: trailingSlash ? decoded.slice(0, -1) : decoded, trailingSlash };
  }
  const out: string[] = [];
  for (const seg of decoded.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length === 0) return BAD_ABOVE_ROOT;
      out.pop();
      continue;
    }
    out.push(seg);
  }
  for (let i = 0; i < out.length; i++) {
    const seg = out[i]!;
    if (seg.charCodeAt(0) === 46 /* . */ && !allowDotfiles && !(i === 0 && seg === '.well-known')) {
      return HIDDEN;
    }
  }
  return { kind: 'ok', path: `/${out.join('/')}`, trailingSlash };
}

/**
 * resolveRequestPath for the file system: an encoded slash (`%2F`) is 'bad' too. A file name cannot
 * hold `/`, and decoding it into a separator would give one file several URLs (RFC 3986 §2.2: `%2F` is
 * data, not a delimiter). Rule matching (headers, CORS, JSONP) keeps resolveRequestPath, which decodes.
 */
export function resolveFilePath(rawPath: string, allowDotfiles: boolean): PathResult {
  const p = rawPath.indexOf('%');
  if (p !== -1 && /%2f/i.test(rawPath.slice(p))) return BAD_ENCODED_SLASH;
  return resolveRequestPath(rawPath, allowDotfiles);
}

/** True when `child` (absolute, normalised) is `root` or inside it. Checked with a separator,
 *  so root `/srv/site` never contains `/srv/site2`. */
export function isInside(root: string, child: string, sep = '/'): boolean {
  if (child === root) return true;
  const prefix = root.endsWith(sep) ? root : root + sep;
  return child.startsWith(prefix);
}
