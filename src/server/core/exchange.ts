// The exchange between the kernel and a transport: what the kernel reads of a request and writes to
// its response. Node's IncomingMessage and ServerResponse satisfy these as they are, so the Node
// transport wraps nothing per request; another runtime's transport implements them over its own
// request and response objects. The kernel's types (Step, Final, the entry) are generic over the
// transport's types, bounded by these.

/** A field value as a request carries it (Node folds repeated fields into a list for some names). */
export type FieldValue = string | string[] | undefined;

/** A response field value as it is set. */
export type OutFieldValue = number | string | readonly string[];

/** A field value in a head written at once (writeHead). */
export type HeadFieldValue = number | string | string[];

/** The request as the kernel reads it. */
export interface ExchangeRequest {
  /** The method token (RFC 9110 §9). */
  method?: string | undefined;
  /** The request-target; the entry rewrites it to the canonical origin-form (RFC 9112 §3.2). */
  url?: string | undefined;
  /** Fields by lowercase name; the entry may rewrite Host to the validated authority. */
  readonly headers: Record<string, FieldValue>;
  /** The field lines as sent: name, value, name, value... (repeated Host lines are visible here). */
  readonly rawHeaders: string[];
  readonly httpVersionMajor: number;
  readonly httpVersionMinor: number;
  /** The connection; `encrypted` is true on TLS (the transport's socket, read only for that). */
  readonly socket?: unknown;
}

/** The response sink: status and fields, then a body (RFC 9110 §6). */
export interface ResponseSink {
  statusCode: number;
  readonly headersSent: boolean;
  /** The client is gone (a reset stream, a closed connection): start nothing more. */
  readonly destroyed: boolean;
  setHeader(name: string, value: OutFieldValue): unknown;
  getHeader(name: string): number | string | string[] | undefined;
  getHeaderNames(): string[];
  hasHeader(name: string): boolean;
  removeHeader(name: string): void;
  /** Writes the head at once; `fields` may be an object or a flat [name, value, ...] list. */
  writeHead(status: number, fields?: Record<string, HeadFieldValue | undefined> | HeadFieldValue[]): unknown;
  /** Ends the response, with the whole body or none (HEAD, 304). */
  end(body?: string | Uint8Array): unknown;
  /** Drops the exchange (a response already begun cannot turn into an error). */
  destroy(): unknown;
}
