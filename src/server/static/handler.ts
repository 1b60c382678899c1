// The static handler: applies the pure decisions of src/http/ to a resolved file.
// Order as in pillarjs/send: method, path, 412, 304, Range/If-Range, 416/206, HEAD.
import { createReadStream } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { evaluateIfRange, evaluatePreconditions } from '../../http/conditional.js';
import { formatHttpDate } from '../../http/dates.js';
import { negotiateEncoding, prefersHtml } from '../../http/negotiate.js';
import {
  type ByteRange,
  formatContentRange,
  formatUnsatisfiedRange,
  multipartByterangesParts,
  parseRange,
} from '../../http/range.js';
import { ERRORS, sendError } from '../errors.js';
import { writeHeadMerged } from '../vary.js';
import type { StaticOptions } from './files.js';
import { type Coding, type FileResource, FileView, type Resource, type Variant } from './files.js';
import { targetPath } from './path.js';
import type { CacheRule } from './policy.js';
import { compilePolicy } from './policy.js';

const ALLOW = 'GET, HEAD, OPTIONS';
const NOT_FOUND_DETAIL = 'No file at this path.';

export interface StaticHandler {
  (req: IncomingMessage, res: ServerResponse): void;
  readonly files: FileView;
}

/** Expires = now + max-age, formatted once per second per lifetime (RFC 9111 §5.3). */
function makeExpires(nowMs: () => number): (sec: number) => string {
  let lastSecond = -1;
  const memo = new Map<number, string>();
  return (sec) => {
    const s = Math.floor(nowMs() / 1000);
    if (s !== lastSecond) {
      lastSecond = s;
      memo.clear();
    }
    let v = memo.get(sec);
    if (v === undefined) memo.set(sec, (v = formatHttpDate((s + sec) * 1000)));
    return v;
  };
}

export function createStaticHandler(o: {
  root: string;
  static: StaticOptions;
  cachePolicy: readonly CacheRule[];
  nowMs?: () => number;
  onError?: (err: unknown, req: IncomingMessage) => void;
}): StaticHandler {
  const opts = o.static;
  const now = o.nowMs ?? Date.now;
  const files = new FileView({
    root: o.root,
    static: opts,
    policyFor: compilePolicy(o.cachePolicy),
    nowMs: now,
  });
  const expires = makeExpires(now);
  const assetsPrefix = `/${opts.assetsDir.replace(/^\/+|\/+$/g, '')}/`;
  const onError = o.onError ?? (() => {});

  const fail = (req: IncomingMessage, res: ServerResponse, err: unknown) => {
    // A client that went away mid-body is not a server error (logged as 499 by the access log).
    if (res.destroyed || (err as NodeJS.ErrnoException)?.code === 'ERR_STREAM_PREMATURE_CLOSE') {
      res.destroy();
      return;
    }
    onError(err, req);
    if (!res.headersSent) sendError(req, res, ERRORS.internal);
    else res.destroy();
  };

  /** 200/206/304/412/416 for one file. `status` is 404 for the custom not-found page. */
  const serveFile = (
    req: IncomingMessage,
    res: ServerResponse,
    file: FileResource,
    rawPath: string,
    status: 200 | 404,
    extraVary?: string,
  ): void => {
    let variant: Variant | Promise<Variant> = file.identity;
    if (file.codings.length > 0) {
      const coding = negotiateEncoding(req.headers['accept-encoding'], file.codings);
      if (coding === 'br' || coding === 'gzip') variant = files.variant(file, coding as Coding, rawPath);
    }
    if (variant instanceof Promise) {
      variant.then(
        (v) => respond(req, res, file, v, status, extraVary),
        (err) => fail(req, res, err),
      );
    } else respond(req, res, file, variant, status, extraVary);
  };

  const respond = (
    req: IncomingMessage,
    res: ServerResponse,
    file: FileResource,
    v: Variant,
    status: 200 | 404,
    extraVary: string | undefined,
  ): void => {
    const headers = req.headers;
    const exp = file.policy.expiresSec;
    if (status === 200) {
      const pre = evaluatePreconditions({
        method: req.method!,
        header: (name) => headers[name] as string | undefined,
        etag: v.etag,
        lastModifiedMs: file.lastModifiedMs,
      });
      if (pre.kind === 'not-modified') {
        // RFC 9110 §15.4.5: the 304 carries the fields a 200 would have for cache updates; no body.
        let h = v.headers304;
        if (exp !== undefined || extraVary)
          h = withExtras(h, exp === undefined ? undefined : expires(exp), extraVary);
        writeHeadMerged(res, 304, h);
        res.end();
        return;
      }
      if (pre.kind === 'precondition-failed') {
        sendError(req, res, ERRORS.preconditionFailed, 'A precondition in the request did not hold.');
        return;
      }
    }
    let h: Record<string, string> = v.headers;
    if (status === 404) h = { ...h, 'Cache-Control': 'no-cache' };
    if ((exp !== undefined && status === 200) || extraVary) {
      h = withExtras(h, exp === undefined || status !== 200 ? undefined : expires(exp), extraVary);
    }
    const range = headers.range;
    if (range !== undefined && status === 200 && req.method === 'GET') {
      // RFC 9110 §13.1.5: a Range is applied only when If-Range (if any) matches strongly.
      if (
        evaluateIfRange({
          ifRange: headers['if-range'] as string | undefined,
          etag: v.etag,
          lastModifiedMs: file.lastModifiedMs,
          nowMs: now(),
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
          sendRanges(req, res, file, v, h, d.ranges).catch((err) => fail(req, res, err));
          return;
        }
      }
    }
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
    streamFile(res, v.filePath, 0, v.size - 1).catch((err) => fail(req, res, err));
  };

  const sendRanges = async (
    req: IncomingMessage,
    res: ServerResponse,
    file: FileResource,
    v: Variant,
    base: Record<string, string>,
    ranges: ByteRange[],
  ): Promise<void> => {
    const h: Record<string, string> = { ...base };
    delete h['Content-Length'];
    if (ranges.length === 1) {
      const r = ranges[0]!;
      h['Content-Range'] = formatContentRange(r, v.size);
      h['Content-Length'] = String(r.end - r.start + 1);
      writeHeadMerged(res, 206, h);
      if (req.method === 'HEAD') return void res.end();
      if (v.body !== undefined) return void res.end(v.body.subarray(r.start, r.end + 1));
      return streamFile(res, v.filePath, r.start, r.end);
    }
    // RFC 9110 §14.6: multipart/byteranges, each part with its own Content-Range.
    const boundary = `gatehouse-${v.etag.replace(/[^A-Za-z0-9]/g, '').slice(0, 24)}-${ranges.length}`;
    const parts = multipartByterangesParts(ranges, v.size, file.contentType, boundary);
    h['Content-Type'] = `multipart/byteranges; boundary=${boundary}`;
    h['Content-Length'] = String(parts.contentLength);
    delete h['Content-Encoding'];
    if (v.coding !== 'identity') h['Content-Encoding'] = v.coding;
    writeHeadMerged(res, 206, h);
    for (let i = 0; i < ranges.length; i++) {
      const r = ranges[i]!;
      if (res.destroyed) return;
      res.write(parts.headers[i]!);
      if (v.body !== undefined) res.write(v.body.subarray(r.start, r.end + 1));
      else await streamFile(res, v.filePath, r.start, r.end, false);
    }
    res.end(parts.trailer);
  };

  const notFound = (req: IncomingMessage, res: ServerResponse, extraVary?: string): void => {
    // The custom page for browsers; problem+json for API clients (RFC 9457).
    if (opts.notFoundPage && prefersHtml(req.headers.accept)) {
      const raw = `/${opts.notFoundPage.replace(/^\/+/, '')}`;
      const page = files.peek(raw);
      const go = (r: Resource) => {
        if (r.kind === 'file') serveFile(req, res, r, raw, 404, extraVary);
        else
          sendError(req, res, ERRORS.notFound, NOT_FOUND_DETAIL, extraVary ? { Vary: extraVary } : undefined);
      };
      if (page !== undefined) go(page);
      else files.get(raw).then(go, (err) => fail(req, res, err));
      return;
    }
    sendError(req, res, ERRORS.notFound, NOT_FOUND_DETAIL, extraVary ? { Vary: extraVary } : undefined);
  };

  const isNavigation = (req: IncomingMessage, path: string): boolean => {
    // SPA fallback only for page navigations: GET/HEAD, wants HTML, no extension, not an asset.
    const last = path.slice(path.lastIndexOf('/') + 1);
    return prefersHtml(req.headers.accept) && !last.includes('.') && !`${path}/`.startsWith(assetsPrefix);
  };

  const serveResource = (req: IncomingMessage, res: ServerResponse, r: Resource, rawPath: string): void => {
    switch (r.kind) {
      case 'file':
        serveFile(req, res, r, rawPath, 200);
        return;
      case 'redirect': {
        const q = req.url!.indexOf('?');
        res.writeHead(301, {
          Location: q === -1 ? r.location : r.location + req.url!.slice(q),
          'Content-Length': '0',
          'Cache-Control': 'no-cache',
        });
        res.end();
        return;
      }
      case 'bad':
        sendError(req, res, ERRORS.badRequest, r.reason);
        return;
      case 'hidden':
        notFound(req, res);
        return;
      case 'missing': {
        if (!opts.spa) {
          notFound(req, res);
          return;
        }
        if (!isNavigation(req, rawPath)) {
          notFound(req, res, 'Accept');
          return;
        }
        const fallback = opts.spaFallback;
        const page = files.peek(fallback);
        const go = (p: Resource) => {
          if (p.kind === 'file') serveFile(req, res, p, fallback, 200, 'Accept');
          else notFound(req, res, 'Accept');
        };
        if (page !== undefined) go(page);
        else files.get(fallback).then(go, (err) => fail(req, res, err));
        return;
      }
    }
  };

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') {
      if (method === 'OPTIONS') {
        res.writeHead(204, { Allow: ALLOW });
        res.end();
        return;
      }
      // RFC 9110 §15.5.6: 405 lists the methods the resource supports.
      sendError(req, res, ERRORS.methodNotAllowed, `${method} is not allowed here.`, { Allow: ALLOW });
      return;
    }
    const rawPath = targetPath(req.url!);
    if (rawPath === null) {
      sendError(req, res, ERRORS.badRequest, 'The request target must be a path.');
      return;
    }
    const cached = files.peek(rawPath);
    if (cached !== undefined) {
      serveResource(req, res, cached, rawPath);
      return;
    }
    files.get(rawPath).then(
      (r) => serveResource(req, res, r, rawPath),
      (err) => fail(req, res, err),
    );
  };
  return Object.assign(handler, { files });
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

/** Streams bytes [start, end] of a file; the descriptor closes on finish, error or client abort. */
async function streamFile(
  res: ServerResponse,
  path: string,
  start: number,
  end: number,
  endResponse = true,
): Promise<void> {
  if (end < start) {
    if (endResponse) res.end();
    return;
  }
  await pipeline(createReadStream(path, { start, end }), res, { end: endResponse });
}
