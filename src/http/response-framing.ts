// An HTTP/1.1 response as a client reads it off the wire (RFC 9112): the status line and field lines of a
// head (§4, §5), how its content is delimited (§6.3), and the chunked transfer coding (§7.1). Pure: bytes
// or their latin1 text in, decisions out; the proxy's own upstream client (server/proxy/socket-pool.ts)
// does the I/O. Anything the grammar does not allow is refused with a one-line reason: a proxy that
// guesses at framing is how requests get smuggled (RFC 9112 §11.2).

import { isFieldValueChar, isTchar } from './chars.js';

/** Field lines as a recipient hands them on: lowercase names, a repeated name as a list. */
export type ResponseFields = Record<string, string | string[]>;

export interface ResponseHead {
  readonly status: number;
  readonly reason: string;
  /** The minor version of HTTP/1.x. */
  readonly minor: 0 | 1;
  readonly fields: ResponseFields;
}

/** How the content of a response ends (RFC 9112 §6.3). */
export type Framing =
  | { readonly kind: 'none' }
  | { readonly kind: 'length'; readonly length: number }
  | { readonly kind: 'chunked' }
  /** Read until the connection closes: no other delimiter was given. */
  | { readonly kind: 'close' };

/** A refusal: why the message cannot be read (the proxy answers 502). */
export interface FramingError {
  readonly error: string;
}

/** Header sections larger than this are refused (Node's and undici's default is 16 KiB). */
export const MAX_HEAD_BYTES = 64 * 1024;
/** A chunk-size line with its extensions, at most (RFC 9112 §7.1.1: a recipient may limit them). */
const MAX_CHUNK_LINE = 4096;
/** Hex digits of a chunk size, at most: 12 digits is 256 TiB, far past any body and safe as a Number. */
const MAX_SIZE_DIGITS = 12;

const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: (.*))?$/s;

/** A reason phrase: HTAB / SP / VCHAR / obs-text (RFC 9112 §4). */
function validReason(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (!isFieldValueChar(s.charCodeAt(i))) return false;
  return true;
}

/**
 * Adds one field line ("name: value", no CRLF) to `fields`; an error reason when it is malformed:
 * an empty or non-token name, whitespace before the colon (RFC 9112 §5.1), obs-fold (§5.2), or a value
 * with CR, LF, NUL or another control (RFC 9110 §5.5).
 */
export function addFieldLine(fields: ResponseFields, line: string): string | undefined {
  const c0 = line.charCodeAt(0);
  if (c0 === 0x20 || c0 === 0x09) return 'obsolete line folding';
  const colon = line.indexOf(':');
  if (colon <= 0) return 'a field line without a name';
  for (let i = 0; i < colon; i++) if (!isTchar(line.charCodeAt(i))) return 'an invalid field name';
  let start = colon + 1;
  let end = line.length;
  // RFC 9112 §5.1: OWS around the value is not part of it.
  while (start < end && (line.charCodeAt(start) === 0x20 || line.charCodeAt(start) === 0x09)) start++;
  while (end > start && (line.charCodeAt(end - 1) === 0x20 || line.charCodeAt(end - 1) === 0x09)) end--;
  for (let i = start; i < end; i++)
    if (!isFieldValueChar(line.charCodeAt(i))) return 'an invalid field value';
  const name = line.slice(0, colon).toLowerCase();
  const value = line.slice(start, end);
  const had = fields[name];
  if (had === undefined) fields[name] = value;
  else if (typeof had === 'string') fields[name] = [had, value];
  else had.push(value);
  return undefined;
}

/**
 * The head of a response: `text` is its latin1 text up to, not including, the blank line. Lines end with
 * CRLF only: a bare CR or LF is refused (RFC 9112 §2.2 lets a recipient accept a bare LF; a proxy that
 * reads lines differently from the next hop is the smuggling risk, so it does not).
 */
export function parseResponseHead(text: string): ResponseHead | FramingError {
  const lines = text.split('\r\n');
  const m = STATUS_LINE.exec(lines[0]!);
  if (m === null) return { error: 'an invalid status line' };
  const reason = m[3] ?? '';
  if (!validReason(reason)) return { error: 'an invalid reason phrase' };
  const fields: ResponseFields = {};
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.includes('\r') || line.includes('\n')) return { error: 'a bare CR or LF in the head' };
    const err = addFieldLine(fields, line);
    if (err !== undefined) return { error: err };
  }
  return { status: Number(m[2]), reason, minor: m[1] === '1' ? 1 : 0, fields };
}

/** A field's value as one list member string (RFC 9110 §5.3: repeated lines are one comma list). */
function joined(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v.join(', ') : v;
}

/** The Content-Length of a response: every member the same run of digits (RFC 9110 §8.6). */
function contentLength(v: string | string[]): number | FramingError {
  let found: string | undefined;
  for (const member of joined(v)!.split(',')) {
    const s = member.trim();
    if (!/^\d{1,15}$/.test(s)) return { error: 'an invalid Content-Length' };
    if (found !== undefined && Number(found) !== Number(s))
      return { error: 'conflicting Content-Length values' };
    found = s;
  }
  return Number(found);
}

/**
 * How the content of a response to `method` ends (RFC 9112 §6.3), and whether the connection can carry
 * another request after it (`reusable`: RFC 9112 §9.3, §6.1).
 */
export function responseFraming(
  method: string,
  head: ResponseHead,
): { framing: Framing; reusable: boolean } | FramingError {
  const { status, fields } = head;
  const connection = joined(fields.connection)?.toLowerCase() ?? '';
  // RFC 9112 §9.3: HTTP/1.1 persists unless "close" is sent; HTTP/1.0 only with "keep-alive".
  let reusable =
    head.minor === 1
      ? !/(?:^|,)\s*close\s*(?:,|$)/.test(connection)
      : /(?:^|,)\s*keep-alive\s*(?:,|$)/.test(connection);
  // §6.3 rule 1: these responses end at their head whatever their fields say.
  if (method === 'HEAD' || status < 200 || status === 204 || status === 304)
    return { framing: { kind: 'none' }, reusable };
  const te = fields['transfer-encoding'];
  if (te !== undefined) {
    // §6.1: Transfer-Encoding in an HTTP/1.0 message is faulty framing.
    if (head.minor === 0) return { error: 'Transfer-Encoding in an HTTP/1.0 response' };
    const codings = joined(te)!
      .split(',')
      .map((c) => c.trim().toLowerCase());
    const chunkedAt = codings.indexOf('chunked');
    // §6.1: chunked is applied once, and last.
    if (chunkedAt !== -1 && chunkedAt !== codings.length - 1)
      return { error: 'chunked applied before another coding' };
    // §6.3 rule 3: Transfer-Encoding overrides Content-Length; such a message may be an attempt to
    // smuggle, so its connection is not reused.
    if (fields['content-length'] !== undefined) reusable = false;
    // §6.3 rule 4: a response whose final coding is not chunked ends when the connection closes.
    if (chunkedAt === -1) return { framing: { kind: 'close' }, reusable: false };
    return { framing: { kind: 'chunked' }, reusable };
  }
  const cl = fields['content-length'];
  if (cl !== undefined) {
    // §6.3 rule 5: an invalid Content-Length in a response is an unrecoverable error (502).
    const n = contentLength(cl);
    if (typeof n !== 'number') return n;
    return { framing: { kind: 'length', length: n }, reusable };
  }
  // §6.3 rule 8: no length given: the content runs to the close.
  return { framing: { kind: 'close' }, reusable: false };
}

/** What one `ChunkedDecoder.push` found. */
export interface ChunkedStep {
  /** Content, in order (views into the pushed bytes). */
  readonly data: Uint8Array[];
  /** Bytes of the input that belonged to this message: the rest, if any, follows it on the connection. */
  readonly used: number;
  /** The last chunk and the trailer section were read. */
  readonly done: boolean;
}

enum State {
  Size,
  Data,
  DataCr,
  DataLf,
  Trailer,
  Done,
}

/** RFC 9112 §7.1 chunk-size line: 1*HEXDIG, then optional BWS and chunk-ext (not interpreted). */
function chunkSize(line: string): number | FramingError {
  let i = 0;
  while (i < line.length && /[0-9a-fA-F]/.test(line[i]!)) i++;
  if (i === 0) return { error: 'an invalid chunk size' };
  if (i > MAX_SIZE_DIGITS) return { error: 'a chunk size too large' };
  const rest = line.slice(i);
  // §7.1.1: chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] ).
  if (rest !== '' && !/^[ \t]*;/.test(rest)) return { error: 'an invalid chunk size' };
  for (let j = 0; j < rest.length; j++)
    if (!isFieldValueChar(rest.charCodeAt(j))) return { error: 'an invalid chunk extension' };
  return Number.parseInt(line.slice(0, i), 16);
}

/**
 * The chunked transfer coding read incrementally (RFC 9112 §7.1): push the bytes as they arrive; each
 * step gives the content found and, at the end, the trailer fields (§7.1.2). Lines end with CRLF only.
 */
export class ChunkedDecoder {
  /** Trailer fields, once `done`. */
  readonly trailers: ResponseFields = {};
  #state = State.Size;
  #left = 0;
  /** A line being read (the chunk-size line or a trailer line), as latin1 text. */
  #line = '';
  /** A CR ended the text of #line; the LF must come next. */
  #cr = false;
  #trailerBytes = 0;

  push(bytes: Uint8Array): ChunkedStep | FramingError {
    const data: Uint8Array[] = [];
    let i = 0;
    const n = bytes.length;
    while (i < n) {
      switch (this.#state) {
        case State.Data: {
          const take = Math.min(this.#left, n - i);
          data.push(bytes.subarray(i, i + take));
          i += take;
          this.#left -= take;
          if (this.#left === 0) this.#state = State.DataCr;
          break;
        }
        case State.DataCr:
          if (bytes[i++] !== 0x0d) return { error: 'chunk data not followed by CRLF' };
          this.#state = State.DataLf;
          break;
        case State.DataLf:
          if (bytes[i++] !== 0x0a) return { error: 'chunk data not followed by CRLF' };
          this.#state = State.Size;
          break;
        case State.Size:
        case State.Trailer: {
          const r = this.#readLine(bytes, i);
          if (typeof r !== 'number') return r;
          i = r;
          break;
        }
        case State.Done:
          return { data, used: i, done: true };
      }
      if ((this.#state as State) === State.Done) return { data, used: i, done: true };
    }
    return { data, used: i, done: this.#state === State.Done };
  }

  /** Reads line bytes from `at`; a whole line is acted on. The index after what was read. */
  #readLine(bytes: Uint8Array, at: number): number | FramingError {
    let i = at;
    const limit = this.#state === State.Size ? MAX_CHUNK_LINE : MAX_HEAD_BYTES;
    while (i < bytes.length) {
      const c = bytes[i++]!;
      if (this.#cr) {
        if (c !== 0x0a) return { error: 'a bare CR in chunked framing' };
        this.#cr = false;
        const line = this.#line;
        this.#line = '';
        const err = this.#state === State.Size ? this.#sizeLine(line) : this.#trailerLine(line);
        return err ?? i;
      }
      if (c === 0x0d) this.#cr = true;
      else if (c === 0x0a) return { error: 'a bare LF in chunked framing' };
      else {
        this.#line += String.fromCharCode(c);
        if (this.#line.length > limit || (this.#state === State.Trailer && ++this.#trailerBytes > limit))
          return {
            error: this.#state === State.Size ? 'a chunk-size line too long' : 'a trailer section too large',
          };
      }
    }
    return i;
  }

  #sizeLine(line: string): FramingError | undefined {
    const size = chunkSize(line);
    if (typeof size !== 'number') return size;
    this.#left = size;
    // §7.1: the last chunk has size 0 and is followed by the trailer section.
    this.#state = size === 0 ? State.Trailer : State.Data;
    return undefined;
  }

  #trailerLine(line: string): FramingError | undefined {
    if (line === '') {
      this.#state = State.Done;
      return undefined;
    }
    const err = addFieldLine(this.trailers, line);
    return err === undefined ? undefined : { error: `trailer: ${err}` };
  }
}
