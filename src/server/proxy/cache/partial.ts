// Partial responses in the shared cache (RFC 9111 §3.3, §3.4): a 206 is stored as the pieces it holds,
// a request for held bytes is answered from them, a request for more asks upstream for the missing
// bytes only, and pieces with the same strong validator are combined (a complete set is stored as a
// 200). The decisions are ../../../cache/pieces.ts; this module does the I/O.

import { completeFromPartial, decideServe, getHeader, type HeaderMap } from '../../../cache/index.js';
import {
  combinePieces,
  completionFits,
  completionProblem,
  DEFAULT_MAX_PIECES_PER_ENTRY,
  type HeldPieces,
  ifRangeFor,
  missingOf,
  pieceFields,
  pieceOf,
  rangeHeaderFor,
  type StoredPieces,
  sliceHeld,
  spanOf,
  strongValidatorOf,
} from '../../../cache/pieces.js';
import type { EntryMeta, StoredEntry } from '../../../cache/store/types.js';
import { hasDirective, parseCacheControl } from '../../../http/cache-control.js';
import { logCacheStatus } from '../../ops/log.js';
import { fetchAndStore } from './revalidate.js';
import { gatewayTimeout, storedHead } from './serve.js';
import {
  type CacheState,
  downstreamFixes,
  type Exchange,
  type HeadAction,
  invalidatedSince,
  pass,
  policyView,
  upstreamExtras,
} from './state.js';
import { entryMeta, storeOrPass, upstreamHeaders } from './write.js';

/** Client fields that make the answer depend on more than the bytes held: such requests are forwarded. */
const CONDITIONAL = ['if-none-match', 'if-modified-since', 'if-match', 'if-unmodified-since', 'if-range'];

/**
 * A Range request with nothing usable stored goes upstream as it is. A 200 (the origin ignored Range,
 * or If-Range failed) is stored as the complete response, and so is a 206 carrying every byte
 * (completeFromPartial, §3.3). Another 206 goes to the client and is stored as a piece, combined with
 * `prior` (the variant's partial entry) when they share a strong validator (§3.4).
 */
export function rangeMiss(s: CacheState, x: Exchange, reason: string, prior?: StoredEntry): void {
  const requestTimeMs = Date.now();
  const sentAt = s.invalidations;
  const hadIfRange = x.reqHeaders['if-range'] !== undefined;
  x.ctx.forward(x.req, x.res, x.mount, {
    requestHeaders: upstreamExtras(s, x.reqHeaders),
    onHead: (status, upHeaders) => {
      const responseTimeMs = Date.now();
      const headers = upstreamHeaders(x, status, upHeaders);
      const statusText = `fwd=${reason}; fwd-status=${status}`;
      const fixes = downstreamFixes(s, headers);
      const complete =
        status === 200 ? headers : status === 206 ? completeFromPartial(headers, hadIfRange) : null;
      if (complete !== null) {
        const t = { statusText, fixes, done: () => {}, detached: false, sentAt };
        return storeOrPass(s, x, 'GET', 200, complete, requestTimeMs, responseTimeMs, t);
      }
      // A 206 to If-Range may leave out fields the client has (RFC 9110 §15.3.7): not stored.
      if (status !== 206 || hadIfRange || !piecesOn(s)) return pass(statusText, fixes);
      const chunks = collector(s.o.maxEntryBytes);
      return {
        ...pass(statusText, fixes),
        onData: chunks.add,
        onEnd: () => {
          const body = chunks.body();
          if (body === undefined) return;
          const times = { requestTimeMs, responseTimeMs, sentAt };
          storePiece(s, x, prior, headers, body, times).catch((err) => s.warn(err, 'cache store failed'));
        },
      };
    },
  });
}

/** Whether partial responses are stored on this route. */
function piecesOn(s: CacheState): boolean {
  return (s.o.maxPiecesPerEntry ?? 16) > 0;
}

/** Collects a body up to `maxBytes`; `body()` is undefined past it. */
function collector(maxBytes: number): { add: (chunk: Buffer) => void; body: () => Buffer | undefined } {
  let chunks: Buffer[] | undefined = [];
  let bytes = 0;
  return {
    add: (chunk) => {
      if (chunks === undefined) return;
      bytes += chunk.byteLength;
      if (bytes > maxBytes) chunks = undefined;
      else chunks.push(chunk);
    },
    body: () => (chunks === undefined ? undefined : Buffer.concat(chunks, bytes)),
  };
}

interface Times {
  readonly requestTimeMs: number;
  readonly responseTimeMs: number;
  /** The invalidation count when the request went upstream (invalidatedSince). */
  readonly sentAt: number;
}

/** The stored pieces of a partial entry with their bytes, or undefined when its body is gone. */
async function storedPieces(x: Exchange, entry: StoredEntry | undefined): Promise<StoredPieces | undefined> {
  const held = entry?.meta.partial;
  if (entry === undefined || held === undefined) return undefined;
  const body = await readWhole(x, entry);
  if (body === undefined) return undefined;
  return { held, body, validator: strongValidatorOf(entry.meta.response.headers) };
}

async function readWhole(x: Exchange, entry: StoredEntry): Promise<Uint8Array | undefined> {
  const store = x.store!;
  const body = store.openBodySync?.(entry) ?? (await store.openBody(entry));
  if (body === null) return undefined;
  if (body.whole !== undefined) return body.whole;
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks, body.bodyBytes);
}

/**
 * Stores a 206 as a piece (RFC 9111 §3.3), combined with `prior`'s pieces when combinePieces allows
 * it (§3.4), as a 200 once the pieces are complete. A 206 that is not one consistent piece (pieceOf)
 * is not stored.
 */
async function storePiece(
  s: CacheState,
  x: Exchange,
  prior: StoredEntry | undefined,
  headers: HeaderMap,
  body: Uint8Array,
  t: Times,
): Promise<void> {
  const piece = pieceOf(headers, body.byteLength);
  if (!piece.ok) return;
  const stored = await storedPieces(x, prior);
  const r = combinePieces(stored, { ...piece, body, validator: strongValidatorOf(headers) }, limitsOf(s));
  if (r.kind === 'refused') return;
  await putPieces(s, x, r.held, r.body, r.complete, headers, t);
}

function limitsOf(s: CacheState): { maxPieces: number; maxBytes: number } {
  return { maxPieces: s.o.maxPiecesPerEntry ?? DEFAULT_MAX_PIECES_PER_ENTRY, maxBytes: s.o.maxEntryBytes };
}

/**
 * Puts the pieces under the request's key: a partial entry (status 206, the newest piece's fields,
 * §3.4 "update the stored response header fields"), or the complete response as a 200. Nothing when
 * the response may not be stored (§3) or an invalidation came since the request went out (§4.4).
 */
async function putPieces(
  s: CacheState,
  x: Exchange,
  held: HeldPieces,
  body: Uint8Array,
  complete: boolean,
  headers: HeaderMap,
  t: Times,
): Promise<boolean> {
  const fields = pieceFields(headers);
  if (complete) fields['content-length'] = String(held.lengthBytes);
  const base = entryMeta(s, x, 'GET', 200, fields, t.requestTimeMs, t.responseTimeMs);
  if (base === null || invalidatedSince(s, x.key, t.sentAt)) return false;
  const meta: EntryMeta = complete
    ? base
    : { ...base, response: { ...base.response, status: 206 }, partial: held };
  const r = await x.store!.put(x.key, meta, body);
  return r.stored;
}

/**
 * A GET or HEAD whose selected variant is a partial entry (§3.3). Fresh (or allowed stale): a request
 * for held bytes is answered from them (206); one for more asks upstream for the span between the
 * first and last missing byte (completeMissing). Otherwise, and for requests with preconditions,
 * several ranges or HEAD, the request is forwarded as a miss; what comes back replaces or joins the
 * pieces as rangeMiss decides.
 */
export async function partialLookup(s: CacheState, x: Exchange, entry: StoredEntry): Promise<void> {
  const held = entry.meta.partial!;
  const h = x.reqHeaders;
  const range = x.method === 'GET' ? h.range : undefined;
  const forward = (reason: string) =>
    range !== undefined ? rangeMiss(s, x, reason, entry) : fetchAndStore(s, x, reason, undefined, undefined);
  if (x.method !== 'GET' || CONDITIONAL.some((name) => h[name] !== undefined)) return forward('partial');
  const d = decideServe({
    stored: policyView(s, entry.meta.response),
    requestHeaders: h,
    nowMs: Date.now(),
    shared: true,
    freshness: s.freshness,
  });
  if (d.kind === 'miss-only-if-cached') return gatewayTimeout(x);
  if (d.kind !== 'fresh' && d.kind !== 'stale-ok') return forward('stale');
  const span = spanOf(range, held.lengthBytes);
  if (span.kind === 'other') return forward('partial');
  const c = missingOf(held, span.start, span.end);
  if (c.kind === 'held') {
    const body = await readWhole(x, entry);
    if (body === undefined) return forward('partial');
    if (x.res.destroyed || x.res.headersSent) return;
    const part = sliceHeld(held, body, span.start, span.end);
    const status = d.kind === 'fresh' ? 'hit' : `hit; detail=${d.reason}`;
    const out = storedHead(s, x, entry.meta.response, d.omitHeaders, status, Date.now());
    return writeBytes(x, out, range === undefined ? null : span, held.lengthBytes, part);
  }
  // §5.2.1.7: only-if-cached and bytes missing: nothing goes upstream.
  if (hasDirective(parseCacheControl(getHeader(h, 'cache-control')), 'only-if-cached'))
    return gatewayTimeout(x);
  // Nothing of the range held: it goes upstream as it is, and its answer joins the pieces.
  if (range !== undefined && c.start === span.start && c.end === span.end) return forward('partial');
  // §3.4: the missing bytes must fit beside the held ones, else the request goes upstream whole.
  if (!completionFits(held, c.start, c.end, s.o.maxEntryBytes)) return forward('partial');
  completeMissing(s, x, entry, { start: span.start, end: span.end, full: range === undefined }, c);
}

/** The client's span (full: no usable Range, answered with a 200). */
interface Wanted {
  readonly start: number;
  readonly end: number;
  readonly full: boolean;
}

/** A 206 of `part` for `span` (RFC 9110 §14.4), or a 200 of the whole representation when span is null. */
function writeBytes(
  x: Exchange,
  out: Record<string, string | string[]>,
  span: { start: number; end: number } | null,
  lengthBytes: number,
  part: Uint8Array,
): void {
  out['content-length'] = String(part.byteLength);
  if (span !== null) out['content-range'] = `bytes ${span.start}-${span.end}/${lengthBytes}`;
  else delete out['content-range'];
  logCacheStatus(x.res, String(out['cache-status'] ?? ''));
  x.res.writeHead(span === null ? 200 : 206, out);
  x.res.end(part);
}

/**
 * §3.3: asks upstream for [missing.start, missing.end] with If-Range (the stored strong validator,
 * RFC 9110 §13.1.5), so a changed representation comes back whole (a 200, stored and passed on). A
 * 206 is checked (completionProblem) and combined (combinePieces); when the client's span is then
 * held it is answered from the pieces. Anything else is never mixed: the client's own request goes
 * upstream once more, as a miss.
 */
function completeMissing(
  s: CacheState,
  x: Exchange,
  entry: StoredEntry,
  want: Wanted,
  missing: { start: number; end: number },
): void {
  const held = entry.meta.partial!;
  const requestTimeMs = Date.now();
  const sentAt = s.invalidations;
  const requestHeaders: Record<string, string> = {
    ...upstreamExtras(s, x.reqHeaders),
    range: rangeHeaderFor(missing.start, missing.end, held.lengthBytes),
    'if-range': ifRangeFor(entry.meta.response.headers) ?? '',
  };
  const again = () => {
    if (x.res.destroyed || x.res.headersSent) return;
    if (want.full) fetchAndStore(s, x, 'partial', undefined, undefined);
    else rangeMiss(s, x, 'partial', entry);
  };
  x.ctx.forward(x.req, x.res, x.mount, {
    requestHeaders,
    onHead: (status, upHeaders): HeadAction => {
      const responseTimeMs = Date.now();
      const headers = upstreamHeaders(x, status, upHeaders);
      const statusText = `fwd=partial; fwd-status=${status}`;
      const fixes = downstreamFixes(s, headers);
      // A 200: the representation changed (If-Range) or the origin ignored Range; it is complete.
      if (status === 200) {
        const t = { statusText, fixes, done: () => {}, detached: false, sentAt };
        return storeOrPass(s, x, 'GET', 200, headers, requestTimeMs, responseTimeMs, t);
      }
      if (status !== 206) return status >= 500 ? pass(statusText, fixes) : { kind: 'swallow', onEnd: again };
      const chunks = collector(missing.end - missing.start + 1);
      return {
        kind: 'swallow',
        onData: chunks.add,
        onEnd: () => {
          const body = chunks.body();
          const times = { requestTimeMs, responseTimeMs, sentAt };
          combineAndAnswer(s, x, entry, want, missing, headers, body, times).then(
            (answered) => {
              if (!answered) again();
            },
            (err) => {
              s.warn(err, 'cache store failed');
              again();
            },
          );
        },
      };
    },
  });
}

/**
 * Combines an answer to completeMissing with the stored pieces and answers the client from them.
 * False when the answer may not be combined (then nothing is stored and nothing sent).
 */
async function combineAndAnswer(
  s: CacheState,
  x: Exchange,
  entry: StoredEntry,
  want: Wanted,
  missing: { start: number; end: number },
  headers: HeaderMap,
  body: Buffer | undefined,
  t: Times,
): Promise<boolean> {
  const held = entry.meta.partial!;
  if (body === undefined) return false;
  const piece = pieceOf(headers, body.byteLength);
  if (completionProblem(piece, missing.start, missing.end, held.lengthBytes) !== undefined || !piece.ok)
    return false;
  const stored = await storedPieces(x, entry);
  if (stored === undefined) return false;
  const r = combinePieces(stored, { ...piece, body, validator: strongValidatorOf(headers) }, limitsOf(s));
  // Only the same strong validator combines (§3.4); a refusal (bounds) cannot answer the client either.
  if (r.kind !== 'combined' || missingOf(r.held, want.start, want.end).kind !== 'held') return false;
  const part = sliceHeld(r.held, r.body, want.start, want.end);
  await putPieces(s, x, r.held, r.body, r.complete, headers, t).catch((err) => {
    s.warn(err, 'cache store failed');
  });
  if (x.res.destroyed || x.res.headersSent) return true;
  const response = {
    status: 206,
    headers: pieceFields(headers),
    requestTimeMs: t.requestTimeMs,
    responseTimeMs: t.responseTimeMs,
  };
  const out = storedHead(s, x, response, [], 'fwd=partial; fwd-status=206', Date.now());
  writeBytes(x, out, want.full ? null : want, held.lengthBytes, part);
  return true;
}
