// The one way in. Every request, and every WebSocket handshake a transport hands over, enters the
// kernel here and reaches a handler only through the ordered steps (DESIGN: "Request path (one way
// in)"). The entry checks the request-target and Host first (RFC 9112 §3.2), builds the request
// context once, then runs the gate steps and the handlers.
//
// - A handshake for a path that has a tunnel (an endpoint, a proxied prefix) comes with a response
//   bound to its connection, so every step answers it as it answers any request (401, 403, 429,
//   redirects, all through sendError and the access log). Only after the gate steps does the tunnel
//   handler see it, at one fixed point (the handoff after the gate).
// - What a transport does with any other Upgrade (RFC 9110 §7.8: ignore it) is the transport's
//   (node/entry.ts on Node).

import { targetPath } from '../../http/request-path.js';
import type { Final, Mounted, RequestContext, Step, TunnelBase, TunnelHandler } from './context.js';
import { ERRORS, type ErrorEntry, sendError } from './errors.js';
import type { ExchangeRequest, FieldValue, ResponseSink } from './exchange.js';

/** A tunnel target: which handshakes are its (by path), and the handler that takes them. */
export interface TunnelRoute<Q extends ExchangeRequest, S extends ResponseSink, T extends TunnelBase> {
  readonly owns: (req: Q) => boolean;
  readonly handle: TunnelHandler<Q, S, T>;
}

/** A request the entry refuses before any step (the request-target / Host check). */
export interface EntryRefusal {
  readonly entry: ErrorEntry;
  readonly detail: string;
  /** Extra fields (e.g. Connection: close after a malformed head). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

export interface EntryOptions<Q extends ExchangeRequest, S extends ResponseSink, T extends TunnelBase> {
  readonly maxUrlBytes: number;
  /** Steps every request passes, handshakes included: header rules, CORS, rate limit, auth,
   *  redirects. */
  readonly gate: readonly Step<Q, S>[];
  /** Steps that answer ordinary requests (routes, JSONP, proxy), then the final handler (static). */
  readonly handlers: readonly Step<Q, S>[];
  readonly final: Final<Q, S>;
  /** WebSocket tunnels, tried in order after the gate. */
  readonly tunnels: readonly TunnelRoute<Q, S, T>[];
  readonly onError: (err: unknown, req: Q, res: S) => void;
  /** Access log hook (log.ts accessLogger), called once per request before any step. */
  readonly logAccess: ((req: Q, res: S) => void) | undefined;
  /**
   * The request-target and Host check: runs first, for requests and handshakes alike, and may
   * rewrite req.url / req.headers.host to their canonical form. A refusal is sent as is (400).
   */
  readonly checkTarget?: ((req: Q) => EntryRefusal | undefined) | undefined;
}

/** The kernel's entry, which a transport drives. */
export interface Entry<Q extends ExchangeRequest, S extends ResponseSink, T extends TunnelBase> {
  /** An ordinary request; `mounted`: what the app that mounted Gatehouse brings with it. */
  readonly request: (req: Q, res: S, mounted?: Mounted) => void;
  /** A handshake the transport bound to `res`, for a path `owns` accepted. */
  readonly handshake: (req: Q, res: S, tunnel: T) => void;
  /** A WebSocket handshake for a path with a tunnel (chosen again after the steps). */
  readonly owns: (req: Q) => boolean;
  /** Draining: responses carry Connection: close. */
  readonly setClosing: () => void;
}

/** True when the Upgrade field offers `websocket` (RFC 9110 §7.8: a list of protocols). */
export function offersWebSocket(upgrade: FieldValue): boolean {
  if (typeof upgrade !== 'string') return false;
  for (const p of upgrade.split(',')) if (p.trim().toLowerCase() === 'websocket') return true;
  return false;
}

/** The entry of one pipeline. */
export function createEntry<Q extends ExchangeRequest, S extends ResponseSink, T extends TunnelBase>(
  o: EntryOptions<Q, S, T>,
): Entry<Q, S, T> {
  const { maxUrlBytes, logAccess, checkTarget } = o;
  /** Ordinary requests: the gate steps, then the handlers, in one loop. */
  const requests = compilePipeline([...o.gate, ...o.handlers], o.final, o.onError);
  const handlers = compilePipeline(o.handlers, o.final, o.onError);
  const tunnels = new WeakMap<Q, T>();
  /**
   * Handshakes: the same gate steps, then the fixed handoff point: the tunnel that owns the (possibly
   * canonicalised) target; one that no tunnel owns any more is served like any request (Upgrade
   * ignored, RFC 9110 §7.8) on the bound response.
   */
  const handshakes = compilePipeline(
    o.gate,
    (req, res, cx) => {
      const tunnel = tunnels.get(req);
      if (tunnel !== undefined) {
        const route = o.tunnels.find((t) => t.owns(req));
        if (route?.handle(req, res, tunnel, cx)) return;
      }
      handlers(req, res, cx);
    },
    o.onError,
  );
  let closing = false;

  const enter = (req: Q, res: S, run: Final<Q, S>, mounted: Mounted | undefined): void => {
    if (logAccess) logAccess(req, res);
    if (closing) res.setHeader('Connection', 'close');
    // The request-target / Host validation runs here, first, for requests and handshakes alike.
    const bad = checkTarget?.(req);
    if (bad !== undefined) {
      sendError(req, res, bad.entry, bad.detail, bad.headers);
      return;
    }
    const url = req.url!;
    // RFC 9110 §15.5.15: 414 for a target longer than we are willing to interpret.
    if (url.length > maxUrlBytes) {
      sendError(req, res, ERRORS.uriTooLong, `The request target is longer than ${maxUrlBytes} bytes.`);
      return;
    }
    const host = req.headers.host;
    const cx = createRequestContext(req.method!, url, typeof host === 'string' ? host : undefined, mounted);
    run(req, res, cx);
  };

  return {
    request: (req, res, mounted) => enter(req, res, requests, mounted),
    handshake: (req, res, tunnel) => {
      tunnels.set(req, tunnel);
      enter(req, res, handshakes, undefined);
    },
    owns: (req) => offersWebSocket(req.headers.upgrade) && o.tunnels.some((t) => t.owns(req)),
    setClosing: () => {
      closing = true;
    },
  };
}

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

/** The context of a request whose target the entry accepted. */
export function createRequestContext(
  method: string,
  url: string,
  authority: string | undefined,
  mounted: Mounted | undefined,
): RequestContext {
  const q = url.indexOf('?');
  return {
    method,
    // The entry made the target origin-form; a pipeline run without that check may see another form.
    path: url.charCodeAt(0) === 47 ? (q === -1 ? url : url.slice(0, q)) : (targetPath(url) ?? url),
    query: q === -1 ? '' : url.slice(q),
    authority,
    facts: {},
    mount: mounted?.mount,
    next: mounted?.passOn,
    resolved: undefined,
  };
}
