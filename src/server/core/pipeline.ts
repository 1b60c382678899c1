// Request steps run in order before the final handler (types in context.ts).
import type { Final, RequestContext, Step } from './context.js';
import type { ExchangeRequest, ResponseSink } from './exchange.js';

/** Runs `steps` then `final`; a thrown or rejected step goes to `onError`. */
export function compilePipeline<Q extends ExchangeRequest, S extends ResponseSink>(
  steps: readonly Step<Q, S>[],
  final: Final<Q, S>,
  onError: (err: unknown, req: Q, res: S) => void,
): Final<Q, S> {
  if (steps.length === 0) {
    return (req, res, cx) => {
      try {
        final(req, res, cx);
      } catch (err) {
        onError(err, req, res);
      }
    };
  }
  const run = (req: Q, res: S, cx: RequestContext, from: number): void => {
    try {
      for (let i = from; i < steps.length; i++) {
        const r = steps[i]!(req, res, cx);
        if (r === true) return;
        if (r !== false) {
          r.then(
            (taken) => {
              // The client left while the step waited (an HTTP/2 stream reset): start nothing more.
              if (!taken && !res.destroyed) run(req, res, cx, i + 1);
            },
            (err) => onError(err, req, res),
          );
          return;
        }
      }
      final(req, res, cx);
    } catch (err) {
      onError(err, req, res);
    }
  };
  return (req, res, cx) => run(req, res, cx, 0);
}
