// The server: node:http (or, with tls, node:http2's secure server with HTTP/1.1 beside it) plus the
// handlers, listening and graceful drain. The features and their order are app/features.ts; listen and the
// drain are app/lifecycle.ts; the TLS listener is tls/listener.ts.
import { createServer, type Server } from 'node:http';
import { handleClientError } from '../node/client-error.js';
import { limitPipelining } from '../node/pipelining.js';
import type { Logger } from '../ops/log.js';
import type { StaticHandler } from '../static/handler.js';
import { http1ServerOptions } from '../steps/limits.js';
import { createCertificateStore } from '../tls/certificates.js';
import { createTlsListener, type TlsListener, type TlsServer } from '../tls/listener.js';
import { internalErrorHandler } from './features.js';
import { buildCore, type GatehouseDeps } from './handler.js';
import { close, connectionsOf, listen, type ServerParts } from './lifecycle.js';
import { http3Refusal } from './native.js';
import type { ServerOptions } from './options.js';
import { createRedirectListener } from './redirect-listener.js';

export type { GatehouseDeps } from './handler.js';

export interface Gatehouse {
  /** node:http's server; with tls, node:http2's secure server (HTTP/1.1 too) or node:https's. */
  readonly server: Server | TlsServer;
  /** With tls: certificate reloads (SIGHUP) and in-memory certificates. */
  readonly tls: TlsListener | undefined;
  readonly options: ServerOptions;
  readonly logger: Logger;
  readonly static: StaticHandler;
  /** Starts listening; resolves with the URL it listens on (and the plain-HTTP one with httpPort). */
  listen(): Promise<{ url: string; host: string; port: number; httpUrl?: string | undefined }>;
  /** Stops accepting, lets in-flight requests finish (up to shutdownTimeoutMs), then closes. */
  close(): Promise<void>;
}

export function createGatehouse(options: ServerOptions, deps: GatehouseDeps = {}): Gatehouse {
  const limits = options.limits;
  const h3 = http3Refusal(options, 'node');
  if (h3 !== undefined) throw new Error(h3);
  // The TLS listener is made after the core (it needs its Redis for shared ticket keys); the metrics
  // read its HTTP/2 figures only when scraped.
  let tls: TlsListener | undefined;
  // The pipeline itself: parts, steps and the one entry (app/handler.ts), also what createHandler mounts.
  const core = buildCore(options, deps, { http2Stats: () => tls?.http2Stats() });
  const { logger, entry, proxy, redis, features } = core;
  tls = options.tls
    ? createTlsListener({
        tls: options.tls,
        store: createCertificateStore(options.tls),
        limits,
        logger,
        redis,
      })
    : undefined;
  const server = tls?.server ?? createServer(http1ServerOptions(limits));
  // At most limits.maxPipelinedRequests handled and unanswered requests per connection; the rest wait
  // without a handler and the socket is not read beyond them (pipelining.ts).
  const pipelined = limitPipelining(
    server,
    limits.maxPipelinedRequests,
    entry.onRequest,
    limits.strictPipelining === true,
    tls ? 'secureConnection' : 'connection',
  );
  // HTTP/2 streams arrive as Node's compatibility request/response, which the handlers use through
  // the members HTTP/1.1's have (tls/listener.ts adapts the ones that differ).
  server.on('request', pipelined.onRequest as (req: unknown, res: unknown) => void);
  server.on('upgrade', entry.onUpgrade);
  // 400/408/413/431 from Node's parser and timers, as problem+json (RFC 9457).
  server.on('clientError', handleClientError);
  // Upgraded sockets stay counted until they close: handshakes count against the limit too.
  if (limits.maxConnections > 0) server.maxConnections = limits.maxConnections;

  const parts: ServerParts = {
    server,
    options,
    logger,
    entry,
    proxy,
    features,
    pipelined,
    tls,
    redis,
    connections: connectionsOf(server),
    redirectListener: (httpsPort, before) =>
      createRedirectListener(options, { logger, httpsPort, before, onError: internalErrorHandler(logger) }),
    started: {},
  };
  return {
    server,
    tls,
    options,
    logger,
    static: core.static,
    listen: () => listen(parts),
    close: () => close(parts),
  };
}
