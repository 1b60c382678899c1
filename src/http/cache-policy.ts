// Cache policy rules (the `cachePolicy` config section): which Cache-Control (and Expires) a response
// gets, by path glob, regular expression, media type or hashed name. Compiled once at load; the first
// matching rule decides. Pure: the static handler asks per file version, the proxy per response.
import { deltaSeconds, parseCacheControl } from './cache-control.js';
import { globToRegExp } from './glob.js';
import { isHashedName } from './hashed-name.js';

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

/** Whether a rule (or one of its conditions) applies to a response. */
export type Matcher = (input: PolicyInput) => boolean;

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

/** One rule compiled: its matcher and the policy it gives. `index` names the rule in errors. */
export function compileCacheRule(rule: CacheRule, index: number): { match: Matcher; policy: CachePolicy } {
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
  const compiled = rules.map(compileCacheRule);
  return (input) => {
    for (const r of compiled) if (r.match(input)) return r.policy;
    return undefined;
  };
}
