// Listening and the graceful drain of a built server (plain HTTP, or TLS with HTTP/2 and HTTP/1.1).
import type { Server, ServerResponse } from 'node:http';
import type { ServerHttp2Session } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { ERRORS, sendError } from '../core/errors.js';
import { CLIENT_ERROR_LINGER_MS } from '../node/client-error.js';
import type { Entry } from '../node/entry.js';
import type { PipeliningTracker } from '../node/pipelining.js';
import type { Step } from '../node/types.js';
import type { Logger } from '../ops/log.js';
import type { Proxy as ReverseProxy } from '../proxy/handler.js';
import type { RedisPool } from '../redis/pool.js';
import type { AcmeForServer } from '../tls/acme-server.js';
import type { TlsListener, TlsServer } from '../tls/listener.js';
import { closeFeatures, drainFeatures, type NamedFeature, readyFeatures } from './features.js';
import type { ServerOptions } from './options.js';

/** The answer to requests still waiting when the shutdown deadline hits. */
const SHUTDOWN_HEADERS = { 'Retry-After': '5', Connection: 'close' } as const;

/** Closing a server's connections: HTTP/1.1 sockets and HTTP/2 sessions alike. */
export interface Connections {
  /** HTTP/1.1 connections with no request in progress close; HTTP/2 sessions get GOAWAY (RFC 9113
   *  §6.8) and close once their streams finish. */
  closeIdle(): void;
  /** Every connection closes now. */
  closeAll(): void;
}

/** node:http's own bookkeeping, or, on the HTTP/2 server, sessions and HTTP/1.1 sockets tracked here. */
export function connectionsOf(server: Server | TlsServer): Connections {
  if ('closeAllConnections' in server) {
    return { closeIdle: () => server.closeIdleConnections(), closeAll: () => server.closeAllConnections() };
  }
  const sessions = new Set<ServerHttp2Session>();
  const sockets = new Set<Socket>();
  server.on('session', (s: ServerHttp2Session) => {
    sessions.add(s);
    s.once('close', () => sessions.delete(s));
  });
  server.on('secureConnection', (socket: Socket & { alpnProtocol?: string | false }) => {
    if (socket.alpnProtocol === 'h2') return;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return {
    closeIdle: () => {
      // Node's HTTP/2 server has it (for its HTTP/1.1 connections) with allowHTTP1; its types miss it.
      (server as unknown as Pick<Server, 'closeIdleConnections'>).closeIdleConnections();
      for (const s of sessions) if (!s.closed) s.close();
    },
    closeAll: () => {
      for (const s of sessions) s.destroy();
      for (const socket of sockets) socket.destroy();
    },
  };
}

/** What listen and close act on: one per createGatehouse call. */
export interface ServerParts {
  readonly server: Server | TlsServer;
  readonly options: ServerOptions;
  readonly logger: Logger;
  readonly entry: Entry;
  /** The proxy's tunnels are cut when the drain runs out of time. */
  readonly proxy: ReverseProxy;
  /** Every feature the table made: drained when the shutdown begins, closed after the requests. */
  readonly features: readonly NamedFeature[];
  readonly pipelined: PipeliningTracker;
  readonly tls: TlsListener | undefined;
  /** Redis connections the features opened (closed last). */
  readonly redis: RedisPool;
  readonly connections: Connections;
  /** The plain-HTTP listener beside the TLS one (listen.httpPort), made once the HTTPS port is known. */
  readonly redirectListener: (httpsPort: number, before: readonly Step[]) => Server;
  /** What listen() starts beside the server, for close(): the ACME manager (acme-client is loaded
   *  only then) and the plain-HTTP listener. */
  readonly started: { acme?: AcmeForServer | undefined; plain?: Server | undefined };
}

/** Listens on port/host; resolves with the bound address. */
function listenOn(server: Server | TlsServer, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

const urlOf = (scheme: string, a: AddressInfo) =>
  `${scheme}://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;

/** A start that cannot get its certificates (the CLI prints the message and exits 1). */
function tlsStartError(reason: string): Error {
  return Object.assign(new Error(`tls: ${reason}`), { code: 'GATEHOUSE_TLS' });
}

/** The first certificates: the dev CA's leaf (made once, certs/dev-ca.ts) or the files. */
async function loadCertificates(p: ServerParts): Promise<void> {
  const tls = p.tls!;
  // ACME: the self-signed fallback at once, a stored certificate if there is one; orders and renewals
  // run in the background and never stop the start (a failure is logged and retried).
  const acmeOptions = p.options.tls?.acme;
  if (acmeOptions !== undefined && p.started.acme === undefined) {
    const { createAcmeForServer } = await import('../tls/acme-server.js');
    p.started.acme = createAcmeForServer(acmeOptions, {
      logger: p.logger,
      httpPort: p.options.listen.httpPort,
      setDefault: (pair, source) => tls.setDefault(pair, source),
    });
    await p.started.acme.start();
  }
  if (p.options.tls?.dev === true) {
    const { ensureDevCertificate } = await import('../../certs/dev-ca.js');
    const dev = await ensureDevCertificate({ names: p.options.tls.names }).catch((err: Error) => {
      throw tlsStartError(`the development certificate could not be made: ${err.message}`);
    });
    tls.setDefault({ cert: dev.certPem, key: dev.keyPem }, dev.caCertPath);
  }
  const error = await tls.reload();
  if (error !== undefined) throw tlsStartError(error);
  // A session ticket key file that cannot be used stops the start like a certificate would.
  await tls.startTickets().catch((err: Error) => {
    throw tlsStartError(err.message);
  });
}

/** Starts listening; a cache store that cannot be opened stops the start (like nginx with a bad
 *  proxy_cache_path), and so does a TLS certificate that cannot be loaded. */
export async function listen(
  p: ServerParts,
): Promise<{ url: string; host: string; port: number; httpUrl?: string | undefined }> {
  const { server, options } = p;
  await readyFeatures(p.features);
  if (p.tls !== undefined) await loadCertificates(p);
  const a = await listenOn(server, options.listen.port, options.listen.host);
  const url = urlOf(p.tls ? 'https' : 'http', a);
  let httpUrl: string | undefined;
  if (p.tls !== undefined && options.listen.httpPort !== undefined) {
    // RFC 8555 §8.3: HTTP-01 answers before the redirect to HTTPS.
    const plain = p.redirectListener(a.port, p.started.acme?.steps ?? []);
    p.started.plain = plain;
    try {
      httpUrl = urlOf('http', await listenOn(plain, options.listen.httpPort, options.listen.host));
    } catch (err) {
      server.close();
      throw err;
    }
  }
  return { url, host: a.address, port: a.port, httpUrl };
}

/** Stops accepting, lets in-flight requests finish (up to shutdownTimeoutMs), then closes; always
 *  resolves (see closeFeatures). */
export function close(p: ServerParts): Promise<void> {
  const { server, proxy } = p;
  const deadlineMs = performance.now() + p.options.limits.shutdownTimeoutMs;
  return new Promise<void>((resolve) => {
    p.entry.setClosing();
    // Drained first: readiness turns 503, and upgraded sockets (1001 Going Away) would keep
    // server.close() waiting.
    const draining = drainFeatures(p.features);
    p.tls?.close();
    p.started.acme?.close();
    const plain = p.started.plain;
    if (plain !== undefined) {
      plain.close();
      plain.closeIdleConnections();
      setTimeout(() => plain.closeAllConnections(), p.options.limits.shutdownTimeoutMs).unref();
    }
    if (!server.listening) {
      closeFeatures(draining, p, deadlineMs).then(resolve);
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
        p.connections.closeAll();
        proxy.closeTunnels();
      }, CLIENT_ERROR_LINGER_MS).unref();
    }, p.options.limits.shutdownTimeoutMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      closeFeatures(draining, p, deadlineMs).then(resolve);
    });
    p.connections.closeIdle();
    // Connections that finish a response while draining close instead of idling.
    server.on('request', (_req: unknown, res: ServerResponse) =>
      res.on('finish', () => p.connections.closeIdle()),
    );
  });
}
