// The plain-HTTP listener beside an HTTPS one (listen.httpPort): ACME HTTP-01 answers first
// (RFC 8555 §8.3), then every other request gets 308 to https:// (RFC 9110 §15.4.9). It enters
// through the same entry as the main listener, so Host and target checks, limits and the access log
// are the same; a bad or unlisted Host gets 400, never a redirect to it. On Bun and Deno the same
// entry is driven by the runtime's own server (createRedirectFetchListener, app/native.ts).
import { createServer, type Server } from 'node:http';
import type { TunnelBase } from '../core/context.js';
import { createEntry, type Entry } from '../core/entry.js';
import { ERRORS, sendError } from '../core/errors.js';
import { refuseBadHead } from '../core/request-head.js';
import { type FetchListener, type FetchRequest, type FetchSink, fetchEntry } from '../fetch/entry.js';
import { handleClientError } from '../node/client-error.js';
import { nodeEntry } from '../node/entry.js';
import type { Step } from '../node/types.js';
import { accessLogger, type Logger } from '../ops/log.js';
import { createHttpsRedirect } from '../steps/https-redirect.js';
import { http1ServerOptions } from '../steps/limits.js';
import { internalErrorHandler } from './features.js';
import type { ServerOptions } from './options.js';

/** What the redirect listener is made from besides the options. */
interface RedirectListenerParts {
  logger: Logger;
  /** The HTTPS port the Location points at (the main listener's, once it listens). */
  httpsPort: number;
  /** Steps before the redirect (the ACME challenge answer). */
  before: readonly Step[];
  onError: (
    err: unknown,
    req: import('node:http').IncomingMessage,
    res: import('node:http').ServerResponse,
  ) => void;
}

export function createRedirectListener(options: ServerOptions, o: RedirectListenerParts): Server {
  const server = createServer(http1ServerOptions(options.limits));
  const entry = nodeEntry(redirectEntry(options, o), server);
  server.on('request', entry.onRequest);
  server.on('upgrade', entry.onUpgrade);
  server.on('clientError', handleClientError);
  return server;
}

/** The redirect listener's entry: the ACME answer (when given), then 308 to https://. */
function redirectEntry(options: ServerOptions, o: RedirectListenerParts) {
  const redirect = createHttpsRedirect({
    httpsPort: o.httpsPort,
    hosts: options.listen.redirectToHttps?.hosts,
  });
  return createEntry({
    maxUrlBytes: options.limits.maxUrlBytes,
    gate: [...o.before, redirect],
    handlers: [],
    final: (req, res) => sendError(req, res, ERRORS.notFound, 'Not found.'),
    onError: o.onError,
    logAccess: accessLogger(o.logger),
    checkTarget: refuseBadHead,
    // No tunnels: an Upgrade here is ignored and the request redirected like any other.
    tunnels: [],
  });
}

/** The same listener's handler for a runtime's own server (Bun.serve, Deno.serve): no ACME there. */
export function createRedirectFetchListener(
  options: ServerOptions,
  o: { logger: Logger; httpsPort: number },
): FetchListener {
  const entry = redirectEntry(options, {
    ...o,
    before: [],
    onError: internalErrorHandler(o.logger),
  });
  // The redirect step reads and writes only the exchange (core/exchange.ts), as the fetch face's do.
  return fetchEntry(entry as unknown as Entry<FetchRequest, FetchSink, TunnelBase>);
}
