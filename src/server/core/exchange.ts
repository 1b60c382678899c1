// The exchange between the kernel and a transport: what the kernel and the features read of a request
// and write to its response. Node's IncomingMessage and ServerResponse satisfy these as they are (and
// so do the HTTP/2 pair of tls/h2-exchange.ts), so the Node transport wraps nothing per request;
// another runtime's transport implements them over its own request and response objects. The kernel's
// types (Step, Final, the entry) are generic over the transport's types, bounded by these.
//
// Features are typed with these interfaces (static/, routes/, steps/, ops/health, the metrics
// endpoint) and write through the sink. The reverse proxy (proxy/: undici, raw sockets for tunnels)
// stays typed with Node's pair: it is the Node transport's feature. The WebSocket endpoints
// (websocket/) are typed with it too, but a handshake on a host that switches it itself (Bun.serve,
// Deno.serve: a HostTunnel) reads only the exchange. So does the accounting of
// the access log and the metrics (ops/log.ts: the socket's byte count).

/**
 * A field value as a request carries it: one string (repeated field lines joined, RFC 9110 §5.3, or
 * the first kept for a singleton), a list only for a field that cannot be joined (Set-Cookie).
 */
export type FieldValue = string | string[] | undefined;

/** A response field value as it is set. */
export type OutFieldValue = number | string | readonly string[];

/** A field value in a head written at once (writeHead). */
export type HeadFieldValue = number | string | string[];

/** The connection a request came on, as far as the kernel reads it. */
export interface ExchangeSocket {
  /** The peer's address (the client, or a proxy in front of it); undefined once it is gone. */
  readonly remoteAddress?: string | undefined;
  /** True on TLS: the target's scheme is https (RFC 9110 §4.2.2). */
  readonly encrypted?: boolean | undefined;
}

/** The request as the kernel reads it. */
export interface ExchangeRequest {
  /** The method token (RFC 9110 §9). */
  method?: string | undefined;
  /** The request-target; the entry rewrites it to the canonical origin-form (RFC 9112 §3.2). */
  url?: string | undefined;
  /** Fields by lowercase name; the entry may rewrite Host to the validated authority. */
  readonly headers: Record<string, FieldValue>;
  /**
   * The field lines as sent: name, value, name, value... (repeated Host lines are visible here). The
   * kernel reads only the Host lines; a transport whose host joined repeated lines before handing the
   * request over (the Fetch API's) gives just its Host line.
   */
  readonly rawHeaders: string[];
  readonly httpVersionMajor: number;
  readonly httpVersionMinor: number;
  /** The connection (one object per connection: steps key per-connection facts by it). */
  readonly socket: ExchangeSocket;
}

/** Events of a request whose content is read as it arrives. */
type ContentEvent = 'end' | 'close';

/**
 * A request whose content (RFC 9110 §6.4) is read as it arrives: 'data' chunks, then 'end'; 'close'
 * while not `complete` means the client left. What reading a body needs (the routes' JSON bodies).
 */
export interface ContentRequest extends ExchangeRequest {
  /** The whole content arrived (or there was none). */
  readonly complete: boolean;
  on(event: 'data', listener: (chunk: Uint8Array) => void): unknown;
  on(event: ContentEvent, listener: () => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  off(event: 'data', listener: (chunk: Uint8Array) => void): unknown;
  off(event: ContentEvent, listener: () => void): unknown;
  off(event: 'error', listener: (err: Error) => void): unknown;
}

/**
 * Events of a response: 'drain' (write() may go on after it returned false), 'finish' (the whole
 * response was handed to the transport), 'close' (the exchange is over: after 'finish', or first when
 * the client left).
 */
export type SinkEvent = 'drain' | 'finish' | 'close';

/** The 103 Early Hints fields (RFC 8297 §2): Link values, by field name. */
export type EarlyHintFields = Record<string, string | string[]>;

/** The response sink: status and fields, then a body at once, in chunks, or none (RFC 9110 §6). */
export interface ResponseSink {
  /** The status of the head to come (RFC 9110 §15), for end() without writeHead. */
  statusCode: number;
  /** The head went out: its status and fields can no longer change. */
  readonly headersSent: boolean;
  /** end() was called: the response is complete on our side. */
  readonly writableEnded: boolean;
  /** The client is gone (a reset stream, a closed connection): start nothing more. */
  readonly destroyed: boolean;
  setHeader(name: string, value: OutFieldValue): unknown;
  getHeader(name: string): number | string | string[] | undefined;
  getHeaderNames(): string[];
  hasHeader(name: string): boolean;
  removeHeader(name: string): void;
  /** Writes the head at once; `fields` may be an object or a flat [name, value, ...] list. */
  writeHead(status: number, fields?: Record<string, HeadFieldValue | undefined> | HeadFieldValue[]): unknown;
  /** An interim 103 before the final head (RFC 8297); absent where the transport cannot send one. */
  writeEarlyHints?(hints: EarlyHintFields): unknown;
  /** Writes a chunk of the content (the head first, if not yet); false: wait for 'drain'. */
  write(chunk: string | Uint8Array): boolean;
  /** Holds the next writes until end(), so a body written in pieces leaves at once (optional). */
  cork?(): void;
  /** Ends the response, with the last chunk or the whole body, or none (HEAD, 304). */
  end(body?: string | Uint8Array): unknown;
  /** Drops the exchange (a response already begun cannot turn into an error); `error`: our failure. */
  destroy(error?: Error): unknown;
  on(event: SinkEvent, listener: () => void): unknown;
  once(event: SinkEvent, listener: () => void): unknown;
  off(event: SinkEvent, listener: () => void): unknown;
}
