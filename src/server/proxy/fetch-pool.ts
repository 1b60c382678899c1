// An upstream pool over the runtime's own fetch, for an https upstream on Bun: its `undici` module is a
// stand-in whose Pool answers nothing, while its fetch keeps connections alive natively (an http
// upstream is on socket-pool.ts, cheaper and strict about framing). It implements the part of undici's
// Pool the proxy uses (dispatch with a handler, request for the health checks, destroy), so an exchange
// (forward.ts) runs on it unchanged. On Node and Deno the proxy keeps undici's Pool.
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';

/** Bun's fetch options beyond the standard's: keep the upstream's bytes as sent (no decoding). */
interface RuntimeRequestInit extends RequestInit {
  decompress?: boolean;
  duplex?: 'half';
}

/** What the proxy asks of a pool (undici's Pool has it all). */
export interface UpstreamPool {
  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean;
  request(options: {
    method: 'GET';
    path: string;
    headersTimeout: number;
    bodyTimeout: number;
  }): Promise<{ statusCode: number; body: { dump(): Promise<void> } }>;
  destroy(): Promise<void>;
}

/** Whether this runtime's `undici` is only a stand-in, so the pool must be FetchPool. */
export const fetchOnlyRuntime = (): boolean => typeof (globalThis as { Bun?: unknown }).Bun === 'object';

/** Fields as a fetch Headers init: repeated values as repeated pairs (RFC 9110 §5.3). */
function headerPairs(headers: Dispatcher.DispatchOptions['headers']): [string, string][] {
  const out: [string, string][] = [];
  if (headers === null || headers === undefined) return out;
  for (const [name, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) out.push([name, v]);
    else out.push([name, String(value)]);
  }
  return out;
}

/** A Response's fields as undici hands them over: by lowercase name, Set-Cookie as a list. */
function incomingHeaders(h: Headers): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  h.forEach((value, name) => {
    if (name !== 'set-cookie') out[name] = value;
  });
  const cookies = h.getSetCookie();
  if (cookies.length > 0) out['set-cookie'] = cookies;
  return out;
}

/** An async iterable request body as the stream fetch sends, read as the upstream takes it. */
function bodyStream(body: unknown): ReadableStream<Uint8Array> | string | Uint8Array | null {
  if (body === null || body === undefined) return null;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  const it = (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(c) {
      const r = await it.next();
      if (r.done) c.close();
      else c.enqueue(r.value);
    },
    async cancel() {
      await it.return?.();
    },
  });
}

/** The handle an exchange pauses, resumes and aborts its upstream request with (undici's controller). */
class Controller implements Dispatcher.DispatchController {
  readonly ac = new AbortController();
  aborted = false;
  paused = false;
  reason: Error | null = null;
  #resume: (() => void) | undefined;

  abort(reason: Error): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.ac.abort(reason);
    this.#resume?.();
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    const r = this.#resume;
    this.#resume = undefined;
    r?.();
  }

  /** Resolves once resumed (or aborted). */
  whenResumed(): Promise<void> {
    return new Promise((resolve) => {
      this.#resume = resolve;
    });
  }
}

export class FetchPool implements UpstreamPool {
  readonly #inFlight = new Set<AbortController>();
  #closed = false;

  constructor(private readonly origin: string) {}

  dispatch(o: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const c = new Controller();
    void this.#run(o, handler, c);
    return true;
  }

  async #run(o: Dispatcher.DispatchOptions, h: Dispatcher.DispatchHandler, c: Controller): Promise<void> {
    this.#inFlight.add(c.ac);
    let ended = false;
    try {
      h.onRequestStart?.(c, {});
      if (c.aborted) throw c.reason;
      const body = bodyStream(o.body);
      const headers = headerPairs(o.headers);
      // A request that must not keep its connection says so (RFC 9112 §9.6), as undici's `reset` does:
      // Bun's `keepalive: false` closes the connection afterwards but tells the upstream nothing.
      if (o.reset === true) headers.push(['connection', 'close']);
      const init: RuntimeRequestInit = {
        method: o.method,
        headers,
        body: body as BodyInit | null,
        // The proxy passes redirects and encodings through as the upstream sent them.
        redirect: 'manual',
        decompress: false,
        keepalive: o.reset !== true,
        signal: c.ac.signal,
      };
      if (body !== null && typeof body === 'object' && !(body instanceof Uint8Array)) init.duplex = 'half';
      const r = await fetch(this.origin + o.path, init);
      h.onResponseStart?.(c, r.status, incomingHeaders(r.headers), r.statusText);
      if (r.body !== null) {
        const reader = r.body.getReader();
        for (;;) {
          if (c.paused && !c.aborted) await c.whenResumed();
          if (c.aborted) {
            await reader.cancel(c.reason).catch(() => {});
            throw c.reason;
          }
          const next = await reader.read();
          if (next.done) break;
          h.onResponseData?.(c, Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength));
        }
      }
      if (c.aborted) throw c.reason;
      ended = true;
      // The Fetch API hands over no trailer fields (RFC 9110 §6.5): none pass.
      h.onResponseEnd?.(c, {});
    } catch (err) {
      if (!ended) h.onResponseError?.(c, (c.aborted ? c.reason : err) as Error);
    } finally {
      this.#inFlight.delete(c.ac);
    }
  }

  async request(o: {
    method: 'GET';
    path: string;
    headersTimeout: number;
    bodyTimeout: number;
  }): Promise<{ statusCode: number; body: { dump(): Promise<void> } }> {
    if (this.#closed) throw Object.assign(new Error('the pool is closed'), { code: 'UND_ERR_CLOSED' });
    const r = await fetch(this.origin + o.path, {
      method: o.method,
      redirect: 'manual',
      signal: AbortSignal.timeout(o.headersTimeout),
    });
    return {
      statusCode: r.status,
      body: { dump: async () => void (await r.body?.cancel()) },
    };
  }

  async destroy(): Promise<void> {
    this.#closed = true;
    for (const ac of this.#inFlight)
      ac.abort(Object.assign(new Error('the pool was destroyed'), { code: 'UND_ERR_DESTROYED' }));
  }
}
