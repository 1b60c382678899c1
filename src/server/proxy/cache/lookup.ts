// Looking a GET or HEAD up (RFC 9111 §4): select a stored variant (§4.1), serve it when fresh or
// allowed stale, else revalidate (§4.3) or go upstream, waiting on an exchange already under way for
// the same variant (coalesce.ts).
import { decideServe, getHeader, type HeaderMap, isFresh, selectsByLanguage } from '../../../cache/index.js';
import type { Selected, StoredEntry } from '../../../cache/store/types.js';
import { hasDirective, parseCacheControl } from '../../../http/cache-control.js';
import { coalesceKey, lead, waitFor } from './coalesce.js';
import { partialLookup, rangeMiss } from './partial.js';
import { fetchAndStore, revalidateInBackground } from './revalidate.js';
import { checkedVariant, gatewayTimeout, type Known, secondaryKeyOf, serveStored } from './serve.js';
import { type CacheState, type Exchange, getStore, policyView, timingOf, upstreamExtras } from './state.js';

const NO_FIELDS: readonly string[] = Object.freeze([]);

/**
 * Finds a stored response for the request (§4) and serves it, or goes upstream. `found`: what tryHit
 * already looked up for it (the store is not asked again).
 */
export async function lookup(s: CacheState, x: Exchange, mayWait: boolean, found?: Selected): Promise<void> {
  const { res, key, reqHeaders } = x;
  let match: Selected;
  if (found !== undefined) match = found;
  else
    try {
      // A store answering from memory is read without a promise: the hit is served in this tick.
      const now = s.storeNow;
      const secondaryKey = secondaryKeyOf(reqHeaders);
      if (now?.findVariantSync !== undefined) {
        x.store = now;
        match = now.findVariantSync(key, secondaryKey);
      } else {
        x.store = await getStore(s);
        match = await x.store.findVariant(key, secondaryKey);
      }
    } catch (err) {
      s.warn(err, 'cache lookup failed');
      x.ctx.forward(x.req, res, x.mount, { requestHeaders: upstreamExtras(s, reqHeaders) });
      return;
    }
  if (res.destroyed) return;
  let entry = checkedVariant(match.entry, reqHeaders);
  // Selection by Content-Language (selectsByLanguage): only on a miss, only a fresh or allowed-stale one.
  let byLanguage = false;
  if (entry === undefined && match.any !== undefined && reqHeaders['accept-language'] !== undefined) {
    entry = await languageVariant(x, match.any);
    if (res.destroyed) return;
    byLanguage = entry !== undefined;
  }
  const ranged = x.method === 'GET' && reqHeaders.range !== undefined;
  if (entry === undefined) {
    if (onlyIfCached(reqHeaders)) return gatewayTimeout(x);
    const reason = match.any !== undefined ? 'vary-miss' : 'uri-miss';
    if (ranged) {
      // A full response to the same URL being fetched or stored right now will answer it.
      if (mayWait && (await waitFor(s, x, coalesceKey(x, match.any)))) return;
      return rangeMiss(s, x, reason);
    }
    return upstream(s, x, reason, undefined, mayWait, match.any);
  }
  const stored = entry.meta.response;
  const nowMs = Date.now();
  // §4.3.5: a disagreeing HEAD answer marked it stale.
  if (entry.meta.markedStale === true) return upstream(s, x, 'stale', entry, mayWait, entry);
  if (reqHeaders['cache-control'] === undefined && reqHeaders.pragma === undefined) {
    // The hit path: a plain request and a response fresh until a known time (memoised per response).
    const until = timingOf(s, stored).plainUntilMs;
    if (
      until !== null &&
      nowMs < until &&
      (await serveStored(s, x, entry, NO_FIELDS, 'hit', bodyOf(match, entry)))
    )
      return;
  }
  // §3.3: a partial entry holds pieces of the representation, served only through partial.ts (its
  // plainUntilMs is null, so the hit path above never takes it).
  if (entry.meta.partial !== undefined) return partialLookup(s, x, entry);
  const view = policyView(s, stored);
  const d = decideServe({
    stored: view,
    requestHeaders: reqHeaders,
    nowMs,
    shared: true,
    freshness: s.freshness,
  });
  if (d.kind === 'fresh' || d.kind === 'stale-ok') {
    let status = 'hit';
    if (d.kind === 'stale-ok') {
      status = `hit; detail=${d.reason}`;
      // RFC 5861 §3: serve stale now, revalidate in the background.
      if (d.reason === 'stale-while-revalidate') revalidateInBackground(s, x, entry);
    }
    if (await serveStored(s, x, entry, d.omitHeaders, status, bodyOf(match, entry))) return;
    return upstream(s, x, 'uri-miss', undefined, false, undefined);
  }
  if (d.kind === 'miss-only-if-cached') return gatewayTimeout(x);
  // Validating a variant this request did not select by §4.1 would store the answer under its key.
  if (byLanguage) return upstream(s, x, 'vary-miss', undefined, mayWait, match.any);
  // Revalidate (§4.3): stale, or the client asked for it (then the client's request is not shared).
  const reason = isFresh(view, nowMs, true, s.freshness) ? 'request' : 'stale';
  return upstream(s, x, reason, entry, mayWait && reason === 'stale', entry);
}

/** The body the lookup read with `entry`, for serving it right away (later, the store is asked again). */
function bodyOf(match: Selected, entry: StoredEntry): Known | undefined {
  return match.entry === entry && match.body !== undefined ? { body: match.body } : undefined;
}

/**
 * Goes upstream, or waits for an exchange already under way for the same key and variant and then
 * looks again (§4: one response can serve them all). `like` is a stored variant whose Vary names the
 * request fields that tell variants apart.
 */
async function upstream(
  s: CacheState,
  x: Exchange,
  reason: string,
  entry: StoredEntry | undefined,
  mayWait: boolean,
  like: StoredEntry | undefined,
): Promise<void> {
  const ckey = mayWait ? coalesceKey(x, like) : undefined;
  if (ckey !== undefined && (await waitFor(s, x, ckey))) return;
  // Only GET leads: HEAD may wait for a GET under way, never the other way round.
  fetchAndStore(s, x, reason, entry, ckey !== undefined && x.method === 'GET' ? lead(s, ckey) : undefined);
}

/**
 * The newest stored variant of the key whose Content-Language is the request's most preferred language
 * (selectsByLanguage), when the variants vary on Accept-Language. Lists the key's variants: only a
 * request that missed (§4.1) pays for it, instead of a trip upstream.
 */
async function languageVariant(x: Exchange, any: StoredEntry): Promise<StoredEntry | undefined> {
  const vary = getHeader(any.meta.response.headers, 'vary');
  if (vary === undefined || !/accept-language/i.test(vary)) return undefined;
  const store = x.store!;
  let variants: readonly StoredEntry[];
  try {
    variants = store.getVariantsSync?.(x.key) ?? (await store.getVariants(x.key));
  } catch {
    return undefined;
  }
  return variants.find(
    (e) =>
      e.meta.markedStale !== true &&
      selectsByLanguage(
        getHeader(e.meta.response.headers, 'vary'),
        e.meta.varyHeaders,
        e.meta.response.headers,
        x.reqHeaders,
      ),
  );
}

function onlyIfCached(reqHeaders: HeaderMap): boolean {
  return hasDirective(parseCacheControl(getHeader(reqHeaders, 'cache-control')), 'only-if-cached');
}
