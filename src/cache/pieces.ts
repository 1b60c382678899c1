// Storing and combining partial responses (RFC 9111 §3.3, §3.4): the byte pieces of one representation
// a cache holds, which 206 may add to them, what a request still lacks, and the bytes it is served.
// Pure: the proxy's shared cache and the client's private cache both work with it.
import { formatEntityTag, parseEntityTag } from '../http/etag.js';
import { parseContentRange, parseRange } from '../http/range.js';
import { parseCacheDate } from './dates.js';
import { getHeader, type HeaderMap } from './types.js';

/**
 * The pieces of one representation held by a partial entry: its complete length (Content-Range's
 * complete-length, RFC 9110 §14.4) and the held spans as a flat list `[start0, end0, start1, end1...]`
 * (inclusive ends), sorted, disjoint and not adjacent. The entry's body is the held bytes in that order.
 */
export interface HeldPieces {
  readonly lengthBytes: number;
  readonly pieces: readonly number[];
}

/** One 206 read as a piece (pieceOf), or why it cannot be stored as one. */
export type PieceResult =
  | { readonly ok: true; readonly start: number; readonly end: number; readonly lengthBytes: number }
  | { readonly ok: false; readonly reason: string };

const bad = (reason: string): PieceResult => ({ ok: false, reason });

/**
 * A 206 response as a piece (RFC 9110 §15.3.7.1): one `Content-Range: bytes first-last/complete` with a
 * known complete length and a body of exactly last-first+1 bytes (`bodyBytes`, what actually arrived;
 * a Content-Length must say the same, §14.4: the 206 is otherwise inconsistent and is not stored).
 * multipart/byteranges (§15.3.7.2) is not stored.
 */
export function pieceOf(headers: HeaderMap, bodyBytes: number): PieceResult {
  const value = getHeader(headers, 'content-range');
  if (value === undefined) return bad('no Content-Range (multipart/byteranges is not stored)');
  const r = parseContentRange(value);
  if (r === null || r.kind !== 'range') return bad('Content-Range is not a byte range');
  const length = r.completeLength;
  if (length === undefined) return bad('unknown complete length');
  if (!Number.isSafeInteger(length) || !Number.isSafeInteger(r.start) || !Number.isSafeInteger(r.end))
    return bad('Content-Range out of range');
  if (r.end - r.start + 1 !== bodyBytes) return bad('body length disagrees with Content-Range');
  const declared = getHeader(headers, 'content-length');
  if (declared !== undefined && declared.trim() !== String(bodyBytes))
    return bad('Content-Length disagrees with Content-Range');
  return { ok: true, start: r.start, end: r.end, lengthBytes: length };
}

/**
 * The strong validator of a response (RFC 9111 §3.4: pieces are combined only when they "share the
 * same strong validator"): a strong entity-tag (RFC 9110 §8.8.3), else a Last-Modified that is strong
 * because Date is at least one second later (§8.8.2.2). `etag "x"` / `lm <ms>`; undefined when none.
 */
export function strongValidatorOf(headers: HeaderMap): string | undefined {
  const tag = parseEntityTag(getHeader(headers, 'etag') ?? '');
  if (tag !== null) return tag.weak ? undefined : `etag ${formatEntityTag(tag)}`;
  const lm = parseCacheDate(getHeader(headers, 'last-modified'));
  const date = parseCacheDate(getHeader(headers, 'date'));
  if (lm === null || date === null || date - lm < 1000) return undefined;
  return `lm ${lm}`;
}

/** The If-Range value that asks for a range of the same representation (RFC 9110 §13.1.5), if any. */
export function ifRangeFor(headers: HeaderMap): string | undefined {
  const v = strongValidatorOf(headers);
  if (v === undefined) return undefined;
  return v.startsWith('etag ') ? v.slice(5) : getHeader(headers, 'last-modified');
}

/** Pieces kept per entry unless configured (proxy[].cache.maxPiecesPerEntry; the private cache's bound). */
export const DEFAULT_MAX_PIECES_PER_ENTRY = 16;

/**
 * RFC 9111 §3.4: whether the missing bytes `start`-`end` fit beside the held ones within `maxBytes`; if
 * not, the request goes upstream whole instead of completing the pieces (an absurd Content-Range).
 */
export function completionFits(held: HeldPieces, start: number, end: number, maxBytes: number): boolean {
  return heldBytes(held) + (end - start + 1) <= maxBytes;
}

/** Bytes held. */
export function heldBytes(held: HeldPieces): number {
  let n = 0;
  for (let i = 0; i < held.pieces.length; i += 2) n += held.pieces[i + 1]! - held.pieces[i]! + 1;
  return n;
}

/** Whether `held` is a well-formed piece list whose bytes total `bodyBytes` (for entries read back). */
export function heldProblem(held: unknown, bodyBytes: number): string | undefined {
  if (typeof held !== 'object' || held === null) return 'pieces are not an object';
  const { lengthBytes, pieces } = held as Record<string, unknown>;
  if (!Number.isSafeInteger(lengthBytes) || (lengthBytes as number) < 1) return 'complete length';
  if (!Array.isArray(pieces) || pieces.length === 0 || pieces.length % 2 !== 0) return 'piece list';
  let prevEnd = -2;
  let total = 0;
  for (let i = 0; i < pieces.length; i += 2) {
    const start = pieces[i];
    const end = pieces[i + 1];
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end)) return 'piece bounds';
    if (start <= prevEnd + 1 || end < start || end >= (lengthBytes as number)) return 'piece bounds';
    total += end - start + 1;
    prevEnd = end;
  }
  return total === bodyBytes ? undefined : 'pieces disagree with the body length';
}

/** What a request asks of a partial entry (spanOf). */
export type Span =
  | { readonly kind: 'span'; readonly start: number; readonly end: number }
  /** Not answered from pieces (several ranges, 416): forwarded as it is. */
  | { readonly kind: 'other' };

const OTHER: Span = Object.freeze({ kind: 'other' });

/**
 * The bytes a GET asks for, against a representation of `lengthBytes` (RFC 9110 §14.2): the whole
 * representation without a usable Range, else its one range. Several ranges and unsatisfiable ones
 * are `other`.
 */
export function spanOf(range: string | undefined, lengthBytes: number): Span {
  if (range === undefined) return { kind: 'span', start: 0, end: lengthBytes - 1 };
  const d = parseRange(range, lengthBytes);
  if (d.kind === 'ignore') return { kind: 'span', start: 0, end: lengthBytes - 1 };
  if (d.kind === 'unsatisfiable' || d.ranges.length !== 1) return OTHER;
  return { kind: 'span', start: d.ranges[0]!.start, end: d.ranges[0]!.end };
}

/** Coverage of a span by the held pieces (missingOf). */
export type Coverage =
  | { readonly kind: 'held' }
  /** The first and last byte of the span not held: one request upstream asks for all between them. */
  | { readonly kind: 'missing'; readonly start: number; readonly end: number };

const HELD: Coverage = Object.freeze({ kind: 'held' });

/** Whether the pieces hold every byte of [start, end], else the span between the first and last byte missing. */
export function missingOf(held: HeldPieces, start: number, end: number): Coverage {
  const p = held.pieces;
  let first = -1;
  let last = -1;
  let at = start; // first byte not yet accounted for
  for (let i = 0; i < p.length && at <= end; i += 2) {
    const ps = p[i]!;
    const pe = p[i + 1]!;
    if (pe < at) continue;
    if (ps > at) {
      if (first < 0) first = at;
      last = Math.min(ps - 1, end);
    }
    at = pe + 1;
  }
  if (at <= end) {
    if (first < 0) first = at;
    last = end;
  }
  return first < 0 ? HELD : { kind: 'missing', start: first, end: last };
}

/** The Range to send upstream for [start, end] of a representation of `lengthBytes` (RFC 9110 §14.1.2). */
export function rangeHeaderFor(start: number, end: number, lengthBytes: number): string {
  return end === lengthBytes - 1 ? `bytes=${start}-` : `bytes=${start}-${end}`;
}

/** The held bytes [start, end] (all held: missingOf said so) as a view of the entry's body. */
export function sliceHeld(held: HeldPieces, body: Uint8Array, start: number, end: number): Uint8Array {
  const p = held.pieces;
  let offset = 0;
  for (let i = 0; i < p.length; i += 2) {
    const ps = p[i]!;
    const pe = p[i + 1]!;
    if (start >= ps && end <= pe) return body.subarray(offset + start - ps, offset + end - ps + 1);
    offset += pe - ps + 1;
  }
  throw new RangeError(`bytes ${start}-${end} are not held`);
}

/** Bounds of one partial entry. */
export interface PieceLimits {
  /** Pieces per entry at most (after merging overlapping and adjacent ones). */
  readonly maxPieces: number;
  /** Held bytes per entry at most. */
  readonly maxBytes: number;
}

/** What becomes of a new piece (combinePieces). */
export type CombineResult =
  /** The pieces with the new one merged in (RFC 9111 §3.4); `complete` when they cover every byte. */
  | {
      readonly kind: 'combined';
      readonly held: HeldPieces;
      readonly body: Uint8Array;
      readonly complete: boolean;
    }
  /** Not combinable (no or another strong validator, another length, bytes that disagree): the new piece alone. */
  | {
      readonly kind: 'replaced';
      readonly held: HeldPieces;
      readonly body: Uint8Array;
      readonly complete: boolean;
      readonly reason: string;
    }
  /** Over the bounds: keep what is stored, do not store the new piece. */
  | { readonly kind: 'refused'; readonly reason: string };

/** A stored set of pieces with its strong validator (strongValidatorOf; undefined: none). */
export interface StoredPieces {
  readonly held: HeldPieces;
  readonly body: Uint8Array;
  readonly validator: string | undefined;
}

/** A new piece: its place, its body and the strong validator of its response. */
export interface NewPiece {
  readonly start: number;
  readonly end: number;
  readonly lengthBytes: number;
  readonly body: Uint8Array;
  readonly validator: string | undefined;
}

/**
 * Adds a piece to the stored ones (RFC 9111 §3.4): combined only when both have the same strong
 * validator and complete length and the bytes they both hold are equal (a representation with one
 * strong validator has one set of bytes, RFC 9110 §8.8.1; bytes that differ mean the origin or a
 * piece lies, and nothing is mixed). Otherwise the new piece replaces the stored set. Over `limits`
 * the new piece is refused (combined) or not stored at all (alone).
 */
export function combinePieces(
  stored: StoredPieces | undefined,
  piece: NewPiece,
  limits: PieceLimits,
): CombineResult {
  const alone = (reason: string): CombineResult => {
    const n = piece.end - piece.start + 1;
    if (limits.maxPieces < 1 || n > limits.maxBytes)
      return { kind: 'refused', reason: 'piece over the bounds' };
    const held = { lengthBytes: piece.lengthBytes, pieces: [piece.start, piece.end] };
    return { kind: 'replaced', held, body: piece.body, complete: n === piece.lengthBytes, reason };
  };
  if (stored === undefined) return alone('nothing stored');
  if (piece.validator === undefined || stored.validator !== piece.validator)
    return alone('no same strong validator');
  if (stored.held.lengthBytes !== piece.lengthBytes) return alone('another complete length');
  const p = stored.held.pieces;
  // Merge the new span into the sorted list; the overlap must hold the same bytes.
  const out: number[] = [];
  let ns = piece.start;
  let ne = piece.end;
  let offset = 0;
  const offsets: number[] = []; // body offset of each stored piece
  for (let i = 0; i < p.length; i += 2) {
    offsets.push(offset);
    offset += p[i + 1]! - p[i]! + 1;
  }
  for (let i = 0; i < p.length; i += 2) {
    const ps = p[i]!;
    const pe = p[i + 1]!;
    if (pe + 1 < piece.start || ps > piece.end + 1) continue;
    // Overlap [max(ps, start), min(pe, end)]: equal bytes or not combinable.
    const from = Math.max(ps, piece.start);
    const to = Math.min(pe, piece.end);
    for (let b = from; b <= to; b++) {
      if (stored.body[offsets[i / 2]! + b - ps] !== piece.body[b - piece.start])
        return alone('stored bytes differ from the new piece');
    }
    ns = Math.min(ns, ps);
    ne = Math.max(ne, pe);
  }
  let placed = false;
  for (let i = 0; i < p.length; i += 2) {
    const ps = p[i]!;
    const pe = p[i + 1]!;
    if (ps >= ns && pe <= ne) continue; // merged into the new span
    if (!placed && ps > ne) {
      out.push(ns, ne);
      placed = true;
    }
    out.push(ps, pe);
  }
  if (!placed) out.push(ns, ne);
  const held: HeldPieces = { lengthBytes: piece.lengthBytes, pieces: out };
  const total = heldBytes(held);
  if (out.length / 2 > limits.maxPieces || total > limits.maxBytes)
    return { kind: 'refused', reason: 'pieces over the bounds' };
  const body = new Uint8Array(total);
  let at = 0;
  for (let k = 0; k < out.length; k += 2) {
    const s = out[k]!;
    const e = out[k + 1]!;
    // Stored bytes first, then the new piece over its own span.
    for (let i = 0; i < p.length; i += 2) {
      const ps = p[i]!;
      const pe = p[i + 1]!;
      if (ps >= s && pe <= e)
        body.set(stored.body.subarray(offsets[i / 2]!, offsets[i / 2]! + pe - ps + 1), at + ps - s);
    }
    if (piece.start >= s && piece.end <= e) body.set(piece.body, at + piece.start - s);
    at += e - s + 1;
  }
  return { kind: 'combined', held, body, complete: total === piece.lengthBytes };
}

/**
 * Checks an answer to our request for the missing bytes [askedStart, askedEnd] before it is combined:
 * a piece (pieceOf) of the same complete length inside what was asked (RFC 9110 §15.3.7: a 206
 * answers the Range it was sent). Undefined when it may be combined, else why not.
 */
export function completionProblem(
  piece: PieceResult,
  askedStart: number,
  askedEnd: number,
  lengthBytes: number,
): string | undefined {
  if (!piece.ok) return piece.reason;
  if (piece.lengthBytes !== lengthBytes) return 'another complete length';
  if (piece.start < askedStart || piece.end > askedEnd) return 'Content-Range outside the range asked for';
  return undefined;
}

/** Response fields stored with pieces or the completed response: the newest piece's, without its framing. */
export function pieceFields(headers: HeaderMap): Record<string, string> {
  // Object.fromEntries defines own properties: a field named `__proto__` stays a field.
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => name !== 'content-range' && name !== 'content-length'),
  );
}
