// HTTP/2 streams as the request/response pair the handlers use, without Node's compatibility layer
// (node:http2 compat.js). That layer wires ten listeners and a Proxy socket per stream and sends an
// empty trailers frame after every response; here a stream costs two listeners, and the handlers see
// the members of IncomingMessage/ServerResponse they use. RFC 9113 throughout.
import { validateHeaderName, validateHeaderValue } from 'node:http';
import {
  constants,
  type Http2SecureServer,
  type Http2Session,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type ServerHttp2Stream,
} from 'node:http2';
import { Readable, Stream } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { ContentRequest, ResponseSink } from '../core/exchange.js';
import type { SessionGuard, SessionState } from './h2-sessions.js';

const { NGHTTP2_CANCEL, NGHTTP2_NO_ERROR, NGHTTP2_FLAG_END_STREAM } = constants;

/**
 * RFC 9113 §8.2.2: connection-specific fields are malformed in HTTP/2. Handlers written for HTTP/1.1
 * set some (Connection: close on errors, Keep-Alive); on a stream they are dropped, silently.
 */
const CONNECTION_SPECIFIC = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
]);

type HeadFields = OutgoingHttpHeaders | readonly unknown[];
type Fields = Record<string, number | string | string[]>;

const noop = () => {};

/** The request side of a stream: a Readable that touches the stream only when its body is read. */
export class H2Request extends Readable implements ContentRequest {
  readonly httpVersion = '2.0';
  readonly httpVersionMajor = 2;
  readonly httpVersionMinor = 0;
  method: string;
  url: string;
  aborted = false;
  /** The HEADERS frame ended the stream: no content follows (request-head.ts requestHasContent). */
  readonly endedWithHead: boolean;
  readonly trailers: IncomingHttpHeaders = {};
  readonly rawTrailers: string[] = [];
  #ended = false;
  #reading = false;

  constructor(
    readonly stream: ServerHttp2Stream,
    readonly headers: IncomingHttpHeaders,
    readonly rawHeaders: string[],
    /** The connection's TLS socket (client address, `encrypted`), shared by its streams. */
    readonly socket: TLSSocket,
    endStream: boolean,
  ) {
    super({ autoDestroy: false });
    this.method = headers[':method'] as string;
    // RFC 9113 §8.5: CONNECT has no :path; the entry refuses the empty target like any bad one.
    this.url = (headers[':path'] as string | undefined) ?? '';
    // RFC 9113 §8.1: a HEADERS frame with END_STREAM carries a request without content.
    this.#ended = endStream;
    this.endedWithHead = endStream;
  }

  get connection(): TLSSocket {
    return this.socket;
  }
  get complete(): boolean {
    return this.#ended || this.aborted || this.stream.destroyed;
  }

  override _read(): void {
    if (this.#reading) {
      this.stream.resume();
      return;
    }
    this.#reading = true;
    if (this.#ended) {
      this.push(null);
      return;
    }
    const stream = this.stream;
    stream.on('data', (chunk: Buffer) => {
      if (!this.push(chunk)) stream.pause();
    });
    stream.once('end', () => this.#end());
    stream.on('trailers', (t: IncomingHttpHeaders, _flags: number, raw: string[]) => {
      Object.assign(this.trailers, t);
      this.rawTrailers.push(...raw);
    });
  }

  #end(): void {
    this.#ended = true;
    this.push(null);
  }

  /** The stream closed: a body still expected never comes. */
  onStreamClose(reset: boolean): void {
    if (reset && !this.#ended) {
      this.aborted = true;
      this.emit('aborted');
    }
    if (this.#reading && !this.readableEnded) this.push(null);
    this.emit('close');
  }

  setTimeout(ms: number, cb?: () => void): this {
    this.stream.setTimeout(ms, cb);
    return this;
  }
}

/** The response side: writeHead goes straight to `stream.respond`, the body to the stream. */
export class H2Response extends Stream implements ResponseSink {
  statusCode = 200;
  /** DATA payload bytes handed to the stream: the access log's `bytes` on HTTP/2, where the
   *  connection's counter mixes every concurrent stream. */
  bytesSent = 0;
  sendDate = true;
  writable = true;
  #fields: Fields | undefined;
  #trailers: Fields | undefined;
  #ending = false;
  #drain = false;
  /** end() without content is writing the head: HEADERS carries END_STREAM. */
  #headOnly = false;
  /** We reset the stream (destroy, send timeout): not the client's reset (h2-sessions.ts). */
  resetByServer = false;
  /** The send-timeout sweep (h2-sessions.ts): DATA taken by the stream at its last look, and since
   *  when nothing more was (0: not stalled). */
  progressMark = 0;
  stalledSinceMs = 0;
  readonly #wantsTrailers: boolean;

  constructor(
    readonly stream: ServerHttp2Stream,
    readonly req: H2Request,
  ) {
    super();
    // RFC 9110 §10.1.4: trailers only for a client that said it accepts them (TE: trailers), so no
    // other response pays for an empty trailers frame.
    const te = req.headers.te;
    this.#wantsTrailers = te !== undefined && String(te).toLowerCase().includes('trailers');
  }

  get socket(): TLSSocket | null {
    return this.stream.closed ? null : this.req.socket;
  }
  get connection(): TLSSocket | null {
    return this.socket;
  }
  get headersSent(): boolean {
    return this.stream.headersSent;
  }
  get _header(): boolean {
    return this.stream.headersSent;
  }
  get writableEnded(): boolean {
    return this.#ending;
  }
  get finished(): boolean {
    return this.#ending;
  }
  get writableFinished(): boolean {
    return this.stream.writableFinished;
  }
  get writableLength(): number {
    return this.stream.writableLength;
  }
  get writableCorked(): number {
    return this.stream.writableCorked;
  }
  get writableHighWaterMark(): number {
    return this.stream.writableHighWaterMark;
  }
  get destroyed(): boolean {
    return this.stream.destroyed;
  }
  // RFC 9113 §8.3.2: there is no reason phrase in HTTP/2.
  get statusMessage(): string {
    return '';
  }
  set statusMessage(_: string) {}

  setHeader(name: string, value: number | string | readonly string[]): this {
    if (this.stream.headersSent) throw headersSentError();
    const n = name.toLowerCase();
    if (CONNECTION_SPECIFIC.has(n)) return this;
    validateHeaderName(n);
    validateHeaderValue(n, value as string);
    (this.#fields ??= Object.create(null) as Fields)[n] = Array.isArray(value)
      ? value.map(String)
      : (value as string | number);
    return this;
  }
  appendHeader(name: string, value: string | readonly string[]): this {
    const prev = this.getHeader(name);
    const add = Array.isArray(value) ? value.map(String) : [String(value)];
    return this.setHeader(
      name,
      prev === undefined ? add : [...([] as string[]).concat(String(prev)), ...add],
    );
  }
  getHeader(name: string): number | string | string[] | undefined {
    return this.#fields?.[name.toLowerCase()];
  }
  hasHeader(name: string): boolean {
    return this.#fields !== undefined && name.toLowerCase() in this.#fields;
  }
  removeHeader(name: string): void {
    if (this.stream.headersSent) throw headersSentError();
    if (this.#fields !== undefined) delete this.#fields[name.toLowerCase()];
  }
  getHeaderNames(): string[] {
    return this.#fields === undefined ? [] : Object.keys(this.#fields);
  }
  getHeaders(): Fields {
    return Object.assign(Object.create(null) as Fields, this.#fields);
  }

  writeHead(statusCode: number, reason?: string | HeadFields, headers?: HeadFields): this {
    const stream = this.stream;
    if (stream.headersSent) throw headersSentError();
    this.statusCode = statusCode;
    if (stream.destroyed || stream.closed) return this;
    const h = typeof reason === 'string' ? headers : reason;
    this.#respond(h, this.#headOnly);
    return this;
  }

  /** HEADERS: the set fields, then the writeHead ones (which win, as in node:http). */
  #respond(h: HeadFields | undefined, endStream: boolean): void {
    let out: OutgoingHttpHeaders;
    if (this.#fields === undefined && h !== undefined && Object.isFrozen(h)) {
      out = frozenFields(this.statusCode, h);
    } else {
      out = { ':status': this.statusCode };
      if (this.#fields !== undefined) Object.assign(out, this.#fields);
      if (h !== undefined) addFields(out, h, this.#fields !== undefined);
    }
    const wantTrailers = this.#wantsTrailers && !endStream;
    if (wantTrailers) this.stream.once('wantTrailers', () => this.stream.sendTrailers(this.#trailers ?? {}));
    // Node's Http2Stream options: Date unless sendDate is off (RFC 9110 §6.6.1).
    const options = { endStream, waitForTrailers: wantTrailers, sendDate: this.sendDate };
    this.stream.respond(out, options as import('node:http2').ServerStreamResponseOptions);
  }

  flushHeaders(): void {
    if (!this.stream.headersSent && !this.stream.closed) this.writeHead(this.statusCode);
  }

  writeEarlyHints(hints: Record<string, string | string[]>): boolean {
    const stream = this.stream;
    if (stream.headersSent || stream.closed) return false;
    // RFC 8297: 103 is an interim response, before the final HEADERS.
    stream.additionalHeaders({ ...hints, ':status': 103 });
    return true;
  }

  addTrailers(t: Record<string, string | string[]>): void {
    for (const [name, value] of Object.entries(t)) {
      const n = name.toLowerCase();
      validateHeaderName(n);
      validateHeaderValue(n, value as string);
      (this.#trailers ??= {})[n] = value;
    }
  }

  write(
    chunk: string | Uint8Array,
    encoding?: BufferEncoding | ((e?: Error | null) => void),
    cb?: (e?: Error | null) => void,
  ): boolean {
    const done = typeof encoding === 'function' ? encoding : cb;
    const enc = typeof encoding === 'string' ? encoding : undefined;
    const stream = this.stream;
    if (this.#ending || stream.destroyed || stream.closed) {
      if (done !== undefined) process.nextTick(done, new Error('write after end'));
      return false;
    }
    // The head through this.writeHead: a step may have wrapped it (response-headers.ts).
    if (!stream.headersSent) this.writeHead(this.statusCode);
    // RFC 9110 §9.3.2, §15.3.5, §15.4.5: HEAD, 204 and 304 end with the HEADERS frame; a body is dropped.
    if (stream.writableEnded) {
      if (done !== undefined) process.nextTick(done);
      return true;
    }
    this.bytesSent += typeof chunk === 'string' ? Buffer.byteLength(chunk, enc) : chunk.byteLength;
    const ok = enc === undefined ? stream.write(chunk, done) : stream.write(chunk, enc, done);
    if (!ok && !this.#drain) {
      this.#drain = true;
      stream.on('drain', () => this.emit('drain'));
    }
    return ok;
  }

  end(
    chunk?: string | Uint8Array | (() => void),
    encoding?: BufferEncoding | (() => void),
    cb?: () => void,
  ): this {
    const done = typeof chunk === 'function' ? chunk : typeof encoding === 'function' ? encoding : cb;
    const body = typeof chunk === 'function' ? undefined : chunk;
    const enc = typeof encoding === 'string' ? encoding : undefined;
    const stream = this.stream;
    if (this.#ending) {
      if (done !== undefined) process.nextTick(done);
      return this;
    }
    if (done !== undefined) this.once('finish', done);
    if (stream.destroyed || stream.closed) {
      this.#ending = true;
      return this;
    }
    const empty = body === undefined || body === null || body.length === 0;
    // A response without content is one HEADERS frame with END_STREAM.
    if (!stream.headersSent) {
      this.#headOnly = empty && !this.#wantsTrailers;
      this.writeHead(this.statusCode);
      this.#headOnly = false;
    }
    this.#ending = true;
    if (stream.writableEnded) return this;
    if (!empty) this.bytesSent += typeof body === 'string' ? Buffer.byteLength(body, enc) : body.byteLength;
    if (empty) stream.end();
    else if (enc === undefined) stream.end(body);
    else stream.end(body, enc);
    return this;
  }

  cork(): void {
    this.stream.cork();
  }
  uncork(): void {
    this.stream.uncork();
  }
  setTimeout(ms: number, cb?: () => void): this {
    this.stream.setTimeout(ms, cb);
    return this;
  }
  destroy(err?: Error): void {
    if (this.stream.destroyed) return;
    this.resetByServer = true;
    // RFC 9113 §8.1: a response given up is reset with CANCEL, not the NO_ERROR Node would send.
    if (err === undefined && !this.stream.closed) this.stream.close(NGHTTP2_CANCEL);
    else this.stream.destroy(err);
  }

  /** The stream closed: 'finish' when the whole response went out, then 'close'. */
  onStreamClose(reset: boolean): void {
    if (this.#ending && !reset) this.emit('finish');
    this.emit('close');
  }
}

/** HTTP/2 fields of frozen writeHead objects (the static handler's per-version ones), by status. */
const FROZEN = new WeakMap<object, OutgoingHttpHeaders>();

/** The fields of a frozen header object, converted and checked once: Node copies what it is given
 *  (processHeaders), so one frozen object serves every response with that status. */
function frozenFields(status: number, h: HeadFields): OutgoingHttpHeaders {
  const known = FROZEN.get(h);
  if (known !== undefined && known[':status'] === status) return known;
  const out: OutgoingHttpHeaders = { ':status': status };
  addFields(out, h, false);
  FROZEN.set(h, Object.freeze(out));
  return out;
}

function headersSentError(): Error {
  return Object.assign(new Error('Cannot set headers after they are sent'), {
    code: 'ERR_HTTP2_HEADERS_SENT',
  });
}

/** Adds a writeHead call's fields (an object, a flat [name, value, ...] list or a list of pairs),
 *  lower-cased and checked as node:http checks them, without connection-specific ones. */
function addFields(out: OutgoingHttpHeaders, h: HeadFields, merge: boolean): void {
  const add = (rawName: unknown, value: unknown) => {
    if (value === undefined) return;
    const name = String(rawName).toLowerCase();
    if (CONNECTION_SPECIFIC.has(name)) return;
    validateHeaderName(name);
    validateHeaderValue(name, value as string);
    const v = Array.isArray(value) ? value.map(String) : String(value);
    // A repeated name in one call is a list; a name also set by setHeader is replaced (node:http).
    const prev = merge ? undefined : out[name];
    out[name] = prev === undefined ? v : ([] as string[]).concat(prev as string | string[], v);
  };
  if (!Array.isArray(h)) {
    for (const name in h) add(name, (h as OutgoingHttpHeaders)[name]);
  } else if (h.length > 0 && Array.isArray(h[0])) {
    for (const pair of h as unknown[][]) add(pair[0], pair[1]);
  } else {
    for (let i = 0; i + 1 < h.length; i += 2) add(h[i], h[i + 1]);
  }
}

/**
 * Serves the streams of `server` through `emit('request', req, res)` with the pairs above, in place
 * of Node's compatibility layer (its 'newListener' hook, which would add its own 'stream' listener).
 * HTTP/1.1 connections on the same server keep Node's HTTP/1 code and the same 'request' listeners.
 * The guard (h2-sessions.ts) sees every session and stream.
 */
export function serveStreams(
  // biome-ignore lint/suspicious/noExplicitAny: the four class parameters of Node's generic servers
  server: Http2SecureServer<any, any, any, any>,
  guard: SessionGuard,
): void {
  for (const f of server.listeners('newListener')) {
    if (f.name === 'setupCompat') server.removeListener('newListener', f as () => void);
  }
  guard.install(server);
  // The connection's own socket for req.socket (session.socket is a Proxy per session): the session
  // is made synchronously inside Node's 'secureConnection' listener, after this one.
  const sessions = new WeakMap<Http2Session, SessionState>();
  let arriving: TLSSocket | undefined;
  server.prependListener('secureConnection', (socket: TLSSocket) => {
    arriving = socket;
  });
  server.on('session', (session: Http2Session) => {
    const socket = arriving ?? (session.socket as TLSSocket);
    arriving = undefined;
    sessions.set(session, guard.onSession(session, socket));
  });
  server.on(
    'stream',
    (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number, raw: string[]) => {
      const st = sessions.get(stream.session!)!;
      // Errors on a stream (a reset by the client, a protocol error) end it; 'close' tells the pair.
      stream.on('error', noop);
      // Reset by the client before this event: no handler, no upstream request.
      if (!guard.onStream(st, stream)) return;
      const req = new H2Request(stream, headers, raw, st.socket, (flags & NGHTTP2_FLAG_END_STREAM) !== 0);
      const res = new H2Response(stream, req);
      guard.track(res);
      stream.once('close', () => {
        const reset = stream.rstCode !== NGHTTP2_NO_ERROR;
        guard.onStreamClose(st, stream, res);
        req.onStreamClose(reset);
        res.onStreamClose(reset);
      });
      // RFC 9110 §10.1.1: 100-continue is answered at once (the body is read when the handler asks);
      // other expectations cannot be met (417).
      const expect = headers.expect;
      if (expect !== undefined) {
        if (expect.toLowerCase() !== '100-continue') {
          res.statusCode = 417;
          res.end();
          return;
        }
        stream.additionalHeaders({ ':status': 100 });
      }
      server.emit('request', req, res);
    },
  );
}
