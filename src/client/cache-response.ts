// Between Fetch objects and the cache's plain values: header maps, bodies read up to a bound, and the
// Responses served from storage with Age (RFC 9111 §5.1) and Cache-Status (RFC 9211).
import { ageFieldValue, currentAgeSec } from '../cache/freshness.js';
import type { HeaderMap } from '../cache/types.js';
import type { CachedResponse } from './cache-tier.js';

/** Lowercase header map; several field lines are already joined by Headers (RFC 9110 §5.3). */
export function headerMap(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

/** Statuses whose Response must have a null body (Fetch: null body status). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** A fresh Response for `url` (bodies are single-use), with the given header fields. */
export function makeResponse(
  url: string,
  status: number,
  statusText: string,
  headers: HeaderMap | Headers,
  body: BodyInit | null,
): Response {
  const res = new Response(NULL_BODY.has(status) ? null : body, { status, statusText, headers });
  // A constructed Response has url ''; fetch callers read it (Fetch: response URL).
  Object.defineProperty(res, 'url', { value: url, enumerable: true });
  return res;
}

/** A stored response served now: its stored fields, Age (§4.2.3, §5.1) and our Cache-Status member. */
export function serveStored(
  url: string,
  stored: CachedResponse,
  nowMs: number,
  cacheStatus: string,
  omitHeaders: readonly string[] = [],
  head = false,
): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(stored.headers)) {
    if (name === 'age' || name === 'cache-status' || omitHeaders.includes(name)) continue;
    headers.set(name, value);
  }
  // §5.1 / §4: "the cache ... MUST generate an Age header field" when serving a stored response.
  headers.set('age', ageFieldValue(currentAgeSec(stored, nowMs)));
  headers.set('cache-status', appendStatus(stored.headers['cache-status'], cacheStatus));
  // The stored bytes are never handed out: Fetch copies a BufferSource body ("a copy of the bytes").
  // A HEAD gets the GET's header fields and no content (RFC 9110 §9.3.2).
  return makeResponse(
    url,
    stored.status,
    stored.statusText,
    headers,
    head ? null : (stored.body as Uint8Array<ArrayBuffer>),
  );
}

/** A network response passed on with our Cache-Status member after any upstream ones (RFC 9211 §2). */
export function forwardResponse(
  url: string,
  res: Response,
  body: BodyInit | null,
  cacheStatus: string,
): Response {
  // Fetch can receive a status Response cannot be built with (e.g. 999): handed on as it came.
  if (res.status < 200 || res.status > 599) return res;
  const headers = new Headers(res.headers);
  headers.set('cache-status', appendStatus(res.headers.get('cache-status') ?? undefined, cacheStatus));
  return makeResponse(res.url || url, res.status, res.statusText, headers, body);
}

/** RFC 9211 §2: members are listed from the origin towards the user; ours is the last. */
function appendStatus(upstream: string | undefined, ours: string): string {
  return upstream === undefined || upstream.trim() === '' ? ours : `${upstream}, ${ours}`;
}

export type BoundedBody =
  | { readonly kind: 'whole'; readonly bytes: Uint8Array }
  /** Over the bound: the bytes read so far are replayed ahead of the rest in `stream`. */
  | { readonly kind: 'over'; readonly stream: ReadableStream<Uint8Array> };

/** Reads a body whole when it is at most `maxBytes`; otherwise hands it on as a stream, unread. */
export async function readBounded(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<BoundedBody> {
  if (body === null) return { kind: 'whole', bytes: new Uint8Array(0) };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    total += value.byteLength;
    if (total > maxBytes) return { kind: 'over', stream: replay(chunks, reader) };
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return { kind: 'whole', bytes };
}

function replay(
  head: Uint8Array[],
  reader: ReadableStreamDefaultReader<Uint8Array>,
): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = head.shift();
      if (next !== undefined) return controller.enqueue(next);
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
