// One file's response: content coding, then the pure decisions of src/http/ applied in the order
// of pillarjs/send: 412, 304, Range/If-Range, 416/206, HEAD, body.
import { evaluateIfRange, evaluatePreconditions, hasPreconditions } from '../../http/conditional.js';
import { negotiateEncoding } from '../../http/negotiate.js';
import { formatUnsatisfiedRange, parseRange } from '../../http/range.js';
import { ERRORS, sendError } from '../core/errors.js';
import type { ExchangeRequest, ResponseSink } from '../core/exchange.js';
import { writeHeadMerged } from '../core/vary.js';
import { type FileSource, openUnchanged, sendRanges, streamFile } from './body.js';
import type { StaticContext } from './context.js';
import { fail } from './fail.js';
import type { Coding, FileResource, Variant } from './files.js';
import { privateCacheControl } from './policy.js';

/**
 * 200/206/304/412/416 for one file. `status` is 404 for the custom not-found page. `versioned`: the
 * request's `?v=` was verified against the content hash (versionedPolicy applies).
 */
export function serveFile(
  ctx: StaticContext,
  req: ExchangeRequest,
  res: ResponseSink,
  file: FileResource,
  rawPath: string,
  status: 200 | 404,
  extraVary?: string,
  versioned = false,
): void {
  // The first request for a page version waits for its hints (once per version, see early-hints.ts).
  const hints = status === 200 ? ctx.earlyHints?.wait(req, file, rawPath) : undefined;
  if (hints !== undefined) {
    hints
      .then(() => serveFile(ctx, req, res, file, rawPath, status, extraVary, versioned))
      .catch((err) => fail(ctx, req, res, err));
    return;
  }
  let variant = file.identity;
  let interim = false;
  if (file.codings.length > 0) {
    const coding = negotiateEncoding(req.headers['accept-encoding'] as string | undefined, file.codings);
    if (coding === 'br' || coding === 'gzip' || coding === 'zstd') {
      const v = ctx.files.variant(file, coding as Coding, rawPath);
      // Not made yet: identity now, never a wait for the compression (files.ts, compressor.ts).
      if (v === undefined) interim = true;
      else variant = v;
    }
  }
  respond(ctx, req, res, file, variant, status, extraVary, versioned, interim);
}

/**
 * The fields of an identity answer sent while the coding the client asked for is made: only the
 * client may keep it (RFC 9111 §5.2.2.7), so no shared cache holds the uncompressed bytes for the
 * file's whole lifetime, and no Expires (which HTTP/1.0 caches would store by).
 */
function interimFields(h: Record<string, string>): Record<string, string> {
  return { ...h, 'Cache-Control': privateCacheControl(h['Cache-Control']!) };
}

function respond(
  ctx: StaticContext,
  req: ExchangeRequest,
  res: ResponseSink,
  file: FileResource,
  v: Variant,
  status: 200 | 404,
  extraVary: string | undefined,
  versioned: boolean,
  interim: boolean,
): void {
  const headers = req.headers;
  // Variant.versioned exists exactly when versionedPolicy differs from the normal policy.
  const pinned = versioned ? v.versioned : undefined;
  const exp = interim ? undefined : (pinned ? file.versionedPolicy : file.policy).expiresSec;
  // The common unconditional GET skips the evaluation (and its input object) altogether.
  if (status === 200 && hasPreconditions(headers)) {
    const pre = evaluatePreconditions({
      method: req.method!,
      header: (name) => headers[name] as string | undefined,
      etag: v.etag,
      lastModifiedMs: file.lastModifiedMs,
      weakAlias: v.weakAlias,
    });
    if (pre.kind === 'not-modified') {
      // RFC 9110 §15.4.5: the 304 carries the fields a 200 would have for cache updates; no body.
      let h = (pinned ?? v).headers304;
      if (interim) h = interimFields(h);
      // RFC 9111 §4.3.4: the cache updates the stored response its validator selects, so a match on
      // the earlier weak tag answers with that tag (the client gets the strong one with its next 200).
      if (pre.viaAlias) h = { ...h, ETag: v.weakAlias! };
      if (exp !== undefined || extraVary)
        h = withExtras(h, exp === undefined ? undefined : ctx.expires(exp), extraVary);
      writeHeadMerged(res, 304, h);
      res.end();
      return;
    }
    if (pre.kind === 'precondition-failed') {
      sendError(req, res, ERRORS.preconditionFailed, 'A precondition in the request did not hold.');
      return;
    }
  }
  if (pinned !== undefined && v.body === undefined && req.method === 'GET') {
    // Streamed bytes are read now, not when they were hashed: pin them only from a descriptor that
    // is still that file version. A file replaced since (a deploy) gets the normal policy.
    openUnchanged(ctx.files.access, v.filePath, v.diskFingerprint ?? '').then(
      (fh) => {
        if (fh === undefined) {
          respond(ctx, req, res, file, v, status, extraVary, false, interim);
          return;
        }
        const close = () => fh.close().catch(() => {});
        const sending = sendBody(ctx, req, res, file, v, status, extraVary, pinned, exp, fh, interim);
        if (sending === undefined) void close();
        else sending.catch((err) => fail(ctx, req, res, err)).finally(close);
      },
      (err) => fail(ctx, req, res, err),
    );
    return;
  }
  sendBody(ctx, req, res, file, v, status, extraVary, pinned, exp, v.filePath, interim)?.catch((err) =>
    fail(ctx, req, res, err),
  );
}

/** 200/206/416 or HEAD; returns the promise of a streamed body, undefined when already sent. */
function sendBody(
  ctx: StaticContext,
  req: ExchangeRequest,
  res: ResponseSink,
  file: FileResource,
  v: Variant,
  status: 200 | 404,
  extraVary: string | undefined,
  pinned: Variant['versioned'],
  exp: number | undefined,
  source: FileSource,
  interim: boolean,
): Promise<unknown> | undefined {
  const headers = req.headers;
  let h: Record<string, string> = (pinned ?? v).headers;
  if (status === 404) h = { ...h, 'Cache-Control': 'no-cache' };
  else if (interim) h = interimFields(h);
  if ((exp !== undefined && status === 200) || extraVary) {
    h = withExtras(h, exp === undefined || status !== 200 ? undefined : ctx.expires(exp), extraVary);
  }
  const range = headers.range as string | undefined;
  if (range !== undefined && status === 200 && req.method === 'GET') {
    // RFC 9110 §13.1.5: a Range is applied only when If-Range (if any) matches strongly.
    if (
      evaluateIfRange({
        ifRange: headers['if-range'] as string | undefined,
        etag: v.etag,
        // A variant compressed here has new bytes at the highest level later, under the same
        // Last-Modified: a date validates it weakly only (RFC 9110 §8.8.2.2), never a range.
        lastModifiedMs: v.diskFingerprint === undefined ? undefined : file.lastModifiedMs,
        nowMs: ctx.nowMs(),
      })
    ) {
      const d = parseRange(range, v.size);
      if (d.kind === 'unsatisfiable') {
        // RFC 9110 §15.5.17
        sendError(req, res, ERRORS.rangeNotSatisfiable, 'The range is outside the file.', {
          'Content-Range': formatUnsatisfiedRange(v.size),
          'Accept-Ranges': 'bytes',
        });
        return;
      }
      if (d.kind === 'ranges') {
        return sendRanges(ctx.files.access, req, res, file, v, h, d.ranges, source);
      }
    }
  }
  // RFC 8297: the 103 goes right before a full 200 (never a 206, 304, 412 or 416).
  if (status === 200) ctx.earlyHints?.send(req, res, file);
  if (req.method === 'HEAD') {
    writeHeadMerged(res, status, h);
    res.end();
    return;
  }
  if (v.body !== undefined) {
    writeHeadMerged(res, status, h);
    res.end(v.body);
    return;
  }
  writeHeadMerged(res, status, h);
  return streamFile(ctx.files.access, res, source, 0, v.size - 1);
}

function withExtras(
  h: Record<string, string>,
  expiresValue: string | undefined,
  extraVary: string | undefined,
): Record<string, string> {
  const out = { ...h };
  if (expiresValue !== undefined) out.Expires = expiresValue;
  if (extraVary) out.Vary = out.Vary ? `${out.Vary}, ${extraVary}` : extraVary;
  return out;
}
