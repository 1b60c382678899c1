// JSONP for static .json files on the configured paths (DESIGN.md, "JSONP"): GET/HEAD only, a
// validated callback, `/**/ cb(json);` as text/javascript with nosniff. Without a callback the
// static handler serves the plain JSON.
//
// JSONP bypasses CORS: any site can include the script, and the browser attaches the user's
// cookies. Never put per-user or otherwise private data on a JSONP path.

import { globToRegExp } from '../../http/glob.js';
import { type CallbackDecision, callbackFromQuery } from '../../http/jsonp.js';
import { resolveRequestPath } from '../../http/request-path.js';
import { pathOf } from '../core/context.js';
import { ERRORS, sendError } from '../core/errors.js';
import type { Step, StepContext } from '../node/types.js';
import type { FileView } from '../static/files.js';
import { type JsonpContext, serveJsonp } from '../static/jsonp-response.js';

export interface JsonpOptions {
  /** URL path globs (cache-rule syntax: `*` in a segment, `**` across) where JSONP is offered. */
  paths: string[];
  /** Query parameter naming the callback (default `callback`). */
  callbackParam?: string | undefined;
  /** Accept `ns.fn` callbacks (default false: they enable Same Origin Method Execution). */
  allowDottedCallbacks?: boolean | undefined;
}

export { JSONP_CONTENT_TYPE, jsonpEtag } from '../static/jsonp-response.js';

/** JSONP answers GET and HEAD only (DESIGN.md); HEAD is GET without the body (RFC 9110 §9.3.2);
 *  OPTIONS is answered as on any other path (by the static handler). */
export const JSONP_ALLOW = 'GET, HEAD, OPTIONS';

/** JSONP options compiled once; shared by the static JSONP step and library routes. */
export interface CompiledJsonp {
  readonly param: string;
  /** True when the request path (decoded, dot segments resolved) is on a JSONP path. */
  matches(rawPath: string): boolean;
  /** What the request URL's callback parameter asks for. */
  callback(url: string): CallbackDecision;
  /** The 400 detail for an invalid callback. Never contains the callback itself. */
  invalidDetail(reason: string): string;
}

/** The query of a request target: the text after `?` up to any `#`, or undefined. */
export function queryOf(url: string): string | undefined {
  const q = url.indexOf('?');
  if (q === -1) return undefined;
  const h = url.indexOf('#', q);
  return h === -1 ? url.slice(q + 1) : url.slice(q + 1, h);
}

export function compileJsonp(o: JsonpOptions | undefined): CompiledJsonp | undefined {
  if (o === undefined || o.paths.length === 0) return undefined;
  const globs = o.paths.map(globToRegExp);
  const param = o.callbackParam ?? 'callback';
  const allowDotted = o.allowDottedCallbacks ?? false;
  return {
    param,
    matches(rawPath) {
      // Matched on the path the static handler resolves, so `/data/%2e%2e/x.json` or `/data//x.json`
      // cannot slip past (or into) a glob by spelling.
      const r = resolveRequestPath(rawPath, true);
      if (r.kind !== 'ok') return false;
      for (const g of globs) if (g.test(r.path)) return true;
      return false;
    },
    callback: (url) => callbackFromQuery(queryOf(url), param, allowDotted),
    invalidDetail: (reason) => `The ${param} parameter is not a valid JSONP callback: ${reason}.`,
  };
}

/**
 * The JSONP step: on a JSONP path, OPTIONS passes on (answered as elsewhere), methods other than GET
 * and HEAD get 405; a valid callback gets the wrapped file;
 * an invalid one 400; no callback passes the request on to the static handler.
 */
export function createJsonp(
  o: JsonpOptions | undefined,
  files: FileView,
  _ctx: StepContext,
  nowMs: () => number = Date.now,
): Step | undefined {
  const jsonp = compileJsonp(o);
  if (jsonp === undefined) return undefined;
  const ctx: JsonpContext = {
    nowMs,
    memo: new WeakMap(),
    charge: (rawPath, file, bytes) => files.charge(rawPath, file, bytes),
    files: files.access,
  };

  return (req, res, cx) => {
    const url = req.url!;
    const rawPath = pathOf(cx);
    if (rawPath === null || !jsonp.matches(rawPath)) return false;
    const method = req.method;
    // RFC 9110 §9.3.7: OPTIONS asks what the resource supports; answered like any other path.
    if (method === 'OPTIONS') return false;
    if (method !== 'GET' && method !== 'HEAD') {
      // RFC 9110 §15.5.6: 405 names the methods the resource supports.
      sendError(req, res, ERRORS.methodNotAllowed, `${method} is not allowed on a JSONP path.`, {
        Allow: JSONP_ALLOW,
      });
      return true;
    }
    const cb = jsonp.callback(url);
    if (cb.kind === 'none') return false;
    if (cb.kind === 'invalid') {
      sendError(req, res, ERRORS.badRequest, jsonp.invalidDetail(cb.reason));
      return true;
    }
    const cached = files.peek(rawPath);
    if (cached !== undefined) return serveJsonp(ctx, req, res, cached, rawPath, cb.callback);
    return files.get(rawPath).then((r) => serveJsonp(ctx, req, res, r, rawPath, cb.callback));
  };
}
