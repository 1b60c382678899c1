// Caching: who may store the primary response, for how long and from what, how old
// it is, what happens on expiry, conflicting fields, and the resource classes (HTML, hashed assets,
// API JSON). The verdicts come from src/cache (RFC 9111), not from a second reading of the fields.
import { parseCacheDate } from '../../cache/dates.js';
import {
  currentAgeSec,
  type Freshness,
  freshness,
  type HeaderMap,
  isStorable,
  type NotStorableReason,
  type StorableResult,
  type StoredResponse,
} from '../../cache/index.js';
import {
  type CacheControl,
  deltaSeconds,
  fieldNames,
  hasDirective,
  parseCacheControl,
} from '../../http/cache-control.js';
import { parseHttpDate } from '../../http/dates.js';
import { isHashedName } from '../../http/hashed-name.js';
import { evidenceOf, field } from '../exchange.js';
import type {
  AssetProbe,
  Check,
  Exchange,
  FieldLine,
  Finding,
  RecordedResponse,
  Recording,
  Severity,
} from '../types.js';

/** HTML fresh longer than this in any cache is an error: a deploy would not show for that long. */
export const HTML_MAX_LIFETIME_SEC = 600;
/** A 4xx or 5xx fresh longer than this (or immutable) is an error: an outage kept in caches. */
export const ERROR_MAX_LIFETIME_SEC = 3600;
/** A hashed asset never changes, so anything below a year (what Gatehouse, nginx and Caddy guides use) is short. */
export const HASHED_MIN_LIFETIME_SEC = 31_536_000;

/** Field lines as the cache engine reads them: lowercase names, lines joined (RFC 9110 §5.3). */
export function headerMap(lines: readonly FieldLine[]): HeaderMap {
  const out: Record<string, string> = Object.create(null);
  for (const [n, v] of lines) out[n] = Object.hasOwn(out, n) ? `${out[n]}, ${v}` : v;
  return out;
}

/** The media type without parameters, lowercased (RFC 9110 §8.3.1), or '' when absent. */
export function mediaTypeOf(lines: readonly FieldLine[]): string {
  const v = field(lines, 'content-type') ?? '';
  const semi = v.indexOf(';');
  return (semi === -1 ? v : v.slice(0, semi)).trim().toLowerCase();
}

/** A recorded exchange as a stored response, with its own send/receive times (RFC 9111 §4.2.3). */
export function storedOf(x: Exchange, res: RecordedResponse): StoredResponse {
  return {
    status: res.status,
    headers: headerMap(res.headers),
    requestTimeMs: x.sentAtMs,
    responseTimeMs: x.receivedAtMs,
  };
}

/** RFC 9111 §3 for one kind of cache, from what was sent and received. */
export function storableBy(x: Exchange, res: RecordedResponse, shared: boolean): StorableResult {
  return isStorable({
    method: x.request.method,
    requestHeaders: headerMap(x.request.headers),
    status: res.status,
    responseHeaders: headerMap(res.headers),
    shared,
  });
}

const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * A value the site chose, made safe to quote in a one-line message: C0/C1 controls (a C1 CSI, 0x9b,
 * arrives as a latin1 header byte and moves a terminal's cursor) become `?`, and it is cut to `max`.
 */
export function quoteValue(value: string, max = 64): string {
  const clean = value.replace(CONTROLS, '?');
  return clean.length > max ? `${clean.slice(0, max)}...` : clean;
}

/** `3600 s (1 h)`: seconds, with a rounded larger unit when there is one. */
export function formatSec(sec: number): string {
  const s = Math.round(sec);
  const units: [number, string][] = [
    [86_400, 'd'],
    [3600, 'h'],
    [60, 'min'],
  ];
  for (const [size, name] of units) {
    if (s >= size) return `${s} s (${Math.round((s / size) * 10) / 10} ${name})`;
  }
  return `${s} s`;
}

/** Everything the caching rules read, computed once. */
interface Subject {
  x: Exchange;
  res: RecordedResponse;
  cc: CacheControl;
  stored: StoredResponse;
  mediaType: string;
  path: string;
  /** Index 0: a browser (private) cache; 1: a shared cache. */
  storable: [StorableResult, StorableResult];
  fresh: [Freshness, Freshness];
  ageSec: number;
}

const WHO = ['the browser', 'shared caches'] as const;
const EXPLICIT = new Set(['max-age', 's-maxage', 'expires']);

function make(id: string, severity: Severity, message: string, evidence: string, rfc: string): Finding {
  return { id: `caching.${id}`, area: 'caching', severity, message, evidence, rfc };
}

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return '';
  }
}

function subjectOf(x: Exchange, res: RecordedResponse, nowMs: number, finalUrl: string): Subject {
  const stored = storedOf(x, res);
  return {
    x,
    res,
    cc: parseCacheControl(field(res.headers, 'cache-control')),
    stored,
    mediaType: mediaTypeOf(res.headers),
    path: pathOf(finalUrl),
    storable: [storableBy(x, res, false), storableBy(x, res, true)],
    fresh: [freshness(stored, false), freshness(stored, true)],
    ageSec: currentAgeSec(stored, nowMs),
  };
}

export const checkCaching: Check = (rec) => {
  const x = rec.probes.primary;
  const res = x?.response;
  if (x === undefined || res === undefined) return [];
  const s = subjectOf(x, res, rec.nowMs, rec.finalUrl);
  return [...explain(s), ...conflicts(s), ...resourceClasses(s), ...referencedAssetClasses(rec)];
};

/** A script or stylesheet with no hash in its name or query, fresh longer than this, keeps old code after a deploy. */
export const UNVERSIONED_MAX_LIFETIME_SEC = 86_400;

/**
 * The scripts, stylesheets and fonts the page references (the asset probes), graded as their own
 * resource class: a hashed one should be fresh for a year, an unversioned script or stylesheet should
 * not outlive a deploy. Reported from the page, each naming the asset.
 */
function referencedAssetClasses(rec: Recording): Finding[] {
  const out: Finding[] = [];
  for (const a of rec.assets ?? []) {
    const res = a.exchange.response;
    if (a.kind === 'made-up' || res === undefined || res.status !== 200) continue;
    const s = subjectOf(a.exchange, res, rec.nowMs, a.exchange.request.url);
    const found = isHashedName(s.path) ? hashedAsset(s, lifetimeFor(s, 0)) : unversionedAsset(s, a.kind);
    for (const f of found) {
      out.push({
        ...f,
        message: `the page's ${a.kind} ${f.message}`,
        evidence: `GET ${quoteValue(s.path)} -> 200; ${f.evidence}`,
      });
    }
  }
  return out;
}

function unversionedAsset(s: Subject, kind: AssetProbe['kind']): Finding[] {
  // Fonts and images rarely change under one name; Gatehouse itself gives fonts a year.
  if (kind !== 'script' && kind !== 'stylesheet') return [];
  if (new URL(s.x.request.url).search !== '' || revalidatesAlways(s.cc)) return [];
  const browser = lifetimeFor(s, 0);
  const lifetimeSec =
    EXPLICIT.has(browser.source) || browser.source === 'heuristic' ? browser.lifetimeSec : 0;
  if (lifetimeSec <= UNVERSIONED_MAX_LIFETIME_SEC) return [];
  const msg =
    `${quoteValue(s.path)} has no content hash in its name or query, yet browsers keep it ${lifetimePhrase(browser)}:` +
    ' after a deploy returning visitors run the old file with the new page; hash its name (or add ?v=) or send no-cache';
  return [make('unversioned-asset-long-lifetime', 'warning', msg, ccEvidence(s), 'RFC 9111 §4.2.1')];
}

const REASONS: Record<NotStorableReason, string> = {
  'method-not-cacheable': 'the method is not GET or HEAD',
  'status-not-final': 'the status is not final',
  'status-not-understood': 'must-understand with an unknown status',
  'partial-content': 'a 206 is a part, not the whole',
  'not-modified': 'a 304 only updates a stored response',
  'no-store-request': 'the request said no-store',
  'no-store-response': 'no-store',
  'private-in-shared-cache': 'private',
  'authorization-in-shared-cache': 'the request carried Authorization and the response does not allow it',
  'no-explicit-cacheability': 'nothing makes this status cacheable',
};

function ccEvidence(s: Subject): string {
  return evidenceOf(s.res.headers, 'cache-control');
}

/** The info findings: who stores it, for how long, how old it is, what happens on expiry. */
function explain(s: Subject): Finding[] {
  const [priv, shared] = s.storable;
  const why = (r: StorableResult) => (r.ok ? '' : REASONS[r.reason]);
  let who: string;
  if (priv.ok && shared.ok) who = 'the browser and shared caches (proxies, CDNs) may store it';
  else if (priv.ok) who = `only the browser may store it; shared caches may not (${why(shared)})`;
  else if (shared.ok) who = `only shared caches may store it; the browser may not (${why(priv)})`;
  else who = `no cache may store it (${why(priv)})`;
  const out = [make('storable', 'info', who, ccEvidence(s), 'RFC 9111 §3')];
  const storers = [0, 1].filter((i) => s.storable[i]!.ok);
  if (storers.length === 0) return out;
  const [p, sh] = s.fresh;
  const same = storers.length === 2 && p.lifetimeSec === sh.lifetimeSec && p.source === sh.source;
  const noCache = revalidatesAlways(s.cc);
  const each = same
    ? lifetimePhrase(p)
    : storers.map((i) => `${WHO[i]}: ${lifetimePhrase(s.fresh[i]!)}`).join('; ');
  // §5.2.2.4: no-cache makes every reuse wait for revalidation, whatever the lifetime says.
  const lifetimes = noCache ? `no-cache: revalidated before each reuse (its lifetime alone: ${each})` : each;
  const evidence = ['cache-control', 'expires', 'date', 'last-modified']
    .map((n) => field(s.res.headers, n) !== undefined && evidenceOf(s.res.headers, n))
    .filter((e): e is string => e !== false)
    .join('; ');
  out.push(make('freshness', 'info', lifetimes, evidence || 'no caching fields', 'RFC 9111 §4.2.1'));
  const longest = noCache ? 0 : Math.max(...storers.map((i) => s.fresh[i]!.lifetimeSec));
  const ageEvidence = `${evidenceOf(s.res.headers, 'age')}; ${evidenceOf(s.res.headers, 'date')}`;
  const left = longest - s.ageSec;
  out.push(
    make(
      'age',
      'info',
      `current age ${formatSec(s.ageSec)}` + (left > 0 ? `, fresh for another ${formatSec(left)}` : ''),
      ageEvidence,
      'RFC 9111 §4.2.3',
    ),
  );
  if (longest > 0 && left <= 0) {
    const msg =
      `already stale when received: age ${formatSec(s.ageSec)} is past its lifetime of ${formatSec(longest)}` +
      ' (a cache in front served it late, or the server clock is behind)';
    out.push(make('stale', 'info', msg, ageEvidence, 'RFC 9111 §4.2'));
  }
  out.push(onExpiry(s));
  return out;
}

function lifetimePhrase(f: Freshness): string {
  switch (f.source) {
    case 'none':
      return 'no freshness lifetime: stored, but revalidated before each reuse';
    case 'conflict':
      return 'stale at once (the lifetime directive is repeated or invalid)';
    case 'heuristic':
      return `fresh for ${formatSec(f.lifetimeSec)} by heuristic (a fraction of the time since Last-Modified)`;
    case 'expires':
      return `fresh for ${formatSec(f.lifetimeSec)} from Expires minus Date`;
    default:
      return `fresh for ${formatSec(f.lifetimeSec)} from ${f.source}`;
  }
}

/** RFC 9111 §4.2.4, §4.3, §5.2.2, RFC 5861: what a cache does once the response is stale. */
function onExpiry(s: Subject): Finding {
  const h = s.res.headers;
  const parts: string[] = [];
  const noCache = revalidatesAlways(s.cc);
  // RFC 9111 §4.2.4, §5.2.2.4: no-cache forbids serving it stale, even when the origin is down.
  if (noCache) parts.push('no-cache: every reuse is revalidated first, and it is never served stale');
  if (field(h, 'etag') !== undefined) parts.push('revalidation sends If-None-Match with the ETag');
  else if (field(h, 'last-modified') !== undefined) parts.push('revalidation sends If-Modified-Since');
  else parts.push('no ETag or Last-Modified: every revalidation downloads the whole body again');
  if (hasDirective(s.cc, 'must-revalidate')) {
    parts.push('must-revalidate: never served stale (504 when the origin is unreachable)');
  } else if (hasDirective(s.cc, 'proxy-revalidate')) {
    parts.push('proxy-revalidate: shared caches never serve it stale');
  }
  const swr = deltaSeconds(s.cc, 'stale-while-revalidate');
  const sie = deltaSeconds(s.cc, 'stale-if-error');
  if (noCache && (swr !== null || sie !== null)) {
    parts.push('its stale-while-revalidate and stale-if-error have no effect beside no-cache');
  } else {
    if (swr !== null) parts.push(`served up to ${formatSec(swr)} stale while it revalidates (RFC 5861)`);
    if (sie !== null) parts.push(`served up to ${formatSec(sie)} stale when the origin fails (RFC 5861)`);
  }
  if (!noCache && !hasDirective(s.cc, 'must-revalidate') && swr === null) {
    parts.push('otherwise served stale only when the origin cannot be reached');
  }
  const evidence = [ccEvidence(s), evidenceOf(h, 'etag'), evidenceOf(h, 'last-modified')].join('; ');
  return make('on-expiry', 'info', parts.join('; '), evidence, 'RFC 9111 §4.3');
}

/** Fields that contradict each other or themselves. */
function conflicts(s: Subject): Finding[] {
  const h = s.res.headers;
  const cc = s.cc;
  const out: Finding[] = [];
  const maxAge = deltaSeconds(cc, 'max-age');
  if (hasDirective(cc, 'no-store') && (hasDirective(cc, 'max-age') || hasDirective(cc, 's-maxage'))) {
    const msg =
      'no-store forbids storing, so its max-age has no effect; keep no-store if it must never be kept, else drop it';
    out.push(make('no-store-with-max-age', 'warning', msg, ccEvidence(s), 'RFC 9111 §5.2.2.5'));
  }
  const expires = field(h, 'expires');
  const expiresMs = parseCacheDate(expires, s.x.receivedAtMs);
  const dateMs = parseCacheDate(field(h, 'date'), s.x.receivedAtMs) ?? s.x.receivedAtMs;
  if (maxAge !== null && maxAge > 0 && expiresMs !== null && expiresMs < dateMs) {
    const msg =
      `Expires is in the past but max-age=${maxAge}: HTTP/1.0 caches see it stale, others fresh;` +
      ' send Expires = Date + max-age, or no Expires';
    out.push(
      make(
        'expires-past-with-max-age',
        'warning',
        msg,
        `${evidenceOf(h, 'expires')}; ${ccEvidence(s)}`,
        'RFC 9111 §5.3',
      ),
    );
  }
  const privateNames = fieldNames(cc, 'private');
  if (hasDirective(cc, 'public') && hasDirective(cc, 'private') && !privateNames?.length) {
    const msg = 'public and private together: private wins, so shared caches may not store it; drop one';
    out.push(make('public-and-private', 'warning', msg, ccEvidence(s), 'RFC 9111 §5.2.2.7'));
  }
  if (expires !== undefined && parseHttpDate(expires) === null) {
    const msg =
      'Expires is not an HTTP-date, so caches read it as already expired; send an IMF-fixdate' +
      ' (e.g. Thu, 01 Jan 2026 00:00:00 GMT) or rely on max-age';
    out.push(make('invalid-expires', 'warning', msg, evidenceOf(h, 'expires'), 'RFC 9111 §5.3'));
  }
  if (field(h, 'date') === undefined && s.res.status >= 200 && s.res.status < 500) {
    const msg =
      'no Date field: an origin server with a clock MUST send one, and caches compute the age from it';
    out.push(make('missing-date', 'error', msg, 'no date field', 'RFC 9110 §6.6.1'));
  }
  if (field(h, 'pragma') !== undefined && field(h, 'cache-control') === undefined) {
    const msg =
      'Pragma without Cache-Control: Pragma means nothing in a response, so caches may still store it;' +
      ' send Cache-Control: no-cache (or no-store)';
    out.push(make('pragma-alone', 'warning', msg, evidenceOf(h, 'pragma'), 'RFC 9111 §5.4'));
  }
  const explicitLifetime = s.fresh.some((f) => EXPLICIT.has(f.source) && f.lifetimeSec > 0);
  if (hasDirective(cc, 'immutable') && !explicitLifetime) {
    const msg =
      'immutable without a freshness lifetime does nothing (it only applies while fresh); add max-age';
    out.push(make('immutable-without-lifetime', 'warning', msg, ccEvidence(s), 'RFC 8246 §2'));
  }
  if (s.fresh.some((f) => f.source === 'conflict')) {
    const msg =
      'max-age or s-maxage appears twice or has an invalid argument, so caches treat it as stale; send it once';
    out.push(make('bad-lifetime-directive', 'warning', msg, ccEvidence(s), 'RFC 9111 §4.2.1'));
  }
  return out;
}

/** The lifetime a cache of kind i gives the response, or 0 when it may not store it. */
function lifetimeFor(s: Subject, i: 0 | 1): Freshness {
  return s.storable[i].ok ? s.fresh[i] : { lifetimeSec: 0, source: 'none' };
}

function revalidatesAlways(cc: CacheControl): boolean {
  return hasDirective(cc, 'no-cache') && fieldNames(cc, 'no-cache') === null;
}

/** HTML, hashed assets, API JSON: what each class of resource should say. */
function resourceClasses(s: Subject): Finding[] {
  const out: Finding[] = [];
  const ev = ccEvidence(s);
  const fresh = [lifetimeFor(s, 0), lifetimeFor(s, 1)];
  out.push(...errorCached(s, fresh));
  out.push(...htmlLifetime(s, fresh));
  if (s.res.status === 200 && isHashedName(s.path)) out.push(...hashedAsset(s, fresh[0]!));
  const api = s.mediaType === 'application/json' || s.mediaType.endsWith('+json');
  const shared = s.storable[1];
  if (api && shared.ok) {
    const cookie =
      field(s.res.headers, 'set-cookie') !== undefined && !shared.omitHeaders.includes('set-cookie');
    const auth = field(s.x.request.headers, 'authorization') !== undefined;
    if (cookie || auth) {
      const what = cookie ? 'it sets a cookie' : 'it answers a request with Authorization';
      const msg =
        `shared caches may store this JSON response although ${what}: one user's data can reach` +
        ' another; send Cache-Control: private or no-store';
      const evidence = cookie
        ? `${ev}; ${evidenceOf(s.res.headers, 'set-cookie')}`
        : `${ev}; authorization sent`;
      out.push(make('api-shared-with-credentials', 'error', msg, evidence, 'RFC 9111 §3.5'));
    }
  }
  return out;
}

/** HTML: fresh over HTML_MAX_LIFETIME_SEC is an error; no Cache-Control at all (a heuristic lifetime
 *  that grows with the file's age, RFC 9111 §4.2.2) a warning whatever that age is today. */
function htmlLifetime(s: Subject, fresh: Freshness[]): Finding[] {
  if (s.mediaType !== 'text/html' && s.mediaType !== 'application/xhtml+xml') return [];
  if (revalidatesAlways(s.cc)) return [];
  const ev = ccEvidence(s);
  const explicit = Math.max(...fresh.map((f) => (EXPLICIT.has(f.source) ? f.lifetimeSec : 0)));
  const heuristic = Math.max(...fresh.map((f) => (f.source === 'heuristic' ? f.lifetimeSec : 0)));
  if (explicit > HTML_MAX_LIFETIME_SEC) {
    const msg =
      `HTML fresh for ${formatSec(explicit)}: a deploy will not show for that long and its new asset` +
      ' names will not load; send Cache-Control: no-cache';
    return [make('html-long-lifetime', 'error', msg, ev, 'RFC 9111 §4.2.1')];
  }
  const lm = `${ev}; ${evidenceOf(s.res.headers, 'last-modified')}`;
  const ok = s.res.status >= 200 && s.res.status < 300;
  if (ok && field(s.res.headers, 'cache-control') === undefined && explicit === 0) {
    // Right after a deploy the heuristic lifetime is seconds, a month later days: warn on both.
    const msg =
      'HTML without Cache-Control: caches choose its lifetime themselves' +
      (heuristic > 0 ? ` (now ${formatSec(heuristic)} by heuristic, growing with the file's age)` : '') +
      ', so a deploy may not show; send Cache-Control: no-cache';
    return [make('html-no-cache-control', 'warning', msg, lm, 'RFC 9111 §4.2.2')];
  }
  if (heuristic > HTML_MAX_LIFETIME_SEC) {
    const msg =
      `HTML without a lifetime in Cache-Control: caches may keep it ${formatSec(heuristic)} by heuristic from` +
      ' Last-Modified; send Cache-Control: no-cache';
    return [make('html-heuristic-lifetime', 'warning', msg, lm, 'RFC 9111 §4.2.2')];
  }
  return [];
}

/** RFC 9111 §4.2.1, RFC 8246: a 4xx/5xx that caches keep over an hour (or immutable) repeats the outage. */
function errorCached(s: Subject, fresh: Freshness[]): Finding[] {
  if (s.res.status < 400) return [];
  const longest = Math.max(...fresh.map((f) => f.lifetimeSec));
  const immutable = hasDirective(s.cc, 'immutable');
  if (longest <= ERROR_MAX_LIFETIME_SEC && !immutable) return [];
  const why = immutable ? 'immutable' : `fresh for ${formatSec(longest)}`;
  const msg =
    `a ${s.res.status} is ${why}: caches keep serving the failure after it is fixed;` +
    ' send Cache-Control: no-store (or max-age of a few seconds) on error responses';
  return [
    make('error-long-lifetime', 'error', msg, ccEvidence(s), immutable ? 'RFC 8246 §2' : 'RFC 9111 §4.2.1'),
  ];
}

function hashedAsset(s: Subject, browser: Freshness): Finding[] {
  const ev = ccEvidence(s);
  if (hasDirective(s.cc, 'no-store') || revalidatesAlways(s.cc)) {
    const which = hasDirective(s.cc, 'no-store') ? 'no-store' : 'no-cache';
    const msg =
      `${quoteValue(s.path)} has a content hash in its name, so it never changes, yet it is ${which}:` +
      ' send Cache-Control: public, max-age=31536000, immutable';
    return [make('hashed-no-cache', 'warning', msg, ev, 'RFC 9111 §5.2.2.4')];
  }
  const lifetimeSec = EXPLICIT.has(browser.source) ? browser.lifetimeSec : 0;
  if (lifetimeSec >= HASHED_MIN_LIFETIME_SEC) return [];
  const msg =
    `${quoteValue(s.path)} has a content hash in its name (it never changes) but a short lifetime (${lifetimePhrase(browser)}):` +
    ' send Cache-Control: public, max-age=31536000, immutable';
  return [make('hashed-short-lifetime', 'warning', msg, ev, 'RFC 9111 §5.2.2.1')];
}
