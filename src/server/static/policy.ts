// The static handler's cache policy: your rules (src/http/cache-policy.ts compiles them) followed by
// the defaults. A file version is matched once; requests only read the precomputed result.

import { formatCacheControl, parseCacheControl } from '../../http/cache-control.js';
import {
  type CachePolicy,
  type CacheRule,
  compileCacheRule,
  type PolicyInput,
} from '../../http/cache-policy.js';

export type { CacheRule } from '../../http/cache-policy.js';

export const YEAR_SEC = 31536000;

/** The seed table. HTML is always revalidated; hashed names never change; media is long-lived. */
export const DEFAULT_RULES: readonly CacheRule[] = [
  { contentType: 'text/html', cacheControl: 'no-cache' },
  { hashed: true, cacheControl: `public, max-age=${YEAR_SEC}, immutable` },
  {
    contentType: ['font/*', 'application/font-woff', 'application/vnd.ms-fontobject'],
    cacheControl: `public, max-age=${YEAR_SEC}`,
  },
  { contentType: 'image/*', cacheControl: 'public, max-age=2592000' },
  { glob: '**', cacheControl: 'no-cache' },
];

/** Compiles user rules followed by the defaults; returns the lookup used per file version. */
export function compilePolicy(userRules: readonly CacheRule[]): (input: PolicyInput) => CachePolicy {
  const rules = [...userRules, ...DEFAULT_RULES].map(compileCacheRule);
  const fallback = rules[rules.length - 1]!.policy;
  return (input) => {
    for (const r of rules) if (r.match(input)) return r.policy;
    return fallback;
  };
}

/** Directives that only speak to shared caches, or that a private response replaces (RFC 9111 §5.2.2). */
const SHARED_ONLY = new Set(['public', 'private', 's-maxage', 'proxy-revalidate']);

/**
 * The same policy for a response that only the requesting client may keep (RFC 9111 §5.2.2.7): an
 * unqualified `private` first, without `public`, `s-maxage`, `proxy-revalidate` or a qualified
 * `private="..."`, the other directives kept in order. `no-store` (§5.2.2.5) is already stricter:
 * such a value comes back unchanged.
 */
export function privateCacheControl(value: string): string {
  const cc = parseCacheControl(value);
  if (cc.directives.has('no-store')) return value;
  const kept: [string, string | true][] = [['private', true]];
  for (const [name, arg] of cc.directives) if (!SHARED_ONLY.has(name)) kept.push([name, arg]);
  return formatCacheControl(kept);
}
