// What a resolved path answers: the file, a 301 to the directory's slash, 400, or 404 (the custom
// not-found page for browsers, the SPA fallback for page navigations).
import { urlVersionMatches } from '../../http/asset-version.js';
import { prefersHtml } from '../../http/negotiate.js';
import { canPassOn, passOn, type RequestContext } from '../core/context.js';
import { ERRORS, sendError } from '../core/errors.js';
import type { ExchangeRequest, ResponseSink } from '../core/exchange.js';
import { appendVary } from '../core/vary.js';
import type { StaticContext } from './context.js';
import { fail } from './fail.js';
import type { FileResource, Resource } from './files.js';
import { serveFile } from './respond.js';

const NOT_FOUND_DETAIL = 'No file at this path.';

export function serveResource(
  ctx: StaticContext,
  req: ExchangeRequest,
  res: ResponseSink,
  r: Resource,
  rawPath: string,
  cx: RequestContext,
): void {
  switch (r.kind) {
    case 'file':
      // Mounted at /app and asked for /app: the index (or listing) at /app/, as a folder's slash redirect
      // below, so that its relative URLs resolve (RFC 9110 §15.4.2). The adapter puts the mount back.
      if (rawPath === '/' && cx.mount?.withoutSlash === true) slashRedirect(req, res, '/');
      else serveFile(ctx, req, res, r, rawPath, 200, undefined, isVersioned(ctx, req.url!, r));
      return;
    case 'redirect':
      slashRedirect(req, res, r.location);
      return;
    case 'bad':
      sendError(req, res, ERRORS.badRequest, r.reason);
      return;
    case 'hidden':
      notFound(ctx, req, res);
      return;
    case 'missing': {
      if (!ctx.opts.spa) {
        // Mounted in an app (createHandler): its next middleware gets what no file answers.
        if (!passOn(cx)) notFound(ctx, req, res);
        return;
      }
      if (!isNavigation(ctx, req, rawPath)) {
        if (canPassOn(cx)) {
          // RFC 9110 §12.5.5: a navigation to this URL gets the page, so whatever the app answers
          // varies on Accept too (as the 404 standalone says).
          appendVary(res, 'Accept');
          passOn(cx);
        } else notFound(ctx, req, res, 'Accept');
        return;
      }
      const fallback = ctx.opts.spaFallback;
      const page = ctx.files.peek(fallback);
      const go = (p: Resource) => {
        if (p.kind === 'file') serveFile(ctx, req, res, p, fallback, 200, 'Accept');
        else notFound(ctx, req, res, 'Accept');
      };
      if (page !== undefined) go(page);
      else ctx.files.get(fallback).then(go, (err) => fail(ctx, req, res, err));
      return;
    }
  }
}

/** 301 to a folder's slash form, the request's query kept. */
function slashRedirect(req: ExchangeRequest, res: ResponseSink, location: string): void {
  const q = req.url!.indexOf('?');
  res.writeHead(301, {
    Location: q === -1 ? location : location + req.url!.slice(q),
    'Content-Length': '0',
    'Cache-Control': 'no-cache',
  });
  res.end();
}

/**
 * The request's one `versionParam` is a prefix of the file's content hash (pure check in
 * http/asset-version.ts). Skipped at once when it could change nothing or the URL has no query.
 */
function isVersioned(ctx: StaticContext, url: string, file: FileResource): boolean {
  if (file.versionedPolicy === file.policy || file.contentHash === undefined) return false;
  return urlVersionMatches(url, ctx.opts.versionParam, file.contentHash);
}

function notFound(ctx: StaticContext, req: ExchangeRequest, res: ResponseSink, extraVary?: string): void {
  // The custom page for browsers; problem+json for API clients (RFC 9457).
  const { opts, files } = ctx;
  if (opts.notFoundPage && prefersHtml(req.headers.accept as string | undefined)) {
    const raw = `/${opts.notFoundPage.replace(/^\/+/, '')}`;
    const page = files.peek(raw);
    const go = (r: Resource) => {
      if (r.kind === 'file') serveFile(ctx, req, res, r, raw, 404, extraVary);
      else
        sendError(req, res, ERRORS.notFound, NOT_FOUND_DETAIL, extraVary ? { Vary: extraVary } : undefined);
    };
    if (page !== undefined) go(page);
    else files.get(raw).then(go, (err) => fail(ctx, req, res, err));
    return;
  }
  sendError(req, res, ERRORS.notFound, NOT_FOUND_DETAIL, extraVary ? { Vary: extraVary } : undefined);
}

function isNavigation(ctx: StaticContext, req: ExchangeRequest, path: string): boolean {
  // SPA fallback only for page navigations: GET/HEAD, wants HTML, not an asset, and no extension
  // unless static.spaRoutes names the path (/users/john.doe).
  if (!prefersHtml(req.headers.accept as string | undefined) || `${path}/`.startsWith(ctx.assetsPrefix))
    return false;
  const last = path.slice(path.lastIndexOf('/') + 1);
  return !last.includes('.') || ctx.spaRoutes.some((re) => re.test(path));
}
