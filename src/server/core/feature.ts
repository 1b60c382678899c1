// The one plug-in shape. Every feature (static files, the proxy, WebSocket endpoints, routes, and the
// policy steps: headers, CORS, limits, auth, redirects, JSONP, health, metrics) is made by a
// create(options, kernel) that returns a Feature; the composition root (app/features.ts) holds the
// ordered table of them and is the only place that knows them all.
import type { Final, Step, TunnelBase } from './context.js';
import type { TunnelRoute } from './entry.js';
import type { ExchangeRequest, ResponseSink } from './exchange.js';

export interface Feature<
  Q extends ExchangeRequest = ExchangeRequest,
  S extends ResponseSink = ResponseSink,
  T extends TunnelBase = TunnelBase,
> {
  /** A step every request passes, WebSocket handshakes included (the policy steps). */
  readonly gate?: Step<Q, S> | undefined;
  /** A step that answers ordinary requests it claims (routes, JSONP, the proxy). */
  readonly answer?: Step<Q, S> | undefined;
  /** The handler of what no step took (the static files); one per table. */
  readonly final?: Final<Q, S> | undefined;
  /** The WebSocket handshakes it takes after the gate. */
  readonly tunnel?: TunnelRoute<Q, S, T> | undefined;
  /** Resolves once it can answer (a cache store opened); a rejection stops the start. */
  ready?(): Promise<void>;
  /**
   * The shutdown began: stop taking new work (readiness turns 503, WebSockets get 1001) while the
   * requests in progress finish; the promise settles once what it closed is closed.
   */
  drain?(): void | Promise<void>;
  /** Closes what outlives the requests (connections, timers, watchers), once they are done. */
  close?(): void | Promise<void>;
  /** Figures for the metrics, read when scraped. */
  stats?(): unknown;
  /**
   * Memory pressure (ops/pressure.ts): drop `fraction` (0-1) of what it keeps in memory only to be
   * faster (cached files, cached responses), least recently used first; returns the bytes dropped.
   */
  shed?(fraction: number): number;
}
