// A Fetch-standard Request as the kernel reads a request (core/exchange.ts): the transport of
// Bun.serve, Deno.serve, workers and any `fetch(request)` host. Built once per request, with what the
// kernel reads ready (method, origin-form target, fields by lowercase name); the body is read only
// when a step listens for it (the routes' JSON bodies).

import type { ContentRequest, ExchangeSocket, FieldValue } from '../core/exchange.js';
import type { HostUpgrade } from '../websocket/index.js';
import { Events } from './events.js';

/**
 * A host's WebSocket upgrade of `request` (Bun's server.upgrade, Deno.upgradeWebSocket): the Response
 * that switches (Deno's), null when the host answers by itself (Bun's), false when it could not.
 */
export type UpgradeWebSocket = (request: Request, o: HostUpgrade) => Response | null | false;

/** What the host tells of the connection besides the Request (Deno's ServeHandlerInfo, Bun's requestIP). */
export interface ConnectionInfo {
  /** The peer's address. */
  readonly remoteAddress?: string | undefined;
  /** The host's WebSocket upgrade (listenNative passes it); without it, handshakes are ordinary requests. */
  readonly upgradeWebSocket?: UpgradeWebSocket | undefined;
  /**
   * Called once as the response's last content goes to the host, or as the response is dropped: from
   * there the connection is idle again (Bun.serve bounds it again then, fetch/hosts.ts).
   */
  readonly responseEnding?: (() => void) | undefined;
}

/** The target in origin-form (RFC 9112 §3.2.1) from an absolute URL: its path and query. */
export function originForm(url: string): string {
  const scheme = url.indexOf('://');
  const slash = scheme < 0 ? -1 : url.indexOf('/', scheme + 3);
  if (slash < 0) {
    const q = url.indexOf('?', scheme + 3);
    return q < 0 ? '/' : `/${url.slice(q)}`;
  }
  const hash = url.indexOf('#', slash);
  return hash < 0 ? url.slice(slash) : url.slice(slash, hash);
}

/** The authority of an absolute URL (RFC 9110 §4.2.1), for a Request whose fields have no Host. */
function authorityOf(url: string): string {
  const start = url.indexOf('://') + 3;
  let end = start;
  while (end < url.length) {
    const c = url.charCodeAt(end);
    if (c === 47 || c === 63 || c === 35) break; // '/', '?', '#'
    end++;
  }
  return url.slice(start, end);
}

/** The connection as the kernel reads it; the peer's address is asked of the host only when read. */
class FetchSocket implements ExchangeSocket {
  #info: ConnectionInfo | undefined;
  #address: string | undefined;

  constructor(
    info: ConnectionInfo | undefined,
    readonly encrypted: boolean,
  ) {
    this.#info = info;
  }

  get remoteAddress(): string | undefined {
    const info = this.#info;
    if (info !== undefined) {
      this.#info = undefined;
      this.#address = info.remoteAddress;
    }
    return this.#address;
  }
}

export class FetchRequest extends Events implements ContentRequest {
  method: string;
  url: string;
  readonly headers: Record<string, FieldValue>;
  readonly httpVersionMajor = 1;
  readonly httpVersionMinor = 1;
  readonly httpVersion = '1.1';
  readonly socket: ExchangeSocket;
  /** The whole content arrived; undefined until asked (reading Request.body makes a stream). */
  #complete: boolean | undefined;
  /** A WebSocket handshake the host can switch (the access log then waits for the switch). */
  upgrade = false;
  #reading = false;

  constructor(
    readonly request: Request,
    info?: ConnectionInfo,
  ) {
    super();
    this.method = request.method;
    const url = request.url;
    this.url = originForm(url);
    // Headers iterates names in lowercase, with repeated lines joined (RFC 9110 §5.3).
    const fields = request.headers as Headers & { toJSON?(): Record<string, string | string[]> };
    // Bun's Headers gives them all as an object at once; the standard way is one call per field.
    const headers: Record<string, FieldValue> = typeof fields.toJSON === 'function' ? fields.toJSON() : {};
    if (fields.toJSON === undefined)
      fields.forEach((value, name) => {
        headers[name] = value;
      });
    this.headers = headers;
    // HTTP/2 and HTTP/3 carry the authority in :authority (RFC 9113 §8.3.1): the URL has it.
    if (headers.host === undefined) headers.host = authorityOf(url);
    this.socket = new FetchSocket(info, url.startsWith('https:'));
  }

  /**
   * The Host line, which is all the kernel reads of the raw lines (RFC 9112 §3.2: their count): the
   * host joined repeated lines before the Request was made (RFC 9110 §5.3), so there is one at most.
   */
  get rawHeaders(): string[] {
    const host = this.headers.host;
    return typeof host === 'string' ? ['host', host] : [];
  }

  /** The whole content arrived (or there was none). */
  get complete(): boolean {
    this.#complete ??= this.request.body === null;
    return this.#complete;
  }

  /** Listening for the body starts reading it (the 'data' and 'end' events). */
  // biome-ignore lint/suspicious/noExplicitAny: EventEmitter's listener type
  override on(event: string | symbol, listener: (...args: any[]) => void): this {
    super.on(event, listener);
    if (event === 'data' || event === 'end') this.#read();
    return this;
  }

  /**
   * The body chunk by chunk, as node:stream's Readable.iterator gives it (the proxy streams it up). One
   * reader: the events and this are never used on the same request.
   */
  async *iterator(_options?: { destroyOnReturn?: boolean }): AsyncGenerator<Uint8Array> {
    const body = this.request.body;
    if (this.#reading) throw new Error('the request body is already being read');
    this.#reading = true;
    if (body === null) return;
    const reader = body.getReader();
    try {
      for (let r = await reader.read(); !r.done; r = await reader.read()) yield r.value;
      this.#complete = true;
    } finally {
      reader.releaseLock();
    }
  }

  /** Reads the body once someone listens: 'data' per chunk, then 'end' (or 'error', then 'close'). */
  #read(): void {
    if (this.#reading) return;
    this.#reading = true;
    const body = this.request.body;
    queueMicrotask(async () => {
      if (body === null) {
        this.emit('end');
        this.emit('close');
        return;
      }
      try {
        const reader = body.getReader();
        for (let r = await reader.read(); !r.done; r = await reader.read()) this.emit('data', r.value);
        this.#complete = true;
        this.emit('end');
      } catch (err) {
        // The client went away mid-body (Bun: AbortError). As node:http's IncomingMessage does, the error
        // goes only to a listener: a step that stopped listening (a 413 already sent) left the request,
        // and an 'error' thrown into nobody would end the process (an unhandled rejection).
        if (this.listenerCount('error') > 0) this.emit('error', err);
      }
      this.emit('close');
    });
  }
}
