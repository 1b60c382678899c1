// Partial responses in the private cache (RFC 9111 §3.3, §3.4): a 206 as a stored entry holding its
// piece, combined with the variant's stored pieces when they share a strong validator (../cache/pieces.ts).
import {
  combinePieces,
  type HeldPieces,
  type PieceLimits,
  pieceFields,
  pieceOf,
  strongValidatorOf,
} from '../cache/pieces.js';
import type { HeaderMap } from '../cache/types.js';
import type { CachedResponse } from './cache-tier.js';

/** A stored response holding pieces of a representation: status 206, `partial` set. */
export interface PartialResponse extends CachedResponse {
  readonly partial: HeldPieces;
}

/** Whether a stored response is a partial entry. */
export function isPartial(r: CachedResponse): r is PartialResponse {
  return (r as Partial<PartialResponse>).partial !== undefined;
}

/** What pieceEntry needs besides the piece. */
export interface PieceInput {
  /** The variant's stored entry, when it holds pieces (combined with the new one, §3.4). */
  readonly prior: CachedResponse | undefined;
  /** The 206's fields and whole body. */
  readonly headers: HeaderMap;
  readonly body: Uint8Array;
  readonly requestHeaders: HeaderMap;
  readonly requestTimeMs: number;
  readonly responseTimeMs: number;
  readonly limits: PieceLimits;
}

/**
 * The entry to store for a 206 (RFC 9111 §3.3): its piece combined with `prior`'s (combinePieces: the
 * same strong validator, length and overlapping bytes, else the piece alone), as a 200 once complete
 * (§3.4) with the newest fields. Null when it is not one consistent piece (pieceOf) or over the bounds.
 */
export function pieceEntry(p: PieceInput): CachedResponse | null {
  const piece = pieceOf(p.headers, p.body.byteLength);
  if (!piece.ok) return null;
  const prior = p.prior !== undefined && isPartial(p.prior) ? p.prior : undefined;
  const stored =
    prior === undefined
      ? undefined
      : { held: prior.partial, body: prior.body, validator: strongValidatorOf(prior.headers) };
  const r = combinePieces(
    stored,
    { ...piece, body: p.body, validator: strongValidatorOf(p.headers) },
    p.limits,
  );
  if (r.kind === 'refused') return null;
  return entryFor(r.held, r.body, r.complete, p.headers, p.requestHeaders, p.requestTimeMs, p.responseTimeMs);
}

/** A stored entry for pieces: a 206 with `partial`, or the complete 200 (Content-Length set). */
export function entryFor(
  held: HeldPieces,
  body: Uint8Array,
  complete: boolean,
  headers: HeaderMap,
  requestHeaders: HeaderMap,
  requestTimeMs: number,
  responseTimeMs: number,
): CachedResponse {
  const fields = pieceFields(headers);
  const base = { headers: fields, requestHeaders, requestTimeMs, responseTimeMs, body };
  if (complete) {
    fields['content-length'] = String(held.lengthBytes);
    return { ...base, status: 200, statusText: 'OK' };
  }
  const partial: PartialResponse = { ...base, status: 206, statusText: 'Partial Content', partial: held };
  return partial;
}
