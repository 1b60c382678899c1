// The hashed-name rule: a file name that carries a content hash never changes, so the static handler
// pins it for a year (server/static/policy.ts) and the service worker serves it cache-first
// (client/sw-strategy.ts). One rule for both. Pure string work, no I/O.

const CAMEL_WORD = /^[A-Z]?[a-z]+(?:[A-Z][a-z]+)*$/;
const HASH_CHARS = /^[A-Za-z0-9_-]{8,64}$/;

function looksLikeHash(s: string): boolean {
  if (!HASH_CHARS.test(s)) return false;
  if (/[0-9]/.test(s)) return true;
  // Letters only: mixed case that is not plain words (`BdkNICq_` yes, `LoginPage` no).
  return /[A-Z]/.test(s) && /[a-z]/.test(s) && !s.split(/[-_]/).every((w) => w === '' || CAMEL_WORD.test(w));
}

/**
 * True when a file name carries a content hash: a `-` or `.` separated tail of the name before
 * the extension is 8+ hex or base64url characters (`app-3f2a9c1b.js`, `index-B-x9aZ_k.js`,
 * `main.9b8c7d6e.css`). Plain or CamelCase words (`app-settings.js`, `app-LoginPage.js`) are not.
 */
export function isHashedName(path: string): boolean {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return false;
  const stem = name.slice(0, dot);
  for (let i = stem.length - 1; i > 0; i--) {
    const c = stem.charCodeAt(i);
    if (c !== 45 /* - */ && c !== 46 /* . */) continue;
    const tail = stem.slice(i + 1);
    if (tail.length > 64) break;
    if (tail.length >= 8 && looksLikeHash(tail)) return true;
    if (c === 46) break; // a dot ends the hash part: `name.hash` or `name-hash`
  }
  return false;
}
