// Redirects: the chain as recorded, hop by hop. Pure: reads rec.redirects only.
import { freshness } from '../../cache/index.js';
import { hasDirective, parseCacheControl } from '../../http/index.js';
import { isUriReferenceText } from '../../http/redirect.js';
import { evidenceOf, field } from '../exchange.js';
import type { Exchange, FieldLine, Finding, Recording, Severity } from '../types.js';

/** RFC 9110 §15.4: the status codes that redirect with a Location. */
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
const PERMANENT: ReadonlySet<number> = new Set([301, 308]);
const TEMPORARY: ReadonlySet<number> = new Set([302, 303, 307]);
/** More redirect hops than this is a warning (RFC 9110 §15.4 asks clients to detect cycles; the
 *  obsolete RFC 2068 §10.3 named five, and every hop costs a round trip). */
export const MAX_HOPS = 5;
/** A temporary redirect whose explicit lifetime exceeds this is a warning. */
export const TEMPORARY_LIFETIME_MAX_SEC = 86_400;

function finding(id: string, severity: Severity, message: string, evidence: string, rfc: string): Finding {
  return { id: `redirects.${id}`, area: 'redirects', severity, message, evidence, rfc };
}

/** One redirect hop: where it was, its status, and where its Location points (null when unusable). */
interface Hop {
  readonly url: string;
  readonly status: number;
  readonly headers: readonly FieldLine[];
  readonly location: string | undefined;
  readonly target: string | null;
}

/** A Location is a URI-reference (RFC 9110 §10.2.2, RFC 3986 §4.1): URI characters only, and
 *  resolvable against the request URL. Returns the absolute target, or null. */
export function resolveRedirectTarget(location: string, base: string): string | null {
  if (location === '' || !isUriReferenceText(location)) return null;
  try {
    const u = new URL(location, base);
    u.hash = '';
    return u.href;
  } catch {
    return null;
  }
}

function sameResource(a: string, b: string): boolean {
  try {
    const x = new URL(a);
    const y = new URL(b);
    x.hash = '';
    y.hash = '';
    return x.href === y.href;
  } catch {
    return a === b;
  }
}

function hopsOf(redirects: readonly Exchange[]): Hop[] {
  const hops: Hop[] = [];
  for (const x of redirects) {
    const r = x.response;
    if (r === undefined || !REDIRECT_STATUSES.has(r.status)) continue;
    const location = field(r.headers, 'location');
    const target = location === undefined ? null : resolveRedirectTarget(location, x.request.url);
    hops.push({ url: x.request.url, status: r.status, headers: r.headers, location, target });
  }
  return hops;
}

function chainText(redirects: readonly Exchange[]): string {
  return redirects
    .map((x) => `${x.response === undefined ? 'failed' : x.response.status} ${x.request.url}`)
    .join(' -> ');
}

function scheme(url: string): string {
  const i = url.indexOf(':');
  return i < 0 ? '' : url.slice(0, i).toLowerCase();
}

/** The longest lifetime a browser or a shared cache would give a redirect (RFC 9111 §4.2.1). */
function explicitLifetimeSec(hop: Hop, nowMs: number): number | null {
  const headers: Record<string, string> = Object.create(null); // a __proto__ field is just a field
  for (const [n] of hop.headers) headers[n] = field(hop.headers, n)!;
  const stored = { status: hop.status, headers, requestTimeMs: nowMs, responseTimeMs: nowMs };
  let best: number | null = null;
  for (const shared of [false, true]) {
    const f = freshness(stored, shared);
    if (f.source === 's-maxage' || f.source === 'max-age' || f.source === 'expires') {
      best = Math.max(best ?? 0, f.lifetimeSec);
    }
  }
  return best;
}

/** Location present and valid, per hop (RFC 9110 §10.2.2, §15.4). */
function locationFindings(hops: readonly Hop[]): Finding[] {
  const out: Finding[] = [];
  for (const h of hops) {
    if (h.location === undefined) {
      out.push(
        finding(
          'location-missing',
          'error',
          `the ${h.status} from ${h.url} has no Location, so clients cannot follow it: send the target URL`,
          `${h.status}, no location field`,
          'RFC 9110 §15.4',
        ),
      );
    } else if (h.target === null) {
      out.push(
        finding(
          'location-invalid',
          'error',
          `the ${h.status} from ${h.url} has a Location that is not a valid URI reference: percent-encode spaces, quotes and non-ASCII text`,
          evidenceOf(h.headers, 'location'),
          'RFC 9110 §10.2.2',
        ),
      );
    }
  }
  return out;
}

/** A Location pointing back at a URL already in the chain (RFC 9110 §15.4: clients detect cycles). */
function loopFindings(hops: readonly Hop[]): Finding[] {
  for (let i = 0; i < hops.length; i++) {
    const target = hops[i]!.target;
    if (target === null) continue;
    for (let j = 0; j <= i; j++) {
      if (!sameResource(hops[j]!.url, target)) continue;
      return [
        finding(
          'loop',
          'error',
          `the redirect from ${hops[i]!.url} leads back to ${target}, already in the chain: a client without the right cookies loops until it gives up`,
          `${hops[i]!.status}, ${evidenceOf(hops[i]!.headers, 'location')}`,
          'RFC 9110 §15.4',
        ),
      ];
    }
  }
  return [];
}

function schemeFindings(hops: readonly Hop[]): Finding[] {
  const out: Finding[] = [];
  for (const h of hops) {
    if (h.target === null) continue;
    const from = scheme(h.url);
    const to = scheme(h.target);
    const evidence = `${h.status}, ${evidenceOf(h.headers, 'location')}`;
    if (from === 'http' && to === 'https') {
      out.push(
        finding(
          'https-upgrade',
          'info',
          `${h.url} redirects to HTTPS (${h.status})`,
          evidence,
          'RFC 9110 §4.2.2',
        ),
      );
    } else if (from === 'https' && to === 'http') {
      out.push(
        finding(
          'https-downgrade',
          'warning',
          `${h.url} redirects from HTTPS to plain HTTP, exposing the next request: keep the target on https:`,
          evidence,
          'RFC 9110 §4.2.2',
        ),
      );
    }
  }
  return out;
}

/** A 301/308 followed later by a 302/303/307: browsers cache the permanent step (RFC 9110 §15.4.2). */
function permanenceFindings(hops: readonly Hop[]): Finding[] {
  const first = hops.findIndex((h) => PERMANENT.has(h.status));
  if (first < 0) return [];
  const later = hops.slice(first + 1).find((h) => TEMPORARY.has(h.status));
  if (later === undefined) return [];
  const p = hops[first]!;
  return [
    finding(
      'permanent-to-temporary',
      'warning',
      `the permanent ${p.status} from ${p.url} leads to a temporary ${later.status} at ${later.url}: browsers remember the permanent step, so point it at the final URL or make it temporary too`,
      `${p.status} ${p.url} -> ${later.status} ${later.url}`,
      'RFC 9110 §15.4.2',
    ),
  ];
}

/** How long each redirect may be reused (RFC 9111 §4.2.1, §4.2.2). */
function cachingFindings(hops: readonly Hop[], nowMs: number): Finding[] {
  const out: Finding[] = [];
  for (const h of hops) {
    const cc = parseCacheControl(field(h.headers, 'cache-control'));
    const lifetimeSec = explicitLifetimeSec(h, nowMs);
    const noReuse = hasDirective(cc, 'no-store') || hasDirective(cc, 'no-cache');
    const evidence = `${h.status}, ${evidenceOf(h.headers, 'cache-control')}`;
    if (PERMANENT.has(h.status) && lifetimeSec === null && !noReuse) {
      out.push(
        finding(
          'permanent-cached-heuristically',
          'info',
          `the ${h.status} from ${h.url} has no explicit lifetime, so browsers may keep it indefinitely: send Cache-Control: max-age=N (or no-cache) if it may ever change`,
          evidence,
          'RFC 9111 §4.2.2',
        ),
      );
    }
    if (
      TEMPORARY.has(h.status) &&
      !noReuse &&
      lifetimeSec !== null &&
      lifetimeSec > TEMPORARY_LIFETIME_MAX_SEC
    ) {
      out.push(
        finding(
          'temporary-long-lifetime',
          'warning',
          `the temporary ${h.status} from ${h.url} may be cached for ${lifetimeSec} s, so clients keep following it after it changes: shorten it, or use 301/308 if it is permanent`,
          `${evidence}; ${evidenceOf(h.headers, 'expires')}`,
          'RFC 9111 §4.2.1',
        ),
      );
    }
  }
  return out;
}

export function checkRedirects(rec: Recording): Finding[] {
  const hops = hopsOf(rec.redirects);
  if (hops.length === 0) return [];
  const out: Finding[] = [
    finding(
      'chain',
      'info',
      `${hops.length} redirect${hops.length === 1 ? '' : 's'} before the answer`,
      chainText(rec.redirects),
      'RFC 9110 §15.4',
    ),
  ];
  out.push(...locationFindings(hops), ...loopFindings(hops), ...schemeFindings(hops));
  out.push(...permanenceFindings(hops), ...cachingFindings(hops, rec.nowMs));
  if (hops.length > MAX_HOPS) {
    out.push(
      finding(
        'too-many',
        'warning',
        `${hops.length} redirects before the answer (more than ${MAX_HOPS}): every hop is a round trip, and some clients give up; link to the final URL`,
        chainText(rec.redirects),
        'RFC 9110 §15.4',
      ),
    );
  }
  return out;
}
