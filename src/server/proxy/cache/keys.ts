// The primary cache key (RFC 9111 §2: method + target URI), built from the validated authority.
import type { IncomingMessage } from 'node:http';

/**
 * Keys already worked out, by scheme, Host and target; cleared when it holds KEY_MEMO_MAX of them or
 * KEY_MEMO_MAX_CHARS characters of targets and keys (a target may be 8 KB: 10,000 of them were 160 MB;
 * 10,000 ordinary ones are about 1.5 M characters, so the count bound still decides for them).
 */
const keyMemo = {
  http: new Map<string, Map<string, string | undefined>>(),
  https: new Map<string, Map<string, string | undefined>>(),
};
let keyMemoSize = 0;
let keyMemoChars = 0;
const KEY_MEMO_MAX = 10_000;
const KEY_MEMO_MAX_CHARS = 1 << 21;

/** `GET <absolute public URI>`: method- and upstream-independent; undefined when it cannot be built. */
export function primaryKey(req: IncomingMessage): string | undefined {
  const host = req.headers.host;
  const url = req.url;
  if (host === undefined || url === undefined) return undefined;
  const proto = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  let byUrl = keyMemo[proto].get(host);
  if (byUrl !== undefined) {
    const known = byUrl.get(url);
    if (known !== undefined || byUrl.has(url)) return known;
  }
  const key = primaryKeyOf(proto, host, url);
  if (keyMemoSize >= KEY_MEMO_MAX || keyMemoChars >= KEY_MEMO_MAX_CHARS) {
    keyMemo.http.clear();
    keyMemo.https.clear();
    keyMemoSize = 0;
    keyMemoChars = 0;
    byUrl = undefined;
  }
  if (byUrl === undefined) keyMemo[proto].set(host, (byUrl = new Map()));
  byUrl.set(url, key);
  keyMemoSize++;
  keyMemoChars += host.length + url.length + (key?.length ?? 0);
  return key;
}

/** Hosts and targets the WHATWG URL parser leaves exactly as they are (no default port, no dot segments). */
const PLAIN_HOST = /^[a-z0-9.-]+(?::[0-9]{1,5})?$/;
const PLAIN_TARGET = /^\/[A-Za-z0-9\-_~/?=&+,;:@!$*()]*$/;

/**
 * The cache key (RFC 9111 §2: method + target URI) for a request target, normalised by the URL parser
 * (case of scheme and host, default port, dot segments, percent-encoding of unsafe characters; the
 * fragment dropped). Targets that the parser would leave as they are skip it (the hit path).
 */
export function primaryKeyOf(proto: 'http' | 'https', host: string, url: string): string | undefined {
  if (!url.startsWith('/')) return undefined;
  if (
    PLAIN_HOST.test(host) &&
    PLAIN_TARGET.test(url) &&
    !url.includes('/.') &&
    !host.endsWith(proto === 'http' ? ':80' : ':443') &&
    !host.includes('..') &&
    !host.startsWith('.')
  ) {
    return `GET ${proto}://${host}${url}`;
  }
  try {
    const u = new URL(`${proto}://${host}${url}`);
    u.hash = '';
    return `GET ${u.href}`;
  } catch {
    return undefined;
  }
}

/** Separates a primary key from the user it is kept for (a newline cannot occur in a URI). */
const USER_SEP = '\nuser=';

/** The key of a response kept for one authenticated user (cache.perUser): the primary key plus the user id. */
export function userKey(primary: string, user: string): string {
  return `${primary}${USER_SEP}${encodeURIComponent(user)}`;
}

/** The primary key of another URI for the same user as `key` (the invalidations of §4.4). */
export function sameUserKey(key: string, otherPrimary: string): string {
  const at = key.indexOf(USER_SEP);
  return at === -1 ? otherPrimary : otherPrimary + key.slice(at);
}

/** The target URI of a key (without `GET ` and the user). */
export function keyUri(key: string): string {
  const at = key.indexOf(USER_SEP);
  return key.slice(4, at === -1 ? undefined : at);
}
