// Writing to the store: whether an upstream response may be stored (§3), what is kept of it, and the
// tee that stores its body while it streams to the client.
import type { IncomingHttpHeaders } from 'node:http';
import { getHeader, type HeaderMap, isStorable, varyKey } from '../../../cache/index.js';
import type { EntryMeta } from '../../../cache/store/types.js';
import { policyHeaders } from '../../../cache/targeted.js';
import { stripHopByHop } from '../../../http/proxy-headers.js';
import {
  type CacheState,
  discardField,
  type Exchange,
  type HeadAction,
  invalidatedSince,
  NAME,
  parseTags,
  pass,
  toHeaderMap,
} from './state.js';

/** How storeOrPass reports and whom it tells. */
export interface StoreTarget {
  statusText: string;
  fixes: Record<string, string>;
  /** Hears once the response is stored or known not to be. */
  done: () => void;
  detached: boolean;
  /** The invalidation count when the request went upstream (see invalidatedSince). */
  sentAt: number;
  onBodyEnd?: () => void;
}

/**
 * An upstream response's fields as the cache decides on them: with the Cache-Control the proxy
 * sends (its cachePolicy applied), so a response clients are told not to store is not stored here
 * either, and a rule's freshness applies here too. A 304 keeps its own: it updates a stored
 * response whose Cache-Control was settled when it was stored (§4.3.4).
 */
export function upstreamHeaders(x: Exchange, status: number, upHeaders: IncomingHttpHeaders): HeaderMap {
  const headers = toHeaderMap(stripHopByHop(upHeaders));
  if (status === 304) return headers;
  const cc = x.ctx.cacheControl(x.req, upHeaders);
  if (cc === headers['cache-control']) return headers;
  if (cc === undefined) delete headers['cache-control'];
  else headers['cache-control'] = cc;
  return headers;
}

/**
 * What is stored for a response (§3.1): its fields minus the ones the decisions omit, a Date, the
 * request fields its Vary names, purge tags. Null when it may not be stored.
 */
export function entryMeta(
  s: CacheState,
  x: Exchange,
  method: string,
  status: number,
  headers: HeaderMap,
  requestTimeMs: number,
  responseTimeMs: number,
): EntryMeta | null {
  const { reqHeaders } = x;
  const storable = isStorable({
    method,
    requestHeaders: reqHeaders,
    status,
    responseHeaders: policyHeaders(headers, s.targeted),
    shared: true,
  });
  if (!storable.ok) return null;
  const vary = getHeader(headers, 'vary');
  const vk = varyKey(vary, reqHeaders);
  if (vk === null) return null;
  // Set-Cookie is stored like any other field (RFC 9111 §3.1, §7.3 leaves it to the origin to
  // mark personal responses private or no-cache="set-cookie").
  const toStore: Record<string, string> = {};
  for (const [name, v] of Object.entries(headers)) {
    if (!storable.omitHeaders.includes(name)) toStore[name] = v;
  }
  // A cache with a clock dates what it stores (RFC 9110 §6.6.1).
  toStore.date ??= new Date(responseTimeMs).toUTCString();
  const varyHeaders: Record<string, string> = {};
  if (vary !== undefined) {
    for (const name of vary.split(',')) {
      const n = name.trim().toLowerCase();
      const v = getHeader(reqHeaders, n);
      if (n !== '' && v !== undefined) varyHeaders[n] = v;
    }
  }
  const tags = parseTags(getHeader(headers, s.tagHeader));
  const response = { status, headers: toStore, requestTimeMs, responseTimeMs };
  return {
    response,
    varyKey: vk,
    varyHeaders,
    ...(tags.length > 0 ? { tags } : {}),
    ...discardField(s, response),
  };
}

/**
 * The action for a response that may be stored: tee it into the store while it goes to the client
 * (or only into the store when detached). `t.done` hears whether it was stored.
 */
export function storeOrPass(
  s: CacheState,
  x: Exchange,
  method: string,
  status: number,
  headers: HeaderMap,
  requestTimeMs: number,
  responseTimeMs: number,
  t: StoreTarget,
): HeadAction {
  const { key } = x;
  const { done, detached } = t;
  const notStored = (): HeadAction => {
    done();
    return detached ? { kind: 'swallow', onEnd: () => {} } : pass(t.statusText, t.fixes);
  };
  const meta = entryMeta(s, x, method, status, headers, requestTimeMs, responseTimeMs);
  if (meta === null) return notStored();
  const lengthText = getHeader(headers, 'content-length');
  const declared = lengthText === undefined ? undefined : Number(lengthText);
  if (declared !== undefined && declared > s.o.maxEntryBytes) return notStored();
  let chunks: Buffer[] | undefined = [];
  let bytes = 0;
  const onData = (chunk: Buffer) => {
    if (chunks === undefined) return;
    bytes += chunk.byteLength;
    if (bytes > s.o.maxEntryBytes) {
      chunks = undefined;
      done();
    } else chunks.push(chunk);
  };
  const onEnd = () => {
    t.onBodyEnd?.();
    // §4.4: an invalidation since the request went out makes this answer possibly outdated.
    if (
      chunks === undefined ||
      (declared !== undefined && declared !== bytes) ||
      invalidatedSince(s, key, t.sentAt)
    ) {
      done();
      return;
    }
    x.store!.put(key, meta, Buffer.concat(chunks, bytes)).then(
      (r) => {
        if (r.stored) s.writesFailing = false;
        done();
      },
      (err) => {
        s.writesFailing = true;
        done();
        s.warn(err, 'cache store failed');
      },
    );
  };
  if (detached) return { kind: 'swallow', onData, onEnd };
  return {
    kind: 'pass',
    headers: { ...t.fixes, 'cache-status': `${NAME}; ${t.statusText}${storeClaim(s, x)}` },
    onData,
    onEnd,
  };
}

/**
 * RFC 9211 §2.5: `stored` is a claim about the outcome, and the head goes out before the put settles.
 * Only a store whose put cannot fail by itself (memory) claims it, and not while its writes fail (see
 * CacheState.writesFailing). A store whose writes can fail (disk) says that a write is under way
 * instead (§2.8 `detail`), which claims nothing about its outcome, unless it already knows the write
 * will not happen (Redis down or hung: `detail=store-unavailable`; the put is still tried, and
 * answers `unavailable`).
 */
function storeClaim(s: CacheState, x: Exchange): string {
  const store = x.store!;
  if (store.putMayFail === true)
    return store.canWrite?.() === false ? '; detail=store-unavailable' : '; detail=storing';
  return s.writesFailing ? '' : '; stored';
}
