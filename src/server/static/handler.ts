// The static handler: applies the pure decisions of src/http/ to a resolved file.
// Order as in pillarjs/send: method, path, 412, 304, Range/If-Range, 416/206, HEAD.
// Parts share one StaticContext (context.ts) built here: resources.ts picks what a path answers,
// respond.ts applies the conditional/range decisions, body.ts sends bytes, fail.ts handles errors.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { globToRegExp } from '../../http/glob.js';
import { passOn } from '../core/context.js';
import { ERRORS, sendError } from '../core/errors.js';
import { makeExpires, type StaticContext } from './context.js';
import { createEarlyHints } from './early-hints.js';
import { fail } from './fail.js';
import type { StaticOptions } from './files.js';
import { FileView } from './files.js';
import { targetPath } from './path.js';
import type { CacheRule } from './policy.js';
import { compilePolicy } from './policy.js';
import { serveResource } from './resources.js';

const ALLOW = 'GET, HEAD, OPTIONS';

export interface StaticHandler {
  (req: IncomingMessage, res: ServerResponse): void;
  readonly files: FileView;
}

export function createStaticHandler(o: {
  root: string;
  static: StaticOptions;
  cachePolicy: readonly CacheRule[];
  nowMs?: () => number;
  onError?: (err: unknown, req: IncomingMessage) => void;
  /** Hash manifests ignored or not writable, background hashes failed (files.ts). */
  onWarning?: (message: string) => void;
}): StaticHandler {
  const opts = o.static;
  const now = o.nowMs ?? Date.now;
  const files = new FileView({
    root: o.root,
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

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') {
      // Mounted in an app (createHandler): its own routes may answer other methods.
      if (passOn(req)) return;
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
      serveResource(ctx, req, res, cached, rawPath);
      return;
    }
    files.get(rawPath).then(
      (r) => serveResource(ctx, req, res, r, rawPath),
      (err) => fail(ctx, req, res, err),
    );
  };
  return Object.assign(handler, { files });
}
