// The header rules' options (the `headers` config section): the rule shape, the `security` preset and
// the checks a rule must pass. Pure, so src/config validates a file with the same checks the step
// compiles rules with (through src/server/index.ts).
import { isFieldValueChar } from '../../http/chars.js';
import { isToken } from '../../http/lists.js';

export type HeaderPreset = 'security';

export interface HeaderRule {
  /** URL path glob(s) (`*` within a segment, `**` across, `{a,b}`); default every path. */
  glob?: string | string[] | undefined;
  /** Headers to set, replacing a value an earlier rule set. */
  set?: Record<string, string> | undefined;
  /** Headers to add as another field line beside a value an earlier rule set. */
  append?: Record<string, string> | undefined;
  /** Headers an earlier rule (or preset) set that this path should not get. */
  remove?: string[] | undefined;
  /** A named bundle of headers, applied before this rule's set/append/remove. */
  preset?: HeaderPreset | undefined;
}

/**
 * The `security` preset. nosniff: Fetch §X-Content-Type-Options; Referrer-Policy: the browser default
 * made explicit (W3C Referrer Policy §3); X-Frame-Options: RFC 7034 (SAMEORIGIN, since CSP
 * frame-ancestors needs a site-specific policy); HSTS one year with subdomains, over TLS only.
 * No `preload`: that is a commitment the site owner makes on hstspreload.org, not a default.
 */
export const SECURITY_PRESET: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'strict-origin-when-cross-origin',
  'X-Frame-Options': 'SAMEORIGIN',
  'Strict-Transport-Security': 'max-age=31536000; includeSubDomains',
};

/**
 * Headers a rule may not set or append: message framing and connection management (RFC 9112 §6,
 * RFC 9110 §7.6.1), and headers other parts of Gatehouse own, which would overwrite or contradict the
 * rule (representation metadata from the handlers, Cache-Control/Expires from cachePolicy, Date from
 * Node, the rate-limit and auth fields). Vary is allowed: handlers merge into it.
 */
const OWNED_ELSEWHERE: ReadonlyMap<string, string> = new Map([
  ...[
    'connection',
    'content-length',
    'keep-alive',
    'proxy-connection',
    'te',
    'trailer',
    'transfer-encoding',
    'upgrade',
  ].map((n): [string, string] => [n, 'message framing is managed by the server']),
  ...['content-type', 'content-encoding', 'content-range', 'etag', 'last-modified', 'date'].map(
    (n): [string, string] => [n, 'set by the handler that produces the response'],
  ),
  ['cache-control', 'use cachePolicy'],
  ['expires', 'use cachePolicy'],
  ...['ratelimit', 'ratelimit-policy', 'retry-after'].map((n): [string, string] => [
    n,
    'set by limits.rateLimit',
  ]),
  ['www-authenticate', 'set by auth'],
]);

export interface RuleIssue {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

function valueIssue(value: string): string | undefined {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x0d || c === 0x0a) return 'header values cannot contain CR or LF';
    if (c > 0xff) return 'header values are Latin-1 only; percent-encode other text';
    if (!isFieldValueChar(c)) return `control character 0x${c.toString(16).padStart(2, '0')} in the value`;
  }
  if (value !== value.trim()) return 'leading or trailing whitespace in the value';
  return undefined;
}

/**
 * Problems in one header rule, as paths relative to the rule (`['set', 'X-Foo']`). Names must be
 * tokens (RFC 9110 §5.1), values field values without CR/LF (§5.5). Empty when the rule is fine.
 */
export function headerRuleIssues(rule: HeaderRule): RuleIssue[] {
  const issues: RuleIssue[] = [];
  if (
    rule.set === undefined &&
    rule.append === undefined &&
    rule.remove === undefined &&
    rule.preset === undefined
  )
    issues.push({ path: [], message: 'a header rule needs set, append, remove or preset' });
  for (const op of ['set', 'append'] as const) {
    const headers = rule[op];
    if (headers === undefined) continue;
    for (const [name, value] of Object.entries(headers)) {
      if (!isToken(name))
        issues.push({ path: [op, name], message: 'not a valid header name (RFC 9110 §5.1)' });
      else if (OWNED_ELSEWHERE.has(name.toLowerCase()))
        issues.push({
          path: [op, name],
          message: `not allowed here: ${OWNED_ELSEWHERE.get(name.toLowerCase())}`,
        });
      const bad = valueIssue(value);
      if (bad !== undefined) issues.push({ path: [op, name], message: bad });
    }
  }
  for (const [i, name] of (rule.remove ?? []).entries()) {
    if (!isToken(name))
      issues.push({ path: ['remove', i], message: 'not a valid header name (RFC 9110 §5.1)' });
  }
  if (rule.glob !== undefined) {
    const globs = Array.isArray(rule.glob) ? rule.glob : [rule.glob];
    for (const [i, g] of globs.entries()) {
      if (g === '')
        issues.push({ path: Array.isArray(rule.glob) ? ['glob', i] : ['glob'], message: 'empty glob' });
    }
  }
  return issues;
}
