// Request steps run in order before the final handler (types in context.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Final, Step } from './context.js';

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
              // The client left while the step waited (an HTTP/2 stream reset): start nothing more.
              if (!taken && !res.destroyed) run(req, res, i + 1);
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
