// Parts of the pipeline on a server of the caller's own: the kernel's entry (the Host and target
// check, the request context) around a few steps and a final handler, with no feature table.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createEntry } from '../core/entry.js';
import { ERRORS, sendError } from '../core/errors.js';
import { refuseBadHead } from '../core/request-head.js';
import { nodeEntry } from '../node/entry.js';
import type { Final, Step } from '../node/types.js';
import {
  createStaticHandler as createStaticFinal,
  type StaticHandler,
  type StaticHandlerOptions,
} from '../static/handler.js';
import { DEFAULT_MAX_URL_BYTES } from '../steps/limits-options.js';

/** A node:http 'request' listener. */
export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/** A thrown step: 500 without details. */
function answer500(_err: unknown, req: IncomingMessage, res: ServerResponse): void {
  sendError(req, res, ERRORS.internal, 'The server failed to answer this request.');
}

/** What serveSteps may be told. */
export interface ServeStepsOptions {
  readonly maxUrlBytes?: number;
  /** false: no Host and request-target check, for a test of one step's own guard against a bad target. */
  readonly checkTarget?: false;
}

/** `steps` then `final` behind the kernel's entry, as a 'request' listener. */
export function serveSteps(
  steps: readonly Step[],
  final: Final,
  onError: (err: unknown, req: IncomingMessage, res: ServerResponse) => void = answer500,
  o: ServeStepsOptions = {},
): RequestListener {
  return nodeEntry(
    createEntry({
      maxUrlBytes: o.maxUrlBytes ?? DEFAULT_MAX_URL_BYTES,
      gate: steps,
      handlers: [],
      final,
      onError,
      logAccess: undefined,
      // RFC 9112 §3.2: Host and target validated first, as on every Gatehouse listener.
      checkTarget: o.checkTarget === false ? undefined : refuseBadHead,
      tunnels: [],
    }),
  ).onRequest;
}

/** The static handler alone, as a 'request' listener for a server of your own. */
export interface StandaloneStaticHandler extends RequestListener {
  readonly files: StaticHandler['files'];
  readonly serveFileAt: StaticHandler['serveFileAt'];
  /** The handler as the last step of a pipeline (serveSteps). */
  readonly final: StaticHandler;
}

export function createStaticHandler(o: StaticHandlerOptions): StandaloneStaticHandler {
  const final = createStaticFinal(o);
  return Object.assign(serveSteps([], final), {
    files: final.files,
    serveFileAt: final.serveFileAt,
    final,
  });
}
