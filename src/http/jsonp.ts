// JSONP (DESIGN.md, "JSONP"): the callback parameter, its validation, and the script body.
// Pure: no node: imports, no I/O, no clock.
//
// JSONP bypasses CORS by design: any page on any origin can load the script, and the browser sends
// the user's cookies with it. Only public, non-personal data may ever be served on a JSONP path.
import { globToRegExp } from './glob.js';
import { queryOf, resolveRequestPath } from './request-path.js';

/** Longest callback name accepted (DESIGN.md). Checked on the decoded value. */
export const MAX_CALLBACK_LENGTH = 64;

/** One part of a callback name: an ASCII JavaScript identifier (DESIGN.md). */
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** The first value of a query parameter, percent-decoded. */
export type QueryParam =
  | { readonly kind: 'absent' }
  | { readonly kind: 'present'; readonly value: string }
  | { readonly kind: 'malformed' };

const ABSENT: QueryParam = Object.freeze({ kind: 'absent' });
const MALFORMED: QueryParam = Object.freeze({ kind: 'malformed' });

/**
 * application/x-www-form-urlencoded decoding of one name or value (WHATWG URL §5.1): `+` is a space,
 * then percent-decoding as UTF-8. Unlike URLSearchParams, a malformed escape (`%zz`, a lone `%`,
 * bytes that are not UTF-8) is an error, not text: returns null.
 */
function decodeFormComponent(s: string): string | null {
  const plus = s.includes('+') ? s.replace(/\+/g, ' ') : s;
  if (!plus.includes('%')) return plus;
  try {
    return decodeURIComponent(plus);
  } catch {
    return null;
  }
}

/**
 * The first value of parameter `name` in `query` (the text after `?`, without it). Repeats after
 * the first are ignored: `callback=a&callback=b` gives `a`. A parameter without `=` has the value ''.
 * Only the value that is returned is decoded, so a malformed escape elsewhere does not matter;
 * a malformed escape in that value gives `malformed`. A name that cannot be decoded never matches.
 */
export function firstQueryParam(query: string | undefined, name: string): QueryParam {
  if (query === undefined || query === '') return ABSENT;
  const len = query.length;
  let start = 0;
  while (start <= len) {
    let end = query.indexOf('&', start);
    if (end === -1) end = len;
    if (end > start) {
      const eq = query.indexOf('=', start);
      const nameEnd = eq === -1 || eq > end ? end : eq;
      const rawName = query.slice(start, nameEnd);
      if (rawName === name || decodeFormComponent(rawName) === name) {
        const value = nameEnd === end ? '' : decodeFormComponent(query.slice(nameEnd + 1, end));
        return value === null ? MALFORMED : { kind: 'present', value };
      }
    }
    start = end + 1;
  }
  return ABSENT;
}

/** A callback name check. `reason` is fixed text: it never contains the name itself. */
export type CallbackCheck =
  | { readonly kind: 'ok'; readonly callback: string }
  | { readonly kind: 'invalid'; readonly reason: string };

export const CALLBACK_REASONS = {
  malformed: 'it holds a malformed percent-encoding',
  empty: 'it is empty',
  tooLong: `it is longer than ${MAX_CALLBACK_LENGTH} characters`,
  dotted: 'dotted names are not allowed here',
  notIdentifier:
    'it must be a JavaScript identifier: ASCII letters, digits, _ and $, not starting with a digit',
} as const;

/**
 * Validates a decoded callback name (DESIGN.md): `^[A-Za-z_$][\w$]*$`, at most 64 characters.
 * Dotted names (`ns.fn`, every part an identifier) only with `allowDotted`: a dotted callback can
 * reach objects such as `opener.document...` and click buttons of another same-origin window
 * (Same Origin Method Execution), so it is refused by default.
 *
 * Reserved words (`if`, `new`, `import`...) and globals such as `eval` pass: the name only decides
 * which function of the embedding page receives public data, and a reserved word gives a script
 * that fails to parse there. Nothing else is refused.
 */
export function checkCallback(name: string, allowDotted: boolean): CallbackCheck {
  if (name.length === 0) return { kind: 'invalid', reason: CALLBACK_REASONS.empty };
  if (name.length > MAX_CALLBACK_LENGTH) return { kind: 'invalid', reason: CALLBACK_REASONS.tooLong };
  if (IDENTIFIER.test(name)) return { kind: 'ok', callback: name };
  if (name.includes('.') && name.split('.').every((part) => IDENTIFIER.test(part))) {
    return allowDotted
      ? { kind: 'ok', callback: name }
      : { kind: 'invalid', reason: CALLBACK_REASONS.dotted };
  }
  return { kind: 'invalid', reason: CALLBACK_REASONS.notIdentifier };
}

/** What the callback parameter of a request asks for. */
export type CallbackDecision = { readonly kind: 'none' } | CallbackCheck;

const NONE: CallbackDecision = Object.freeze({ kind: 'none' });

/**
 * The callback of a request from its query string: `none` when the parameter is absent (serve plain
 * JSON), `invalid` when it is present but unusable (400), else the validated name.
 */
export function callbackFromQuery(
  query: string | undefined,
  param: string,
  allowDotted: boolean,
): CallbackDecision {
  const p = firstQueryParam(query, param);
  if (p.kind === 'absent') return NONE;
  if (p.kind === 'malformed') return { kind: 'invalid', reason: CALLBACK_REASONS.malformed };
  return checkCallback(p.value, allowDotted);
}

/** Characters that are legal in JSON text but not safe in a script: `<>&` and U+2028/U+2029. */
const SCRIPT_UNSAFE = /[<>&\u2028\u2029]/g;

function escapeChar(ch: string): string {
  return '\\u' + ch.charCodeAt(0).toString(16).padStart(4, '0');
}

/**
 * Escapes `<`, `>`, `&`, U+2028 and U+2029 as \uXXXX. In valid JSON text these can only occur
 * inside strings, where the escape denotes the same character, so the value is unchanged; the text
 * can no longer close a `<script>` element (`</script>`), open an HTML comment, or break a pre-ES2019
 * parser on a line separator. The input must be valid JSON (check it before calling).
 */
export function escapeJsonForScript(json: string): string {
  return json.replace(SCRIPT_UNSAFE, escapeChar);
}

/**
 * The opening of a JSONP body. The leading empty comment keeps the first bytes of the response
 * out of the requester's hands (the Rosetta Flash attack built a valid SWF from the callback name).
 */
export function jsonpPrefix(callback: string): string {
  return `/**/ ${callback}(`;
}

export const JSONP_SUFFIX = ');';

/** The whole JSONP body: `/**\/ cb(<json>);` with the JSON escaped for a script. */
export function jsonpBody(callback: string, json: string): string {
  return jsonpPrefix(callback) + escapeJsonForScript(json) + JSONP_SUFFIX;
}

/** The media type of a JSONP answer (static files and library routes alike). */
export const JSONP_CONTENT_TYPE = 'text/javascript; charset=utf-8';

/** The `jsonp` config section. */
export interface JsonpOptions {
  /** URL path globs (cache-rule syntax: `*` in a segment, `**` across) where JSONP is offered. */
  paths: string[];
  /** Query parameter naming the callback (default `callback`). */
  callbackParam?: string | undefined;
  /** Accept `ns.fn` callbacks (default false: they enable Same Origin Method Execution). */
  allowDottedCallbacks?: boolean | undefined;
}

/** JSONP options compiled once; shared by the static JSONP step and library routes. */
export interface CompiledJsonp {
  readonly param: string;
  /** True when the request path (decoded, dot segments resolved) is on a JSONP path. */
  matches(rawPath: string): boolean;
  /** What the request URL's callback parameter asks for. */
  callback(url: string): CallbackDecision;
  /** The 400 detail for an invalid callback. Never contains the callback itself. */
  invalidDetail(reason: string): string;
}

/** The `jsonp` section compiled, or undefined when JSONP is off (no paths). */
export function compileJsonp(o: JsonpOptions | undefined): CompiledJsonp | undefined {
  if (o === undefined || o.paths.length === 0) return undefined;
  const globs = o.paths.map(globToRegExp);
  const param = o.callbackParam ?? 'callback';
  const allowDotted = o.allowDottedCallbacks ?? false;
  return {
    param,
    matches(rawPath) {
      // Matched on the path the static handler resolves, so `/data/%2e%2e/x.json` or `/data//x.json`
      // cannot slip past (or into) a glob by spelling.
      const r = resolveRequestPath(rawPath, true);
      if (r.kind !== 'ok') return false;
      for (const g of globs) if (g.test(r.path)) return true;
      return false;
    },
    callback: (url) => callbackFromQuery(queryOf(url), param, allowDotted),
    invalidDetail: (reason) => `The ${param} parameter is not a valid JSONP callback: ${reason}.`,
  };
}
