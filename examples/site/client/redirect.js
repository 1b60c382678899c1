// Following a redirect the way the Fetch standard's HTTP-redirect fetch (§4.4) does, as a pure
// decision over plain values: the caching fetch applies it to a 3xx it answers from storage (stored
// from a `redirect: 'manual'` request), or that a non-following `options.fetch` hands back.
export const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Fetch §4.4 step 5: at most 20 redirects. */
export const MAX_REDIRECTS = 20;
/** Fetch: request-body-header names, removed when a redirect drops the body (§4.4 step 12). */
const BODY_FIELDS = ['content-encoding', 'content-language', 'content-location', 'content-type'];
/**
 * Removed on a cross-origin hop. Fetch §4.4 step 13 names Authorization (the CORS non-wildcard
 * request-header name); Cookie and Proxy-Authorization are forbidden request headers a browser never
 * lets a script set, so a browser's fetch never carries the caller's across origins either; in Node
 * they are the caller's and get the same treatment.
 */
const CREDENTIAL_FIELDS = ['authorization', 'cookie', 'proxy-authorization'];
export function redirectStep(r) {
    if (!REDIRECT_STATUSES.has(r.status) || r.location === null)
        return { kind: 'return' };
    if (r.mode === 'manual')
        return { kind: 'return' };
    if (r.mode === 'error')
        return { kind: 'error', reason: 'redirect mode is "error"' };
    let next;
    try {
        next = new URL(r.location, r.currentUrl);
    }
    catch {
        return { kind: 'error', reason: 'invalid Location' };
    }
    // §4.4 step 4: only HTTP(S) redirects are followed.
    if (next.protocol !== 'http:' && next.protocol !== 'https:')
        return { kind: 'error', reason: `redirect to a ${next.protocol} URL` };
    if (r.count >= MAX_REDIRECTS)
        return { kind: 'error', reason: `more than ${MAX_REDIRECTS} redirects` };
    // §4.4 step 12: 301/302 turn POST into GET; 303 turns anything but GET and HEAD into GET.
    const toGet = ((r.status === 301 || r.status === 302) && r.method === 'POST') ||
        (r.status === 303 && r.method !== 'GET' && r.method !== 'HEAD');
    const crossOrigin = new URL(r.currentUrl).origin !== next.origin;
    return {
        kind: 'follow',
        url: next.href,
        method: toGet ? 'GET' : r.method,
        dropBody: toGet,
        dropFields: [...(toGet ? BODY_FIELDS : []), ...(crossOrigin ? CREDENTIAL_FIELDS : [])],
    };
}
