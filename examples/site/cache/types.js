// Plain values the cache decisions work on. No classes, no I/O: a store persists these as they are.
/**
 * The value of a header field, or undefined. Guards against inherited properties, so a field name
 * taken from the network (a Vary member such as `constructor`) never reads the prototype.
 */
export function getHeader(headers, name) {
    return Object.hasOwn(headers, name) ? headers[name] : undefined;
}
