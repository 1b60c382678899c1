// The first check of every request: Host and request-target (RFC 9112 §3.2) validated, then
// `req.url` rewritten to the canonical origin-form target and `req.headers.host` to the validated
// authority (http/target.ts), so routing, auth, the cache key and what goes upstream read one value.
import {
  type AuthorityResult,
  isCanonicalOriginForm,
  parseAuthority,
  parseRequestTarget,
} from '../../http/target.js';
import type { EntryRefusal } from './entry.js';
import { ERRORS } from './errors.js';
import type { ExchangeRequest } from './exchange.js';

export type RequestHeadCheck =
  | { readonly kind: 'ok' }
  | { readonly kind: 'reject'; readonly status: 400; readonly detail: string };

const OK: RequestHeadCheck = { kind: 'ok' };
const reject = (detail: string): RequestHeadCheck => ({ kind: 'reject', status: 400, detail });

/** Validated Host values by scheme (bounded; cleared when full): the per-request path only looks up. */
const hostMemo = { http: new Map<string, AuthorityResult>(), https: new Map<string, AuthorityResult>() };
const HOST_MEMO_MAX = 1000;

/** The last Host value seen per scheme: most connections send the same one every time, and comparing it
 *  costs less than hashing a new string for the map. */
const last = {
  http: { value: '', r: undefined as AuthorityResult | undefined },
  https: { value: '', r: undefined as AuthorityResult | undefined },
};

function authorityOf(value: string, secure: boolean): AuthorityResult {
  const seen = secure ? last.https : last.http;
  if (seen.r !== undefined && seen.value === value) return seen.r;
  const memo = secure ? hostMemo.https : hostMemo.http;
  let r = memo.get(value);
  if (r === undefined) {
    r = parseAuthority(value, secure ? 443 : 80);
    if (memo.size >= HOST_MEMO_MAX) memo.clear();
    memo.set(value, r);
  }
  seen.value = value;
  seen.r = r;
  return r;
}

/** Host field lines in the raw head (Node keeps only the first of several in `req.headers`). */
function hostLines(raw: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') n++;
  }
  return n;
}

/**
 * RFC 9113 §8.3.1: in HTTP/2 `:authority` takes the place of Host; a request with both whose values
 * differ is malformed. The authority is copied into `host` so every later step reads one field.
 */
function http2Authority(req: ExchangeRequest): RequestHeadCheck | undefined {
  const authority = req.headers[':authority'] as string | undefined;
  if (authority === undefined) return undefined; // Host alone, checked below (or missing: 400)
  const host = req.headers.host;
  if (host !== undefined && host !== authority) return reject('Host differs from :authority.');
  if (host === undefined) {
    req.headers.host = authority;
    req.rawHeaders.push('host', authority);
  }
  return undefined;
}

/**
 * Checks the request head and, when it is acceptable, rewrites `req.url` (canonical origin-form, or
 * `*` for `OPTIONS *`) and `req.headers.host` (validated authority). Nothing else is touched.
 * - RFC 9112 §3.2: 400 for an HTTP/1.1 request without Host, for more than one Host line and for an
 *   invalid Host. An HTTP/1.0 request without Host is accepted and keeps no Host (nothing is cached
 *   for it: the cache key needs an authority).
 * - RFC 9112 §3.2.2: an absolute-form target's authority replaces Host (Host must still be valid).
 */
export function checkRequestHead(req: ExchangeRequest): RequestHeadCheck {
  if (req.httpVersionMajor === 2) {
    const r = http2Authority(req);
    if (r !== undefined) return r;
  }
  const lines = hostLines(req.rawHeaders);
  if (lines > 1) return reject('More than one Host header field.');
  const secure = (req.socket as { encrypted?: boolean } | null)?.encrypted === true;
  let authority: string | undefined;
  if (lines === 0) {
    // RFC 9113 §8.3.1: an HTTP/2 request to an http(s) URI carries :authority or Host.
    if (req.httpVersionMajor === 2 || (req.httpVersionMajor === 1 && req.httpVersionMinor >= 1))
      return reject('Host header field missing.');
  } else {
    const a = authorityOf(typeof req.headers.host === 'string' ? req.headers.host : '', secure);
    if (a.kind === 'bad') return reject(`Invalid Host header field: ${a.reason}.`);
    authority = a.authority;
  }
  const url = req.url ?? '';
  // A target already canonical (RFC 3986 §6.2.2), the common case, needs no parse.
  if (!isCanonicalOriginForm(url) || req.method === 'CONNECT') {
    const t = parseRequestTarget(req.method ?? 'GET', url, secure ? 443 : 80);
    if (t.kind === 'bad') return reject(`Invalid request target: ${t.reason}.`);
    if (t.kind === 'origin') {
      if (t.authority !== undefined) authority = t.authority;
      if (req.url !== t.path) req.url = t.path;
    }
  }
  if (authority !== undefined && req.headers.host !== authority) req.headers.host = authority;
  return OK;
}

/** checkRequestHead as the entry's checkTarget: a refusal is 400 and closes the connection. */
export function refuseBadHead(req: ExchangeRequest): EntryRefusal | undefined {
  const head = checkRequestHead(req);
  if (head.kind === 'ok') return undefined;
  return { entry: ERRORS.badRequest, detail: head.detail, headers: { Connection: 'close' } };
}

/**
 * Whether the request has content to read. RFC 9112 §6.3: in HTTP/1.1 only Transfer-Encoding or a
 * Content-Length above 0 announce it. RFC 9113 §8.1: in HTTP/2 a request has content unless its
 * HEADERS frame ended the stream (Content-Length is optional there; 0 still means none).
 */
export function requestHasContent(req: ExchangeRequest): boolean {
  const cl = req.headers['content-length'];
  if (req.httpVersionMajor === 2)
    return (req as { endedWithHead?: boolean }).endedWithHead !== true && cl !== '0';
  return req.headers['transfer-encoding'] !== undefined || (cl !== undefined && cl !== '0');
}
