// What the TLS listener runs on (src/config/tls.ts validates user input into this shape, with the
// defaults and bounds below and ciphers.ts). File paths are absolute by the time they get here
// (relative ones are resolved against the config file).
import type { RedisOptions } from '../redis/connection.js';

/** A certificate chain and its private key, as PEM files. */
export interface CertFiles {
  /** PEM: the leaf first, then the intermediates (the chain as served). */
  cert: string;
  /** PEM private key of the leaf. */
  key: string;
}

/** ACME (RFC 8555): certificates ordered and renewed from a directory such as Let's Encrypt's. */
export interface AcmeOptions {
  /** Account contact (mailto:). */
  email: string;
  /** Names on the certificate; the HTTP-01 challenge for each is answered on listen.httpPort. */
  domains: string[];
  /** The directory URL (RFC 8555 §7.1.1). */
  directory: string;
  /** Folder holding the account key, certificates and the ordering lock (0600 files). */
  storage: string;
  /** PEM file of a CA to trust for the directory's own HTTPS (a test CA such as pebble's). */
  directoryCa?: string | undefined;
  /** Renew when this fraction of the lifetime has passed (default 2/3). */
  renewAtFraction: number;
}

export interface TlsOptions {
  /** The default certificate (PEM chain) and key; absent with acme or dev. */
  cert?: string | undefined;
  key?: string | undefined;
  /** PEM file of extra CA certificates (client certificate checks are not offered). */
  ca?: string | undefined;
  /** Oldest protocol accepted (default TLS 1.2). */
  minVersion: 'TLSv1.2' | 'TLSv1.3';
  /** Cipher suites by OpenSSL name (ciphers.ts DEFAULT_CIPHERS: RFC 9325, forward secret, AEAD). */
  ciphers: readonly string[];
  /** Per-name certificates chosen by SNI (RFC 6066 §3); a name may start with `*.`. */
  sni: Record<string, CertFiles>;
  acme?: AcmeOptions | undefined;
  /** The local development CA (`gatehouse serve --https`): a leaf for localhost, 127.0.0.1, ::1. */
  dev: boolean;
  /** With dev: more names and addresses on the development leaf (src/certs/dev-names.ts). */
  names?: string[] | undefined;
  /** Offer HTTP/2 by ALPN (default true); HTTP/1.1 is always offered. */
  http2: boolean;
  /** Experimental HTTP/3 (QUIC on the TLS port's UDP twin): Bun.serve only (app/native.ts). */
  http3?: boolean | undefined;
  /** Watch the certificate files and reload when they change (SIGHUP reloads too). */
  watch: boolean;
  /** watch came from the default, not the user's config: a server that cannot reload serves without. */
  watchDefaulted?: boolean | undefined;
  /** Session ticket keys shared across workers and instances (session-tickets.ts); absent: the defaults. */
  sessionTickets?: SessionTicketOptions | undefined;
}

/** Session tickets shared across workers and instances (session-tickets.ts). */
export interface SessionTicketOptions {
  /** false: no stateless tickets (Node's in-process session cache only). */
  enabled: boolean;
  /** Seconds each derived key is used; also the ticket lifetime (sessionTimeout). */
  rotateSecs: number;
  /** A file of 48 to 1024 secret bytes (mode 0600 or stricter), read at start and each rotation. */
  keyFile?: string | undefined;
  /** redis: the secret lives in Redis (made by the first instance); local: the file, else in process. */
  store: 'local' | 'redis';
  redis?: Partial<RedisOptions> | undefined;
  /** In memory, from the primary (--workers): workers share the primary's secret. */
  secret?: Buffer | undefined;
}

export const SESSION_TICKET_DEFAULTS: SessionTicketOptions = {
  enabled: true,
  rotateSecs: 3600,
  store: 'local',
};

/** A shared secret: at least a ticket key's worth (nginx's 48- or 80-byte key files qualify). */
export const SECRET_MIN_BYTES = 48;
export const SECRET_MAX_BYTES = 1024;
