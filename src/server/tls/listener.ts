// The TLS listener: node:http2's secure server with HTTP/1.1 beside it (ALPN h2, http/1.1), or
// node:https when HTTP/2 is off. HTTP/1.1 connections on it run through Node's HTTP/1 server code, so
// the limits below are set as that code reads them. Certificates come from the store: the default
// one by setSecureContext (new connections only), the others by SNI; files are watched and SIGHUP
// (in the CLI) calls reload(). Every context carries the same suites and options (ciphers.ts).
import { constants as cryptoConstants } from 'node:crypto';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { Logger } from '../ops/log.js';
import type { RedisPool } from '../redis/pool.js';
import { http1ServerOptions } from '../steps/limits.js';
import { HTTP2_DEFAULTS, type LimitsOptions } from '../steps/limits-options.js';
import type { CertificateStore, PemPair } from './certificates.js';
import { serveStreams } from './h2-exchange.js';
import { type H2Stats, SessionGuard } from './h2-sessions.js';
import { SESSION_TICKET_DEFAULTS, type TlsOptions } from './options.js';
import { reloadCertificates, watchFiles } from './reload.js';
import { createTicketKeys, SESSION_ID_CONTEXT, type TicketKeys } from './session-tickets.js';

// The response classes differ per server; handlers only see IncomingMessage/ServerResponse-like ones.
// biome-ignore lint/suspicious/noExplicitAny: the four class parameters of Node's generic servers
export type TlsServer = Http2SecureServer<any, any, any, any> | HttpsServer;

export interface TlsListener {
  readonly server: TlsServer;
  /** Re-reads the certificate files; a bad pair is logged with its file and the old ones stay. */
  reload(): Promise<string | undefined>;
  /** A pair from memory (ACME, the dev CA) as the default certificate. */
  setDefault(pair: PemPair, source: string): void;
  /** Loads the session ticket secret and sets the first key (before listening). */
  startTickets(): Promise<void>;
  /** Stops the file watchers and the ticket key rotation. */
  close(): void;
  /** The HTTP/2 session guard's counts (undefined when HTTP/2 is off), for the metrics. */
  http2Stats(): H2Stats | undefined;
}

export function createTlsListener(o: {
  tls: TlsOptions;
  store: CertificateStore;
  limits: LimitsOptions;
  logger: Logger;
  redis: RedisPool;
}): TlsListener {
  const { store, logger } = o;
  const ticketOptions = o.tls.sessionTickets ?? SESSION_TICKET_DEFAULTS;
  // RFC 8446 §4.6.1: tickets from a key every worker and instance derives (session-tickets.ts).
  // setTicketKeys changes only the server's default context; setSecureContext (a certificate
  // reload) would make a new one with a random key, so the key in use is passed along there.
  let tickets: TicketKeys | undefined;
  const secureOptions = (pair: PemPair | undefined) => ({
    ...store.contextOptions,
    ...(ticketOptions.enabled
      ? {
          sessionIdContext: SESSION_ID_CONTEXT,
          sessionTimeout: ticketOptions.rotateSecs,
          ticketKeys: tickets?.current(),
        }
      : { secureOptions: store.contextOptions.secureOptions | SSL_OP_NO_TICKET }),
    cert: pair?.cert,
    key: pair?.key,
  });
  const common = {
    ...secureOptions(store.defaultPair),
    // A handshake gets the time a request head gets: Node's own 120 s let a few silent sockets (or
    // 6 bytes of a ClientHello) hold every place under limits.maxConnections. A deadline from accept,
    // not an idle timer: trickled bytes do not extend it.
    handshakeTimeout: o.limits.headersTimeoutMs,
    // RFC 6066 §3: the name's own certificate, else (undefined) the default one.
    SNICallback: (name: string, cb: (err: Error | null, ctx?: import('node:tls').SecureContext) => void) =>
      cb(null, store.forName(name)),
  };
  const http1 = http1ServerOptions(o.limits);
  const limits = o.limits;
  const http2 = { ...HTTP2_DEFAULTS, ...limits.http2 };
  const server: TlsServer = o.tls.http2
    ? // Node's HTTP/1 code reads these off the server object for the HTTP/2 server's HTTP/1.1 connections.
      Object.assign(
        createSecureServer({
          ...common,
          allowHTTP1: true,
          // RFC 9113 §6.5.2: the header block bound matches the HTTP/1.1 one.
          maxSendHeaderBlockLength: 64 * 1024,
          settings: {
            maxHeaderListSize: limits.maxHeaderBytes,
            maxConcurrentStreams: http2.maxConcurrentStreams,
          },
          maxSessionInvalidFrames: 100,
        }),
        http1,
      )
    : createHttpsServer({ ...common, ...http1 });
  // HTTP/2 streams reach the 'request' listeners as lean pairs (h2-exchange.ts), not Node's compat ones.
  // The session guard closes idle sessions, resets stalled streams, and meets rapid resets and
  // refused header blocks with GOAWAY (h2-sessions.ts).
  const guard = o.tls.http2
    ? new SessionGuard({
        http2,
        keepAliveTimeoutMs: limits.keepAliveTimeoutMs,
        headersTimeoutMs: limits.headersTimeoutMs,
        sendTimeoutMs: limits.sendTimeoutMs,
      })
    : undefined;
  if (guard !== undefined) serveStreams(server as Http2SecureServer, guard);
  if (ticketOptions.enabled) {
    tickets = createTicketKeys(ticketOptions, {
      apply: (key) => server.setTicketKeys(key),
      logger,
      redis: o.redis,
    });
    // node:cluster hands each worker the first worker's ticket key as it listens, once (the primary
    // keeps it): a SIGHUP replacement would get the key of a window long past. The current key goes
    // back on ('listening' comes after that hand-over).
    server.on('listening', () => {
      const key = tickets?.current();
      if (key !== undefined) server.setTicketKeys(key);
    });
  }

  const applyDefault = () => {
    const pair = store.defaultPair;
    if (pair !== undefined) server.setSecureContext(secureOptions(pair));
  };
  const reload = () => reloadCertificates(store, logger, applyDefault);
  const watchers = o.tls.watch ? watchFiles(store.files, reload) : [];
  return {
    server,
    reload,
    setDefault(pair, source) {
      store.setDefault(pair, source);
      applyDefault();
    },
    startTickets: async () => tickets?.start(),
    close() {
      for (const w of watchers) w.close();
      tickets?.close();
    },
    http2Stats: () => guard?.stats,
  };
}

const { SSL_OP_NO_TICKET } = cryptoConstants;
