// The response sink (core/exchange.ts) over a Fetch-standard Response: status and fields are kept
// until the body starts; end(body) makes a Response with the whole body, write() one whose body is a
// ReadableStream fed with backpressure (false until the reader pulls again, then 'drain'). The
// Response goes to whoever awaits `response` (the host's fetch handler).

import type { EarlyHintFields, HeadFieldValue, OutFieldValue, ResponseSink } from '../core/exchange.js';
import { Events } from './events.js';

/** RFC 9110 §15.3.5, §15.3.6, §15.4.5: a response with one of these statuses has no content. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** Chunks a stream body holds before write() says wait (about what Node's socket buffer takes). */
const HIGH_WATER_BYTES = 64 * 1024;

const encoder = new TextEncoder();

/** The fields writeHead takes. */
type HeadFields = Record<string, HeadFieldValue | undefined> | HeadFieldValue[];

/** Calls `each` with every field of writeHead's fields, in order. */
function forEachField(head: HeadFields, each: (name: string, value: HeadFieldValue) => void): void {
  if (Array.isArray(head)) {
    for (let i = 0; i + 1 < head.length; i += 2) each(String(head[i]), head[i + 1]!);
    return;
  }
  for (const name in head) {
    const v = head[name];
    if (v !== undefined) each(name, v);
  }
}

let dateSecond = -1;
let dateValue = '';
/** The Date field (RFC 9110 §6.6.1: an origin server with a clock sends it), made once a second. */
function httpDate(): string {
  const s = Math.floor(Date.now() / 1000);
  if (s !== dateSecond) {
    dateSecond = s;
    dateValue = new Date(s * 1000).toUTCString();
  }
  return dateValue;
}

/** One field as set: its name as given (for the Response), its value. */
interface Field {
  readonly name: string;
  readonly value: OutFieldValue;
}

export class FetchSink extends Events implements ResponseSink {
  statusCode = 200;
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  destroyed = false;
  /** Bytes of content handed to the Response (the access log's `bytes`). */
  bytesSent = 0;
  /** What `response` returns, made when first asked for. */
  #promise: Promise<Response | undefined> | undefined;
  #resolveFn: ((r: Response | undefined) => void) | undefined;
  #rejectFn: ((err: unknown) => void) | undefined;
  /** How it ended before anyone asked for `response`: the common case makes no promise at all. */
  #outcome: { readonly value?: Response | undefined; readonly error?: unknown } | undefined;
  readonly #fields = new Map<string, Field>();
  /** writeHead's fields (an object or a flat [name, value, ...] list), kept as given. */
  #head: HeadFields | undefined;
  #stream: ReadableStreamDefaultController<Uint8Array> | undefined;
  #waiting = false;
  /**
   * Content written before the stream began: a body written in pieces and ended within the same turn
   * (a proxied 1 KB answer) goes out as one buffer, which the hosts send far cheaper than a stream.
   */
  #held: Uint8Array[] | undefined;
  #heldBytes = 0;

  /** ConnectionInfo.responseEnding: called once, as the last content goes out or the response is dropped. */
  #ending: (() => void) | undefined;

  /**
   * `head`: the request was HEAD, so no content goes out (RFC 9110 §9.3.2), though its fields do.
   * `request`: whether its content has all arrived (`complete`), for `Connection: close` (#headers).
   */
  constructor(
    private readonly head = false,
    ending?: () => void,
    private readonly request?: { readonly complete: boolean },
  ) {
    super();
    this.#ending = ending;
  }

  /**
   * Resolves with the Response once the head is decided (end(), or the first write()); with undefined
   * when the request was passed on (passOn: a mounted face's app answers it).
   */
  get response(): Promise<Response | undefined> {
    if (this.#promise === undefined) {
      const o = this.#outcome;
      this.#promise =
        o === undefined
          ? new Promise<Response | undefined>((resolve, reject) => {
              this.#resolveFn = resolve;
              this.#rejectFn = reject;
            })
          : 'error' in o
            ? Promise.reject(o.error)
            : Promise.resolve(o.value);
    }
    return this.#promise;
  }

  /** The Response when it was made before anyone asked for `response` (a host may send it at once). */
  get made(): Response | undefined {
    return this.#promise === undefined ? this.#outcome?.value : undefined;
  }

  #resolve(r: Response | undefined): void {
    if (this.#resolveFn !== undefined) this.#resolveFn(r);
    else if (this.#promise === undefined) this.#outcome ??= { value: r };
  }

  #reject(err: unknown): void {
    if (this.#rejectFn !== undefined) this.#rejectFn(err);
    else if (this.#promise === undefined) this.#outcome ??= { error: err };
  }

  /** Nothing here answers: the app that mounted the face does (undefined), or its error handler (err). */
  passOn(err?: unknown): void {
    if (err === undefined) this.#resolve(undefined);
    else this.#reject(err);
  }

  /**
   * The host switched protocols (RFC 9110 §15.2.2, a WebSocket handshake): its Response (Deno's), or
   * none when the host answers by itself (Bun's server.upgrade).
   */
  switchTo(response: Response | undefined): void {
    this.statusCode = 101;
    this.headersSent = true;
    this.#resolve(response);
  }

  setHeader(name: string, value: OutFieldValue): this {
    this.#fields.set(name.toLowerCase(), { name, value });
    return this;
  }

  getHeader(name: string): number | string | string[] | undefined {
    const lower = name.toLowerCase();
    let found: HeadFieldValue | undefined;
    if (this.#head !== undefined)
      forEachField(this.#head, (n, v) => {
        if (n.toLowerCase() === lower) found = v;
      });
    if (found !== undefined) return found;
    const v = this.#fields.get(lower)?.value;
    return Array.isArray(v) ? [...v] : (v as number | string | undefined);
  }

  getHeaderNames(): string[] {
    const names = new Set(this.#fields.keys());
    if (this.#head !== undefined) forEachField(this.#head, (n) => names.add(n.toLowerCase()));
    return [...names];
  }

  hasHeader(name: string): boolean {
    return this.getHeader(name) !== undefined;
  }

  removeHeader(name: string): void {
    this.#spill();
    this.#fields.delete(name.toLowerCase());
  }

  /** `reason`: a reason phrase, which a Response does not carry (RFC 9112 §4: clients ignore it). */
  writeHead(status: number, reason?: string | HeadFields, more?: HeadFields): this {
    const fields = typeof reason === 'string' ? more : reason;
    this.statusCode = status;
    if (fields !== undefined) {
      // The handler's fields are kept as given and read once, when the Response is made.
      if (this.#head === undefined) this.#head = fields;
      else {
        this.#spill();
        forEachField(fields, (n, v) => this.setHeader(n, v));
      }
    }
    this.headersSent = true;
    return this;
  }

  /** Moves kept writeHead fields into the fields by name, for a change that needs them so. */
  #spill(): void {
    const head = this.#head;
    if (head === undefined) return;
    this.#head = undefined;
    forEachField(head, (n, v) => this.setHeader(n, v));
  }

  /** Sends the head now, before any content (the proxy's head of a body that starts later). */
  flushHeaders(): void {
    if (this.#stream === undefined && !this.writableEnded && !this.destroyed) this.#begin();
  }

  /** Bytes written and not yet taken by the host (the proxy pauses its upstream past a bound). */
  get writableLength(): number {
    const c = this.#stream;
    if (c === undefined) return this.#held === undefined ? 0 : this.#heldBytes;
    return Math.max(0, HIGH_WATER_BYTES - (c.desiredSize ?? 0));
  }

  /** A Response carries no trailer fields (RFC 9110 §6.5 lets a recipient drop them): none are sent. */
  addTrailers(_fields: Record<string, string>): void {}

  /** No 103 through a Response: the Fetch API has no interim responses. */
  writeEarlyHints?: (hints: EarlyHintFields) => unknown = undefined;

  write(chunk: string | Uint8Array): boolean {
    if (this.destroyed || this.writableEnded) return false;
    const bytes = typeof chunk === 'string' ? encoder.encode(chunk) : chunk;
    if (this.#stream === undefined) {
      if (!this.head && !NULL_BODY.has(this.statusCode)) return this.#hold(bytes);
      this.#begin();
    }
    if (this.head || bytes.byteLength === 0) return true;
    this.bytesSent += bytes.byteLength;
    this.#stream!.enqueue(bytes);
    if ((this.#stream!.desiredSize ?? 0) > 0) return true;
    this.#waiting = true;
    return false;
  }

  end(body?: string | Uint8Array): this {
    if (this.writableEnded || this.destroyed) return this;
    if (this.#held !== undefined && this.#stream === undefined) {
      // Everything written so far and the last chunk: one buffer.
      if (body !== undefined) this.#hold(typeof body === 'string' ? encoder.encode(body) : body);
      body = this.#held.length === 1 ? this.#held[0]! : Buffer.concat(this.#held, this.#heldBytes);
      this.#held = undefined;
    }
    if (this.#stream !== undefined) {
      if (body !== undefined) this.write(body);
      this.writableEnded = true;
      this.#ended();
      if (!this.head) this.#stream.close();
      this.#finish();
      return this;
    }
    this.writableEnded = true;
    this.#ended();
    this.#implicitHead();
    const bytes = body === undefined || this.head || NULL_BODY.has(this.statusCode) ? null : body;
    if (typeof bytes === 'string') this.bytesSent = encoder.encode(bytes).byteLength;
    else if (bytes !== null) this.bytesSent = bytes.byteLength;
    this.#resolve(
      new Response(bytes as BodyInit | null, { status: this.statusCode, headers: this.#headers() }),
    );
    this.#finish();
    return this;
  }

  destroy(error?: Error): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    this.#ended();
    if (this.#stream !== undefined) {
      if (!this.writableEnded) this.#stream.error(error ?? new Error('the response was dropped'));
    } else {
      this.#reject(error ?? new Error('the response was dropped before its head'));
    }
    this.emit('close');
    return this;
  }

  /**
   * The head without a writeHead call goes through writeHead, as Node's _implicitHeader does: that is
   * where the policy headers pending on the response (core/response-headers.ts) are folded in.
   */
  #implicitHead(): void {
    if (!this.headersSent) this.writeHead(this.statusCode);
  }

  /**
   * Holds a chunk written before the stream began; true while it is held (under the high-water mark),
   * false once the stream began with every held chunk in it. The stream begins on the next turn at the
   * latest, so a body that takes longer (a stream, server-sent events) is not delayed by more.
   */
  #hold(bytes: Uint8Array): boolean {
    if (this.#held === undefined) {
      this.#implicitHead();
      this.#held = [];
      setTimeout(this.#beginHeld, 0);
    }
    this.#held.push(bytes);
    this.#heldBytes += bytes.byteLength;
    this.bytesSent += bytes.byteLength;
    if (this.#heldBytes < HIGH_WATER_BYTES) return true;
    this.#begin();
    if ((this.#stream!.desiredSize ?? 0) > 0) return true;
    this.#waiting = true;
    return false;
  }

  readonly #beginHeld = (): void => {
    if (this.#stream === undefined && this.#held !== undefined && !this.destroyed) this.#begin();
  };

  /** The head is decided: a Response whose body is the stream write() feeds. */
  #begin(): void {
    this.#implicitHead();
    const held = this.#held;
    this.#held = undefined;
    const stream = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#stream = controller;
          if (held !== undefined) for (const chunk of held) controller.enqueue(chunk);
        },
        pull: () => {
          if (!this.#waiting) return;
          this.#waiting = false;
          this.emit('drain');
        },
        cancel: () => {
          // The client went away (RFC 9110 §9.5-style abort of the exchange): nothing more to write.
          if (this.destroyed) return;
          this.destroyed = true;
          this.emit('close');
        },
      },
      { highWaterMark: HIGH_WATER_BYTES, size: (chunk) => chunk.byteLength },
    );
    const body = this.head || NULL_BODY.has(this.statusCode) ? null : stream;
    this.#resolve(new Response(body, { status: this.statusCode, headers: this.#headers() }));
  }

  /** Before the host gets the last content (or the drop): the host's responseEnding, once. */
  #ended(): void {
    const ending = this.#ending;
    if (ending === undefined) return;
    this.#ending = undefined;
    ending();
  }

  #finish(): void {
    queueMicrotask(() => {
      this.writableFinished = true;
      this.emit('finish');
      this.emit('close');
    });
  }

  /**
   * The Response's fields: those set one by one, unless writeHead's fields name them too (its values
   * win, as on Node), then those. An object (the cheapest init for the hosts), or name/value pairs when
   * a name repeats (a list value, e.g. Set-Cookie).
   */
  #headers(): Record<string, string> | [string, string][] {
    const head = this.#head;
    let pairs: [string, string][] | undefined;
    const out: Record<string, string> = {};
    let dated = false;
    const add = (name: string, value: HeadFieldValue | OutFieldValue): void => {
      // An answer before the request's content is in (a 413 on Content-Length) says no close: a host
      // that closes while the client still sends resets the connection, and the client loses the
      // answer (Bun.serve). Without it the host reads the rest and discards it (RFC 9112 §9.6 lets a
      // server keep the connection; RFC 9110 §15.5.14: a 413 MAY close it).
      if (name.length === 10 && this.request?.complete === false && name.toLowerCase() === 'connection')
        return;
      if (Array.isArray(value)) {
        pairs ??= Object.entries(out);
        for (const v of value) pairs.push([name, String(v)]);
      } else if (pairs !== undefined) pairs.push([name, String(value)]);
      else out[name] = String(value);
    };
    if (this.#fields.size > 0) {
      const listed = new Set<string>();
      if (head !== undefined) forEachField(head, (n) => listed.add(n.toLowerCase()));
      for (const [lower, { name, value }] of this.#fields) {
        if (listed.has(lower)) continue;
        if (lower === 'date') dated = true;
        add(name, value);
      }
    }
    if (head !== undefined)
      forEachField(head, (name, value) => {
        if (name.length === 4 && name.toLowerCase() === 'date') dated = true;
        add(name, value);
      });
    // Some hosts add Date themselves and some not for every response (Bun's HEAD): always here.
    if (!dated) add('Date', httpDate());
    return pairs ?? out;
  }
}
