// One catalogue of error responses: stable codes, HTTP status, title.
// Bodies are negotiated: a small HTML page for browsers, RFC 9457 problem+json otherwise.

import { prefersHtml } from '../../http/negotiate.js';
import { escapeHtml, problemJson } from '../../http/problem.js';
import type { ExchangeRequest, OutFieldValue, ResponseSink } from './exchange.js';
import { appendVary } from './vary.js';

export interface ErrorEntry {
  readonly status: number;
  readonly code: string;
  readonly title: string;
}

export const ERRORS = {
  badRequest: { status: 400, code: 'bad_request', title: 'Bad Request' },
  unauthorized: { status: 401, code: 'unauthorized', title: 'Unauthorized' },
  forbidden: { status: 403, code: 'forbidden', title: 'Forbidden' },
  notFound: { status: 404, code: 'not_found', title: 'Not Found' },
  methodNotAllowed: { status: 405, code: 'method_not_allowed', title: 'Method Not Allowed' },
  requestTimeout: { status: 408, code: 'request_timeout', title: 'Request Timeout' },
  preconditionFailed: { status: 412, code: 'precondition_failed', title: 'Precondition Failed' },
  contentTooLarge: { status: 413, code: 'content_too_large', title: 'Content Too Large' },
  uriTooLong: { status: 414, code: 'uri_too_long', title: 'URI Too Long' },
  unsupportedMediaType: { status: 415, code: 'unsupported_media_type', title: 'Unsupported Media Type' },
  rangeNotSatisfiable: { status: 416, code: 'range_not_satisfiable', title: 'Range Not Satisfiable' },
  upgradeRequired: { status: 426, code: 'upgrade_required', title: 'Upgrade Required' },
  tooManyRequests: { status: 429, code: 'too_many_requests', title: 'Too Many Requests' },
  headersTooLarge: {
    status: 431,
    code: 'headers_too_large',
    title: 'Request Header Fields Too Large',
  },
  internal: { status: 500, code: 'internal_error', title: 'Internal Server Error' },
  badGateway: { status: 502, code: 'bad_gateway', title: 'Bad Gateway' },
  serviceUnavailable: { status: 503, code: 'service_unavailable', title: 'Service Unavailable' },
  gatewayTimeout: { status: 504, code: 'gateway_timeout', title: 'Gateway Timeout' },
} as const satisfies Record<string, ErrorEntry>;

/** An error carrying its catalogue entry; thrown by handlers, turned into a response by sendError. */
export class HttpError extends Error {
  readonly entry: ErrorEntry;
  readonly detail: string | undefined;
  constructor(entry: ErrorEntry, detail?: string, options?: { cause?: unknown }) {
    super(detail ?? entry.title, options);
    this.name = 'HttpError';
    this.entry = entry;
    this.detail = detail;
  }
}

/** Body and content type for an error, negotiated on the Accept header. */
export function renderError(
  entry: ErrorEntry,
  detail: string | undefined,
  accept: string | undefined,
  extensions?: Record<string, string>,
): { body: string; contentType: string } {
  if (prefersHtml(accept)) {
    const title = `${entry.status} ${escapeHtml(entry.title)}`;
    let p = detail ? `<p>${escapeHtml(detail)}</p>` : '';
    if (extensions)
      for (const [k, v] of Object.entries(extensions)) p += `<p>${escapeHtml(k)}: ${escapeHtml(v)}</p>`;
    return {
      body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1>${p}</body></html>\n`,
      contentType: 'text/html; charset=utf-8',
    };
  }
  // RFC 9457 §3: type, title, status, detail; `code` is our stable extension member.
  return {
    body: problemJson({ ...extensions, title: entry.title, status: entry.status, detail, code: entry.code }),
    contentType: 'application/problem+json',
  };
}

/**
 * Sends an error response. Headers already set on `res` (CORS, security headers) survive;
 * representation headers of a half-prepared success response are dropped.
 */
export function sendError(
  req: ExchangeRequest,
  res: ResponseSink,
  entry: ErrorEntry,
  detail?: string,
  headers?: Readonly<Record<string, OutFieldValue | undefined>>,
  extensions?: Record<string, string>,
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const { body, contentType } = renderError(entry, detail, fieldString(req.headers.accept), extensions);
  for (const name of [
    'etag',
    'last-modified',
    'content-encoding',
    'content-range',
    'expires',
    'accept-ranges',
  ]) {
    res.removeHeader(name);
  }
  res.statusCode = entry.status;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  // Errors are never cached for long (RFC 9111 §4.2.2 makes 404/405/414 heuristically cacheable).
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  if (headers) {
    for (const [k, v] of Object.entries(headers)) {
      if (v === undefined) continue;
      if (k.toLowerCase() === 'vary') appendVary(res, String(v));
      else res.setHeader(k, v);
    }
  }
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** A request field as one string (a list is joined, RFC 9110 §5.3). */
function fieldString(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v.join(', ') : v;
}
