// Header rules: response headers by path, set before any other step so they are on every response,
// errors included. Each rule is compiled at load; the headers of each combination of matching rules
// are flattened once and memoised, so a request does a few regex tests and setHeader calls.
import type { IncomingMessage, OutgoingHttpHeader } from 'node:http';
import { isFieldValueChar } from '../../http/chars.js';
import { globToRegExp } from '../../http/glob.js';
import { isToken } from '../../http/lists.js';
import { type RequestContext, resolvedPath } from '../core/context.js';
import { addDefaultHeader } from '../core/response-headers.js';
import type { Step, StepContext } from '../node/types.js';

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

export interface HeaderRulesOptions {
  /** Whether the request came over TLS (for Strict-Transport-Security). Default: `req.socket.encrypted`;
   *  client-address.ts createIsSecure also believes a trusted proxy's X-Forwarded-Proto. */
  readonly isSecure?: (req: IncomingMessage) => boolean;
}

/** RFC 6797 §7.2: an HSTS host MUST NOT send Strict-Transport-Security over non-secure transport. */
const HSTS = 'strict-transport-security';

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

/**
 * The decoded, dot-segment-free path of a request target, as rules match it (so `/%61dmin` and
 * `//admin/./x` are under `/admin`). Null when the target cannot be resolved (malformed
 * percent-encoding, NUL, backslash, `..` above the root).
 */
export function rulePath(cx: RequestContext): string | null {
  const r = resolvedPath(cx);
  return r?.kind === 'ok' ? r.path : null;
}

/** A compiled path matcher over globs; undefined globs match every path. */
export function compileGlobs(
  glob: string | readonly string[] | undefined,
): ((path: string) => boolean) | undefined {
  if (glob === undefined) return undefined;
  const res = (typeof glob === 'string' ? [glob] : glob).map(globToRegExp);
  return (path) => res.some((r) => r.test(path));
}

type Entry = { name: string; value: string | string[] };
type HeaderList = readonly (readonly [string, OutgoingHttpHeader])[];

/** Lower-cased field names the rules set, append or remove (a preset counts as setting its fields). */
export function namesInRules(rules: readonly HeaderRule[]): Set<string> {
  const out = new Set<string>();
  for (const r of rules) {
    const names = [
      ...(r.preset === 'security' ? Object.keys(SECURITY_PRESET) : []),
      ...Object.keys(r.set ?? {}),
      ...Object.keys(r.append ?? {}),
      ...(r.remove ?? []),
    ];
    for (const n of names) out.add(n.toLowerCase());
  }
  return out;
}

interface CompiledRule {
  readonly match: ((path: string) => boolean) | undefined;
  readonly apply: (headers: Map<string, Entry>) => void;
}

function compileRule(rule: HeaderRule, index: number): CompiledRule {
  const issues = headerRuleIssues(rule);
  if (issues.length > 0) {
    const i = issues[0]!;
    throw new TypeError(`headers[${index}]${i.path.map((p) => `.${p}`).join('')}: ${i.message}`);
  }
  const preset = rule.preset === 'security' ? Object.entries(SECURITY_PRESET) : [];
  const set = Object.entries(rule.set ?? {});
  const append = Object.entries(rule.append ?? {});
  const remove = (rule.remove ?? []).map((n) => n.toLowerCase());
  return {
    match: compileGlobs(rule.glob),
    apply: (headers) => {
      for (const [name, value] of [...preset, ...set]) headers.set(name.toLowerCase(), { name, value });
      for (const [name, value] of append) {
        const prev = headers.get(name.toLowerCase());
        // Another field line, not a comma join: right for lists and for Set-Cookie (RFC 6265 §3).
        if (prev === undefined) headers.set(name.toLowerCase(), { name, value });
        else prev.value = [...(Array.isArray(prev.value) ? prev.value : [prev.value]), value];
      }
      for (const name of remove) headers.delete(name);
    },
  };
}

function flatten(rules: readonly CompiledRule[], secure: boolean): HeaderList {
  const headers = new Map<string, Entry>();
  for (const r of rules) r.apply(headers);
  if (!secure) headers.delete(HSTS);
  return [...headers.values()].map((e) => [e.name, e.value] as const);
}

/** Distinct rule combinations remembered; beyond this each request flattens its own. */
const MEMO_LIMIT = 1024;

/**
 * The header rules step (runs first in the pipeline). Rules apply in order: a later rule's set
 * replaces, append adds a field line, remove drops what an earlier rule or preset set. A handler
 * that sets a header itself (X-Content-Type-Options on files, Vary merging) keeps its own value.
 */
export function createHeaderRules(
  rules: readonly HeaderRule[],
  _ctx: StepContext,
  options: HeaderRulesOptions = {},
): Step | undefined {
  if (rules.length === 0) return undefined;
  const compiled = rules.map(compileRule);
  const isSecure =
    options.isSecure ??
    ((req: IncomingMessage) => (req.socket as { encrypted?: boolean }).encrypted === true);
  // Added to the coming head (the handler's own value wins), not via setHeader: Node's fast path.
  const apply = (res: Parameters<Step>[1], list: HeaderList) => {
    for (const [name, value] of list)
      addDefaultHeader(res, name, typeof value === 'number' ? String(value) : value);
  };

  if (compiled.every((r) => r.match === undefined)) {
    const plain = flatten(compiled, false);
    const secure = flatten(compiled, true);
    return (req, res) => {
      apply(res, isSecure(req) ? secure : plain);
      return false;
    };
  }

  const memo = new Map<string, HeaderList>();
  return (req, res, cx) => {
    // A path that cannot be resolved gets the rules without globs (its answer is an error anyway).
    const path = rulePath(cx);
    const secure = isSecure(req);
    let key = secure ? 's' : 'p';
    const matching: CompiledRule[] = [];
    for (let i = 0; i < compiled.length; i++) {
      const r = compiled[i]!;
      if (r.match === undefined || (path !== null && r.match(path))) {
        matching.push(r);
        key += `,${i}`;
      }
    }
    let list = memo.get(key);
    if (list === undefined) {
      list = flatten(matching, secure);
      if (memo.size < MEMO_LIMIT) memo.set(key, list);
    }
    apply(res, list);
    return false;
  };
}
