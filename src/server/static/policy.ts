// Cache policy: ordered rules (yours first, then the defaults) compiled once at load.
// A file version is matched once; requests only read the precomputed result.

import { deltaSeconds, formatCacheControl, parseCacheControl } from '../../http/cache-control.js';
import { globToRegExp } from '../../http/glob.js';
import { isHashedName } from '../../http/hashed-name.js';

export interface CacheRule {
  glob?: string | string[] | undefined;
  regex?: string | undefined;
  contentType?: string | string[] | undefined;
  hashed?: boolean | undefined;
  cacheControl: string;
  expires?: boolean | undefined;
  override?: boolean | undefined;
}

export interface CachePolicy {
  readonly cacheControl: string;
  /** On proxied responses: replace the upstream's own Cache-Control too. */
  readonly override?: boolean;
  /** Seconds to add to the response time for Expires, or undefined for no Expires. */
  readonly expiresSec: number | undefined;
}

export interface PolicyInput {
  /** Decoded URL path, e.g. /assets/app-3f2a9c1b.js */
  readonly path: string;
  /** Media type without parameters, e.g. text/html */
  readonly mediaType: string;
  /**
   * The request carries a verified version (`?v=` a prefix of the content hash): it counts as a
   * hashed name for `hashed` rules, so HTML (matched first) stays no-cache and your rules still win.
   */
  readonly versioned?: boolean;
}

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

type Matcher = (input: PolicyInput) => boolean;

function mediaMatcher(patterns: string[]): Matcher {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const p of patterns) {
    const t = p.trim().toLowerCase();
    if (t.endsWith('/*')) prefixes.push(t.slice(0, -1));
    else exact.add(t);
  }
  return ({ mediaType }) => exact.has(mediaType) || prefixes.some((p) => mediaType.startsWith(p));
}

function compileRule(rule: CacheRule, index: number): { match: Matcher; policy: CachePolicy } {
  const parts: Matcher[] = [];
  if (rule.glob !== undefined) {
    const res = (Array.isArray(rule.glob) ? rule.glob : [rule.glob]).map(globToRegExp);
    parts.push(({ path }) => res.some((r) => r.test(path)));
  }
  if (rule.regex !== undefined) {
    let re: RegExp;
    try {
      re = new RegExp(rule.regex);
    } catch (err) {
      throw new Error(`cachePolicy[${index}].regex: ${(err as Error).message}`);
    }
    parts.push(({ path }) => re.test(path));
  }
  if (rule.contentType !== undefined) {
    parts.push(mediaMatcher(Array.isArray(rule.contentType) ? rule.contentType : [rule.contentType]));
  }
  if (rule.hashed !== undefined) {
    const want = rule.hashed;
    parts.push(({ path, versioned }) => (versioned === true || isHashedName(path)) === want);
  }
  if (parts.length === 0)
    throw new Error(`cachePolicy[${index}]: a rule needs glob, regex, contentType or hashed`);
  const cc = parseCacheControl(rule.cacheControl);
  const maxAge = deltaSeconds(cc, 'max-age');
  // Expires beside max-age for HTTP/1.0 caches (RFC 9111 §5.3); Cache-Control wins where understood.
  const expiresSec = rule.expires === false || maxAge === null || maxAge === 0 ? undefined : maxAge;
  return {
    match: parts.length === 1 ? parts[0]! : (input) => parts.every((m) => m(input)),
    policy: { cacheControl: rule.cacheControl, expiresSec, override: rule.override === true },
  };
}

/** Compiles rules alone (no defaults): the policy of the first match, or undefined. */
export function compileRuleList(
  rules: readonly CacheRule[],
): (input: PolicyInput) => CachePolicy | undefined {
  const compiled = rules.map(compileRule);
  return (input) => {
    for (const r of compiled) if (r.match(input)) return r.policy;
    return undefined;
  };
}

/** Compiles user rules followed by the defaults; returns the lookup used per file version. */
export function compilePolicy(userRules: readonly CacheRule[]): (input: PolicyInput) => CachePolicy {
  const rules = [...userRules, ...DEFAULT_RULES].map(compileRule);
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
