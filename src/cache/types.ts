// Plain values the cache decisions work on. No classes, no I/O: a store persists these as they are.

/** Header fields: lowercase names, several field lines joined into one value (RFC 9110 §5.3). */
export type HeaderMap = Readonly<Record<string, string>>;

/** A stored response (RFC 9111 §3), with the exchange times that §4.2.3 needs. */
export interface StoredResponse {
  readonly status: number;
  readonly headers: HeaderMap;
  /** Local clock when the request that produced this response was sent (§4.2.3 request_time). */
  readonly requestTimeMs: number;
  /** Local clock when the response was received (§4.2.3 response_time). */
  readonly responseTimeMs: number;
}

/**
 * The value of a header field, or undefined. Guards against inherited properties, so a field name
 * taken from the network (a Vary member such as `constructor`) never reads the prototype.
 */
export function getHeader(headers: HeaderMap, name: string): string | undefined {
  return Object.hasOwn(headers, name) ? headers[name] : undefined;
}
