// Partial responses in the private cache (RFC 9111 §3.3, §3.4): a 206 as a stored entry holding its
// piece, combined with the variant's stored pieces when they share a strong validator (../cache/pieces.ts).
import { combinePieces, pieceFields, pieceOf, strongValidatorOf, } from '../cache/pieces.js';
/** Whether a stored response is a partial entry. */
export function isPartial(r) {
    return r.partial !== undefined;
}
/**
 * The entry to store for a 206 (RFC 9111 §3.3): its piece combined with `prior`'s (combinePieces: the
 * same strong validator, length and overlapping bytes, else the piece alone), as a 200 once complete
 * (§3.4) with the newest fields. Null when it is not one consistent piece (pieceOf) or over the bounds.
 */
export function pieceEntry(p) {
    const piece = pieceOf(p.headers, p.body.byteLength);
    if (!piece.ok)
        return null;
    const prior = p.prior !== undefined && isPartial(p.prior) ? p.prior : undefined;
    const stored = prior === undefined
        ? undefined
        : { held: prior.partial, body: prior.body, validator: strongValidatorOf(prior.headers) };
    const r = combinePieces(stored, { ...piece, body: p.body, validator: strongValidatorOf(p.headers) }, p.limits);
    if (r.kind === 'refused')
        return null;
    return entryFor(r.held, r.body, r.complete, p.headers, p.requestHeaders, p.requestTimeMs, p.responseTimeMs);
}
/** A stored entry for pieces: a 206 with `partial`, or the complete 200 (Content-Length set). */
export function entryFor(held, body, complete, headers, requestHeaders, requestTimeMs, responseTimeMs) {
    const fields = pieceFields(headers);
    const base = { headers: fields, requestHeaders, requestTimeMs, responseTimeMs, body };
    if (complete) {
        fields['content-length'] = String(held.lengthBytes);
        return { ...base, status: 200, statusText: 'OK' };
    }
    const partial = { ...base, status: 206, statusText: 'Partial Content', partial: held };
    return partial;
}
