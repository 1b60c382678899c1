// The TLS listener: node:http2's secure server with HTTP/1.1 beside it (ALPN h2, http/1.1), or
// node:https when HTTP/2 is off. HTTP/1.1 connections on it run through Node's HTTP/1 server code, so
// the limits below are set as that code reads them. Certificates come from the store: the default
// one by setSecureContext (new connections only), the others by SNI; files are watched and SIGHUP
// (in the CLI) calls reload().
import { type FSWatcher, watch } from 'node:fs';
import { validateHeaderName, validateHeaderValue } from 'node:http';
import {
  createSecureServer,
  type Http2SecureServer,
  Http2ServerRequest,
  Http2ServerResponse,
  type OutgoingHttpHeaders,
  type ServerStreamResponseOptions,
} from 'node:http2';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { basename, dirname } from 'node:path';
import { http1ServerOptions, type LimitsOptions } from '../limits.js';
import type { Logger } from '../log.js';
import { CertificateError, type CertificateStore, type PemPair } from './certificates.js';
import type { TlsOptions } from './options.js';

/**
 * RFC 9113 §8.2.2: connection-specific fields are malformed in HTTP/2. Handlers written for HTTP/1.1
 * set some (Connection: close on errors, Keep-Alive); on an HTTP/2 stream they are dropped here,
 * silently, instead of Node's warning per call.
 */
const CONNECTION_SPECIFIC = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
]);

type HeadFields = OutgoingHttpHeaders | readonly unknown[];

/** The fields of a writeHead call (an object, a flat [name, value, ...] list or a list of pairs)
 *  without the connection-specific ones. */
function withoutConnectionFields(headers: HeadFields): HeadFields {
  if (Array.isArray(headers)) {
    const pairs = headers.length > 0 && Array.isArray(headers[0]);
    if (pairs)
      return headers.filter((p) => !CONNECTION_SPECIFIC.has(String((p as unknown[])[0]).toLowerCase()));
    const out: unknown[] = [];
    for (let i = 0; i + 1 < headers.length; i += 2) {
      if (!CONNECTION_SPECIFIC.has(String(headers[i]).toLowerCase())) out.push(headers[i], headers[i + 1]);
    }
    return out;
  }
  let out: OutgoingHttpHeaders | undefined;
  for (const name of Object.keys(headers)) {
    if (CONNECTION_SPECIFIC.has(name.toLowerCase())) {
      out ??= { ...(headers as OutgoingHttpHeaders) };
      delete out[name];
    }
  }
  return out ?? headers;
}

/** The HTTP/2 response the handlers see: connection-specific fields never reach the frame. */
export class GatehouseHttp2Response extends Http2ServerResponse {
  /** A field was set with setHeader/appendHeader: writeHead must merge with them (Node's path). */
  #touched = false;

  override setHeader(name: string, value: number | string | readonly string[]): void {
    this.#touched = true;
    if (!CONNECTION_SPECIFIC.has(name.toLowerCase())) super.setHeader(name, value);
  }
  override appendHeader(name: string, value: string | string[]): void {
    this.#touched = true;
    if (!CONNECTION_SPECIFIC.has(name.toLowerCase())) super.appendHeader(name, value);
  }
  override writeHead(statusCode: number, reason?: string | HeadFields, headers?: HeadFields): this {
    // RFC 9113 §8.3.2: there is no reason phrase in HTTP/2 (Node warns when one is given).
    const h = typeof reason === 'string' ? headers : reason;
    const stream = this.stream;
    if (h === undefined || this.#touched || stream.headersSent || stream.destroyed || stream.closed)
      return super.writeHead(
        statusCode,
        h === undefined ? undefined : (withoutConnectionFields(h) as OutgoingHttpHeaders),
      );
    // The common case (every field given here): one header object straight to the stream, as Node's
    // compatibility layer would build it, without its per-field bookkeeping. Names and values are
    // checked as node:http checks them; trailers stay possible (waitForTrailers, like Node's).
    this.statusCode = statusCode;
    // Node's own options in its compatibility layer: Date unless sendDate is off, trailers possible.
    const options = { endStream: false, waitForTrailers: true, sendDate: this.sendDate };
    stream.respond(headerObject(statusCode, h), options as ServerStreamResponseOptions);
    return this;
  }
}

/** `:status` and the fields of a writeHead call, lower-cased, repeated names as lists, without
 *  connection-specific ones (RFC 9113 §8.2.2); a bad name or value throws as node:http's would. */
function headerObject(status: number, h: HeadFields): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = { ':status': status };
  const add = (rawName: unknown, value: unknown) => {
    if (value === undefined) return;
    const name = String(rawName).toLowerCase();
    if (CONNECTION_SPECIFIC.has(name)) return;
    validateHeaderName(name);
    validateHeaderValue(name, value as string);
    const prev = out[name];
    const v = Array.isArray(value) ? value.map(String) : String(value);
    out[name] = prev === undefined ? v : ([] as string[]).concat(prev as string | string[], v);
  };
  if (!Array.isArray(h)) {
    for (const name in h) add(name, (h as OutgoingHttpHeaders)[name]);
  } else if (h.length > 0 && Array.isArray(h[0])) {
    for (const pair of h as unknown[][]) add(pair[0], pair[1]);
  } else {
    for (let i = 0; i + 1 < h.length; i += 2) add(h[i], h[i + 1]);
  }
  return out;
}

// RFC 9113 §8.3.2: no reason phrase; Node's statusMessage getter and setter warn on every use.
Object.defineProperty(GatehouseHttp2Response.prototype, 'statusMessage', {
  get: () => '',
  set: () => {},
  configurable: true,
});

// The response classes differ per server; handlers only see IncomingMessage/ServerResponse-like ones.
// biome-ignore lint/suspicious/noExplicitAny: the four class parameters of Node's generic servers
export type TlsServer = Http2SecureServer<any, any, any, any> | HttpsServer;

export interface TlsListener {
  readonly server: TlsServer;
  /** Re-reads the certificate files; a bad pair is logged with its file and the old ones stay. */
  reload(): Promise<string | undefined>;
  /** A pair from memory (ACME, the dev CA) as the default certificate. */
  setDefault(pair: PemPair, source: string): void;
  /** Stops the file watchers. */
  close(): void;
}

export function createTlsListener(o: {
  tls: TlsOptions;
  store: CertificateStore;
  limits: LimitsOptions;
  logger: Logger;
}): TlsListener {
  const { store, logger } = o;
  const secureOptions = (pair: PemPair | undefined) => ({
    ...store.contextOptions,
    cert: pair?.cert,
    key: pair?.key,
  });
  const common = {
    ...secureOptions(store.defaultPair),
    // RFC 6066 §3: the name's own certificate, else (undefined) the default one.
    SNICallback: (name: string, cb: (err: Error | null, ctx?: import('node:tls').SecureContext) => void) =>
      cb(null, store.forName(name)),
  };
  const http1 = http1ServerOptions(o.limits);
  const server: TlsServer = o.tls.http2
    ? // Node's HTTP/1 code reads these off the server object for the HTTP/2 server's HTTP/1.1 connections.
      Object.assign(
        createSecureServer({
          ...common,
          allowHTTP1: true,
          Http2ServerRequest,
          Http2ServerResponse: GatehouseHttp2Response,
          // RFC 9113 §6.5.2: the header block bound matches the HTTP/1.1 one.
          maxSendHeaderBlockLength: 64 * 1024,
          settings: { maxHeaderListSize: o.limits.maxHeaderBytes, maxConcurrentStreams: 128 },
          maxSessionInvalidFrames: 100,
        }),
        http1,
      )
    : createHttpsServer({ ...common, ...http1 });

  const applyDefault = () => {
    const pair = store.defaultPair;
    if (pair !== undefined) server.setSecureContext(secureOptions(pair));
  };
  const reload = async (): Promise<string | undefined> => {
    try {
      await store.reload();
      applyDefault();
      logger.info({ files: store.files }, 'tls: certificates loaded');
      return undefined;
    } catch (err) {
      const file = err instanceof CertificateError ? err.source : undefined;
      const reason = (err as Error).message;
      logger.error({ file, reason }, 'tls: certificates refused, the ones in use stay');
      return reason;
    }
  };
  const watchers = o.tls.watch ? watchFiles(store.files, reload) : [];
  return {
    server,
    reload,
    setDefault(pair, source) {
      store.setDefault(pair, source);
      applyDefault();
    },
    close() {
      for (const w of watchers) w.close();
    },
  };
}

/** Debounce for file events: a renewal writes the cert and the key one after the other. */
const WATCH_SETTLE_MS = 200;

/**
 * Watches the folders of `files` (a renewal often renames a new file into place, which a watch on
 * the file itself would miss) and calls `reload` once the events settle.
 */
function watchFiles(files: readonly string[], reload: () => Promise<unknown>): FSWatcher[] {
  const byDir = new Map<string, Set<string>>();
  for (const f of files) {
    const names = byDir.get(dirname(f)) ?? new Set<string>();
    names.add(basename(f));
    byDir.set(dirname(f), names);
  }
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(() => void reload(), WATCH_SETTLE_MS);
    timer.unref();
  };
  const watchers: FSWatcher[] = [];
  for (const [dir, names] of byDir) {
    try {
      const w = watch(dir, { persistent: false }, (_event, name) => {
        if (name === null || names.has(String(name))) schedule();
      });
      w.on('error', () => w.close());
      watchers.push(w);
    } catch {
      // A folder that cannot be watched: SIGHUP still reloads.
    }
  }
  return watchers;
}
