// JSONP for static .json files on the configured paths (DESIGN.md, "JSONP"): GET/HEAD only, a
// validated callback, `/**/ cb(json);` as text/javascript with nosniff. Without a callback the
// static handler serves the plain JSON.
//
// JSONP bypasses CORS: any site can include the script, and the browser attaches the user's
// cookies. Never put per-user or otherwise private data on a JSONP path.

import { compileJsonp, type JsonpOptions } from '../../http/jsonp.js';
import { pathOf, type Step } from '../core/context.js';
import { ERRORS, sendError } from '../core/errors.js';
import type { Feature } from '../core/feature.js';
import type { FileLookup } from '../files/view.js';
import type { StepContext } from '../node/types.js';
import { type JsonpContext, serveJsonp } from './jsonp-response.js';

export type { JsonpOptions } from '../../http/jsonp.js';

/** JSONP answers GET and HEAD only (DESIGN.md); HEAD is GET without the body (RFC 9110 §9.3.2);
 *  OPTIONS is answered as on any other path (by the static handler). */
export const JSONP_ALLOW = 'GET, HEAD, OPTIONS';

/**
 * The JSONP step: on a JSONP path, OPTIONS passes on (answered as elsewhere), methods other than GET
 * and HEAD get 405; a valid callback gets the wrapped file;
 * an invalid one 400; no callback passes the request on to the static handler.
 */
export function createJsonp(
  o: JsonpOptions | undefined,
  files: FileLookup,
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

/** What the JSONP feature is made from: the `jsonp` section, and the static files it wraps. */
export interface JsonpFeatureOptions {
  readonly jsonp: JsonpOptions | undefined;
  readonly files: FileLookup;
}

/** JSONP as a feature (core/feature.ts): an answering step for JSON files on JSONP paths. */
export function create(options: JsonpFeatureOptions, kernel: StepContext): Feature | undefined {
  const answer = createJsonp(options.jsonp, options.files, kernel);
  return answer && { answer };
}
