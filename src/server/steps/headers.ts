// Header rules: response headers by path, set before any other step so they are on every response,
// errors included. Each rule is compiled at load; the headers of each combination of matching rules
// are flattened once and memoised, so a request does a few regex tests and setHeader calls.
import { globToRegExp } from '../../http/glob.js';
import { type RequestContext, resolvedPath, type Step } from '../core/context.js';
import type { ExchangeRequest, ResponseSink } from '../core/exchange.js';
import type { Feature } from '../core/feature.js';
import { addDefaultHeader } from '../core/response-headers.js';
import type { StepContext } from '../node/types.js';
import { createIsSecure } from './client-address.js';
import { type HeaderRule, headerRuleIssues, SECURITY_PRESET } from './headers-options.js';

export type { HeaderPreset, HeaderRule } from './headers-options.js';

export interface HeaderRulesOptions {
  /** Whether the request came over TLS (for Strict-Transport-Security). Default: `req.socket.encrypted`;
   *  client-address.ts createIsSecure also believes a trusted proxy's X-Forwarded-Proto. */
  readonly isSecure?: (req: ExchangeRequest) => boolean;
}

/** RFC 6797 §7.2: an HSTS host MUST NOT send Strict-Transport-Security over non-secure transport. */
const HSTS = 'strict-transport-security';

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
type HeaderList = readonly (readonly [string, string | string[]])[];

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
  const isSecure = options.isSecure ?? ((req: ExchangeRequest) => req.socket.encrypted === true);
  // Added to the coming head (the handler's own value wins), not via setHeader: Node's fast path.
  const apply = (res: ResponseSink, list: HeaderList) => {
    for (const [name, value] of list) addDefaultHeader(res, name, value);
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

/** What the header rules feature is made from: its rules, and whom to believe on X-Forwarded-Proto. */
export interface HeadersFeatureOptions {
  readonly rules: readonly HeaderRule[];
  /** Addresses or CIDRs of trusted proxies (client-address.ts). */
  readonly trustProxy: readonly string[];
}

/** The header rules as a feature (core/feature.ts): a gate step, off without rules. */
export function create(options: HeadersFeatureOptions, kernel: StepContext): Feature | undefined {
  const gate = createHeaderRules(options.rules, kernel, { isSecure: createIsSecure(options.trustProxy) });
  return gate && { gate };
}
