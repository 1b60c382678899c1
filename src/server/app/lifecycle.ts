// Listening and the graceful drain of a built server.
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CLIENT_ERROR_LINGER_MS } from '../client-error.js';
import type { Entry } from '../entry.js';
import { ERRORS, sendError } from '../errors.js';
import type { Logger } from '../log.js';
import type { ServerOptions } from '../options.js';
import type { PipeliningTracker } from '../pipelining.js';
import type { Proxy as ReverseProxy } from '../proxy/handler.js';
import type { WebSocketEndpoints } from '../websocket.js';

/** The answer to requests still waiting when the shutdown deadline hits. */
const SHUTDOWN_HEADERS = { 'Retry-After': '5', Connection: 'close' } as const;

/** What listen and close act on: one per createGatehouse call. */
export interface ServerParts {
  readonly server: Server;
  readonly options: ServerOptions;
  readonly logger: Logger;
  readonly entry: Entry;
  readonly proxy: ReverseProxy;
  readonly websocket: WebSocketEndpoints;
  readonly pipelined: PipeliningTracker;
}

/** Starts listening; a cache store that cannot be opened stops the start (like nginx with a bad
 *  proxy_cache_path). */
export function listen(p: ServerParts): Promise<{ url: string; host: string; port: number }> {
  const { server, options } = p;
  return p.proxy.ready().then(
    () =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.listen.port, options.listen.host, () => {
          server.off('error', reject);
          const a = server.address() as AddressInfo;
          const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
          resolve({ url: `http://${host}:${a.port}`, host: a.address, port: a.port });
        });
      }),
  );
}

/**
 * Closes what outlives the server (WebSocket endpoints, the proxy's pools and cache stores). A part
 * whose close rejects is logged and does not stop the others or the shutdown: close() always resolves.
 */
async function closeParts(p: ServerParts, wsClosed: Promise<void>): Promise<void> {
  const parts = ['websocket', 'proxy'] as const;
  const results = await Promise.allSettled([wsClosed, p.proxy.close()]);
  for (const [i, r] of results.entries()) {
    if (r.status === 'rejected') p.logger.error({ err: r.reason, part: parts[i] }, 'shutdown: close failed');
  }
  p.logger.flush?.();
}

/** Stops accepting, lets in-flight requests finish (up to shutdownTimeoutMs), then closes; always
 *  resolves (see closeParts). */
export function close(p: ServerParts): Promise<void> {
  const { server, proxy } = p;
  return new Promise<void>((resolve) => {
    p.entry.setClosing();
    // WebSockets first: upgraded sockets would keep server.close() waiting (1001 Going Away).
    const wsClosed = p.websocket.close();
    // Handled now, reported by closeParts: a rejection while the server drains is not unhandled.
    wsClosed.catch(() => {});
    if (!server.listening) {
      closeParts(p, wsClosed).then(resolve);
      return;
    }
    const timer = setTimeout(() => {
      // Requests not started by the deadline: 503 + Retry-After + Connection: close (RFC 9110
      // §15.6.4) instead of a reset; started ones are cut. Sockets close after a short linger.
      for (const res of p.pipelined.outstanding()) {
        if (res.headersSent) res.destroy();
        else
          sendError(
            res.req,
            res,
            ERRORS.serviceUnavailable,
            'The server is shutting down.',
            SHUTDOWN_HEADERS,
          );
      }
      setTimeout(() => {
        server.closeAllConnections();
        proxy.closeTunnels();
      }, CLIENT_ERROR_LINGER_MS).unref();
    }, p.options.limits.shutdownTimeoutMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      closeParts(p, wsClosed).then(resolve);
    });
    server.closeIdleConnections();
    // Connections that finish a response while draining close instead of idling.
    server.on('request', (_req, res: ServerResponse) =>
      res.on('finish', () => server.closeIdleConnections()),
    );
  });
}
