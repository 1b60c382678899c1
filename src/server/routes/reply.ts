// Route answers: a plain value is 200 JSON (204 when undefined); `reply(status, body?, headers?)`
// chooses the status and adds headers. planAnswer decides the response from plain values; the
// routes step writes it.
import { isFieldName, isFieldValue } from '../../http/fields.js';
import { escapeJsonForScript, JSONP_CONTENT_TYPE, JSONP_SUFFIX, jsonpPrefix } from '../../http/jsonp.js';
import { resolveLocation } from '../../http/location.js';

/** Header name (any case) -> value; an array sends one field line per member (Set-Cookie). */
export type ReplyHeaders = Readonly<Record<string, string | readonly string[]>>;

/**
 * A route answer with its own status and headers. Made by `reply()`; recognised by class, never by
 * shape, so a plain JSON value with `status` and `body` keys stays a 200 answer.
 */
export class Reply {
  readonly status: number;
  readonly body: unknown;
  readonly headers: ReplyHeaders | undefined;
  private constructor(status: number, body: unknown, headers: ReplyHeaders | undefined) {
    this.status = status;
    this.body = body;
    this.headers = headers;
    Object.freeze(this);
  }
  /** @internal use reply(). */
  static of(status: number, body: unknown, headers: ReplyHeaders | undefined): Reply {
    // Fail fast in the handler that made the mistake: 1xx are interim (RFC 9110 §15.2), not
    // answers; nothing above 599 exists (§15).
    if (!Number.isInteger(status) || status < 200 || status > 599) {
      throw new TypeError(`reply(): status ${String(status)} is not an integer from 200 to 599`);
    }
    return new Reply(status, body, headers);
  }
}

/**
 * A route answer that is a file of the static root, served as the static handler serves it: its
 * validators, cache policy, 304/412, ranges, content codings and HEAD. Made by `reply.file()`.
 */
export class FileReply {
  /** The file's path under the root, `/`-separated, not percent-encoded (`/reports/a b.pdf`). */
  readonly path: string;
  readonly headers: ReplyHeaders | undefined;
  private constructor(path: string, headers: ReplyHeaders | undefined) {
    this.path = path;
    this.headers = headers;
    Object.freeze(this);
  }
  /** @internal use reply.file(). */
  static of(path: string, headers: ReplyHeaders | undefined): FileReply {
    if (typeof path !== 'string' || path === '')
      throw new TypeError('reply.file(): the path must be a string');
    return new FileReply(path.startsWith('/') ? path : `/${path}`, headers);
  }

  /**
   * The path as a request target's path, each segment percent-encoded; null when a segment is `.` or
   * `..`: a path built from a request's parameter (`/files/${name}`) never leaves the folder it names.
   */
  rawPath(): string | null {
    const segments = this.path.split('/');
    if (segments.some((s) => s === '.' || s === '..')) return null;
    return segments.map(encodeURIComponent).join('/');
  }
}

/**
 * A route answer: `return reply(201, item, { location: `/api/items/${item.id}` })`. Status 200-599
 * (else a TypeError here); the body is sent as JSON (none for `undefined`; 204, 205 and 304 take
 * none); `location` is resolved against the request URL.
 *
 * `reply.file(path, headers?)`: the file at `path` under the static root, with everything the static
 * handler gives a file (GET and HEAD; a path that is not a file of the root is 404). `headers` add
 * fields the file does not set itself (`Content-Disposition`); they never replace its own.
 */
export const reply: {
  (status: number, body?: unknown, headers?: ReplyHeaders): Reply;
  file(path: string, headers?: ReplyHeaders): FileReply;
} = Object.assign(
  (status: number, body?: unknown, headers?: ReplyHeaders) => Reply.of(status, body, headers),
  {
    file: (path: string, headers?: ReplyHeaders) => FileReply.of(path, headers),
  },
);

/** A file reply's extra headers, validated as a reply's are; a string names the problem. */
export function fileReplyHeaders(r: FileReply): Map<string, string | string[]> | string {
  return replyHeaders(r.headers);
}

export type AnswerHeaders = Record<string, string | string[]>;

export type AnswerPlan =
  | {
      readonly kind: 'send';
      readonly status: number;
      readonly headers: AnswerHeaders;
      readonly body?: string;
    }
  | { readonly kind: 'invalid'; readonly reason: string };

export interface AnswerInput {
  /** The route's Cache-Control default. */
  readonly cacheControl: string;
  /** A valid JSONP callback when the request asked for JSONP on a JSONP path (GET/HEAD). */
  readonly callback: string | undefined;
  /** The request target (origin-form path and query) that Location is resolved against. */
  readonly target: string;
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Computed by the server from the body it sends, or connection-level (RFC 9110 §7.6.1, §8.6;
 *  RFC 9112 §6.1): a reply may not set them. The body is sent as is, so no Content-Encoding. */
const RESERVED = new Set([
  'content-length',
  'transfer-encoding',
  'content-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'upgrade',
  'te',
  'trailer',
]);

/** Singleton fields the server reads: one value only (RFC 9110 §5.3). */
const SINGLE = new Set(['location', 'content-type', 'cache-control']);

/** Statuses that never carry content (RFC 9110 §15.3.5, §15.3.6, §15.4.5). */
const NO_CONTENT = new Set([204, 205, 304]);

function invalid(reason: string): AnswerPlan {
  return { kind: 'invalid', reason };
}

/** JSON text for a body, escaped so that it is inert if sniffed or inlined; null when JSON cannot hold it. */
function jsonText(value: unknown): string | null {
  let json: string | undefined;
  try {
    json = JSON.stringify(value) as string | undefined;
  } catch {
    return null; // a BigInt, a cycle, a throwing toJSON
  }
  // `<>&` and U+2028/9 as \u escapes: the same JSON value.
  return json === undefined ? null : escapeJsonForScript(json);
}

/** Validates a reply's headers into lowercase name -> value; a string names the problem. */
function replyHeaders(headers: unknown): Map<string, string | string[]> | string {
  const out = new Map<string, string | string[]>();
  if (headers === undefined) return out;
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    return 'headers must be a plain object of name -> string';
  }
  for (const [name, value] of Object.entries(headers)) {
    if (!isFieldName(name)) return `header name ${JSON.stringify(name)} is not a token (RFC 9110 §5.1)`;
    const lower = name.toLowerCase();
    if (RESERVED.has(lower)) return `header ${name} is set by the server, not by a reply`;
    if (out.has(lower)) return `header ${name} is given twice`;
    const values: unknown[] = Array.isArray(value) ? value : [value];
    if (values.length !== 1 && SINGLE.has(lower)) return `header ${name} takes exactly one value`;
    for (const v of values) {
      if (typeof v !== 'string') return `header ${name} has a value that is not a string`;
      if (!isFieldValue(v)) return `header ${name} has a value with CR, LF, NUL or another control character`;
    }
    out.set(lower, Array.isArray(value) ? [...(values as string[])] : (value as string));
  }
  return out;
}

/** A handler's plain value: 200 JSON (JSONP when a callback applies), or 204 for undefined. */
function planValue(value: unknown, o: AnswerInput): AnswerPlan {
  if (value === undefined) return { kind: 'send', status: 204, headers: { 'cache-control': o.cacheControl } };
  const json = jsonText(value);
  if (json === null) return invalid('the handler returned a value JSON cannot represent');
  const body = o.callback === undefined ? json : jsonpPrefix(o.callback) + json + JSONP_SUFFIX;
  return {
    kind: 'send',
    status: 200,
    headers: {
      'content-type': o.callback === undefined ? JSON_CONTENT_TYPE : JSONP_CONTENT_TYPE,
      'content-length': String(Buffer.byteLength(body)),
      'cache-control': o.cacheControl,
      'x-content-type-options': 'nosniff',
    },
    body,
  };
}

/** A Reply: its status, its headers over our defaults, Location resolved, the body rules. */
function planReply(r: Reply, o: AnswerInput): AnswerPlan {
  const given = replyHeaders(r.headers);
  if (typeof given === 'string') return invalid(given);
  const { status } = r;
  // Null prototype: a `__proto__` header name is a name like any other.
  const headers: AnswerHeaders = Object.create(null);
  headers['cache-control'] = o.cacheControl;
  let body: string | undefined;
  if (NO_CONTENT.has(status)) {
    if (r.body !== undefined) return invalid(`a ${status} answer cannot have a body`);
    // RFC 9110 §15.3.6: 205 content is empty, framed by Content-Length: 0 (204 and 304 send neither).
    if (status === 205) headers['content-length'] = '0';
  } else if (r.body === undefined) {
    headers['content-length'] = '0';
  } else {
    const json = jsonText(r.body);
    if (json === null) return invalid('the reply body is a value JSON cannot represent');
    // JSONP only for 200 with our own JSON type: a script tag sees neither status nor type.
    const jsonp = o.callback !== undefined && status === 200 && !given.has('content-type');
    body = jsonp ? jsonpPrefix(o.callback!) + json + JSONP_SUFFIX : json;
    headers['content-type'] = jsonp ? JSONP_CONTENT_TYPE : JSON_CONTENT_TYPE;
    headers['content-length'] = String(Buffer.byteLength(body));
    headers['x-content-type-options'] = 'nosniff';
  }
  for (const [name, value] of given) {
    if (name === 'location') {
      const l = resolveLocation(value as string, o.target);
      if (l.kind === 'invalid') return invalid(`Location ${JSON.stringify(value)} ${l.reason}`);
      headers.location = l.location;
    } else if (name === 'vary') {
      // Under writeHeadMerged's key: merged there with the Vary of earlier steps (RFC 9110 §12.5.5).
      headers.Vary = value;
    } else {
      headers[name] = value;
    }
  }
  return body === undefined ? { kind: 'send', status, headers } : { kind: 'send', status, headers, body };
}

/** What to send for a handler's return value (a Reply or a plain value). */
export function planAnswer(value: unknown, o: AnswerInput): AnswerPlan {
  return value instanceof Reply ? planReply(value, o) : planValue(value, o);
}
