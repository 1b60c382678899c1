// A JSONP response for one JSON file: validators and preconditions of the wrapped representation,
// the script-safe body (memoised per in-memory file version), 304/412, HEAD.
import { createHash } from 'node:crypto';
import { evaluatePreconditions } from '../../http/conditional.js';
import { formatHttpDate } from '../../http/dates.js';
import { escapeJsonForScript, JSONP_CONTENT_TYPE, JSONP_SUFFIX, jsonpPrefix } from '../../http/jsonp.js';
import { ERRORS, sendError } from '../core/errors.js';
import type { ExchangeRequest, ResponseSink } from '../core/exchange.js';
import { writeHeadMerged } from '../core/vary.js';
import { type FileAccess, readAll } from '../files/access.js';
import type { ViewedFile, ViewedResource } from '../files/view.js';

/** Built once by createJsonp. */
export interface JsonpContext {
  readonly nowMs: () => number;
  /** Escaped JSON of in-memory files, per file version (a changed file is a new ViewedFile).
   *  Larger files are read from disk per request and not kept, like the static handler streams them. */
  readonly memo: WeakMap<ViewedFile, Buffer | Error>;
  /** Counts what the memo keeps against static.memoryCacheBytes with the file's entry (FileLookup.charge). */
  readonly charge: (rawPath: string, file: ViewedFile, bytes: number) => void;
  /** The static handler's file access (FileLookup.access): larger files are read through it. */
  readonly files: FileAccess;
}

/** Heap of one memo slot besides its bytes (Buffer object, WeakMap slot), rounded up. */
const MEMO_BYTES = 256;

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
function scriptSafeJson(file: ViewedFile, bytes: Buffer): Buffer {
  let text = bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // RFC 8259 §8.1 lets parsers ignore a BOM
  try {
    JSON.parse(text);
  } catch (err) {
    throw new Error(`${file.path} is not valid JSON, so it cannot be served as JSONP`, { cause: err });
  }
  return Buffer.from(escapeJsonForScript(text), 'utf8');
}

function body(ctx: JsonpContext, file: ViewedFile, rawPath: string): Buffer | Promise<Buffer> {
  const bytes = file.identity.body;
  if (bytes === undefined)
    return readAll(ctx.files.stream(file.absPath, 0)).then((b) => scriptSafeJson(file, b));
  let v = ctx.memo.get(file);
  if (v === undefined) {
    try {
      v = scriptSafeJson(file, bytes);
    } catch (err) {
      v = err as Error;
    }
    ctx.memo.set(file, v);
    ctx.charge(rawPath, file, MEMO_BYTES + (v instanceof Error ? 0 : v.length));
  }
  if (v instanceof Error) throw v;
  return v;
}

function respond(
  ctx: JsonpContext,
  req: ExchangeRequest,
  res: ResponseSink,
  file: ViewedFile,
  rawPath: string,
  callback: string,
): boolean | Promise<boolean> {
  const etag = jsonpEtag(file.identity.etag, callback);
  const h: Record<string, string> = { ETag: etag, 'Cache-Control': file.policy.cacheControl };
  if (file.lastModifiedMs !== undefined) h['Last-Modified'] = formatHttpDate(file.lastModifiedMs);
  if (file.policy.expiresSec !== undefined) {
    h.Expires = formatHttpDate((Math.floor(ctx.nowMs() / 1000) + file.policy.expiresSec) * 1000);
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
    // One packet where the transport can hold writes (Node's cork; end() releases them).
    res.cork?.();
    res.write(prefix);
    res.write(json);
    res.end(JSONP_SUFFIX);
    return true;
  };
  const json = body(ctx, file, rawPath);
  return json instanceof Promise ? json.then(send) : send(json);
}

export function serveJsonp(
  ctx: JsonpContext,
  req: ExchangeRequest,
  res: ResponseSink,
  r: ViewedResource,
  rawPath: string,
  callback: string,
): boolean | Promise<boolean> {
  switch (r.kind) {
    case 'file':
      // Only JSON is wrapped; other files on a JSONP path are served as they are.
      return isJson(r.mediaType) ? respond(ctx, req, res, r, rawPath, callback) : false;
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
}
