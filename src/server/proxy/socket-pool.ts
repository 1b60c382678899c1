// The proxy's own HTTP/1.1 client for Bun: requests written and responses read on Bun.connect sockets,
// kept alive in a pool, with the framing decisions of http/response-framing.ts (RFC 9112 §6.3, §7.1).
// Bun's fetch costs about a third of a proxied exchange and hands over neither interim responses nor
// trailers; its `undici` is a stand-in (fetch-pool.ts). This implements the part of undici's Pool the
// proxy uses (dispatch with a handler, request for health checks, destroy), as FetchPool does, so an
// exchange (forward.ts) runs on it unchanged. https upstreams stay on FetchPool (its TLS and trust
// store are Bun's fetch's, which NODE_EXTRA_CA_CERTS reaches).

import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import {
  ChunkedDecoder,
  type Framing,
  MAX_HEAD_BYTES,
  parseResponseHead,
  responseFraming,
} from '../../http/response-framing.js';
import type { UpstreamPool } from './fetch-pool.js';

/** An idle connection is closed after this long (undici's keepAliveTimeout, as the Node pool uses). */
const KEEP_ALIVE_MS = 4000;

/** The part of Bun's TCP socket used here. */
interface BunSocket {
  data: Connection | undefined;
  write(bytes: Uint8Array): number;
  end(): void;
  terminate(): void;
  pause(): void;
  resume(): void;
}

interface BunSocketHandler {
  data(s: BunSocket, chunk: Buffer): void;
  drain(s: BunSocket): void;
  close(s: BunSocket, err?: Error): void;
  error(s: BunSocket, err: Error): void;
}

type BunConnect = (o: {
  hostname: string;
  port: number;
  data?: Connection;
  socket: BunSocketHandler;
}) => Promise<BunSocket>;

const coded = (message: string, code: string): Error => Object.assign(new Error(message), { code });

/** Methods whose request is expected to carry content: sent with Content-Length: 0 when it has none. */
const EXPECTS_CONTENT = new Set(['POST', 'PUT', 'PATCH']);

/** One line of a request head (RFC 9112 §5): a value with CR, LF or NUL would end the head early. */
function fieldLine(name: string, value: string): string {
  if (/[\r\n\0]/.test(name) || /[\r\n\0]/.test(value))
    throw coded(`invalid field ${name}`, 'UND_ERR_INVALID_ARG');
  return `${name}: ${value}\r\n`;
}

/** The request head: request line, fields, and the framing of its content (RFC 9112 §3, §6). */
function requestHead(o: Dispatcher.DispatchOptions, host: string, chunked: boolean, length?: number): string {
  if (/[\s\0]/.test(o.path)) throw coded('invalid request target', 'UND_ERR_INVALID_ARG');
  let head = `${o.method} ${o.path} HTTP/1.1\r\n`;
  let hasHost = false;
  const fields = (o.headers ?? {}) as Record<string, string | string[] | undefined>;
  for (const name in fields) {
    const v = fields[name];
    if (v === undefined) continue;
    const lower = name.toLowerCase();
    if (lower === 'host') hasHost = true;
    // The content's framing is ours (below): the hop-by-hop fields were stripped already.
    if (lower === 'transfer-encoding' || (lower === 'content-length' && length !== undefined)) continue;
    if (Array.isArray(v)) for (const one of v) head += fieldLine(name, one);
    else head += fieldLine(name, String(v));
  }
  // RFC 9112 §3.2: a client sends Host in every HTTP/1.1 request.
  if (!hasHost) head = `${head}host: ${host}\r\n`;
  if (chunked) head += 'transfer-encoding: chunked\r\n';
  else if (length !== undefined) head += `content-length: ${length}\r\n`;
  if (o.reset === true) head += 'connection: close\r\n';
  return `${head}\r\n`;
}

/** One upstream connection; at most one exchange at a time (no pipelining). */
class Connection {
  call: Call | undefined;
  closed = false;
  idleSinceMs = 0;
  /** Bytes the socket did not take yet, in order. */
  #queued: Uint8Array[] = [];
  #drained: (() => void) | undefined;

  constructor(
    readonly socket: BunSocket,
    private readonly gone: (c: Connection) => void,
  ) {}

  /** Writes, queueing what the socket does not take; false when something is queued. */
  write(bytes: Uint8Array): boolean {
    if (this.closed) return false;
    if (this.#queued.length > 0) {
      this.#queued.push(bytes);
      return false;
    }
    const n = this.socket.write(bytes);
    if (n >= bytes.length) return true;
    this.#queued.push(bytes.subarray(Math.max(0, n)));
    return false;
  }

  /** Resolves once everything queued was written (or the connection closed). */
  drained(): Promise<void> {
    if (this.#queued.length === 0 || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.#drained = resolve;
    });
  }

  onDrain(): void {
    while (this.#queued.length > 0) {
      const bytes = this.#queued[0]!;
      const n = this.socket.write(bytes);
      if (n < bytes.length) {
        this.#queued[0] = bytes.subarray(Math.max(0, n));
        return;
      }
      this.#queued.shift();
    }
    this.#wake();
  }

  #wake(): void {
    const d = this.#drained;
    this.#drained = undefined;
    d?.();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.#queued = [];
    this.#wake();
    this.socket.terminate();
  }

  onClosed(err?: Error): void {
    this.closed = true;
    this.gone(this);
    this.#queued = [];
    this.#wake();
    this.call?.onClose(err);
  }
}

const handler: BunSocketHandler = {
  data(s, chunk) {
    const c = s.data;
    if (c === undefined) return;
    // Bytes on a connection with no exchange: the upstream says something nobody asked (RFC 9112 §9.3).
    if (c.call === undefined) c.close();
    else c.call.onData(chunk);
  },
  drain(s) {
    s.data?.onDrain();
  },
  close(s, err) {
    s.data?.onClosed(err);
  },
  error(s, err) {
    s.data?.onClosed(err);
  },
};

enum Phase {
  Connecting,
  Head,
  Body,
  Done,
}

/** One exchange: the request written, the response read, and undici's controller for the handler. */
class Call implements Dispatcher.DispatchController {
  aborted = false;
  paused = false;
  reason: Error | null = null;
  #phase = Phase.Connecting;
  #conn: Connection | undefined;
  /** Bytes read and not yet parsed or handed on. */
  #buf: Buffer | undefined;
  /** Where the search for the end of the head resumes. */
  #scanned = 0;
  #framing: Framing | undefined;
  #left = 0;
  #decoder: ChunkedDecoder | undefined;
  #reusable = false;
  #pumping = false;

  constructor(
    private readonly pool: SocketPool,
    private readonly o: Dispatcher.DispatchOptions,
    private readonly h: Dispatcher.DispatchHandler,
  ) {}

  start(): void {
    this.h.onRequestStart?.(this, {});
    if (this.aborted) return;
    const conn = this.pool.take();
    if (conn !== undefined) {
      this.#send(conn);
      return;
    }
    this.pool.open().then(
      (c) => {
        if (this.aborted) this.pool.release(c);
        else this.#send(c);
      },
      (err: Error) => this.#fail(err),
    );
  }

  #send(conn: Connection): void {
    this.#conn = conn;
    conn.call = this;
    this.#phase = Phase.Head;
    const body = this.o.body as unknown;
    try {
      if (body === null || body === undefined) {
        const length = EXPECTS_CONTENT.has(this.o.method) ? 0 : undefined;
        conn.write(Buffer.from(requestHead(this.o, this.pool.host, false, length), 'latin1'));
      } else if (typeof body === 'string' || body instanceof Uint8Array) {
        const bytes = typeof body === 'string' ? Buffer.from(body) : body;
        conn.write(Buffer.from(requestHead(this.o, this.pool.host, false, bytes.byteLength), 'latin1'));
        conn.write(bytes);
      } else {
        const fields = (this.o.headers ?? {}) as Record<string, unknown>;
        const chunked = !Object.keys(fields).some((n) => n.toLowerCase() === 'content-length');
        conn.write(Buffer.from(requestHead(this.o, this.pool.host, chunked), 'latin1'));
        void this.#stream(conn, body as AsyncIterable<Uint8Array>, chunked);
      }
    } catch (err) {
      this.#fail(err as Error);
    }
  }

  /** Writes a streamed request body, as it comes and as the upstream takes it (RFC 9112 §7.1 framing). */
  async #stream(conn: Connection, body: AsyncIterable<Uint8Array>, chunked: boolean): Promise<void> {
    try {
      for await (const chunk of body) {
        if (this.#phase === Phase.Done || conn.closed) return;
        if (chunk.byteLength === 0) continue;
        const ok = chunked
          ? conn.write(Buffer.from(`${chunk.byteLength.toString(16)}\r\n`, 'latin1')) &&
            conn.write(chunk) &&
            conn.write(CRLF)
          : conn.write(chunk);
        if (!ok) await conn.drained();
      }
      if (chunked && this.#phase !== Phase.Done) conn.write(LAST_CHUNK);
    } catch (err) {
      this.#fail(err as Error);
    }
  }

  onData(chunk: Buffer): void {
    if (this.#phase === Phase.Done) return;
    this.#buf = this.#buf === undefined ? chunk : Buffer.concat([this.#buf, chunk]);
    this.#pump();
  }

  /** Parses and hands on what was read, until it runs out, the handler pauses, or the exchange ends. */
  #pump(): void {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      while (this.#buf !== undefined && !this.paused && this.#phase !== Phase.Done) {
        if (this.#phase === Phase.Head) {
          if (!this.#head()) break;
        } else this.#body();
      }
    } finally {
      this.#pumping = false;
    }
  }

  /** The rest of the buffer after `at`, or none. */
  #rest(at: number): void {
    const b = this.#buf!;
    this.#buf = at >= b.length ? undefined : b.subarray(at);
  }

  /** Reads a head if a whole one is there: false when more bytes are needed. */
  #head(): boolean {
    const b = this.#buf!;
    const end = b.indexOf('\r\n\r\n', this.#scanned, 'latin1');
    if (end === -1) {
      if (b.length > MAX_HEAD_BYTES)
        this.#fail(coded('the upstream response head is too large', 'UPSTREAM_HEAD'));
      this.#scanned = Math.max(0, b.length - 3);
      return false;
    }
    this.#scanned = 0;
    const head = parseResponseHead(b.toString('latin1', 0, end));
    this.#rest(end + 4);
    if ('error' in head) {
      this.#fail(coded(`the upstream sent ${head.error}`, 'UPSTREAM_MALFORMED'));
      return true;
    }
    // No upgrade goes through the pool (RFC 9110 §15.2.2: 101 answers only an Upgrade request).
    if (head.status === 101) {
      this.#fail(coded('the upstream switched protocols unasked', 'UPSTREAM_MALFORMED'));
      return true;
    }
    const f = responseFraming(this.o.method, head);
    if ('error' in f) {
      this.#fail(coded(`the upstream sent ${f.error}`, 'UPSTREAM_MALFORMED'));
      return true;
    }
    // RFC 9110 §15.2: interim responses go to the handler and the final one follows on this connection.
    if (head.status >= 200) {
      this.#phase = Phase.Body;
      this.#framing = f.framing;
      this.#reusable = f.reusable;
      if (f.framing.kind === 'length') this.#left = f.framing.length;
      else if (f.framing.kind === 'chunked') this.#decoder = new ChunkedDecoder();
    }
    this.h.onResponseStart?.(this, head.status, head.fields as IncomingHttpHeaders, head.reason);
    if (this.#phase !== Phase.Body) return true;
    const k = this.#framing!.kind;
    if (k === 'none' || (k === 'length' && this.#left === 0)) this.#end({});
    return true;
  }

  #body(): void {
    const b = this.#buf!;
    const framing = this.#framing!;
    if (framing.kind === 'close') {
      this.#buf = undefined;
      this.h.onResponseData?.(this, b);
      return;
    }
    if (framing.kind === 'length') {
      const take = Math.min(this.#left, b.length);
      this.#left -= take;
      this.#rest(take);
      this.h.onResponseData?.(this, take === b.length ? b : b.subarray(0, take));
      if (this.#left === 0 && this.#phase !== Phase.Done) this.#end({});
      return;
    }
    const step = this.#decoder!.push(b);
    if ('error' in step) {
      this.#fail(coded(`the upstream sent ${step.error}`, 'UPSTREAM_MALFORMED'));
      return;
    }
    this.#rest(step.used);
    for (const piece of step.data) {
      if (this.#phase === Phase.Done) return;
      this.h.onResponseData?.(this, piece as Buffer);
    }
    if (step.done && this.#phase !== Phase.Done) this.#end(this.#decoder!.trailers as IncomingHttpHeaders);
  }

  /** The response is whole: the connection goes back to the pool when it can carry another exchange. */
  #end(trailers: IncomingHttpHeaders): void {
    this.#phase = Phase.Done;
    const conn = this.#conn!;
    conn.call = undefined;
    // Bytes past the end of the response, with no request sent for them: the connection is not reused.
    if (this.#reusable && this.o.reset !== true && this.#buf === undefined && !conn.closed)
      this.pool.release(conn);
    else conn.close();
    this.#buf = undefined;
    this.h.onResponseEnd?.(this, trailers);
  }

  #fail(err: Error): void {
    if (this.#phase === Phase.Done) return;
    this.#phase = Phase.Done;
    this.#buf = undefined;
    const conn = this.#conn;
    if (conn !== undefined) {
      conn.call = undefined;
      conn.close();
    }
    this.h.onResponseError?.(this, err);
  }

  /** The connection closed under the exchange: the end of a close-delimited body, else a failure. */
  onClose(err?: Error): void {
    if (this.#phase === Phase.Body && this.#framing?.kind === 'close' && err === undefined) {
      // What was read before the close still goes out first (a paused handler has some held).
      this.paused = false;
      this.#pump();
      if ((this.#phase as Phase) !== Phase.Done) this.#end({});
      return;
    }
    this.#fail(err ?? coded('the upstream closed the connection', 'UND_ERR_SOCKET'));
  }

  abort(reason: Error): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    // As undici does, the handler hears of its own abort through onResponseError, on a later tick.
    if (this.#phase === Phase.Done) return;
    const conn = this.#conn;
    this.#phase = Phase.Done;
    if (conn !== undefined) {
      conn.call = undefined;
      conn.close();
    }
    queueMicrotask(() => this.h.onResponseError?.(this, reason));
  }

  pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.#conn?.socket.pause();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    if (this.#phase === Phase.Done) return;
    this.#conn?.socket.resume();
    this.#pump();
  }
}

const CRLF = Buffer.from('\r\n', 'latin1');
/** RFC 9112 §7.1: the last chunk and an empty trailer section. */
const LAST_CHUNK = Buffer.from('0\r\n\r\n', 'latin1');

export class SocketPool implements UpstreamPool {
  readonly host: string;
  readonly #hostname: string;
  readonly #port: number;
  readonly #idle: Connection[] = [];
  readonly #open = new Set<Connection>();
  #sweep: ReturnType<typeof setInterval> | undefined;
  #closed = false;

  constructor(
    origin: string,
    private readonly connectTimeoutMs: number,
  ) {
    const u = new URL(origin);
    this.host = u.host;
    // A bracketed IPv6 literal connects without its brackets.
    this.#hostname = u.hostname.replace(/^\[(.*)\]$/, '$1');
    this.#port = Number(u.port || 80);
  }

  dispatch(o: Dispatcher.DispatchOptions, h: Dispatcher.DispatchHandler): boolean {
    new Call(this, o, h).start();
    return true;
  }

  /** An idle connection that is still open and not past the keep-alive time. */
  take(): Connection | undefined {
    const now = performance.now();
    for (;;) {
      const c = this.#idle.pop();
      if (c === undefined) return undefined;
      if (!c.closed && now - c.idleSinceMs < KEEP_ALIVE_MS) return c;
      c.close();
    }
  }

  release(c: Connection): void {
    if (this.#closed || c.closed) {
      c.close();
      return;
    }
    c.idleSinceMs = performance.now();
    this.#idle.push(c);
    this.#sweep ??= setInterval(this.#sweepIdle, KEEP_ALIVE_MS / 2);
    (this.#sweep as { unref?: () => void }).unref?.();
  }

  /** Closes connections idle past the keep-alive time; the sweep stops once none is idle. */
  readonly #sweepIdle = (): void => {
    const now = performance.now();
    let kept = 0;
    for (const c of this.#idle) {
      if (!c.closed && now - c.idleSinceMs < KEEP_ALIVE_MS) this.#idle[kept++] = c;
      else c.close();
    }
    this.#idle.length = kept;
    if (kept === 0) {
      clearInterval(this.#sweep);
      this.#sweep = undefined;
    }
  };

  /** A new connection, or an error coded as undici's (connect timeout: UND_ERR_CONNECT_TIMEOUT). */
  open(): Promise<Connection> {
    if (this.#closed) return Promise.reject(coded('the pool is closed', 'UND_ERR_CLOSED'));
    const connect = (globalThis as unknown as { Bun: { connect: BunConnect } }).Bun.connect;
    return new Promise((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => {
        settled = true;
        reject(coded(`Connect Timeout Error (${this.connectTimeoutMs} ms)`, 'UND_ERR_CONNECT_TIMEOUT'));
      }, this.connectTimeoutMs);
      connect({ hostname: this.#hostname, port: this.#port, socket: handler }).then(
        (socket) => {
          clearTimeout(timer);
          const c = new Connection(socket, this.#forget);
          socket.data = c;
          if (settled || this.#closed) {
            c.close();
            if (!settled) reject(coded('the pool is closed', 'UND_ERR_CLOSED'));
            return;
          }
          settled = true;
          this.#open.add(c);
          resolve(c);
        },
        (err: Error) => {
          clearTimeout(timer);
          if (settled) return;
          settled = true;
          reject(err);
        },
      );
    });
  }

  readonly #forget = (c: Connection): void => {
    this.#open.delete(c);
  };

  /** A GET for the health checks: its status once the response is whole. */
  request(o: {
    method: 'GET';
    path: string;
    headersTimeout: number;
    bodyTimeout: number;
  }): Promise<{ statusCode: number; body: { dump(): Promise<void> } }> {
    return new Promise((resolve, reject) => {
      let status = 0;
      let ctl: Dispatcher.DispatchController | undefined;
      const timer = setTimeout(
        () => ctl?.abort(coded('no response in time', 'UND_ERR_HEADERS_TIMEOUT')),
        o.headersTimeout,
      );
      this.dispatch(
        { method: o.method, path: o.path, headers: {} },
        {
          onRequestStart: (c) => {
            ctl = c;
          },
          onResponseStart: (_c, s) => {
            if (s >= 200) status = s;
          },
          onResponseEnd: () => {
            clearTimeout(timer);
            resolve({ statusCode: status, body: { dump: async () => {} } });
          },
          onResponseError: (_c, err) => {
            clearTimeout(timer);
            reject(err);
          },
        },
      );
    });
  }

  async destroy(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#sweep);
    this.#idle.length = 0;
    for (const c of this.#open) {
      c.call?.abort(coded('the pool was destroyed', 'UND_ERR_DESTROYED'));
      c.close();
    }
  }
}
