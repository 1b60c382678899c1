// Serving a stored response (RFC 9111 §4): Age (§5.1), Cache-Status (RFC 9211), the memoised fields
// of plain hits, and the hit path without a promise (tryHit).
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  ageFieldSeconds,
  getHeader,
  type HeaderMap,
  matchesVary,
  type StoredResponse,
  varyKey,
} from '../../../cache/index.js';
import type { EntryBody, SecondaryKeyOf, StoredEntry } from '../../../cache/store/types.js';
import type { RequestFacts } from '../../core/context.js';
import { ERRORS, sendError } from '../../core/errors.js';
import { logCacheStatus } from '../../ops/log.js';
import { primaryKey } from './keys.js';
import { isPlainRead, serveFromStore } from './preconditions.js';
import {
  type CacheState,
  downstreamFixes,
  type Exchange,
  type LookedUp,
  NAME,
  type PlainHead,
  setFields,
  type Timing,
  timingOf,
  toIncoming,
} from './state.js';

/** The request's secondary key (§4.1) for a stored response's Vary. */
export function secondaryKeyOf(reqHeaders: HeaderMap): SecondaryKeyOf {
  return (vary) => varyKey(vary, reqHeaders);
}

/**
 * §4.1: the entry the store's variant index selects, when its current Vary still matches (a 304 may
 * have changed it since it was indexed). One index lookup per distinct Vary value, never a scan.
 */
export function checkedVariant(
  entry: StoredEntry | undefined,
  reqHeaders: HeaderMap,
): StoredEntry | undefined {
  if (entry === undefined) return undefined;
  const vary = getHeader(entry.meta.response.headers, 'vary');
  return matchesVary(vary, entry.meta.varyHeaders, reqHeaders) ? entry : undefined;
}

/**
 * The hit path without a promise (see RouteCache.tryHit): true when it answered; else what it looked
 * up, for handle() to go on from (one lookup per request), or undefined when it looked nothing up.
 */
export function tryHit(
  s: CacheState,
  req: IncomingMessage,
  res: ServerResponse,
  facts: RequestFacts,
): true | LookedUp | undefined {
  const store = s.storeNow;
  if (store?.findVariantSync === undefined) return undefined;
  const h = req.headers as HeaderMap;
  if (req.method !== 'GET' || h['cache-control'] !== undefined || h.pragma !== undefined) return undefined;
  if (!isPlainRead(h) || req.headers['set-cookie'] !== undefined) return undefined;
  if (res.destroyed || res.getHeaderNames().length !== 0) return undefined;
  // Let through by an auth rule: bypassed, or kept per user (see handle in index.ts).
  if (facts.authorized === true) return undefined;
  const key = primaryKey(req);
  if (key === undefined) return undefined;
  const match = store.findVariantSync(key, secondaryKeyOf(h));
  const entry = checkedVariant(match.entry, h);
  if (entry === undefined || entry.meta.markedStale === true) return { key, match };
  const response = entry.meta.response;
  // Only a response whose fields serveStored has worked out already (its first hit goes there).
  const plain = s.sentFlat.get(response);
  if (plain === undefined) return { key, match };
  const nowMs = Date.now();
  const t = timingOf(s, response);
  if (t.plainUntilMs === null || nowMs >= t.plainUntilMs) return { key, match };
  const body = match.body ?? store.openBodySync?.(entry);
  if (body?.whole === undefined) return { key, match };
  writePlainHit(s, res, key, response, t, plain, body.whole, 'hit', nowMs);
  return true;
}

/** RFC 9211 §2.6: ttl, the remaining freshness in seconds (negative when stale); none when unknown. */
function ttlOf(t: Timing, nowMs: number): number | undefined {
  return Number.isFinite(t.endMs) ? Math.ceil((t.endMs - nowMs) / 1000) : undefined;
}

/** Cache-Status (RFC 9211 §2.1) for a stored response served now; §2.7 key when configured. */
function cacheStatusOf(s: CacheState, key: string, status: string, ttl: number | undefined): string {
  let out = `${NAME}; ${status}`;
  if (ttl !== undefined) out += `; ttl=${ttl}`;
  if (s.o.statusKey === true) out += `; key=${JSON.stringify(key)}`;
  return out;
}

/** Age (§5.1) in seconds: current_age (§4.2.3) from the memoised initial age plus the resident time. */
function ageSecOf(response: StoredResponse, t: Timing, nowMs: number): number {
  return ageFieldSeconds(t.initialAgeSec + (nowMs - response.responseTimeMs) / 1000);
}

/**
 * Writes a whole stored response to a plain GET: the memoised fields, Age, Cache-Status and the body
 * in one write. The head list is rebuilt only when Age or Cache-Status changed since the last one.
 */
function writePlainHit(
  s: CacheState,
  res: ServerResponse,
  key: string,
  response: StoredResponse,
  t: Timing,
  plain: PlainHead,
  whole: Uint8Array,
  status: string,
  nowMs: number,
): void {
  const ageSec = ageSecOf(response, t, nowMs);
  const ttl = ttlOf(t, nowMs);
  let head = plain.last;
  if (
    head === undefined ||
    plain.lastAgeSec !== ageSec ||
    plain.lastTtl !== ttl ||
    plain.lastWord !== status
  ) {
    const noBody = response.status === 204 || response.status === 304;
    const cacheStatus = cacheStatusOf(s, key, status, ttl);
    head = plain.fields.concat('age', String(ageSec), 'cache-status', cacheStatus);
    if (!noBody) head.push('content-length', String(whole.byteLength));
    plain.last = head;
    plain.lastAgeSec = ageSec;
    plain.lastTtl = ttl;
    plain.lastWord = status;
    plain.lastStatus = cacheStatus;
  }
  res.writeHead(response.status, head);
  res.end(response.status === 204 || response.status === 304 ? undefined : whole);
  logCacheStatus(res, plain.lastStatus);
}

/** What the caller of serveStored already has: a freshened response (§4.3.4), the body its lookup read. */
export interface Known {
  readonly response?: StoredResponse;
  readonly body?: EntryBody | undefined;
}

const NOTHING_KNOWN: Known = Object.freeze({});

/**
 * Answers from the store (§4): the stored status and headers, Age (§5.1), the body unless HEAD;
 * the client's preconditions and Range are evaluated against the stored response (preconditions.ts).
 * False when the body is gone (evicted meanwhile): the caller forwards instead.
 */
export async function serveStored(
  s: CacheState,
  x: Exchange,
  entry: StoredEntry,
  omit: readonly string[],
  status: string,
  known: Known = NOTHING_KNOWN,
): Promise<boolean> {
  const { res } = x;
  const store = x.store!;
  const response = known.response ?? entry.meta.response;
  const body = known.body ?? store.openBodySync?.(entry) ?? (await store.openBody(entry));
  if (body === null) return false;
  if (res.destroyed || res.headersSent) {
    await body.close();
    return true;
  }
  const nowMs = Date.now();
  // The fields sent for a stored response depend on it, its key (host, path) and the headers earlier
  // steps set on `res`; with none of those and nothing to omit they are the same every time.
  const plain = omit.length === 0 && res.getHeaderNames().length === 0;
  let base = plain ? s.sentFields.get(response) : undefined;
  if (base === undefined) {
    base = x.ctx.responseHeaders(x.req, res, x.mount, toIncoming(response.headers, omit));
    setFields(base, downstreamFixes(s, response.headers));
    if (plain) s.sentFields.set(response, base);
  }
  if (plain && body.whole !== undefined && x.method === 'GET' && isPlainRead(x.reqHeaders)) {
    // The hit path (see tryHit, which takes the following ones without this function).
    let flat = s.sentFlat.get(response);
    if (flat === undefined) {
      // Several lines of one field (Set-Cookie) stay one array value: when an earlier step has
      // touched the response's fields, writeHead sets each pair of a flat list with setHeader,
      // so a repeated name would keep only its last line.
      const fields: (string | string[])[] = [];
      for (const [name, v] of Object.entries(base)) if (name !== 'content-length') fields.push(name, v);
      flat = { fields, last: undefined, lastAgeSec: -1, lastTtl: undefined, lastWord: '', lastStatus: '' };
      s.sentFlat.set(response, flat);
    }
    writePlainHit(s, res, x.key, response, timingOf(s, response), flat, body.whole, status, nowMs);
    return true;
  }
  const out = { ...base };
  const t = timingOf(s, response);
  out.age = String(ageSecOf(response, t, nowMs));
  out['cache-status'] = cacheStatusOf(s, x.key, status, ttlOf(t, nowMs));
  logCacheStatus(res, out['cache-status']);
  try {
    await serveFromStore({
      req: x.req,
      res,
      method: x.method,
      reqHeaders: x.reqHeaders,
      response,
      headers: out,
      body,
      nowMs,
    });
  } catch (err) {
    s.warn(err, 'cache read failed');
    res.destroy(err as Error);
  }
  return true;
}

/**
 * The fields sent for `response` answered from the store (as serveStored builds them, not memoised):
 * the stored ones through the proxy's response steps, Age (§5.1) and Cache-Status.
 */
export function storedHead(
  s: CacheState,
  x: Exchange,
  response: StoredResponse,
  omit: readonly string[],
  status: string,
  nowMs: number,
): Record<string, string | string[]> {
  const out = x.ctx.responseHeaders(x.req, x.res, x.mount, toIncoming(response.headers, omit));
  setFields(out, downstreamFixes(s, response.headers));
  const t = timingOf(s, response);
  out.age = String(ageSecOf(response, t, nowMs));
  out['cache-status'] = cacheStatusOf(s, x.key, status, ttlOf(t, nowMs));
  return out;
}

/** 504 for only-if-cached with nothing usable stored (§5.2.1.7). */
export function gatewayTimeout(x: Exchange): void {
  const status = `${NAME}; detail=only-if-cached`;
  sendError(
    x.req,
    x.res,
    ERRORS.gatewayTimeout,
    'The request asked for a stored response only (only-if-cached) and none is available.',
    { 'cache-status': status },
  );
  logCacheStatus(x.res, status);
}
