// Going upstream for a request the store could not answer, conditionally when a stored response is
// being revalidated (§4.3): freshening with a 304 (§4.3.4) or a 200 to HEAD (§4.3.5), stale responses
// after origin errors (RFC 5861 §4, §4.2.4), background revalidation (RFC 5861 §3).
import type { IncomingHttpHeaders } from 'node:http';
import {
  conditionalHeaders,
  decideServe,
  freshenStored,
  getHeader,
  type HeaderMap,
  type StoredResponse,
  selectForUpdate,
  selectValidated,
} from '../../../cache/index.js';
import type { EntryMeta, StoredEntry } from '../../../cache/store/types.js';
import { ERRORS, sendError } from '../../core/errors.js';
import { coalesceKey, lead } from './coalesce.js';
import { serveStored } from './serve.js';
import {
  type CacheState,
  discardField,
  downstreamFixes,
  type Exchange,
  type HeadAction,
  parseTags,
  pass,
  policyView,
  upstreamExtras,
} from './state.js';
import { storeOrPass, upstreamHeaders } from './write.js';

const CONDITIONAL_REQUEST_FIELDS = ['if-none-match', 'if-modified-since', 'if-match', 'if-unmodified-since'];
/** RFC 5861 §4: the statuses after which stale-if-error may serve a stale response. */
const ORIGIN_ERRORS = new Set([500, 502, 503, 504]);

/** One upstream exchange of fetchAndStore and what its handlers share. */
interface Fetch {
  readonly x: Exchange;
  readonly reason: string;
  readonly entry: StoredEntry | undefined;
  readonly settle: (() => void) | undefined;
  readonly done: () => void;
  readonly detached: boolean;
  /** The conditional fields we sent (empty: not a revalidation). */
  readonly cond: Record<string, string>;
  readonly requestTimeMs: number;
  readonly sentAt: number;
  bodyDone: boolean;
}

/**
 * Forwards upstream (conditionally when `entry` is being revalidated) and stores what may be stored.
 * `reason` is the Cache-Status fwd parameter. `settle` ends the wait of coalesced requests, once the
 * response is stored or known not to be (they then look again). `detached`: a background
 * revalidation, nothing goes to the client.
 */
export function fetchAndStore(
  s: CacheState,
  x: Exchange,
  reason: string,
  entry: StoredEntry | undefined,
  settle: (() => void) | undefined,
  detached = false,
): void {
  const cond = entry === undefined ? {} : conditionalHeaders([entry.meta.response]);
  const requestHeaders: Record<string, string> = upstreamExtras(s, x.reqHeaders);
  if (Object.keys(cond).length > 0) {
    // Our validators replace the client's: the answer must be about the stored response.
    for (const name of CONDITIONAL_REQUEST_FIELDS) requestHeaders[name] = '';
    Object.assign(requestHeaders, cond);
  }
  // A revalidation asks about the whole stored response, never a part of it.
  if (entry !== undefined) requestHeaders.range = '';
  const f: Fetch = {
    x,
    reason,
    entry,
    settle,
    done: settle ?? (() => {}),
    detached,
    cond,
    requestTimeMs: Date.now(),
    sentAt: s.invalidations,
    bodyDone: false,
  };
  if (settle !== undefined && !detached) {
    // The client going away aborts the exchange: waiters must not wait for it.
    x.res.once('close', () => {
      if (!f.bodyDone) f.done();
    });
  }
  x.ctx.forward(x.req, x.res, x.mount, {
    requestHeaders,
    detached,
    onFailure: () => {
      f.done();
      return staleOnError(s, f, 'detail=origin-unreachable', true);
    },
    onHead: (status, upHeaders) => onUpstreamHead(s, f, status, upHeaders),
  });
}

/** What fetchAndStore does with the upstream response head. */
function onUpstreamHead(s: CacheState, f: Fetch, status: number, upHeaders: IncomingHttpHeaders): HeadAction {
  const { x, entry, detached, done } = f;
  const responseTimeMs = Date.now();
  const headers = upstreamHeaders(x, status, upHeaders);
  const fixes = downstreamFixes(s, headers);
  if (entry !== undefined && status === 304 && Object.keys(f.cond).length > 0) {
    return onNotModified(s, f, entry, headers, responseTimeMs);
  }
  if (ORIGIN_ERRORS.has(status) && entry !== undefined && !detached) {
    const d = decideServe({
      stored: policyView(s, entry.meta.response),
      requestHeaders: x.reqHeaders,
      nowMs: responseTimeMs,
      shared: true,
      freshness: s.freshness,
      originError: true,
    });
    if (d.kind === 'stale-ok') {
      done();
      return { kind: 'swallow', onEnd: () => void staleOnError(s, f, `fwd-status=${status}`, false) };
    }
  }
  const statusText = `fwd=${f.reason}; fwd-status=${status}`;
  if (x.method === 'HEAD') {
    // §4.3.5: a 200 to HEAD freshens the stored GET response its validators select.
    if (status === 200 && entry !== undefined)
      freshenFromHead(s, x, entry, headers, f.requestTimeMs, responseTimeMs);
    done();
    return detached ? { kind: 'swallow', onEnd: () => {} } : pass(statusText, fixes);
  }
  return storeOrPass(s, x, x.method, status, headers, f.requestTimeMs, responseTimeMs, {
    statusText,
    fixes,
    done,
    detached,
    sentAt: f.sentAt,
    onBodyEnd: () => {
      f.bodyDone = true;
    },
  });
}

/** §4.3.4: a 304 to our conditional request freshens the stored response it selects. */
function onNotModified(
  s: CacheState,
  f: Fetch,
  entry: StoredEntry,
  headers: HeaderMap,
  responseTimeMs: number,
): HeadAction {
  const { x, done, detached } = f;
  const { req, res } = x;
  // §4.3.4, with selectValidated's departure for a 304 without validators.
  const selected = selectValidated([entry.meta.response], headers);
  if (selected.length === 0) {
    // The 304 is not about our response (§4.3.4): ask again without validators.
    return {
      kind: 'swallow',
      onEnd: () => {
        f.bodyDone = true;
        if (detached) return done();
        fetchAndStore(s, x, f.reason, undefined, f.settle);
      },
    };
  }
  const response = freshenStored(entry.meta.response, headers, f.requestTimeMs, responseTimeMs);
  const store = x.store!;
  const apply = async (): Promise<void> => {
    const updated = await store.updateMeta(x.key, entry.id, metaFor(s, entry.meta, response));
    done();
    if (detached) return;
    const served =
      updated !== null &&
      (await serveStored(s, x, updated, [], `fwd=${f.reason}; fwd-status=304`, { response }));
    if (!served && !res.headersSent) fetchAndStore(s, x, f.reason, undefined, undefined);
  };
  return {
    kind: 'swallow',
    onEnd: () => {
      f.bodyDone = true;
      apply().catch((err) => {
        done();
        s.warn(err, 'cache update failed');
        if (!detached && !res.headersSent) sendError(req, res, ERRORS.badGateway, 'The cache failed.');
      });
    },
  };
}

/** Serves the entry stale after an origin error when the decisions allow it (RFC 5861 §4, §4.2.4). */
function staleOnError(s: CacheState, f: Fetch, status: string, unreachable: boolean): boolean {
  const { x, entry } = f;
  if (entry === undefined || f.detached) return false;
  const d = decideServe({
    stored: policyView(s, entry.meta.response),
    requestHeaders: x.reqHeaders,
    nowMs: Date.now(),
    shared: true,
    freshness: s.freshness,
    originError: true,
    originUnreachable: unreachable,
    disconnectedStaleSec: s.disconnectedStaleSec,
  });
  if (d.kind !== 'stale-ok') return false;
  void serveStored(s, x, entry, d.omitHeaders, `hit; fwd=${f.reason}; ${status}`).then((ok) => {
    if (!ok && !x.res.headersSent) sendError(x.req, x.res, ERRORS.badGateway, 'The upstream failed.');
  });
  return true;
}

/**
 * §4.3.5: a 200 to HEAD freshens the stored GET response it selects only when its validators and
 * Content-Length agree with it; otherwise ("the cache SHOULD ... mark it stale") the stored response
 * is marked stale and never rewritten, so one client's HEAD cannot change what others are served.
 */
function freshenFromHead(
  s: CacheState,
  x: Exchange,
  entry: StoredEntry,
  headers: HeaderMap,
  requestTimeMs: number,
  responseTimeMs: number,
): void {
  const stored = entry.meta.response;
  const agrees =
    selectForUpdate([stored], headers).length > 0 && headAgrees(stored.headers, headers, entry.bodyBytes);
  const meta: EntryMeta = agrees
    ? metaFor(s, entry.meta, freshenStored(stored, headers, requestTimeMs, responseTimeMs))
    : { ...entry.meta, markedStale: true };
  x.store!.updateMeta(x.key, entry.id, meta).catch((err) => s.warn(err, 'cache update failed'));
}

/** Whether a HEAD answer's ETag, Last-Modified and Content-Length are those of the stored response. */
export function headAgrees(stored: HeaderMap, head: HeaderMap, bodyBytes: number): boolean {
  for (const name of ['etag', 'last-modified']) {
    const a = getHeader(stored, name);
    const b = getHeader(head, name);
    if (a !== b) return false;
  }
  const length = getHeader(head, 'content-length');
  return length === undefined || Number(length) === bodyBytes;
}

/** The entry's meta with a freshened response; purge tags follow the newest Cache-Tag (§3.2). */
function metaFor(s: CacheState, meta: EntryMeta, response: StoredResponse): EntryMeta {
  const tags = parseTags(getHeader(response.headers, s.tagHeader));
  // A freshened response is no longer marked stale (§4.3.4 validated it).
  const { tags: _old, markedStale: _stale, discardAfterMs: _discard, ...rest } = meta;
  return { ...rest, response, ...(tags.length > 0 ? { tags } : {}), ...discardField(s, response) };
}

/** RFC 5861 §3: a conditional request that nobody waits on; its answer updates or replaces the entry. */
export function revalidateInBackground(s: CacheState, x: Exchange, entry: StoredEntry): void {
  const ckey = coalesceKey(x, entry);
  if (s.inflight.has(ckey) || x.method !== 'GET') return;
  fetchAndStore(s, x, 'stale', entry, lead(s, ckey), true);
}
