// Redirects: path patterns, `to` templates, canonical paths and HTTPS upgrades, compiled once and
// applied to plain strings. Pure: no node: imports, no I/O, no clock.
//
// Safety rules, enforced here so no caller can forget them:
// - A Location only ever holds URI characters (RFC 3986 §2): CR, LF, controls, spaces and non-ASCII
//   text from the request are percent-encoded; literal text in `to` is checked when the rule compiles.
// - Captured text is decoded per segment and re-encoded with encodeURIComponent, so it cannot add
//   `?`, `#`, `@`, `:` or `\` to the URL structure; only the `/` between segments survives.
// - A path-form Location never starts with `//` (leading slashes collapse to one): `//evil.example`
//   would be a network-path reference to another host (RFC 3986 §4.2).
// - Only a literal absolute `to` (`https://host/...`) can name a host; captures never reach the
//   authority.

export type RedirectStatus = 301 | 302 | 307 | 308;

/** A rule that cannot compile; `field` names the offending member (`from` or `to`). */
export class RedirectRuleError extends Error {
  readonly field: 'from' | 'to';
  constructor(field: 'from' | 'to', message: string) {
    super(message);
    this.name = 'RedirectRuleError';
    this.field = field;
  }
}

// ---------------------------------------------------------------------------------------------
// Characters

/** Characters allowed in a URI reference as we emit it (RFC 3986 §2.2, §2.3), `%` checked apart. */
const URI_CHAR = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]$/;
/** Characters left alone in a path or query copied from a request: pchar / "/" / "?" (RFC 3986 §3.3, §3.4). */
const PATH_QUERY_SAFE = /[A-Za-z0-9\-._~:/?@!$&'()*+,;=]/;
const HEX2 = /^[0-9A-Fa-f]{2}$/;

function isHexPair(s: string, i: number): boolean {
  return HEX2.test(s.slice(i, i + 2));
}

/** Percent-encodes one character (as UTF-8) that may not appear raw. */
function encodeChar(ch: string): string {
  try {
    return encodeURIComponent(ch);
  } catch {
    return '%EF%BF%BD'; // a lone surrogate: U+FFFD
  }
}

/**
 * Makes text from a request target safe for a Location: keeps URI path/query characters and valid
 * `%XX` escapes, percent-encodes everything else (controls, CR/LF, space, `"<>\^`{|}`, `#`,
 * non-ASCII, a `%` not followed by two hex digits). Never decodes, so the meaning is unchanged.
 */
export function encodeUnsafe(s: string): string {
  let out = '';
  let segStart = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (PATH_QUERY_SAFE.test(ch)) continue;
    if (ch === '%' && isHexPair(s, i + 1)) continue;
    out += s.slice(segStart, i) + encodeChar(ch);
    segStart = i + 1;
  }
  return segStart === 0 ? s : out + s.slice(segStart);
}

/** True when `s` is made of URI characters and valid `%XX` escapes only (safe in a header). */
export function isUriReferenceText(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === '%') {
      if (!isHexPair(s, i + 1)) return false;
    } else if (!URI_CHAR.test(ch)) return false;
  }
  return true;
}

/**
 * A captured piece of a raw (percent-encoded) path, made safe to substitute: each `/`-separated
 * segment is decoded and re-encoded with encodeURIComponent; the `/` between segments stays.
 * Returns null when a segment holds a malformed escape.
 */
export function encodeCapture(raw: string): string | null {
  if (raw === '') return '';
  const segments = raw.split('/');
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    let decoded = seg;
    if (seg.includes('%')) {
      try {
        decoded = decodeURIComponent(seg);
      } catch {
        return null;
      }
    }
    try {
      segments[i] = encodeURIComponent(decoded);
    } catch {
      return null; // a lone surrogate
    }
  }
  return segments.join('/');
}

/** Collapses a run of leading slashes to one: `//evil.example/x` -> `/evil.example/x`. */
export function collapseLeadingSlashes(path: string): string {
  if (path.charCodeAt(1) !== 47 /* / */) return path;
  let i = 1;
  while (path.charCodeAt(i) === 47) i++;
  return '/' + path.slice(i);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// ---------------------------------------------------------------------------------------------
// Path patterns: `/exact`, `/blog/:year/:slug`, `/docs/*`, `/files/:rest*`

/** A compiled `from` (or route path). Matching runs on the raw path as sent, without the query. */
export interface PathMatcher {
  readonly source: string;
  /** Set for a pattern without captures: the path must equal it. */
  readonly exact: string | undefined;
  /** Literal text every matching path starts with; a cheap check before the regex. */
  readonly prefix: string;
  readonly regex: RegExp | undefined;
  /** Named captures (path `:name`s, or the regex's named groups). */
  readonly names: ReadonlySet<string>;
  /** Number of capture groups (for `$1..$9`). */
  readonly groupCount: number;
  /** Name of the splat capture (`*` or `:name*`), if the pattern has one. */
  readonly splat: string | undefined;
}

const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;

/**
 * Compiles a path pattern. Syntax:
 * - literal text, compared with the path as sent (write non-ASCII as UTF-8 `%XX`, or raw: it is
 *   encoded here);
 * - `:name`: one non-empty segment (no `/`);
 * - `*` or `:name*`: the rest, across segments, possibly empty (`*` is named `splat`); at most one.
 *   A trailing `/*` also matches the path without that slash: `/docs/*` matches `/docs`.
 * Throws RedirectRuleError('from') when the pattern is malformed.
 */
export function compilePathPattern(pattern: string): PathMatcher {
  if (!pattern.startsWith('/')) throw new RedirectRuleError('from', 'must start with / (or ^ for a regex)');
  if (/[?#]/.test(pattern)) {
    throw new RedirectRuleError('from', 'matches the path only; it may not hold ? or #');
  }
  let re = '';
  let prefix: string | undefined;
  let literal = '';
  const names = new Set<string>();
  let splat: string | undefined;
  let groupCount = 0;
  const flush = () => {
    const enc = encodeUnsafe(literal);
    if (prefix === undefined && groupCount === 0) prefix = enc;
    re += escapeRegExp(enc);
    literal = '';
  };
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    let name: string | undefined;
    let isSplat = false;
    if (ch === ':') {
      NAME.lastIndex = i + 1;
      const m = NAME.exec(pattern);
      if (m === null) {
        literal += ch;
        continue;
      }
      name = m[0];
      i += name.length;
      if (pattern[i + 1] === '*') {
        isSplat = true;
        i++;
      }
    } else if (ch === '*') {
      name = 'splat';
      isSplat = true;
    } else {
      literal += ch;
      continue;
    }
    if (isSplat && splat !== undefined) {
      throw new RedirectRuleError('from', 'at most one splat (* or :name*)');
    }
    if (names.has(name)) throw new RedirectRuleError('from', `the capture :${name} appears twice`);
    const trailingSlashSplat = isSplat && literal.endsWith('/') && i === pattern.length - 1;
    if (trailingSlashSplat) literal = literal.slice(0, -1);
    flush();
    names.add(name);
    groupCount++;
    if (isSplat) {
      splat = name;
      re += trailingSlashSplat ? `(?:/(?<${name}>.*))?` : `(?<${name}>.*)`;
    } else re += `(?<${name}>[^/]+)`;
  }
  if (groupCount === 0) {
    const exact = encodeUnsafe(pattern);
    return { source: pattern, exact, prefix: exact, regex: undefined, names, groupCount, splat };
  }
  flush();
  return {
    source: pattern,
    exact: undefined,
    prefix: prefix ?? '',
    regex: new RegExp(`^${re}$`),
    names,
    groupCount,
    splat,
  };
}

/**
 * Compiles an anchored regular expression (`from` starting with `^`). It must match the whole path:
 * it is compiled as `^(?:...)$` whether or not it ends with `$`. Named groups are `:name`s; a group
 * named `splat` is what `*` refers to. Throws RedirectRuleError('from') when it does not compile.
 */
export function compileRegexPattern(source: string): PathMatcher {
  let inner = source.slice(1);
  let backslashes = 0;
  for (let i = inner.length - 2; i >= 0 && inner[i] === '\\'; i--) backslashes++;
  if (inner.endsWith('$') && backslashes % 2 === 0) inner = inner.slice(0, -1);
  let regex: RegExp;
  try {
    regex = new RegExp(`^(?:${inner})$`);
  } catch (err) {
    throw new RedirectRuleError('from', (err as Error).message);
  }
  // An alternation with the empty pattern matches '' and reveals the group structure.
  const probe = new RegExp(`${regex.source}|`).exec('')!;
  const names = new Set(Object.keys(probe.groups ?? {}));
  return {
    source,
    exact: undefined,
    prefix: '',
    regex,
    names,
    groupCount: probe.length - 1,
    splat: names.has('splat') ? 'splat' : undefined,
  };
}

/** Compiles any `from` form: a regex when it starts with `^`, else a path pattern. */
export function compileFrom(from: string): PathMatcher {
  return from.startsWith('^') ? compileRegexPattern(from) : compilePathPattern(from);
}

/** The match of a path: raw (still percent-encoded) captures, or null when it does not match. */
export interface PathMatch {
  /** Groups by number: [0] is the whole path, then 1..groupCount (undefined when not taken). */
  readonly groups: readonly (string | undefined)[];
  readonly named: Readonly<Record<string, string | undefined>>;
}

const NO_CAPTURES: PathMatch = Object.freeze({ groups: Object.freeze([]), named: Object.freeze({}) });

export function matchPath(m: PathMatcher, rawPath: string): PathMatch | null {
  if (m.exact !== undefined) return rawPath === m.exact ? NO_CAPTURES : null;
  if (!rawPath.startsWith(m.prefix)) return null;
  const r = m.regex!.exec(rawPath);
  // The whole path, even when a regex's own parentheses defeat the ^(?:...)$ wrapper (`^a)|(b$`).
  if (r === null || r.index !== 0 || r[0].length !== rawPath.length) return null;
  return { groups: r, named: r.groups ?? {} };
}

// ---------------------------------------------------------------------------------------------
// `to` templates: `/new/:slug`, `/docs/*`, `https://example.com/$1`

type ToPart =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'named'; readonly name: string }
  | { readonly kind: 'index'; readonly index: number };

export interface RedirectTemplate {
  readonly parts: readonly ToPart[];
  /** `path`: starts with one `/`; `absolute`: a literal `http(s)://host[:port]`. */
  readonly form: 'path' | 'absolute';
}

const AUTHORITY = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * Compiles `to` against the captures of `from`. Substitutions: `:name`, `:splat` and `*` (the splat),
 * `$1`..`$9`. `:` followed by a letter always starts a substitution; write `%3A` for a literal colon
 * there. Literal text must be URI characters (no spaces, controls, backslashes, non-ASCII).
 * The template must be a path (`/...`, not `//`) or an absolute http(s) URL whose host and port are
 * literal. Throws RedirectRuleError('to').
 */
export function compileTo(to: string, from: PathMatcher): RedirectTemplate {
  if (!to.startsWith('/') && !/^https?:\/\//i.test(to)) {
    throw new RedirectRuleError(
      'to',
      'must be a path starting with / or an absolute http:// or https:// URL',
    );
  }
  const parts: ToPart[] = [];
  let text = '';
  // The template with each substitution replaced by NUL, to inspect its literal structure.
  let shape = '';
  const push = (p: ToPart) => {
    if (text) parts.push({ kind: 'text', text });
    text = '';
    parts.push(p);
    shape += '\0';
  };
  for (let i = 0; i < to.length; i++) {
    const ch = to[i]!;
    if (ch === ':') {
      NAME.lastIndex = i + 1;
      const m = NAME.exec(to);
      if (m !== null) {
        const name = m[0];
        i += name.length;
        if (from.names.has(name)) push({ kind: 'named', name });
        else if (name === 'splat' && from.splat !== undefined) push({ kind: 'named', name: from.splat });
        else throw new RedirectRuleError('to', `:${name} is not captured by from (write %3A for a colon)`);
        continue;
      }
    } else if (ch === '*') {
      if (from.splat === undefined) throw new RedirectRuleError('to', 'uses * but from has no splat');
      push({ kind: 'named', name: from.splat });
      continue;
    } else if (ch === '$') {
      const d = to.charCodeAt(i + 1) - 48;
      if (d >= 1 && d <= 9) {
        if (d > from.groupCount) {
          throw new RedirectRuleError('to', `$${d} refers to a group that from does not have`);
        }
        i++;
        push({ kind: 'index', index: d });
        continue;
      }
    } else if (ch === '%') {
      if (!isHexPair(to, i + 1)) throw new RedirectRuleError('to', '% must start a %XX escape');
    } else if (!URI_CHAR.test(ch)) {
      const what = ch.charCodeAt(0) < 0x20 || ch === '\x7f' ? 'a control character' : JSON.stringify(ch);
      throw new RedirectRuleError('to', `${what} may not appear raw in a URL (percent-encode it)`);
    }
    text += ch;
    shape += ch;
  }
  if (text) parts.push({ kind: 'text', text });

  if (shape.startsWith('/')) {
    if (shape[1] === '/') throw new RedirectRuleError('to', 'a path may not start with // (another host)');
    return { parts, form: 'path' };
  }
  const scheme = /^https?:\/\//i.exec(shape);
  if (scheme === null) {
    throw new RedirectRuleError(
      'to',
      'must be a path starting with / or an absolute http:// or https:// URL',
    );
  }
  const rest = shape.slice(scheme[0].length);
  const end = rest.search(/[/?#]/);
  const authority = end === -1 ? rest : rest.slice(0, end);
  if (authority.includes('\0')) {
    throw new RedirectRuleError('to', 'the host and port must be literal, not substituted');
  }
  if (!AUTHORITY.test(authority)) {
    throw new RedirectRuleError('to', 'the host must be a plain host name or address (no user info)');
  }
  return { parts, form: 'absolute' };
}

// ---------------------------------------------------------------------------------------------
// Rules

export interface RedirectRuleInput {
  readonly from: string;
  readonly to: string;
  readonly status?: RedirectStatus | undefined;
  readonly keepQuery?: boolean | undefined;
}

export interface CompiledRedirect {
  readonly from: PathMatcher;
  readonly to: RedirectTemplate;
  readonly status: RedirectStatus;
  readonly keepQuery: boolean;
}

/** Compiles a rule (status 308 and keepQuery true by default). Throws RedirectRuleError. */
export function compileRedirect(rule: RedirectRuleInput): CompiledRedirect {
  const from = compileFrom(rule.from);
  return {
    from,
    to: compileTo(rule.to, from),
    status: rule.status ?? 308,
    keepQuery: rule.keepQuery ?? true,
  };
}

/** Appends the request's query to a URL that may carry its own query and a fragment. */
function withQuery(url: string, query: string): string {
  const hash = url.indexOf('#');
  const base = hash === -1 ? url : url.slice(0, hash);
  const fragment = hash === -1 ? '' : url.slice(hash);
  const sep = base.includes('?') ? (base.endsWith('?') || base.endsWith('&') ? '' : '&') : '?';
  return base + sep + query + fragment;
}

/**
 * The Location for a request path under one rule, or null when the rule does not apply (no match,
 * or a capture holds a malformed escape). `query` is the raw text after `?` (undefined when none).
 */
export function applyRedirect(
  rule: CompiledRedirect,
  rawPath: string,
  query: string | undefined,
): string | null {
  const m = matchPath(rule.from, rawPath);
  if (m === null) return null;
  let url = '';
  for (const p of rule.to.parts) {
    if (p.kind === 'text') {
      url += p.text;
      continue;
    }
    const raw = (p.kind === 'named' ? m.named[p.name] : m.groups[p.index]) ?? '';
    const enc = encodeCapture(raw);
    if (enc === null) return null;
    url += enc;
  }
  if (rule.to.form === 'path') url = collapseLeadingSlashes(url);
  if (rule.keepQuery && query) url = withQuery(url, encodeUnsafe(query));
  // Every piece was checked or encoded above; this guards the guarantee itself.
  if (!isUriReferenceText(url)) throw new Error('redirect produced a Location with unsafe characters');
  return url;
}

/** The first rule that applies: its status and Location, or null. */
export function findRedirect(
  rules: readonly CompiledRedirect[],
  rawPath: string,
  query: string | undefined,
): { status: RedirectStatus; location: string } | null {
  for (const rule of rules) {
    const location = applyRedirect(rule, rawPath, query);
    if (location !== null) return { status: rule.status, location };
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Canonical paths

export interface CanonicalOptions {
  /** add: `/about` -> `/about/`; remove: `/about/` -> `/about`; ignore: leave slashes alone. */
  readonly trailingSlash: 'add' | 'remove' | 'ignore';
  /** `/index.html` -> `/`, `/dir/index.html` -> `/dir/`. */
  readonly indexHtml: boolean;
  /** Index file names that `indexHtml` removes (default `['index.html']`). */
  readonly indexNames?: readonly string[] | undefined;
}

/**
 * The canonical form of a raw path, or null when it already is canonical. The index name goes
 * first, then the trailing slash rule, so one redirect reaches the final form. `add` leaves paths
 * whose last segment has a `.` alone (files). The root keeps its slash. The result never starts
 * with `//` and holds only URI characters.
 */
export function canonicalPath(rawPath: string, o: CanonicalOptions): string | null {
  let p = rawPath;
  if (o.indexHtml) {
    const slash = p.lastIndexOf('/');
    const last = p.slice(slash + 1);
    if ((o.indexNames ?? ['index.html']).includes(last)) p = p.slice(0, slash + 1);
  }
  if (o.trailingSlash === 'add') {
    const last = p.slice(p.lastIndexOf('/') + 1);
    if (last !== '' && !last.includes('.')) p += '/';
  } else if (o.trailingSlash === 'remove') {
    let end = p.length;
    while (end > 1 && p.charCodeAt(end - 1) === 47 /* / */) end--;
    p = p.slice(0, end);
  }
  if (p === rawPath) return null;
  return encodeUnsafe(collapseLeadingSlashes(p));
}

// ---------------------------------------------------------------------------------------------
// HTTP -> HTTPS

const HOST_LABEL = '[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?';
const REG_NAME = new RegExp(`^(${HOST_LABEL}(?:\\.${HOST_LABEL})*)\\.?(?::(\\d{1,5}))?$`);
const IP_LITERAL = /^(\[[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*\])(?::(\d{1,5}))?$/;

/**
 * A Host value (RFC 9110 §7.2: uri-host [":" port]) reduced to what we accept: a DNS name or IPv4
 * address (letters, digits, `-`, `_`, dots; at most 253 characters) or an IPv6 literal, and an
 * optional port up to 65535. Anything else, including user info and a trailing junk, is null.
 * The host name comes back lowercased.
 */
export function parseHost(value: string | undefined): { hostname: string; port: number | undefined } | null {
  if (value === undefined || value.length === 0 || value.length > 260) return null;
  const m = REG_NAME.exec(value) ?? IP_LITERAL.exec(value);
  if (m === null) return null;
  const hostname = m[1]!.toLowerCase();
  if (hostname.length > 253) return null;
  const port = m[2] === undefined ? undefined : Number(m[2]);
  if (port !== undefined && port > 65535) return null;
  return { hostname, port };
}

export type HttpsRedirect =
  | { readonly kind: 'redirect'; readonly hostname: string; readonly location: string }
  | { readonly kind: 'bad'; readonly reason: string };

/**
 * The https:// URL for a request received over plain HTTP. The host comes from the absolute-form
 * target when there is one (RFC 9112 §3.2.2), else from Host; it must be a valid host or the answer
 * is `bad` (400). The request's port is dropped; `httpsPort` is added unless it is 443.
 * Path and query are copied, with characters that may not appear raw percent-encoded.
 */
export function httpsRedirect(
  target: string,
  hostHeader: string | undefined,
  httpsPort?: number | undefined,
): HttpsRedirect {
  let host = hostHeader;
  let rest = target;
  if (!target.startsWith('/')) {
    const m = /^https?:\/\/([^/?#]*)(.*)$/i.exec(target);
    if (m === null) return { kind: 'bad', reason: 'The request target must be a path.' };
    host = m[1]!;
    rest = m[2]!.startsWith('/') ? m[2]! : `/${m[2]!}`;
  }
  const h = parseHost(host);
  if (h === null)
    return { kind: 'bad', reason: 'The Host header must be a host name with an optional port.' };
  const hash = rest.indexOf('#');
  if (hash !== -1) rest = rest.slice(0, hash);
  const port = httpsPort === undefined || httpsPort === 443 ? '' : `:${httpsPort}`;
  return {
    kind: 'redirect',
    hostname: h.hostname,
    location: `https://${h.hostname}${port}${encodeUnsafe(rest)}`,
  };
}
