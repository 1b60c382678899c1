// postMessage with the origin checks that are easy to forget (HTML Living Standard, "Cross-document
// messaging", §9.3.3 security notes): accept only listed origins, never send to '*'.
/** URL standard, origin: the schemes whose URLs have a tuple origin (scheme, host, port). */
const TUPLE_SCHEMES = new Set(['http:', 'https:', 'ws:', 'wss:', 'ftp:']);
/**
 * `x`'s origin, `'null'` when opaque, decided by the scheme (URL standard, "origin"), not by what
 * `URL#origin` says: Chromium answers `file://` for file: URLs where Node answers "null". A blob:
 * URL has its inner http(s) URL's origin; file:, data:, about:, javascript: and others are opaque.
 */
function tupleOrigin(x) {
    try {
        let url = new URL(x);
        if (url.protocol === 'blob:') {
            url = new URL(url.pathname);
            if (url.protocol !== 'http:' && url.protocol !== 'https:')
                return 'null';
        }
        return TUPLE_SCHEMES.has(url.protocol) && url.host !== '' ? url.origin : 'null';
    }
    catch {
        return 'null';
    }
}
/**
 * `x` as an origin (`new URL(x).origin`: scheme, host and port, lower case, default port dropped).
 * '*' and opaque origins (by scheme: tupleOrigin) are refused with a reason; `'null'` only where
 * `allowNull`.
 */
function toOrigin(x, who, allowNull) {
    if (x === '*')
        throw new TypeError(`${who}: '*' is refused: it trusts every site; name the origin, e.g. https://app.example`);
    if (x === 'null' && allowNull)
        return x;
    const origin = tupleOrigin(x);
    if (origin === 'null')
        throw new TypeError(`${who}: ${JSON.stringify(x)} is not a scheme://host[:port] origin` +
            (allowNull ? " (list 'null' itself to accept opaque origins)" : ''));
    return origin;
}
/**
 * Calls `handler(data, event)` for `message` events whose `event.origin` is exactly one of `origins`
 * (and, with `options.source`, whose `event.source` is that window). Returns the unsubscribe function.
 * `'null'` (sandboxed frames, `data:` and `file:` documents) passes only when listed; '*' throws.
 */
export function onMessageFrom(origins, handler, options = {}) {
    const list = typeof origins === 'string' ? [origins] : origins;
    if (list.length === 0)
        throw new TypeError('onMessageFrom: no origins: list the origins to accept');
    const allowed = new Set(list.map((x) => toOrigin(x, 'onMessageFrom', true)));
    const target = options.target ?? globalThis;
    if (typeof target.addEventListener !== 'function')
        throw new TypeError('onMessageFrom: no window here; pass options.target');
    const { source } = options;
    const listener = (ev) => {
        if (!allowed.has(ev.origin))
            return;
        if (source !== undefined && ev.source !== source)
            return;
        handler(ev.data, ev);
    };
    target.addEventListener('message', listener);
    return () => target.removeEventListener('message', listener);
}
/** `target.postMessage(data, origin)` with an explicit origin; '*' and opaque origins throw. */
export function postTo(target, data, targetOrigin, transfer) {
    target.postMessage(data, toOrigin(targetOrigin, 'postTo', false), transfer);
}
