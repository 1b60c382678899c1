// Failures while serving a file: a 500 before the head, a dropped connection after it.
import { ERRORS, sendError } from '../core/errors.js';
import type { ExchangeRequest, ResponseSink } from '../core/exchange.js';
import type { StaticContext } from './context.js';

export function fail(ctx: StaticContext, req: ExchangeRequest, res: ResponseSink, err: unknown): void {
  // A client that went away is not a server error (logged as 499 by the access log). One that leaves
  // mid-body is not even a failure: streamFile resolves false.
  if (res.destroyed) {
    res.destroy();
    return;
  }
  ctx.onError(err, req);
  if (!res.headersSent) sendError(req, res, ERRORS.internal);
  else res.destroy();
}
