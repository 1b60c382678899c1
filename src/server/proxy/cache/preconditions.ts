// Answering a request from a stored response (RFC 9111 §4): the client's own preconditions (RFC 9110
// §13.2.2) and Range (§14) are evaluated against the stored response, so a 304, a 206 or a 416 can come
// from the store as well as a 200.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseCacheDate } from '../../../cache/dates.js';
import type { EntryBody } from '../../../cache/store/types.js';
import { multipartBody, multipartFor, storedRangeDecision } from '../../../cache/stored-range.js';
import { getHeader, type HeaderMap, type StoredResponse } from '../../../cache/types.js';
import { evaluatePreconditions } from '../../../http/conditional.js';
import { formatEntityTag, parseEntityTag } from '../../../http/etag.js';
import { type ByteRange, formatContentRange } from '../../../http/range.js';
import { ERRORS, sendError } from '../../core/errors.js';

export interface ServeFromStore {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly method: string;
  readonly reqHeaders: HeaderMap;
  readonly response: StoredResponse;
  /** Response fields to send (the stored ones, already adjusted: Age, Cache-Status, Via...). */
  readonly headers: Record<string, string | string[]>;
  readonly body: EntryBody;
  readonly nowMs: number;
}

/** No preconditions and no Range: the stored response is sent as it is (RFC 9110 §13.2.2, §14.2). */
export function isPlainRead(h: HeaderMap): boolean {
  return (
    h.range === undefined &&
    h['if-none-match'] === undefined &&
    h['if-modified-since'] === undefined &&
    h['if-match'] === undefined &&
    h['if-unmodified-since'] === undefined
  );
}

/** Writes the answer and consumes or closes `body`. Rejects only when reading the body fails. */
export async function serveFromStore(s: ServeFromStore): Promise<void> {
  const { req, res, response, body } = s;
  const out = s.headers;
  const header = (n: string) => getHeader(s.reqHeaders, n);
  const size = body.bodyBytes;
  if (response.status === 200 && !isPlainRead(s.reqHeaders)) {
    const range = header('range');
    const hasPreconditions =
      header('if-none-match') !== undefined ||
      header('if-modified-since') !== undefined ||
      header('if-match') !== undefined ||
      header('if-unmodified-since') !== undefined;
    const tag = parseEntityTag(getHeader(response.headers, 'etag') ?? '');
    const etag = tag === null ? undefined : formatEntityTag(tag);
    const lastModifiedMs = parseCacheDate(getHeader(response.headers, 'last-modified')) ?? undefined;
    if (hasPreconditions) {
      // RFC 9110 §13.2.2: the client's preconditions against the stored representation. RFC 9111
      // §4.3.2: If-Modified-Since is compared with Last-Modified, else Date, else the time received.
      const imsDateMs =
        lastModifiedMs ??
        parseCacheDate(getHeader(response.headers, 'date'), response.responseTimeMs) ??
        response.responseTimeMs;
      const onlyIms = header('if-unmodified-since') === undefined && header('if-match') === undefined;
      const pre = evaluatePreconditions({
        method: s.method,
        header,
        etag,
        lastModifiedMs: onlyIms ? imsDateMs : lastModifiedMs,
      });
      if (pre.kind === 'not-modified') {
        await body.close();
        // RFC 9110 §15.4.5: a 304 carries the fields a 200 would, minus the content's own.
        for (const name of Object.keys(out)) {
          if (name.startsWith('content-') && name !== 'content-location') delete out[name];
        }
        res.writeHead(304, out);
        res.end();
        return;
      }
      if (pre.kind === 'precondition-failed') {
        await body.close();
        sendError(req, res, ERRORS.preconditionFailed, 'A precondition in the request did not hold.');
        return;
      }
    }
    if (range !== undefined && s.method === 'GET') {
      // RFC 9110 §14, §13.1.5: Range against the stored representation (stored-range.ts).
      const d = storedRangeDecision({
        range,
        ifRange: header('if-range'),
        status: response.status,
        headers: response.headers,
        sizeBytes: size,
      });
      if (d.kind === 'unsatisfiable') {
        await body.close();
        // RFC 9110 §15.5.17
        sendError(req, res, ERRORS.rangeNotSatisfiable, 'The range is outside the stored response.', {
          'content-range': d.contentRange,
        });
        return;
      }
      if (d.kind === 'ranges') return sendRanges(s, d.ranges, size);
    }
  }
  const noBody = response.status === 204 || response.status === 304;
  if (!noBody) out['content-length'] = String(size);
  res.writeHead(response.status, out);
  if (s.method === 'HEAD' || noBody) {
    await body.close();
    res.end();
    return;
  }
  if (body.whole !== undefined) {
    res.end(body.whole); // headers and body in one write, like the static handler
    return;
  }
  await pipeBody(res, body);
}

/** RFC 9110 §14: a 206 with one range, or multipart/byteranges (§14.6) for several. */
async function sendRanges(s: ServeFromStore, ranges: readonly ByteRange[], size: number): Promise<void> {
  const { res, body } = s;
  const out = s.headers;
  const bytes = await readAll(body, size);
  if (ranges.length === 1) {
    const r = ranges[0]!;
    out['content-range'] = formatContentRange(r, size);
    out['content-length'] = String(r.end - r.start + 1);
    res.writeHead(206, out);
    res.end(bytes.subarray(r.start, r.end + 1));
    return;
  }
  const contentType = typeof out['content-type'] === 'string' ? out['content-type'] : undefined;
  const { boundary, parts } = multipartFor(bytes, ranges, contentType);
  out['content-type'] = `multipart/byteranges; boundary=${boundary}`;
  out['content-length'] = String(parts.contentLength);
  res.writeHead(206, out);
  res.end(multipartBody(bytes, ranges, parts));
}

async function readAll(body: EntryBody, size: number): Promise<Uint8Array> {
  if (body.whole !== undefined) return body.whole;
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks, size);
}

/** Streams a stored body to the client with backpressure; stops when the client goes away. */
async function pipeBody(res: ServerResponse, body: EntryBody): Promise<void> {
  for await (const chunk of body) {
    if (res.destroyed) break;
    if (!res.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.once('drain', done);
        res.once('close', done);
      });
    }
  }
  res.end();
}
