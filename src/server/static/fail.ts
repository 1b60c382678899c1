// Failures while serving a file: a 500 before the head, a dropped connection after it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ERRORS, sendError } from '../core/errors.js';
import type { StaticContext } from './context.js';

export function fail(ctx: StaticContext, req: IncomingMessage, res: ServerResponse, err: unknown): void {
  // A client that went away mid-body is not a server error (logged as 499 by the access log).
  if (res.destroyed || (err as NodeJS.ErrnoException)?.code === 'ERR_STREAM_PREMATURE_CLOSE') {
    res.destroy();
    return;
  }
  ctx.onError(err, req);
  if (!res.headersSent) sendError(req, res, ERRORS.internal);
  else res.destroy();
}
