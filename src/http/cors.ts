// The server side of the CORS protocol (Fetch standard §3.2) as a pure decision: compile a policy once,
// then decideCors answers each request by lookups. The browser runs the CORS check (Fetch §4.10) and the
// CORS-preflight fetch (§4.8) on what we send; we send exactly what lets it pass for allowed origins and
// nothing it could mistake for a grant otherwise.
import { isToken, splitList } from './lists.js';

/** One response header, name as sent. */
export type CorsHeader = readonly [name: string, value: string];

/** What a CORS policy is built from (the `cors` config section; omitted fields take CORS_DEFAULTS). */
export interface CorsPolicyInput {
  /** `*`, exact origins, subdomain patterns `https://*.example.com`, or the literal `null`. */
  readonly origins: readonly string[];
  readonly credentials?: boolean | undefined;
  readonly methods?: readonly string[] | undefined;
  /** The request headers a preflight may ask for; absent: not restricted (see corsHeaderRule). */
  readonly headers?: readonly string[] | undefined;
  /** Echo the requested names; default: true without `headers`, false with it (see corsHeaderRule). */
  readonly reflectHeaders?: boolean | undefined;
  readonly exposeHeaders?: readonly string[] | undefined;
  readonly maxAgeSec?: number | undefined;
  readonly preflightStatus?: 200 | 204 | undefined;
}

/**
 * The defaults, in one place: the config schema fills these in, and so does compileCorsPolicy.
 * `headers` has no default (absent means "not restricted") and `reflectHeaders` defaults to whether
 * `headers` is absent: corsHeaderRule is the one place that reads the two together.
 */
export const CORS_DEFAULTS = Object.freeze({
  credentials: false,
  methods: Object.freeze(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD']) as readonly string[],
  exposeHeaders: Object.freeze([]) as readonly string[],
  maxAgeSec: 86400,
  preflightStatus: 200 as 200 | 204,
});

/** Which request headers a preflight may ask for, and how Access-Control-Allow-Headers is written. */
export type CorsHeaderRule =
  /** No `headers` list (the default): any list of tokens is allowed and echoed, Authorization included,
   *  as the `cors` npm middleware does. The page still has to supply any Authorization value itself:
   *  a cross-origin fetch never attaches one on its own unless credentials are enabled too. */
  | { readonly kind: 'reflect-any' }
  /** No `headers` list and `reflectHeaders: false`: only CORS-safelisted names (Fetch §2.2.2) pass,
   *  and no Access-Control-Allow-Headers is sent. */
  | { readonly kind: 'safelisted' }
  /** A `headers` list: only these names pass (case-insensitive; `*` any name but Authorization, not
   *  with credentials, Fetch §3.2.3). `echo` (reflectHeaders: true): Allow-Headers repeats the requested
   *  names instead of the list. */
  | { readonly kind: 'list'; readonly names: readonly string[]; readonly echo: boolean };

/** `headers` and `reflectHeaders` read together: a list, when given, wins; without one, reflect. */
export function corsHeaderRule(
  headers: readonly string[] | undefined,
  reflectHeaders: boolean | undefined,
): CorsHeaderRule {
  if (headers === undefined)
    return reflectHeaders === false ? { kind: 'safelisted' } : { kind: 'reflect-any' };
  return { kind: 'list', names: headers, echo: reflectHeaders === true };
}

/**
 * At most this many names in one Access-Control-Request-Headers are considered; a longer list fails
 * the preflight. A browser lists only the CORS-unsafe names a script set (Fetch §4.8), so a real page
 * stays far below; the field's bytes are already bounded by limits.maxHeaderBytes (431 beyond), and an
 * echo is never longer than the field it repeats.
 */
export const MAX_REQUEST_HEADER_NAMES = 100;

/** One parsed entry of `origins`. */
export type OriginRule =
  | { readonly kind: 'any' }
  | { readonly kind: 'null' }
  /** `origin` is the ASCII serialisation: lowercase scheme and host, no default port, no slash. */
  | { readonly kind: 'exact'; readonly origin: string }
  /** `https://*.example.com`: any host ending in `.example.com` (at least one more label). */
  | { readonly kind: 'subdomains'; readonly scheme: string; readonly suffix: string; readonly port: string }
  | { readonly kind: 'invalid'; readonly reason: string };

const SCHEME_PREFIX = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
// scheme "://" authority, then at most a lone "/": no path, query, fragment or userinfo.
const ORIGIN_LIKE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#@\s]+\/?$/;

/**
 * Parses one configured origin. Exact origins are normalised with the WHATWG URL parser (as
 * `new URL(x).origin`: lowercase scheme and host, default port dropped, trailing slash dropped); an
 * entry with a path, query, fragment or credentials is invalid, so is any other use of `*` than a
 * whole entry or the first label of a host. Never a regular expression: patterns match anchored.
 */
export function parseOriginRule(entry: string): OriginRule {
  if (entry === '*') return { kind: 'any' };
  if (entry === 'null') return { kind: 'null' };
  if (!SCHEME_PREFIX.test(entry)) {
    return invalid(
      `"${entry}" is not an origin: write scheme://host[:port] (https://example.com) or a pattern (https://*.example.com)`,
    );
  }
  if (!ORIGIN_LIKE.test(entry)) {
    return invalid(
      `"${entry}" is not an origin: an origin has no path, query, fragment or credentials (https://example.com)`,
    );
  }
  const schemeEnd = entry.indexOf('://');
  const afterScheme = entry.slice(schemeEnd + 3);
  const star = afterScheme.startsWith('*.');
  if (afterScheme.lastIndexOf('*') > (star ? 0 : -1)) {
    return invalid(
      `"${entry}": * may only be the whole entry or the first label of a host (https://*.example.com)`,
    );
  }
  const url = `${entry.slice(0, schemeEnd + 3)}${star ? afterScheme.slice(2) : afterScheme}`;
  const origin = serializeOrigin(url);
  if (origin === undefined) return invalid(`"${entry}" is not a valid origin`);
  if (!star) return { kind: 'exact', origin };
  const parsed = parseSerializedOrigin(origin);
  if (parsed === undefined || parsed.host.startsWith('[')) {
    return invalid(`"${entry}": a subdomain pattern needs a domain name after *.`);
  }
  return { kind: 'subdomains', scheme: parsed.scheme, suffix: `.${parsed.host}`, port: parsed.port };
}

function invalid(reason: string): OriginRule {
  return { kind: 'invalid', reason };
}

/** `new URL(x).origin`, also for non-special schemes with a host (e.g. extension origins). */
function serializeOrigin(x: string): string | undefined {
  let u: URL;
  try {
    u = new URL(x);
  } catch {
    return undefined;
  }
  if (u.username !== '' || u.password !== '' || u.search !== '' || u.hash !== '') return undefined;
  if (u.pathname !== '' && u.pathname !== '/') return undefined;
  if (u.origin !== 'null') return u.origin;
  // WHATWG URL gives non-special schemes an opaque origin; browsers serialise e.g.
  // chrome-extension://id as scheme://host, so take that form.
  if (u.host === '') return undefined;
  const o = `${u.protocol}//${u.host.toLowerCase()}`;
  return parseSerializedOrigin(o) === undefined ? undefined : o;
}

// The ASCII serialisation of a tuple origin (HTML "serialization of an origin", RFC 6454 §6.2):
// scheme "://" host [ ":" port ]. Hosts: dot-separated labels (domains after IDNA, IPv4; an optional
// final dot keeps FQDNs distinct) or an IPv6 literal. Anything else (paths, a trailing "/", userinfo,
// spaces, "*", lists of origins) is not an origin a browser sends.
const SERIALIZED_ORIGIN =
  /^([A-Za-z][A-Za-z0-9+.-]*):\/\/((?:[A-Za-z0-9_-]+\.)*[A-Za-z0-9_-]+\.?|\[[0-9A-Fa-f:.]+\])(?::([0-9]{1,5}))?$/;

interface SerializedOrigin {
  /** As received (case-sensitive: browsers serialise it lowercase). */
  readonly scheme: string;
  /** Lowercased. */
  readonly host: string;
  /** Digits as received, '' when absent. */
  readonly port: string;
}

function parseSerializedOrigin(s: string): SerializedOrigin | undefined {
  const m = SERIALIZED_ORIGIN.exec(s);
  if (m === null) return undefined;
  return { scheme: m[1]!, host: m[2]!.toLowerCase(), port: m[3] ?? '' };
}

export interface CorsRequest {
  /** Request method, case-sensitive as received. */
  readonly method: string;
  /** The Origin header (Fetch §3.1), if any. */
  readonly origin: string | undefined;
  /** Access-Control-Request-Method (Fetch §3.2.2), if any. */
  readonly acrm: string | undefined;
  /** Access-Control-Request-Headers (Fetch §3.2.2), if any. */
  readonly acrh: string | undefined;
}

/** The Vary names a decision adds, or undefined when the answer does not depend on request fields. */
type VaryNames = string | undefined;

export type CorsDecision =
  /** No Origin: not a CORS request. `headers` is empty, except that a wildcard policy still answers `*`
   *  (the same answer for everyone, so no Vary is needed). */
  | { readonly kind: 'none'; readonly headers: readonly CorsHeader[]; readonly vary: VaryNames }
  /** A CORS request (not a preflight) from an allowed origin: add `headers` to the response. */
  | { readonly kind: 'simple'; readonly headers: readonly CorsHeader[]; readonly vary: VaryNames }
  /** A CORS request from an origin the policy does not allow: answer normally, without CORS headers. */
  | { readonly kind: 'denied'; readonly vary: VaryNames }
  /** A CORS-preflight request that passes: answer it here with `status` and `headers`, no body. */
  | {
      readonly kind: 'preflight';
      readonly status: 200 | 204;
      readonly headers: readonly CorsHeader[];
      readonly vary: VaryNames;
    }
  /** A CORS-preflight request that fails: answer with `status` and no Access-Control-* header at all. */
  | {
      readonly kind: 'preflight-denied';
      readonly status: 200 | 204;
      readonly reason: 'origin' | 'method' | 'headers';
      readonly vary: VaryNames;
    };

type Simple = Extract<CorsDecision, { kind: 'simple' }>;
type Preflight = Extract<CorsDecision, { kind: 'preflight' }>;
type PreflightDenied = Extract<CorsDecision, { kind: 'preflight-denied' }>;

/** A compiled policy: every header string and answer that does not depend on the request is built here. */
export interface CorsPolicy {
  /** `*` is listed (never together with credentials). */
  readonly wildcard: boolean;
  readonly credentials: boolean;
  /** Access-Control-Allow-Headers echoes the requested names (corsHeaderRule: reflect-any, or a list
   *  with echo). */
  readonly reflectHeaders: boolean;
  readonly preflightStatus: 200 | 204;
  /** Normalised exact origins (and `null` when listed) -> their precomputed answers. */
  readonly exact: ReadonlyMap<string, { readonly simple: Simple; readonly preflight: Preflight | undefined }>;
  readonly subdomains: readonly { readonly scheme: string; readonly suffix: string; readonly port: string }[];
  readonly anyMethod: boolean;
  readonly methods: ReadonlySet<string>;
  /** No `headers` list, reflecting (the default): every token name, Authorization included. */
  readonly unrestrictedHeaders: boolean;
  /** `*` in headers without credentials: every name except Authorization (Fetch §3.2.3). */
  readonly anyHeader: boolean;
  /** Allowed request-header names, lowercase (empty unless `headers` is a list). */
  readonly headerNames: ReadonlySet<string>;
  /** Header lines of a passing preflight after Access-Control-Allow-Origin (non-reflect mode). */
  readonly preflightTail: readonly CorsHeader[];
  /** Header lines of an allowed CORS response after Access-Control-Allow-Origin. */
  readonly simpleTail: readonly CorsHeader[];
  /** The three answers that are the same for every request of their kind. */
  readonly none: Extract<CorsDecision, { kind: 'none' }>;
  readonly denied: Extract<CorsDecision, { kind: 'denied' }>;
  readonly deniedOrigin: PreflightDenied;
  readonly deniedMethod: PreflightDenied;
  readonly deniedHeaders: PreflightDenied;
  /** Wildcard policy: the simple and (non-reflect) preflight answers for every origin. */
  readonly anySimple: Simple | undefined;
  readonly anyPreflight: Preflight | undefined;
  /** Vary of non-preflight answers: Origin, unless the policy is a plain wildcard. */
  readonly varyOrigin: VaryNames;
  /** Vary of preflight answers: varyOrigin, plus the request fields reflect mode echoes. */
  readonly preflightVary: VaryNames;
}

export interface CorsIssue {
  /** Key path inside the cors section, e.g. ['origins', 2]. */
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/**
 * Semantic checks of a cors section (types are the schema's job; this tolerates junk). Used by the
 * config schema and by compileCorsPolicy, so both refuse the same things.
 */
export function corsOptionIssues(o: CorsPolicyInput): CorsIssue[] {
  const issues: CorsIssue[] = [];
  const credentials = o.credentials === true;
  const origins: readonly unknown[] = Array.isArray(o.origins) ? o.origins : [];
  origins.forEach((entry, i) => {
    if (typeof entry !== 'string') return;
    const rule = parseOriginRule(entry);
    if (rule.kind === 'invalid') issues.push({ path: ['origins', i], message: rule.reason });
  });
  if (credentials && origins.includes('*')) {
    // Fetch §3.2.5 / §4.10 step 3: a credentialed response must name the origin; `*` fails the check.
    issues.push({
      path: ['credentials'],
      message:
        'cannot be true while origins lists "*": a credentialed response must name its origin (Fetch §3.2.5); list the origins instead',
    });
  }
  const lists = [
    ['methods', o.methods],
    ['headers', o.headers],
    ['exposeHeaders', o.exposeHeaders],
  ] as const;
  for (const [key, list] of lists) {
    if (!Array.isArray(list)) continue;
    (list as readonly unknown[]).forEach((v, i) => {
      if (typeof v !== 'string') return;
      if (v === '*') {
        // Fetch §3.2.3: `*` is a wildcard only for requests without credentials; with credentials it
        // would be read as a literal name and silently match nothing.
        if (credentials) {
          issues.push({
            path: [key, i],
            message: `"*" is not a wildcard when credentials are on (Fetch §3.2.3): name each one`,
          });
        }
      } else if (!isToken(v)) {
        issues.push({
          path: [key, i],
          message: `"${v}" is not a ${key === 'methods' ? 'method' : 'header name'}`,
        });
      }
    });
  }
  return issues;
}

/** CORS-safelisted request-header names the browser may list although their values are plain (Fetch §2.2.2).
 *  Content-Type is not here: the browser lists it only when its value is not safelisted. */
const SAFELISTED_NAMES = new Set(['accept', 'accept-language', 'content-language']);

const VARY_PREFLIGHT_REFLECT = 'Access-Control-Request-Method, Access-Control-Request-Headers';

/** Validates and precomputes a policy. Throws TypeError naming the key when the input is not valid. */
export function compileCorsPolicy(input: CorsPolicyInput): CorsPolicy {
  const issues = corsOptionIssues(input);
  const first = issues[0];
  if (first !== undefined) {
    const key = first.path.map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`)).join('');
    throw new TypeError(`cors${key}: ${first.message}`);
  }
  const d = CORS_DEFAULTS;
  const credentials = input.credentials ?? d.credentials;
  const methods = input.methods ?? d.methods;
  const headerRule = corsHeaderRule(input.headers, input.reflectHeaders);
  const headers = headerRule.kind === 'list' ? headerRule.names : [];
  const reflectHeaders = headerRule.kind === 'reflect-any' || (headerRule.kind === 'list' && headerRule.echo);
  const exposeHeaders = input.exposeHeaders ?? d.exposeHeaders;
  const maxAgeSec = input.maxAgeSec ?? d.maxAgeSec;
  const preflightStatus = input.preflightStatus ?? d.preflightStatus;
  if (!Number.isInteger(maxAgeSec) || maxAgeSec < 0) {
    throw new TypeError(`cors.maxAgeSec: ${maxAgeSec} is not a whole number of seconds >= 0`);
  }
  if (preflightStatus !== 200 && preflightStatus !== 204) {
    throw new TypeError(`cors.preflightStatus: ${String(preflightStatus)} is not 200 or 204`);
  }

  const rules = input.origins.map(parseOriginRule);
  const wildcard = rules.some((r) => r.kind === 'any');
  const credentialLines: CorsHeader[] = credentials ? [['Access-Control-Allow-Credentials', 'true']] : [];

  // Fetch §3.2.3: Access-Control-Expose-Headers on CORS responses that are not preflights.
  const simpleTail: CorsHeader[] = [...credentialLines];
  if (exposeHeaders.length > 0) simpleTail.push(['Access-Control-Expose-Headers', exposeHeaders.join(', ')]);

  // Fetch §3.2.3 / §4.8: the preflight answer. Allow-Headers is the configured list, or (reflect mode)
  // built per request; Max-Age lets the browser's CORS-preflight cache (§4.9) keep the answer.
  const preflightTail: CorsHeader[] = [...credentialLines];
  if (methods.length > 0) preflightTail.push(['Access-Control-Allow-Methods', methods.join(', ')]);
  if (!reflectHeaders && headers.length > 0) {
    preflightTail.push(['Access-Control-Allow-Headers', headers.join(', ')]);
  }
  preflightTail.push(['Access-Control-Max-Age', String(maxAgeSec)]);

  // The answer depends on Origin unless the policy is a plain wildcard (credentials are never on with `*`).
  const varyOrigin: VaryNames = wildcard ? undefined : 'Origin';
  const preflightVary: VaryNames = reflectHeaders
    ? varyOrigin === undefined
      ? VARY_PREFLIGHT_REFLECT
      : `${varyOrigin}, ${VARY_PREFLIGHT_REFLECT}`
    : varyOrigin;

  const simpleFor = (acao: string): Simple =>
    Object.freeze({
      kind: 'simple',
      headers: Object.freeze([['Access-Control-Allow-Origin', acao] as const, ...simpleTail]),
      vary: varyOrigin,
    });
  const preflightFor = (acao: string): Preflight =>
    Object.freeze({
      kind: 'preflight',
      status: preflightStatus,
      headers: Object.freeze([['Access-Control-Allow-Origin', acao] as const, ...preflightTail]),
      vary: preflightVary,
    });
  const deniedFor = (reason: PreflightDenied['reason']): PreflightDenied =>
    Object.freeze({ kind: 'preflight-denied', status: preflightStatus, reason, vary: preflightVary });

  // Under `*` every origin gets the same `*` answer, listed ones too (they only matter to
  // isOriginAllowed, e.g. a listed `null`).
  const anySimple = wildcard ? simpleFor('*') : undefined;
  const anyPreflight = wildcard && !reflectHeaders ? preflightFor('*') : undefined;
  const exact = new Map<string, { simple: Simple; preflight: Preflight | undefined }>();
  const subdomains: { scheme: string; suffix: string; port: string }[] = [];
  for (const r of rules) {
    const key = r.kind === 'exact' ? r.origin : r.kind === 'null' ? 'null' : undefined;
    if (key !== undefined && !exact.has(key)) {
      exact.set(key, {
        simple: anySimple ?? simpleFor(key),
        preflight: reflectHeaders ? undefined : (anyPreflight ?? preflightFor(key)),
      });
    } else if (r.kind === 'subdomains') subdomains.push({ scheme: r.scheme, suffix: r.suffix, port: r.port });
  }

  const explicitStar = !credentials;
  return {
    wildcard,
    credentials,
    reflectHeaders,
    preflightStatus,
    exact,
    subdomains,
    anyMethod: explicitStar && methods.includes('*'),
    methods: new Set(methods),
    unrestrictedHeaders: headerRule.kind === 'reflect-any',
    anyHeader: explicitStar && headers.includes('*'),
    headerNames: new Set(headers.map((h) => h.toLowerCase())),
    preflightTail,
    simpleTail,
    // DESIGN.md: no Origin needs no CORS headers, but a wildcard answer is the same for everyone, so
    // sending `*` keeps the response independent of Origin (no Vary); otherwise Vary: Origin, because a
    // request with an Origin gets a different answer.
    none: Object.freeze({ kind: 'none', headers: anySimple?.headers ?? [], vary: varyOrigin }),
    denied: Object.freeze({ kind: 'denied', vary: varyOrigin }),
    deniedOrigin: deniedFor('origin'),
    deniedMethod: deniedFor('method'),
    deniedHeaders: deniedFor('headers'),
    anySimple,
    anyPreflight,
    varyOrigin,
    preflightVary,
  };
}

/**
 * The allow-list check alone, for every consumer of origins (HTTP, WebSocket upgrades, the proxy).
 * `origin` is the Origin header as received. Exact entries match the received serialisation with the
 * host lowercased (browsers already serialise origins: lowercase scheme and host, no default port, no
 * slash), so `https://a.com:443` or `HTTPS://a.com` is not `https://a.com`. Patterns match anchored on
 * scheme, port and a `.suffix` of the host. `null` matches only a listed `null`, also under `*`.
 * A wildcard policy allows every well-formed origin.
 */
export function isOriginAllowed(policy: CorsPolicy, origin: string | undefined): boolean {
  if (origin === undefined) return false;
  if (policy.exact.has(origin)) return true;
  if (origin === 'null') return false;
  return matchOrigin(policy, origin) !== undefined;
}

/** The allowed-origin check after the exact-key fast path: undefined when not allowed, else the key. */
function matchOrigin(policy: CorsPolicy, origin: string): string | undefined {
  const o = parseSerializedOrigin(origin);
  if (o === undefined) return undefined;
  if (policy.wildcard) return origin;
  const normal = `${o.scheme}://${o.host}${o.port === '' ? '' : `:${o.port}`}`;
  if (normal !== origin && policy.exact.has(normal)) return normal;
  for (const p of policy.subdomains) {
    if (
      o.scheme === p.scheme &&
      o.port === p.port &&
      o.host.length > p.suffix.length &&
      o.host.endsWith(p.suffix)
    ) {
      return origin;
    }
  }
  return undefined;
}

/**
 * Fetch §3.2.2: a CORS-preflight request is an OPTIONS with Origin and Access-Control-Request-Method
 * (an OPTIONS without the latter is an ordinary request). The shape alone does not make it one we
 * answer as a preflight: that also needs CORS to apply to the path (corsApplies).
 */
export function isPreflightShaped(
  method: string,
  origin: string | undefined,
  acrm: string | undefined,
): boolean {
  return method === 'OPTIONS' && origin !== undefined && acrm !== undefined;
}

/** Where a CORS policy applies: `paths` are compiled path globs, undefined meaning every path. */
export interface CorsScope {
  readonly paths: readonly RegExp[] | undefined;
}

/**
 * Does CORS apply to a request for `path` (decoded, dot segments resolved; null when it cannot be)?
 * No scope (CORS not configured): never. The one decision the CORS step and auth both use, so a
 * request the CORS step does not answer as a preflight is never let past auth as one.
 */
export function corsApplies(scope: CorsScope | undefined, path: string | null): boolean {
  if (scope === undefined) return false;
  if (scope.paths === undefined) return true;
  if (path === null) return false;
  for (const re of scope.paths) if (re.test(path)) return true;
  return false;
}

/**
 * Decides the CORS answer to one request. A preflight (Fetch §3.2.2) is OPTIONS with Origin and
 * Access-Control-Request-Method; OPTIONS without the latter is an ordinary request. The result depends
 * only on the input (Vary says which request fields), never on the clock or earlier requests.
 */
export function decideCors(policy: CorsPolicy, req: CorsRequest): CorsDecision {
  const origin = req.origin;
  if (origin === undefined) return policy.none;
  const preflight = isPreflightShaped(req.method, origin, req.acrm);

  // Fetch §4.10 CORS check: the browser compares Access-Control-Allow-Origin byte for byte with its
  // serialisation of the request's origin, so an allowed origin is echoed as received.
  const listed = policy.exact.get(origin);
  if (!preflight) {
    if (policy.anySimple !== undefined) return policy.anySimple;
    if (listed !== undefined) return listed.simple;
    return matchOrigin(policy, origin) === undefined ? policy.denied : simpleAnswer(policy, origin);
  }

  // Fetch §4.8 CORS-preflight fetch: origin, then method, then headers.
  if (listed === undefined && !policy.wildcard && matchOrigin(policy, origin) === undefined) {
    return policy.deniedOrigin;
  }
  const method = req.acrm!;
  // Methods are case-sensitive (RFC 9110 §9.1) and so is the browser's check of Allow-Methods: a
  // `patch` request is not covered by `PATCH`. Stricter than the browser: a CORS-safelisted method
  // (GET, HEAD, POST) missing from the list is denied too, since a preflight for it means a request with
  // headers or a body type the operator has not opted into.
  if (!isToken(method) || !(policy.anyMethod || policy.methods.has(method))) return policy.deniedMethod;
  const names = req.acrh === undefined ? undefined : checkRequestHeaders(policy, req.acrh);
  if (names === null) return policy.deniedHeaders;
  if (!policy.reflectHeaders) {
    if (listed?.preflight !== undefined) return listed.preflight;
    if (policy.anyPreflight !== undefined) return policy.anyPreflight;
  }
  const headers: CorsHeader[] = [['Access-Control-Allow-Origin', policy.wildcard ? '*' : origin]];
  for (const h of policy.preflightTail) headers.push(h);
  if (policy.reflectHeaders && names !== undefined && names.length > 0) {
    headers.push(['Access-Control-Allow-Headers', names.join(', ')]);
  }
  return { kind: 'preflight', status: policy.preflightStatus, headers, vary: policy.preflightVary };
}

function simpleAnswer(policy: CorsPolicy, origin: string): Simple {
  const headers: CorsHeader[] = [['Access-Control-Allow-Origin', origin]];
  for (const h of policy.simpleTail) headers.push(h);
  return { kind: 'simple', headers, vary: policy.varyOrigin };
}

/**
 * Fetch §4.8 step "for each unsafeName in the CORS-unsafe request-header names": every requested name
 * must be allowed (case-insensitively). Returns the requested names (lowercase) or null when one is not
 * allowed, the field is not a list of tokens (RFC 9110 §5.6.1, §5.6.2: anything else, quoted strings
 * included, is never echoed), it names `*` in echo mode, or more than MAX_REQUEST_HEADER_NAMES names.
 * With a `headers` list, Authorization needs naming even under `*` (a "CORS non-wildcard request-header
 * name", Fetch §3.2.3).
 */
function checkRequestHeaders(policy: CorsPolicy, acrh: string): string[] | null {
  const names = splitList(acrh);
  if (names.length > MAX_REQUEST_HEADER_NAMES) return null;
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!.toLowerCase();
    if (!isToken(name)) return null;
    // A requested `*` (a token) is never echoed: Access-Control-Allow-Headers: * is the wildcard to
    // the browser (Fetch §3.2.3), so the echo would grant more than the literal name asked for.
    if (name === '*' && policy.reflectHeaders) return null;
    names[i] = name;
    if (policy.unrestrictedHeaders || SAFELISTED_NAMES.has(name) || policy.headerNames.has(name)) continue;
    if (name === 'authorization' || !policy.anyHeader) return null;
  }
  return names;
}
