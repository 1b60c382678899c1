// Response header policy for proxied responses: hop-by-hop removal, Via, Location/Set-Cookie
// rewrites, Cache-Control from the cache rules, and our own steps' headers winning.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import {
  appendVia,
  type ResponseRewrite,
  rewriteLocation,
  rewriteSetCookie,
  stripHopByHop,
} from '../../http/proxy-headers.js';
import { mergeVary } from '../core/vary.js';
import type { Route } from './routes.js';
import { type ProxyState, VIA_NAME } from './state.js';
import type { Upstream } from './upstreams.js';

/** Our Via hop when the upstream sent none (RFC 9110 §7.6.3). */
const VIA_HOP = appendVia(undefined, VIA_NAME);

/**
 * The Cache-Control the proxy sends with an upstream response: the upstream's own unless a rule
 * overrides it; when it sends none, the first matching cachePolicy rule, else the route's default.
 * The route's shared cache decides on this value too, so what clients are told is what it does.
 */
export function policyCacheControl(
  state: ProxyState,
  req: IncomingMessage,
  route: Route,
  headers: IncomingHttpHeaders,
): string | undefined {
  const given = headers['cache-control'];
  if (state.hasPolicy) {
    const url = req.url!;
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const type = headers['content-type'];
    let mediaType = '';
    if (typeof type === 'string') {
      const semi = type.indexOf(';');
      mediaType = (semi === -1 ? type : type.slice(0, semi)).trim().toLowerCase();
    }
    const rule = state.policy({ path, mediaType });
    if (rule !== undefined && (rule.override || given === undefined)) return rule.cacheControl;
  }
  if (given === undefined && route.o.cacheControl !== null) return route.o.cacheControl;
  return given;
}

/** The headers sent to the client with a final upstream head. */
export function responseHeaders(
  state: ProxyState,
  req: IncomingMessage,
  res: ServerResponse,
  mount: string,
  route: Route,
  u: Upstream,
  headers: IncomingHttpHeaders,
): Record<string, string | string[]> {
  const out = stripHopByHop(headers);
  const o = route.o;
  if (o.via) out.via = headers.via === undefined ? VIA_HOP : appendVia(headers.via, VIA_NAME);
  if ((o.rewriteLocation || o.rewriteCookies) && req.headers.host) {
    const proto = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
    // Mounted in an app under a path: the client's URLs have it before the route's prefix. A path-only
    // Location gets it from the adapter; an absolute one and a cookie's Path get it here.
    const rw: ResponseRewrite = {
      upstreamOrigin: u.origin,
      publicOrigin: `${proto}://${req.headers.host}${mount}`,
      publicPrefix: o.stripPrefix ? route.prefix : '',
      upstreamPrefix: u.basePath,
    };
    if (o.rewriteLocation && typeof out.location === 'string')
      out.location = rewriteLocation(out.location, rw);
    if (o.rewriteCookies && out['set-cookie'] !== undefined) {
      const host = req.headers.host.replace(/:\d+$/, '');
      const list = Array.isArray(out['set-cookie']) ? out['set-cookie'] : [out['set-cookie']];
      const path = mount + rw.publicPrefix;
      out['set-cookie'] = list.map((c) => rewriteSetCookie(c, u.url.hostname, host, path));
    }
  }
  const cc = policyCacheControl(state, req, route, headers);
  if (cc !== undefined) out['cache-control'] = cc;
  else if (out['cache-control'] !== undefined) delete out['cache-control'];
  // Headers our own steps set (CORS, header rules) win; Vary is merged (RFC 9110 §12.5.5). Walks the
  // few names set on res (usually none) rather than asking res about each upstream field.
  for (const name of res.getHeaderNames()) {
    if (out[name] === undefined) continue;
    if (name === 'vary') out.vary = mergeVary(res.getHeader('vary')!, String(out.vary));
    else delete out[name];
  }
  return out;
}
