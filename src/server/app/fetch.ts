// The pipeline behind the Fetch-API transport (fetch/entry.ts): the same table of features and the
// same kernel entry as createHandler, driven by `fetch(request, info)` instead of node:http's events.
// The features that still belong to the Node transport (TLS and the listener's limits, which the host
// owns) are refused here, by name, rather than answering differently. The reverse proxy runs here on
// the runtime's fetch (Bun) or undici (Node, Deno). WebSocket endpoints need a host that switches
// handshakes (`upgrades`: listenNative's Bun.serve and Deno.serve); a bare `export default { fetch }`
// cannot.

import type { MountFacts, TunnelBase } from '../core/context.js';
import type { Entry } from '../core/entry.js';
import {
  type ConnectionInfo,
  type FetchListener,
  fetchEntry,
  type MountedFetchListener,
  mountedFetchEntry,
} from '../fetch/entry.js';
import type { FetchRequest } from '../fetch/request.js';
import type { FetchSink } from '../fetch/sink.js';
import type { Logger } from '../ops/log.js';
import type { StaticHandler } from '../static/handler.js';
import { closeFeatures, drainFeatures, startFeatures } from './features.js';
import { buildCore, type GatehouseDeps } from './handler.js';
import type { ServerOptions } from './options.js';

/** Gatehouse as a `fetch(request)` handler (Bun.serve, Deno.serve, `export default { fetch }`). */
export interface FetchHandler {
  /** A Request in, its Response out; `info.remoteAddress` is the peer (rate limits, logs, trustProxy). */
  fetch(request: Request, info?: ConnectionInfo): Promise<Response>;
  /**
   * As `fetch`, for a host that takes a Response or a promise of one (Bun.serve, Deno.serve): a Response
   * made before it returns (a cached file, a 304) comes back as it is, saving the host a turn of the loop.
   */
  serve(request: Request, info?: ConnectionInfo): Response | Promise<Response>;
  /**
   * As mounted in an app: undefined when nothing here claims the request (a path with no file, a method
   * the files do not answer), for the app's next handler. `mount`: the path the app routed it at, already
   * stripped from the Request's URL.
   */
  handle(request: Request, info?: ConnectionInfo, mount?: MountFacts): Promise<Response | undefined>;
  /** Resolves once every feature can answer (a rejection: one cannot). */
  ready(): Promise<void>;
  /** Stops taking requests (Connection: close), then closes what outlives them. */
  close(): Promise<void>;
  readonly options: ServerOptions;
  readonly logger: Logger;
  /** The static files' handler (its file view: assetUrl, hashes), as createHandler's. */
  readonly static: StaticHandler;
}

/** What createFetchHandler takes besides the options. */
export interface FetchDeps extends GatehouseDeps {
  /**
   * The host switches WebSocket handshakes: it passes `info.upgradeWebSocket` with each request
   * (fetch/hosts.ts listenNative does, for Bun.serve and Deno.serve). Without it, `websocket` is refused.
   */
  readonly upgrades?: boolean | undefined;
}

/** What the fetch face cannot do yet, by config key, with the reason a user reads. */
export function fetchFaceRefusals(
  o: ServerOptions,
  host: { readonly upgrades?: boolean | undefined } = {},
): string[] {
  const out: string[] = [];
  if (o.websocket.length > 0 && host.upgrades !== true)
    out.push(
      'websocket: WebSocket endpoints need a host that switches handshakes: gatehouse serve on Node, Bun or Deno, createNativeServer, or gatehouse-http/node',
    );
  for (const [i, e] of o.websocket.entries())
    if (e.mode === 'custom')
      out.push(
        `websocket[${i}]: mode "custom" runs on the Node transport only (its handler takes a ws socket)`,
      );
  return out;
}

export function createFetchHandler(options: ServerOptions, deps: FetchDeps = {}): FetchHandler {
  const refused = fetchFaceRefusals(options, deps);
  if (refused.length > 0) throw new Error(refused.join('; '));
  const core = buildCore(options, deps);
  // The features on this face read and write only the exchange (core/exchange.ts), which FetchRequest
  // and FetchSink implement; the Node-typed ones are refused above.
  const kernel = core.kernel as unknown as Entry<FetchRequest, FetchSink, TunnelBase>;
  const listener: FetchListener = fetchEntry(kernel);
  const mounted: MountedFetchListener = mountedFetchEntry(kernel);
  const started = startFeatures(core.features, core.logger);
  /** Requests that arrive before the features started wait for the start. */
  const whenStarted = <T>(run: () => T | Promise<T>): T | Promise<T> =>
    started.open ? run() : started.settled.then(run);
  return {
    fetch: (request, info) => {
      const r = whenStarted(() => listener(request, info));
      return r instanceof Response ? Promise.resolve(r) : r;
    },
    serve: (request, info) => whenStarted(() => listener(request, info)),
    handle: (request, info, mount) =>
      whenStarted(() => mounted(request, info, mount)) as Promise<Response | undefined>,
    ready: () => started.ready(),
    async close() {
      core.kernel.setClosing();
      await closeFeatures(
        drainFeatures(core.features),
        core,
        performance.now() + options.limits.shutdownTimeoutMs,
      );
    },
    options,
    logger: core.logger,
    static: core.static,
  };
}
