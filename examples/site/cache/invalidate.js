// Invalidation after unsafe requests: RFC 9111 §4.4.
/** Safe methods (RFC 9110 §9.2.1). Every other method, known or not, counts as unsafe (§4.4). */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);
/**
 * §4.4: the URIs whose stored responses to invalidate (fragments removed, deduplicated, target
 * first). Empty for a safe method or an error status: "a non-error status code" is 2xx or 3xx.
 * The target URI always; Location and Content-Location (resolved against the target, RFC 3986 §5)
 * only when they have the target's origin: "a cache MUST NOT trigger an invalidation under these
 * conditions if the origin ... of the URI to be invalidated differs from that of the target URI".
 * An unparseable target gives []; an unparseable Location or Content-Location is skipped.
 * Uses the WHATWG URL global (Node and browsers), not a node: import.
 */
export function invalidationUris(input) {
    if (SAFE_METHODS.has(input.method))
        return [];
    if (!(input.status >= 200 && input.status < 400))
        return [];
    const target = parse(input.targetUri, undefined);
    if (target === null)
        return [];
    const out = [target.href];
    for (const name of ['location', 'content-location']) {
        const value = Object.hasOwn(input.responseHeaders, name) ? input.responseHeaders[name] : undefined;
        if (value === undefined)
            continue;
        const url = parse(value.trim(), target.href);
        if (url === null || url.origin !== target.origin || url.origin === 'null')
            continue;
        if (!out.includes(url.href))
            out.push(url.href);
    }
    return out;
}
function parse(ref, base) {
    try {
        const url = new URL(ref, base);
        url.hash = '';
        return url;
    }
    catch {
        return null;
    }
}
