// Targeted cache control for a shared cache: targeted fields such as CDN-Cache-Control (RFC 9213) and
// Surrogate-Control (W3C Edge Architecture Specification 1.0). The cache's decisions (isStorable,
// freshness, decideServe) keep reading Cache-Control; policyHeaders hands them the targeted policy in
// its place.
import { DELTA_SECONDS_MAX } from '../http/cache-control.js';
import { equalsLowerAt } from '../http/chars.js';
import { isToken, quote, splitList } from '../http/lists.js';
import { parseSfDictionary, type SfMember } from '../http/structured-fields.js';
import {
  parseSurrogateControl,
  parseSurrogateMaxAge,
  type SurrogateDirective,
  surrogateMemberTarget,
} from '../http/surrogate-control.js';
import { getHeader, type HeaderMap } from './types.js';

export interface TargetedOptions {
  /** Targeted field names, lowercase, highest precedence first (RFC 9213 §2.1), e.g. ['cdn-cache-control', 'surrogate-control']. */
  readonly targets: readonly string[];
  /** This cache's device token for Surrogate-Control targeting (W3C Edge Architecture Specification 1.0): `max-age=60;gatehouse`. */
  readonly surrogateToken: string;
}

const SURROGATE_CONTROL = 'surrogate-control';

/**
 * The headers the cache's decisions (storable, freshness, decideServe) must look at.
 *
 * RFC 9213 §2.1: the first field of `opts.targets` (in order) that is present and gives this cache a
 * valid, non-empty set of directives is the policy: the result is a copy of `headers` whose
 * `cache-control` holds those directives and which has no `expires` ("MUST ignore the Cache-Control
 * and Expires header fields in that response"). `surrogate-control` is read as Edge Architecture §2.2;
 * any other name as an RFC 9213 §2.2 Structured Field Dictionary. When no target applies, `headers`
 * itself is returned (same object). Never mutates `headers`; never throws.
 */
export function policyHeaders(headers: HeaderMap, opts: TargetedOptions): HeaderMap {
  for (const name of opts.targets) {
    const value = getHeader(headers, name);
    if (value === undefined) continue;
    const cacheControl =
      name === SURROGATE_CONTROL ? fromSurrogateControl(value, opts.surrogateToken) : fromDictionary(value);
    if (cacheControl === '') continue; // §2.1: not valid or empty for us, try the next target
    const out: Record<string, string> = { ...headers, 'cache-control': cacheControl };
    delete out.expires;
    return out;
  }
  return headers;
}

/**
 * Surrogate-Capability request field value announcing this cache: `gatehouse="Surrogate/1.0"`
 * (Edge Architecture §2.1). A surrogate appends it to any value already on the request, so the origin
 * learns every surrogate on the path. Throws TypeError when `token` is not a token (a config error).
 */
export function surrogateCapability(token: string): string {
  if (!isToken(token)) throw new TypeError(`surrogate device token ${JSON.stringify(token)} is not a token`);
  return token + '="Surrogate/1.0"';
}

/**
 * The Surrogate-Control value to forward downstream: the members targeted at `token` removed (Edge
 * Architecture §2.3: a surrogate consumes the directives aimed at it); undefined when nothing is left.
 * Untargeted members and those for other devices are kept as they were, and `value` itself is
 * returned when nothing was removed. A member aimed at us is consumed even when its directive is
 * malformed. Device tokens compare ASCII case-insensitively. Never throws.
 */
export function forwardedSurrogateControl(value: string, token: string): string | undefined {
  const lower = token.toLowerCase();
  const members = splitList(value);
  let kept: string[] | undefined;
  for (let i = 0; i < members.length; i++) {
    const target = surrogateMemberTarget(members[i]!);
    if (target !== null && equalsLowerAt(target, 0, target.length, lower)) {
      kept ??= members.slice(0, i);
    } else if (kept !== undefined) {
      kept.push(members[i]!);
    }
  }
  if (kept === undefined) return members.length === 0 ? undefined : value;
  return kept.length === 0 ? undefined : kept.join(', ');
}

// --- Surrogate-Control (Edge Architecture §2.2, §2.3) ------------------------------------------------

interface Chosen {
  readonly directive: SurrogateDirective;
  readonly ours: boolean;
  /** max-age only: its parsed argument. */
  readonly maxAge: { readonly maxAgeSec: number; readonly staleSec: number | null } | null;
}

/** The directives of a Surrogate-Control value that apply to us, as a Cache-Control value ('' if none). */
function fromSurrogateControl(value: string, token: string): string {
  const lower = token.toLowerCase();
  const chosen = new Map<string, Chosen>();
  for (const d of parseSurrogateControl(value)) {
    // §2.3: an untargeted directive applies to every surrogate; one aimed at another device is not ours.
    const ours = d.target !== null;
    if (ours && !equalsLowerAt(d.target, 0, d.target.length, lower)) continue;
    // §2.2.4: content="ESI/1.0" asks for processing we do not do; it sets no caching policy.
    if (d.name === 'content') continue;
    // §2.2.3: a max-age that is not `N` or `N+M` is malformed: skipped, so it overrides nothing.
    const maxAge = d.name === 'max-age' && d.value !== true ? parseSurrogateMaxAge(d.value) : null;
    if (d.name === 'max-age' && maxAge === null) continue;
    // §2.2.2: no-store-remote is for surrogates far from the origin. We cannot know where we stand,
    // so we take the safe reading: no-store.
    const name = d.name === 'no-store-remote' ? 'no-store' : d.name;
    const prev = chosen.get(name);
    // §2.3: a directive aimed at us overrides an untargeted one of the same name (Map.set keeps the
    // first position). Within one tier the first occurrence wins, as RFC 9111 §4.2.1 allows.
    if (prev === undefined || (ours && !prev.ours)) chosen.set(name, { directive: d, ours, maxAge });
  }
  let out = '';
  for (const [name, { directive, maxAge: ma }] of chosen) {
    let text: string;
    if (ma !== null) {
      text = 'max-age=' + ma.maxAgeSec;
      // §2.2.3 `max-age=N+M`: M more seconds stale, which RFC 5861 stale-if-error expresses; an
      // explicit stale-if-error directive wins.
      if (ma.staleSec !== null && !chosen.has('stale-if-error')) text += ', stale-if-error=' + ma.staleSec;
    } else if (name === 'no-store') {
      text = 'no-store';
    } else {
      text = directive.raw === true ? name : name + '=' + directive.raw; // passed through as written
    }
    out = out === '' ? text : out + ', ' + text;
  }
  return out;
}

// --- Targeted fields as Structured Field Dictionaries (RFC 9213 §2.2) ---------------------------------

/**
 * The value type RFC 9213 §2.2 infers for the directives we act on (RFC 9111 §5.2.2, RFC 5861,
 * RFC 8246). "Implementations SHOULD NOT consume values that violate these inferred constraints":
 *   delta        Integer >= 0, anything else drops the directive;
 *   flag         Boolean true only (public, immutable, ...: they loosen caching);
 *   restrictive  Boolean; any other value still counts as the bare directive (fail safe: dropping
 *                no-store=1 would let us store what the origin meant to keep out);
 *   fields       Boolean, or a String of field names; any other value counts as the bare directive.
 * Directives not listed keep the plain mapping: true bare, Integer, String quoted, Token.
 */
const DIRECTIVE_TYPES: ReadonlyMap<string, 'delta' | 'flag' | 'restrictive' | 'fields'> = new Map([
  ['max-age', 'delta'],
  ['s-maxage', 'delta'],
  ['stale-while-revalidate', 'delta'],
  ['stale-if-error', 'delta'],
  ['public', 'flag'],
  ['immutable', 'flag'],
  ['no-transform', 'flag'],
  ['must-understand', 'flag'],
  ['no-store', 'restrictive'],
  ['must-revalidate', 'restrictive'],
  ['proxy-revalidate', 'restrictive'],
  ['no-cache', 'fields'],
  ['private', 'fields'],
]);

/** A targeted field's directives as a Cache-Control value; '' when it is invalid or yields nothing. */
function fromDictionary(value: string): string {
  // §2.2: "If a targeted field in a given response is empty, or a parsing error is encountered, that
  // field MUST be ignored by the cache".
  const dict = parseSfDictionary(value);
  if (dict === null) return '';
  let out = '';
  for (const [key, member] of dict) {
    const text = directiveText(key, member);
    if (text !== null) out = out === '' ? text : out + ', ' + text;
  }
  // Departure: a non-empty dictionary whose every member is dropped (only `no-store=?0`, or only
  // `max-age=-1`) is valid and non-empty for §2.1, which would have us ignore Cache-Control with nothing
  // in its place. We fall back to the next target and to Cache-Control instead (the conservative side).
  return out;
}

/** One dictionary member (a key is an lcalpha token, so a valid directive name) as a directive. */
function directiveText(key: string, member: SfMember): string | null {
  // §2.2: no cache directive takes an Inner List; parameters are ignored.
  if (member.kind !== 'item') return null;
  const item = member.item;
  if (item.type === 'boolean' && !item.value) return null; // `?0`: the directive is absent
  const type = DIRECTIVE_TYPES.get(key);
  if (type === 'restrictive') return key;
  if (type === 'fields') return item.type === 'string' ? key + '=' + quote(item.value) : key;
  if (item.type === 'boolean') return type === 'delta' ? null : key;
  if (type === 'flag') return null;
  switch (item.type) {
    case 'integer':
      if (item.value < 0) return null; // not delta-seconds
      return key + '=' + (type === 'delta' ? Math.min(item.value, DELTA_SECONDS_MAX) : item.value);
    case 'string':
      return type === 'delta' ? null : key + '=' + quote(item.value); // SF strings are printable ASCII
    case 'token':
      // An SF token may hold ":" and "/", which an RFC 9110 token may not: quote it then.
      return type === 'delta' ? null : key + '=' + (isToken(item.value) ? item.value : quote(item.value));
    default:
      return null; // Decimal, Byte Sequence: no Cache-Control form, and §2.2 says not to coerce
  }
}
