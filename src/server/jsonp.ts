// JSONP for static .json files on the configured paths (DESIGN.md, "JSONP"): GET/HEAD only, a
// validated callback, `/**/ cb(json);` as text/javascript with nosniff. Without a callback the
// static handler serves the plain JSON.
//
// JSONP bypasses CORS: any site can include the script, and the browser attaches the user's
// cookies. Never put per-user or otherwise private data on a JSONP path.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { evaluatePreconditions } from '../http/conditional.js';
import { formatHttpDate } from '../http/dates.js';
import { globToRegExp } from '../http/glob.js';
import {
  type CallbackDecision,
  callbackFromQuery,
  escapeJsonForScript,
  JSONP_SUFFIX,
  jsonpPrefix,
} from '../http/jsonp.js';
import type { Step, StepContext } from './context.js';
import { ERRORS, sendError } from './errors.js';
import type { FileResource, FileView, Resource } from './static/files.js';
import { resolveRequestPath, targetPath } from './static/path.js';
import { writeHeadMerged } from './vary.js';

export interface JsonpOptions {
  /** URL path globs (cache-rule syntax: `*` in a segment, `**` across) where JSONP is offered. */
  paths: string[];
  /** Query parameter naming the callback (default `callback`). */
  callbackParam?: string | undefined;
  /** Accept `ns.fn` callbacks (default false: they enable Same Origin Method Execution). */
  allowDottedCallbacks?: boolean | undefined;
}

export const JSONP_CONTENT_TYPE = 'text/javascript; charset=utf-8';
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
 * The entity-tag of a JSONP representation: a hash of the file's tag and the callback, since each
 * callback is a different representation. Strong when the file's tag is strong, weak when it is weak.
 * `jsonp1` versions the body format.
 */
export function jsonpEtag(fileEtag: string, callback: string): string {
  const hash = createHash('sha256')
    .update(`jsonp1\n${fileEtag}\n${callback}`)
    .digest('base64url')
    .slice(0, 27);
  return fileEtag.startsWith('W/') ? `W/"${hash}"` : `"${hash}"`;
}

function isJson(mediaType: string): boolean {
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}

/**
 * The file's JSON text escaped for a script. Checked with JSON.parse first: wrapping text that is
 * not JSON could execute it as script in the including page. Throws for invalid JSON (a 500 from
 * the pipeline: the file is broken, not the request).
 */
function scriptSafeJson(file: FileResource, bytes: Buffer): Buffer {
  let text = bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // RFC 8259 §8.1 lets parsers ignore a BOM
  try {
    JSON.parse(text);
  } catch (err) {
    throw new Error(`${file.path} is not valid JSON, so it cannot be served as JSONP`, { cause: err });
  }
  return Buffer.from(escapeJsonForScript(text), 'utf8');
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
  // Escaped JSON of in-memory files, per file version (a new FileResource replaces a changed file).
  // Larger files are read from disk per request and not kept, like the static handler streams them.
  const memo = new WeakMap<FileResource, Buffer | Error>();

  const body = (file: FileResource): Buffer | Promise<Buffer> => {
    const bytes = file.identity.body;
    if (bytes === undefined) return readFile(file.absPath).then((b) => scriptSafeJson(file, b));
    let v = memo.get(file);
    if (v === undefined) {
      try {
        v = scriptSafeJson(file, bytes);
      } catch (err) {
        v = err as Error;
      }
      memo.set(file, v);
    }
    if (v instanceof Error) throw v;
    return v;
  };

  const respond = (
    req: IncomingMessage,
    res: ServerResponse,
    file: FileResource,
    callback: string,
  ): boolean | Promise<boolean> => {
    const etag = jsonpEtag(file.identity.etag, callback);
    const h: Record<string, string> = { ETag: etag, 'Cache-Control': file.policy.cacheControl };
    if (file.lastModifiedMs !== undefined) h['Last-Modified'] = formatHttpDate(file.lastModifiedMs);
    if (file.policy.expiresSec !== undefined) {
      h.Expires = formatHttpDate((Math.floor(nowMs() / 1000) + file.policy.expiresSec) * 1000);
    }
    // RFC 9110 §13.2.2 against this representation's own validators; a 304 never reads the file.
    const pre = evaluatePreconditions({
      method: req.method!,
      header: (name) => req.headers[name] as string | undefined,
      etag,
      lastModifiedMs: file.lastModifiedMs,
    });
    if (pre.kind === 'not-modified') {
      writeHeadMerged(res, 304, h);
      res.end();
      return true;
    }
    if (pre.kind === 'precondition-failed') {
      sendError(req, res, ERRORS.preconditionFailed, 'A precondition in the request did not hold.');
      return true;
    }
    const send = (json: Buffer): boolean => {
      const prefix = jsonpPrefix(callback); // ASCII: length is the byte count
      writeHeadMerged(res, 200, {
        'Content-Type': JSONP_CONTENT_TYPE,
        'Content-Length': String(prefix.length + json.length + JSONP_SUFFIX.length),
        ...h,
        'X-Content-Type-Options': 'nosniff',
      });
      if (req.method === 'HEAD') {
        res.end();
        return true;
      }
      res.cork();
      res.write(prefix);
      res.write(json);
      res.end(JSONP_SUFFIX);
      return true;
    };
    const json = body(file);
    return json instanceof Promise ? json.then(send) : send(json);
  };

  const serve = (
    req: IncomingMessage,
    res: ServerResponse,
    r: Resource,
    callback: string,
  ): boolean | Promise<boolean> => {
    switch (r.kind) {
      case 'file':
        // Only JSON is wrapped; other files on a JSONP path are served as they are.
        return isJson(r.mediaType) ? respond(req, res, r, callback) : false;
      case 'redirect':
        return false; // a directory: the static handler redirects to the slash form
      case 'bad':
        sendError(req, res, ERRORS.badRequest, r.reason);
        return true;
      case 'missing':
      case 'hidden':
        sendError(req, res, ERRORS.notFound, 'No file at this path.');
        return true;
    }
  };

  return (req, res) => {
    const url = req.url!;
    const rawPath = targetPath(url);
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
    if (cached !== undefined) return serve(req, res, cached, cb.callback);
    return files.get(rawPath).then((r) => serve(req, res, r, cb.callback));
  };
}
