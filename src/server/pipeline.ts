// Request steps run in order before the final handler. A step returns true when it has taken the
// request (answered it or is answering it); false passes it on. Sync steps cost no promise.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from './log.js';

export type Step = (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;
export type Final = (req: IncomingMessage, res: ServerResponse) => void;

/** What every step factory may use. */
export interface StepContext {
  readonly logger: Logger;
  /** The client address that counts for this request (the socket peer, or X-Forwarded-For /
   *  Forwarded from a trusted proxy). */
  readonly clientAddress: (req: IncomingMessage) => string;
}

/** Runs `steps` then `final`; a thrown or rejected step goes to `onError`. */
export function compilePipeline(
  steps: readonly Step[],
  final: Final,
  onError: (err: unknown, req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  if (steps.length === 0) {
    return (req, res) => {
      try {
        final(req, res);
      } catch (err) {
        onError(err, req, res);
      }
    };
  }
  const run = (req: IncomingMessage, res: ServerResponse, from: number): void => {
    try {
      for (let i = from; i < steps.length; i++) {
        const r = steps[i]!(req, res);
        if (r === true) return;
        if (r !== false) {
          r.then(
            (taken) => {
              if (!taken) run(req, res, i + 1);
            },
            (err) => onError(err, req, res),
          );
          return;
        }
      }
      final(req, res);
    } catch (err) {
      onError(err, req, res);
    }
  };
  return (req, res) => run(req, res, 0);
}
