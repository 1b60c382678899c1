// The static handler: applies the pure decisions of src/http/ to a resolved file.
// Order as in pillarjs/send: method, path, 412, 304, Range/If-Range, 416/206, HEAD.
// Parts share one StaticContext (context.ts) built here: resources.ts picks what a path answers,
// respond.ts applies the conditional/range decisions, body.ts sends bytes, fail.ts handles errors.
import { globToRegExp } from '../../http/glob.js';
import { passOn, pathOf, type RequestContext } from '../core/context.js';
import { ERRORS, sendError } from '../core/errors.js';
import type { ExchangeRequest, ResponseSink } from '../core/exchange.js';
import type { Feature } from '../core/feature.js';
import type { FileAccess } from '../files/access.js';
import { nodeFiles } from '../files/node.js';
import type { StepContext } from '../node/types.js';
import { makeExpires, type StaticContext } from './context.js';
import { createEarlyHints } from './early-hints.js';
import { fail } from './fail.js';
import type { Resource, StaticOptions } from './files.js';
import { FileView } from './files.js';
import { otherMethodAnswer } from './methods.js';
import type { CacheRule } from './policy.js';
import { compilePolicy } from './policy.js';
import { serveResource } from './resources.js';
import { serveFile } from './respond.js';

const ALLOW = 'GET, HEAD, OPTIONS';

export interface StaticHandler {
  (req: ExchangeRequest, res: ResponseSink, cx: RequestContext): void;
  readonly files: FileView;
  /** The file at a raw path of the root, as a route's answer (reply.file): 404 when no file is there. */
  readonly serveFileAt: (req: ExchangeRequest, res: ResponseSink, rawPath: string) => void;
}

/** What the static handler is built from. */
export interface StaticHandlerOptions {
  root: string;
  static: StaticOptions;
  cachePolicy: readonly CacheRule[];
  /**
   * What every file is read through (server/files/access.ts): node:fs by default; another runtime's
   * files (Bun.file, Deno) or a site held in memory otherwise.
   */
  files?: FileAccess;
  nowMs?: () => number;
  /** A failure to log. A method, so a callback typed with a transport's own request (Node's
   *  IncomingMessage) fits: it is called with the request the handler was given. */
  onError?(err: unknown, req: ExchangeRequest): void;
  /** Hash manifests ignored or not writable, background hashes failed (files.ts). */
  onWarning?: (message: string) => void;
  /**
   * Mounted (a request has somewhere to be passed on): what a method other than GET/HEAD gets where
   * something is on disk. 'pass-on' (the default): the app's next middleware, as serve-static; '405':
   * answered here, for an app whose next middleware is a static server of the same folder (Vite's preview).
   */
  otherMethodsOnFiles?: 'pass-on' | '405' | undefined;
}

/** The final handler that serves the root's files (the composition root puts it last). */
export function createStaticHandler(o: StaticHandlerOptions): StaticHandler {
  const opts = o.static;
  const now = o.nowMs ?? Date.now;
  const files = new FileView({
    root: o.root,
    files: o.files ?? nodeFiles,
    static: opts,
    policyFor: compilePolicy(o.cachePolicy),
    nowMs: now,
    onWarning: o.onWarning,
  });
  const onError = o.onError ?? (() => {});
  const ctx: StaticContext = {
    files,
    opts,
    nowMs: now,
    expires: makeExpires(now),
    assetsPrefix: `/${opts.assetsDir.replace(/^\/+|\/+$/g, '')}/`,
    spaRoutes: (opts.spaRoutes ?? []).map(globToRegExp),
    onError,
    earlyHints: createEarlyHints(files, opts, onError),
  };

  const passOnFiles = o.otherMethodsOnFiles !== '405';

  /** The answer to a method the files do not support: 204 for OPTIONS, else 405 (RFC 9110 §15.5.6). */
  const notAllowed = (req: ExchangeRequest, res: ResponseSink, method: string): void => {
    if (method === 'OPTIONS') {
      // RFC 9110 §9.3.7: the methods the resource supports, in Allow.
      res.writeHead(204, { Allow: ALLOW });
      res.end();
      return;
    }
    // RFC 9110 §15.5.6: 405 lists the methods the resource supports.
    sendError(req, res, ERRORS.methodNotAllowed, `${method} is not allowed here.`, { Allow: ALLOW });
  };

  /**
   * Methods other than GET/HEAD: the path is resolved first, so that what the files refuse (a dot
   * segment, Gatehouse's own files, a symlink out of the root, a bad target) is refused for every method
   * and never passed on to a mounted app, whose next middleware may serve it.
   */
  const otherMethod = (req: ExchangeRequest, res: ResponseSink, method: string, cx: RequestContext): void => {
    const rawPath = pathOf(cx);
    // `OPTIONS *` (RFC 9110 §9.3.7) asks about the server, not a path.
    if (rawPath === null) {
      if (!passOn(cx)) notAllowed(req, res, method);
      return;
    }
    const decide = (r: Resource) => {
      switch (otherMethodAnswer(r, passOnFiles)) {
        case 'refuse':
          serveResource(ctx, req, res, r, rawPath, cx);
          return;
        case 'not-allowed':
          notAllowed(req, res, method);
          return;
        case 'pass-on':
          // Mounted in an app (createHandler): its own routes may answer other methods.
          if (!passOn(cx)) notAllowed(req, res, method);
          return;
      }
    };
    const cached = files.peek(rawPath);
    if (cached !== undefined) decide(cached);
    else files.get(rawPath).then(decide, (err) => fail(ctx, req, res, err));
  };

  const handler = (req: ExchangeRequest, res: ResponseSink, cx: RequestContext): void => {
    const method = cx.method;
    if (method !== 'GET' && method !== 'HEAD') {
      otherMethod(req, res, method, cx);
      return;
    }
    // RFC 9112 §3.2.4: only OPTIONS has the asterisk-form; a GET has a path (the entry refuses others).
    const rawPath = cx.path;
    if (rawPath.charCodeAt(0) !== 47) {
      sendError(req, res, ERRORS.badRequest, 'The request target must be a path.');
      return;
    }
    const cached = files.peek(rawPath);
    if (cached !== undefined) {
      serveResource(ctx, req, res, cached, rawPath, cx);
      return;
    }
    files.get(rawPath).then(
      (r) => serveResource(ctx, req, res, r, rawPath, cx),
      (err) => fail(ctx, req, res, err),
    );
  };
  const serveFileAt = (req: ExchangeRequest, res: ResponseSink, rawPath: string): void => {
    const go = (r: Resource) => {
      // A route asked for a file: a folder, a hidden or a missing path is not one.
      if (r.kind === 'file') serveFile(ctx, req, res, r, rawPath, 200);
      else sendError(req, res, ERRORS.notFound, 'No file at this path.');
    };
    const cached = files.peek(rawPath);
    if (cached !== undefined) go(cached);
    else files.get(rawPath).then(go, (err) => fail(ctx, req, res, err));
  };
  return Object.assign(handler, { files, serveFileAt });
}

/** The static feature: the final handler, and the handler itself for the features that read its files. */
export interface StaticFeature extends Feature {
  readonly final: StaticHandler;
}

/**
 * The static files as a feature (core/feature.ts): the final handler of what no step took. Errors and
 * warnings go to the kernel's log; the file watchers close with the server.
 */
export function create(
  options: Omit<StaticHandlerOptions, 'onError' | 'onWarning'>,
  kernel: StepContext,
): StaticFeature {
  const final = createStaticHandler({
    ...options,
    onError: (err, req) => kernel.logger.error({ err, method: req.method, url: req.url }, 'request failed'),
    onWarning: (message) => kernel.logger.warn(message),
  });
  return { final, shed: (fraction) => final.files.shed(fraction), close: () => final.files.close() };
}
