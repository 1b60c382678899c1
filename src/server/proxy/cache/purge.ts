// Invalidation after unsafe requests (§4.4) and the PURGE method (one URL, a URL prefix, tags).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getHeader, type HeaderMap, invalidationUris } from '../../../cache/index.js';
import { PurgeIncompleteError } from '../../../cache/store/types.js';
import { policyHeaders } from '../../../cache/targeted.js';
import { hasDirective, parseCacheControl } from '../../../http/cache-control.js';
import { parseIp } from '../../../http/ip.js';
import { ERRORS, sendError } from '../../core/errors.js';
import { keyUri, primaryKey, sameUserKey } from './keys.js';
import {
  type CacheRequestContext,
  type CacheState,
  downstreamFixes,
  type Exchange,
  getStore,
  noteInvalidated,
  parseTags,
  pass,
  upstreamExtras,
} from './state.js';
import { storeOrPass, upstreamHeaders } from './write.js';

/**
 * §4.4: after a non-error response to an unsafe request, drop what is stored for the URIs involved.
 * RFC 9110 §9.3.3: a POST response with explicit freshness and a Content-Location equal to the
 * target URI is the GET response of that URI: it is stored as one.
 */
export function forwardUnsafe(s: CacheState, x: Exchange): void {
  const { method, key, ctx, reqHeaders } = x;
  const requestTimeMs = Date.now();
  ctx.forward(x.req, x.res, x.mount, {
    requestHeaders: upstreamExtras(s, reqHeaders),
    onHead: (status, upHeaders) => {
      const headers = upstreamHeaders(x, status, upHeaders);
      const targetUri = keyUri(key);
      const uris = invalidationUris({ method, status, targetUri, responseHeaders: headers });
      // A user's own entries (perUser): other users' copies expire on their own, as in their private caches.
      const keys = uris.map((u) => sameUserKey(key, `GET ${u}`));
      for (const k of keys) noteInvalidated(s, k);
      if (keys.length > 0 && x.store !== undefined) {
        const store = x.store;
        void Promise.all(keys.map((k) => store.delete(k))).catch((err) =>
          s.warn(err, 'cache invalidation failed'),
        );
      }
      const statusText = `fwd=method; fwd-status=${status}`;
      const fixes = downstreamFixes(s, headers);
      if (method === 'POST' && x.store !== undefined && postIsGetResponse(s, headers, targetUri)) {
        const t = { statusText, fixes, done: () => {}, detached: false, sentAt: s.invalidations };
        return storeOrPass(s, x, 'GET', status, headers, requestTimeMs, Date.now(), t);
      }
      return pass(statusText, fixes);
    },
  });
}

/** RFC 9110 §9.3.3: explicit freshness (RFC 9111 §4.2.1) and Content-Location = the target URI. */
function postIsGetResponse(s: CacheState, headers: HeaderMap, targetUri: string): boolean {
  const location = getHeader(headers, 'content-location');
  if (location === undefined) return false;
  let same: boolean;
  try {
    same = new URL(location, targetUri).href === targetUri;
  } catch {
    return false;
  }
  const policy = policyHeaders(headers, s.targeted);
  const cc = parseCacheControl(getHeader(policy, 'cache-control'));
  const explicit =
    hasDirective(cc, 'max-age') || hasDirective(cc, 's-maxage') || getHeader(policy, 'expires') !== undefined;
  return same && explicit;
}

/** PURGE from an allowed address: one URL, a URL prefix (`/path*`), or tags (`Cache-Tag: a, b`). */
export async function purge(
  s: CacheState,
  req: IncomingMessage,
  res: ServerResponse,
  ctx: CacheRequestContext,
): Promise<void> {
  const addr = parseIp(ctx.clientAddress(req));
  if (addr === null || !s.purgeAllowed(addr)) {
    sendError(req, res, ERRORS.forbidden, 'PURGE is not allowed from this address.');
    return;
  }
  const key = primaryKey(req);
  if (key === undefined) {
    sendError(req, res, ERRORS.badRequest, 'The PURGE target is not a valid URL.');
    return;
  }
  const tagValue = req.headers[s.tagHeader];
  const tags = parseTags(Array.isArray(tagValue) ? tagValue.join(',') : tagValue);
  try {
    const store = await getStore(s);
    let purged = 0;
    let errors = 0;
    /** Entries leave the index even when their files cannot be removed: counted, logged, still 200. */
    const count = async (run: () => Promise<number>): Promise<void> => {
      try {
        purged += await run();
      } catch (err) {
        if (!(err instanceof PurgeIncompleteError)) throw err;
        s.warn(err, 'cache purge left files behind');
        purged += err.purged;
        errors += err.errors;
      }
    };
    if (tags.length > 0) {
      noteInvalidated(s, undefined);
      for (const tag of tags) await count(() => store.purge({ tag }));
    } else if (key.endsWith('*')) {
      noteInvalidated(s, undefined);
      await count(() => store.purge({ keyPrefix: key.slice(0, -1) }));
    } else {
      noteInvalidated(s, key);
      await count(async () => {
        const n = (await store.getVariants(key)).length;
        await store.delete(key);
        return n;
      });
    }
    const body = `${JSON.stringify(errors > 0 ? { purged, errors } : { purged })}\n`;
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-store',
    });
    res.end(body);
  } catch (err) {
    s.warn(err, 'cache purge failed');
    sendError(req, res, ERRORS.internal, 'The purge failed.');
  }
}
