// Answers for requests Node refuses before any handler runs ('clientError'): a header block over
// maxHeaderSize (431), a request head or request slower than headersTimeout / requestTimeout (408),
// anything llhttp cannot parse (400). Without a listener Node writes a bare status line; with this
// one the client gets an RFC 9457 problem body and `Connection: close`, then the socket closes.
import type { Duplex } from 'node:stream';
import { ERRORS, type ErrorEntry, renderError } from '../core/errors.js';

/** How long a closed-for-writing socket may linger so the client can read the answer (the kernel would
 *  otherwise reset a connection that still has unread request bytes, and the answer could be lost). */
export const CLIENT_ERROR_LINGER_MS = 1000;

/** The catalogue entry for a Node client error code (Node's own defaults, with RFC 9110 statuses). */
export function clientErrorEntry(code: string | undefined): ErrorEntry {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return ERRORS.headersTooLarge; // RFC 6585 §5
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return ERRORS.contentTooLarge; // RFC 9110 §15.5.14 (Node answers 413 here too)
    case 'ERR_HTTP_REQUEST_TIMEOUT': // headersTimeout and requestTimeout both report this
    case 'HPE_HEADERS_TIMEOUT':
      return ERRORS.requestTimeout; // RFC 9110 §15.5.9
    default:
      return ERRORS.badRequest; // RFC 9112 §3: a message that is not valid HTTP/1.1
  }
}

const DETAIL: Record<number, string> = {
  400: 'The request is not valid HTTP.',
  408: 'The request took too long to arrive.',
  413: 'The chunk extensions are too large.',
  431: 'The request header block is too large.',
};

/** Details by Node error code, where the status alone does not say what was wrong. */
const CODE_DETAIL: Record<string, string> = {
  // llhttp knows a fixed list of methods (http.METHODS); any other token, e.g. FOOBAR, stops here.
  HPE_INVALID_METHOD: 'The request method is not one this server accepts.',
};

const responses = new Map<string, Buffer>();

/** The whole response, built once per status (and per code with its own detail). */
export function clientErrorResponse(entry: ErrorEntry, code?: string): Buffer {
  const detail = (code !== undefined ? CODE_DETAIL[code] : undefined) ?? DETAIL[entry.status];
  const key = `${entry.status} ${detail}`;
  let r = responses.get(key);
  if (r === undefined) {
    const { body, contentType } = renderError(entry, detail, undefined);
    r = Buffer.from(
      `HTTP/1.1 ${entry.status} ${entry.title}\r\n` +
        `Content-Type: ${contentType}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Cache-Control: no-store\r\n' +
        'X-Content-Type-Options: nosniff\r\n' +
        'Connection: close\r\n\r\n' +
        body,
      'latin1',
    );
    responses.set(key, r);
  }
  return r;
}

/** Node internals this handler reads, the same ones Node's default clientError handling reads. */
interface HttpSocket extends Duplex {
  /** The response currently bound to the socket (ServerResponse), if any. */
  _httpMessage?: { _headerSent?: boolean; headersSent?: boolean } | null;
  /** The HTTP parser; `incoming` is the request whose head it parsed last. */
  parser?: { incoming?: { complete?: boolean } | null } | null;
}

const handled = new WeakSet<Duplex>();

/**
 * True when something has been written for the request in progress, so another status line would
 * corrupt the stream: a bound response has sent its head, or the current request (head parsed, body
 * still arriving) already had its response finished and detached.
 */
function responseStarted(socket: HttpSocket): boolean {
  const res = socket._httpMessage;
  if (res) return res._headerSent === true || res.headersSent === true;
  const incoming = socket.parser?.incoming;
  return incoming != null && incoming.complete === false;
}

/**
 * A TLS socket still in its handshake: Node's HTTP/2 server passes a handshake's 'tlsClientError'
 * (ERR_TLS_HANDSHAKE_TIMEOUT, a bad ClientHello) on as 'clientError'. No HTTP was spoken, and a write
 * there is held until the handshake ends, then goes out beside the HTTP/2 session that takes the
 * socket, which aborts Node (TLSWrap: a write while one is in progress). Closed, never answered.
 */
function inTlsHandshake(socket: Duplex): boolean {
  // tls.TLSSocket's own flag, true from accept until 'secureConnection' (not in Node's types).
  return (socket as Duplex & { secureConnecting?: boolean }).secureConnecting === true;
}

/**
 * The server's 'clientError' listener: `server.on('clientError', handleClientError)`.
 * Writes one small problem+json answer when the socket can still take one, then closes it. It never
 * writes to a destroyed or ended socket or after a response has started, and answers at most once per
 * socket (Node may report several errors for one connection, e.g. a timeout then the client's EOF).
 */
export function handleClientError(err: Error & { code?: string }, socket: Duplex): void {
  const s = socket as HttpSocket;
  if (
    handled.has(socket) ||
    s.destroyed ||
    !s.writable ||
    err.code === 'ECONNRESET' ||
    inTlsHandshake(s) ||
    responseStarted(s)
  ) {
    s.destroy();
    return;
  }
  handled.add(socket);
  // A socket error after this point (EPIPE, ECONNRESET) must not become an uncaught exception.
  s.on('error', () => s.destroy());
  const timer = setTimeout(() => s.destroy(), CLIENT_ERROR_LINGER_MS);
  timer.unref();
  s.once('close', () => clearTimeout(timer));
  s.end(clientErrorResponse(clientErrorEntry(err.code), err.code));
  // Keep reading (and dropping) what the client still sends until it closes or the linger ends.
  s.resume();
}
