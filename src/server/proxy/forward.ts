// One proxied exchange on an undici pool: the request body streamed up (bounded, idle-timed), the
// response streamed down with a bounded buffer and backpressure, interim responses forwarded and
// bounded, a client that stops reading dropped after sendTimeoutMs, failures mapped to 4xx/5xx.
// headersMs and idleMs are our own timers, not undici's: undici runs its headers and body timeouts
// on a 499 ms tick ("fast timers", lib/util/timers.js), so they fired up to ~1 s late (a 200 ms
// headersMs answered 504 after ~1000 ms). Ours fire within a few ms: one setTimeout per exchange for
// the head, and for the body one timer re-armed lazily from the last chunk's time (no per-chunk timer).
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { formatInterimHead, interimDecision, stripHopByHop } from '../../http/proxy-headers.js';
import { ERRORS, type ErrorEntry, sendError } from '../core/errors.js';
import type { Logger } from '../ops/log.js';
import { logCacheStatus } from '../ops/log.js';
import { type ForwardHooks, type HeadAction, setFields } from './cache/index.js';
import type { Upstream, UpstreamSet } from './upstreams.js';

/** The route settings one exchange reads. */
export interface ExchangeRoute {
  readonly upstreams: UpstreamSet;
  readonly o: {
    readonly timeouts: { readonly headersMs: number; readonly idleMs: number };
    readonly bufferBytes: number;
    readonly maxBodyBytes?: number | undefined;
  };
}

/** What an exchange needs from the proxy around it (one object per proxy). */
export interface ExchangeEnv {
  readonly logger: Logger;
  readonly sendTimeoutMs: number;
  /** The headers sent to the client with a final upstream head. */
  responseHeaders(x: Exchange, headers: IncomingHttpHeaders): Record<string, string | string[]>;
  /** A connect failure before the head: true when a retry took the exchange over. */
  retry(x: Exchange): boolean;
}

/** Abort reasons of our own (undici passes the reason to onResponseError). */
const CODES = {
  clientClosed: 'CLIENT_CLOSED',
  sendTimeout: 'SEND_TIMEOUT',
  bodyTooLarge: 'BODY_TOO_LARGE',
  bodyIdle: 'BODY_IDLE',
  interimLimit: 'INTERIM_LIMIT',
  headersTimeout: 'UND_ERR_HEADERS_TIMEOUT',
  bodyTimeout: 'UND_ERR_BODY_TIMEOUT',
} as const;

/** Failures before the head that are the client's or ours, not the upstream's. */
const OWN_FAILURES: Record<string, { entry: ErrorEntry; detail: string; close: boolean }> = {
  [CODES.bodyTooLarge]: {
    entry: ERRORS.contentTooLarge,
    detail: 'The request body is larger than this route accepts.',
    close: true,
  },
  [CODES.bodyIdle]: { entry: ERRORS.requestTimeout, detail: 'The request body stalled.', close: true },
  [CODES.interimLimit]: {
    entry: ERRORS.gatewayTimeout,
    detail: 'The upstream sent too many interim responses.',
    close: false,
  },
};

const CLOSE = { Connection: 'close' } as const;

const CONNECT_ERRORS = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);
const TIMEOUT_ERRORS = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** Why an upstream exchange failed before a response head: 502 or 504 (DESIGN: errors). */
export function classifyUpstreamError(err: unknown): {
  entry: ErrorEntry;
  retryable: boolean;
  detail: string;
} {
  const code = (err as { code?: string }).code ?? '';
  if (TIMEOUT_ERRORS.has(code)) {
    const what =
      code === 'UND_ERR_CONNECT_TIMEOUT'
        ? 'connect'
        : code === 'UND_ERR_HEADERS_TIMEOUT'
          ? 'response'
          : 'idle';
    return {
      entry: ERRORS.gatewayTimeout,
      retryable: false,
      detail: `The upstream did not answer in time (${what} timeout).`,
    };
  }
  return {
    entry: ERRORS.badGateway,
    retryable: CONNECT_ERRORS.has(code),
    detail: 'The upstream could not be reached or failed before answering.',
  };
}

const reason = (code: string, message: string): Error => Object.assign(new Error(message), { code });

type RawWriter = { _writeRaw(data: string, encoding: BufferEncoding): boolean };

export class Exchange implements Dispatcher.DispatchHandler {
  /** The final head arrived (not an interim one). */
  started = false;
  private controller: Dispatcher.DispatchController | undefined;
  private done = false;
  private action: HeadAction | undefined;
  private headStatus = 0;
  /** The final head, held until the first body byte, the end or the next turn of the loop. */
  private pendingHead:
    | { status: number; message: string; out: Record<string, string | string[]> }
    | undefined;
  private headOut = false;
  private flushTimer: NodeJS.Timeout | undefined;
  private interimCount = 0;
  /** Interim heads waiting for the client socket to drain (undefined: not waiting). */
  private interimQueue: string[] | undefined;
  /** headersMs: armed once the request is sent, cleared by the final head (1xx do not restart it). */
  private headTimer: NodeJS.Timeout | undefined;
  /** idleMs between response body chunks: re-armed when it fires early, from lastDataMs. */
  private idleTimer: NodeJS.Timeout | undefined;
  private lastDataMs = 0;
  private bodyTimer: NodeJS.Timeout | undefined;
  private sendTimer: NodeJS.Timeout | undefined;
  private waitingDrain = false;
  private paused = false;
  private readonly detached: boolean;

  constructor(
    private readonly env: ExchangeEnv,
    readonly route: ExchangeRoute,
    readonly u: Upstream,
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    /** Where an app mounted Gatehouse ('' at the root): rewritten URLs get it back. */
    readonly mount: string,
    readonly attempt: number,
    readonly hooks: ForwardHooks | undefined,
    readonly hasBody: boolean,
  ) {
    this.detached = hooks?.detached === true;
  }

  /** Sends the request upstream. */
  dispatch(method: string, path: string, headers: Record<string, string | string[]>): void {
    this.res.on('close', this.onClientClose);
    // One object literal of a fixed shape: undici reads many optional fields from it.
    this.u.pool.dispatch(
      {
        method: method as Dispatcher.HttpMethod,
        path,
        headers,
        // undici streams async iterables too; its types list only Readable.
        body: this.hasBody ? (this.body() as unknown as Readable) : null,
        // 0: off; headersMs and idleMs are our timers (armHead, armIdle), exact where undici's are not.
        headersTimeout: 0,
        bodyTimeout: 0,
        // Beyond the idle keep-alive bound, this connection closes after the exchange.
        reset: this.attempt > 0 || this.u.overKeepAlive,
      },
      this,
    );
  }

  /** The request body, counted against maxBodyBytes; idleMs without a byte aborts both sides. */
  private async *body(): AsyncGenerator<Buffer> {
    const max = this.route.o.maxBodyBytes ?? Number.POSITIVE_INFINITY;
    this.bodyTimer = setTimeout(
      () => this.abort(CODES.bodyIdle, 'request body stalled'),
      this.route.o.timeouts.idleMs,
    );
    let n = 0;
    // destroyOnReturn: false keeps the client connection when we stop early (a 413 must reach it).
    for await (const chunk of this.req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      n += chunk.length;
      if (n > max) {
        this.abort(CODES.bodyTooLarge, 'request body too large');
        return;
      }
      this.bodyTimer?.refresh();
      yield chunk;
    }
    clearTimeout(this.bodyTimer);
    // The whole body is handed to undici: the wait for the head starts (as undici's own timer did).
    this.armHead();
  }

  /** Starts the headersMs clock, once; no-op after the final head or the end. */
  private armHead(): void {
    if (this.headTimer !== undefined || this.started || this.done) return;
    this.headTimer = setTimeout(this.onHeadTimeout, this.route.o.timeouts.headersMs);
    this.headTimer.unref();
  }

  private readonly onHeadTimeout = () => {
    if (!this.started && !this.done) this.abort(CODES.headersTimeout, 'no final response head in time');
  };

  /** Starts the idleMs clock at the final head; onResponseData only records the time of each chunk. */
  private armIdle(): void {
    this.lastDataMs = performance.now();
    this.idleTimer = setTimeout(this.onIdleTimer, this.route.o.timeouts.idleMs);
    this.idleTimer.unref();
  }

  /** Fires idleMs after arming: aborts if nothing came since, else waits the rest of idleMs from the last
   *  chunk. A paused upstream (the client is slow) is not idle: sendTimeoutMs covers that case. */
  private readonly onIdleTimer = () => {
    if (this.done) return;
    const idleMs = this.route.o.timeouts.idleMs;
    // Node may run a timer up to 1 ms before performance.now() says it is due.
    const leftMs = this.paused ? idleMs : idleMs - (performance.now() - this.lastDataMs);
    if (leftMs <= 1) {
      this.abort(CODES.bodyTimeout, 'response body stalled');
      return;
    }
    this.idleTimer = setTimeout(this.onIdleTimer, leftMs);
    this.idleTimer.unref();
  };

  private abort(code: string, message: string): void {
    this.controller?.abort(reason(code, message));
  }

  private readonly onClientClose = () => {
    clearTimeout(this.sendTimer);
    clearTimeout(this.flushTimer);
    // A client that went away aborts the upstream exchange at once.
    if (!this.detached && !this.res.writableFinished && !this.done)
      this.abort(CODES.clientClosed, 'client closed');
  };

  private finish(): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.bodyTimer);
    clearTimeout(this.headTimer);
    clearTimeout(this.idleTimer);
    this.res.off('close', this.onClientClose);
    this.u.release();
  }

  onRequestStart(c: Dispatcher.DispatchController): void {
    this.controller = c;
    if (!this.detached && this.res.destroyed) {
      this.abort(CODES.clientClosed, 'client closed');
      return;
    }
    // A body-less request is written whole now; one with a body arms it when the body ends.
    if (!this.hasBody) this.armHead();
  }

  onResponseStart(
    c: Dispatcher.DispatchController,
    statusCode: number,
    upHeaders: IncomingHttpHeaders,
    statusMessage?: string,
  ): void {
    if (statusCode < 200) {
      this.interim(statusCode, upHeaders);
      return;
    }
    clearTimeout(this.headTimer);
    this.started = true;
    this.armIdle();
    this.headStatus = statusCode;
    this.route.upstreams.succeeded(this.u);
    this.controller = c;
    // Interim responses never reach the cache: only final heads go to its hook.
    const action = this.hooks?.onHead?.(statusCode, upHeaders);
    this.action = action;
    if (action?.kind === 'swallow') return;
    const out = this.env.responseHeaders(this, upHeaders);
    if (action?.headers) {
      setFields(out, action.headers);
      const cacheStatus = action.headers['cache-status'];
      if (cacheStatus !== undefined) logCacheStatus(this.res, cacheStatus);
    }
    this.pendingHead = { status: statusCode, message: statusMessage ?? '', out };
    // A chunked body is held back until its first bytes parse, so that one that fails at once (a bad
    // chunk size) still gets a clean 502. A Content-Length body has no chunk framing to fail on
    // (RFC 9112 §6.3): its head goes now (Node sends it with the first body bytes).
    if (upHeaders['transfer-encoding'] === undefined && upHeaders['content-length'] !== undefined) {
      this.flushHead(false);
      return;
    }
    queueMicrotask(this.armFlush);
  }

  /** After the parser's turn: a head whose body has not started goes out on the next turn. */
  private readonly armFlush = () => {
    if (this.pendingHead !== undefined && this.flushTimer === undefined && !this.done)
      this.flushTimer = setTimeout(() => this.flushHead(true), 0);
  };

  private flushHead(now: boolean): void {
    const h = this.pendingHead;
    if (h === undefined || this.res.destroyed) return;
    this.pendingHead = undefined;
    clearTimeout(this.flushTimer);
    if (this.interimQueue !== undefined) this.flushInterim(true);
    if (h.message) this.res.writeHead(h.status, h.message, h.out);
    else this.res.writeHead(h.status, h.out);
    this.headOut = true;
    // Alone (no body yet, e.g. a stream that starts later): send it now rather than with the body.
    if (now) this.res.flushHeaders();
  }

  /** RFC 9110 §15.2: interim responses pass through, bounded in number and by headersMs (they do not
   *  restart headTimer). */
  private interim(status: number, headers: IncomingHttpHeaders): void {
    this.interimCount++;
    const d = interimDecision({
      status,
      count: this.interimCount,
      clientHttp10: this.req.httpVersionMajor === 1 && this.req.httpVersionMinor === 0,
    });
    if (d.kind === 'abort') {
      this.abort(CODES.interimLimit, 'too many interim responses');
      return;
    }
    if (d.kind === 'drop' || this.detached || this.res.headersSent) return;
    if (typeof (this.res as unknown as Partial<RawWriter>)._writeRaw !== 'function') {
      // An HTTP/2 compatibility response has no raw head: the stream sends the 1xx HEADERS frame.
      const stream = (this.res as unknown as { stream?: { additionalHeaders?(h: object): void } }).stream;
      stream?.additionalHeaders?.({ ...stripHopByHop(headers), ':status': status });
      return;
    }
    const head = formatInterimHead(status, headers);
    if (this.interimQueue !== undefined) this.interimQueue.push(head);
    else if (!(this.res as unknown as RawWriter)._writeRaw(head, 'latin1')) {
      // Each waits for the client to take the previous one; the count above bounds the queue.
      this.interimQueue = [];
      this.req.socket.once('drain', () => this.flushInterim(false));
    }
  }

  private flushInterim(all: boolean): void {
    const q = this.interimQueue;
    if (q === undefined || this.res.headersSent || this.res.destroyed) {
      this.interimQueue = undefined;
      return;
    }
    this.interimQueue = undefined;
    while (q.length > 0) {
      const ok = (this.res as unknown as RawWriter)._writeRaw(q.shift()!, 'latin1');
      if (!ok && !all && q.length > 0) {
        this.interimQueue = q;
        this.req.socket.once('drain', () => this.flushInterim(false));
        return;
      }
    }
  }

  onResponseData(c: Dispatcher.DispatchController, chunk: Buffer): void {
    const action = this.action;
    this.lastDataMs = performance.now();
    action?.onData?.(chunk);
    if (action?.kind === 'swallow') return;
    if (this.pendingHead !== undefined) this.flushHead(false);
    if (!this.res.write(chunk)) this.backpressure(c);
  }

  /**
   * The client is slower than the upstream: keep reading up to bufferBytes (a small answer then
   * frees its upstream connection at once), then pause the upstream; sendTimeoutMs without the
   * client taking a byte drops it (and so aborts the upstream).
   */
  private backpressure(c: Dispatcher.DispatchController): void {
    // A response already gone (an HTTP/2 stream the client reset) emits no 'close' for the listeners
    // below: a timer armed now would outlive it by sendTimeoutMs (one per reset stream).
    if (this.res.destroyed) return;
    if (!this.waitingDrain) {
      this.waitingDrain = true;
      // Listeners made on the first stall only: the common path allocates none of them.
      this.drainListener ??= () => this.onDrain();
      this.res.once('drain', this.drainListener);
      this.res.once('finish', this.drainListener);
      this.res.once('close', this.drainListener);
      this.sendTimer = setTimeout(() => this.onSendTimeout(), this.env.sendTimeoutMs);
    }
    if (!this.paused && this.res.writableLength >= this.route.o.bufferBytes) {
      this.paused = true;
      c.pause();
    }
  }

  private drainListener: (() => void) | undefined;

  private onDrain(): void {
    this.res.off('drain', this.drainListener!);
    this.res.off('finish', this.drainListener!);
    this.res.off('close', this.drainListener!);
    this.waitingDrain = false;
    clearTimeout(this.sendTimer);
    if (this.paused && !this.res.destroyed) {
      this.paused = false;
      // idleMs counts from the resume: the upstream could not send while paused.
      this.lastDataMs = performance.now();
      this.controller?.resume();
    }
  }

  private onSendTimeout(): void {
    this.env.logger.info({ url: this.req.url }, 'client accepted no bytes within sendTimeoutMs');
    this.res.destroy();
  }

  onResponseEnd(_c: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    this.finish();
    const action = this.action;
    if (action?.kind === 'swallow') {
      action.onEnd();
      return;
    }
    if (this.pendingHead !== undefined) this.flushHead(false);
    const t = trailers ? stripHopByHop(trailers) : {};
    if (Object.keys(t).length > 0) this.res.addTrailers(t as Record<string, string>);
    this.res.end();
    action?.onEnd?.();
  }

  onResponseError(ctl: Dispatcher.DispatchController, err: Error): void {
    const code = (err as { code?: string }).code ?? '';
    const { req, res } = this;
    if (
      code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH' &&
      (this.headStatus === 304 || this.headStatus === 204 || (this.started && req.method === 'HEAD'))
    ) {
      // A 304/204 (or an answer to HEAD) has no body whatever its Content-Length says
      // (RFC 9110 §8.6); undici still counts the missing bytes. The response is complete.
      this.onResponseEnd(ctl, {});
      return;
    }
    this.finish();
    clearTimeout(this.flushTimer);
    this.pendingHead = undefined;
    this.interimQueue = undefined;
    if (this.detached) {
      // Nobody waits on this exchange (a background revalidation): only the cache hears of it.
      this.hooks?.onFailure?.(err);
      return;
    }
    if (code === CODES.clientClosed || code === CODES.sendTimeout || res.destroyed) return;
    if (this.action?.kind === 'swallow') {
      // The cache was reading this response to answer from the store: the store cannot help now.
      if (this.hooks?.onFailure?.(err) !== true && !res.headersSent)
        sendError(req, res, ERRORS.badGateway, 'The upstream failed mid-response.');
      return;
    }
    if (this.headOut || res.headersSent) {
      // Mid-body failure: close the connection so the response visibly ends early.
      this.env.logger.warn({ err, url: req.url, upstream: this.u.origin }, 'upstream failed mid-response');
      res.destroy(err);
      return;
    }
    const own = OWN_FAILURES[code];
    if (own !== undefined) {
      sendError(req, res, own.entry, own.detail, own.close ? CLOSE : undefined);
      return;
    }
    if (this.started) {
      // The head arrived but its body broke before a byte reached the client (RFC 9110 §15.6.3).
      this.env.logger.warn({ err, url: req.url, upstream: this.u.origin }, 'upstream sent a malformed body');
      this.route.upstreams.failed(this.u);
      sendError(req, res, ERRORS.badGateway, 'The upstream sent a malformed response.');
      return;
    }
    const c = classifyUpstreamError(err);
    this.route.upstreams.failed(this.u);
    if (c.retryable && this.env.retry(this)) return;
    if (this.hooks?.onFailure?.(err) === true) return;
    this.env.logger.warn({ err, url: req.url, upstream: this.u.origin }, 'upstream request failed');
    sendError(req, res, c.entry, c.detail);
  }
}
