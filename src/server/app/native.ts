// `gatehouse serve` on Bun and Deno: the fetch face (app/fetch.ts) hosted by the runtime's own server
// (fetch/hosts.ts: Bun.serve, Deno.serve) instead of its emulation of node:http. HTTPS from certificate
// files; what a runtime's server cannot do is refused by config key, naming the runtime.
import { readFile } from 'node:fs/promises';
import {
  type HostPem,
  type HostServer,
  type HostTls,
  type HostWebSocketOptions,
  listenNative,
  type NativeRuntime,
} from '../fetch/hosts.js';
import type { Logger } from '../ops/log.js';
import type { StaticHandler } from '../static/handler.js';
import { cipherString, DEFAULT_CIPHERS, isTls13Suite } from '../tls/ciphers.js';
import { type CertFiles, SESSION_TICKET_DEFAULTS, type TlsOptions } from '../tls/options.js';
import { createFetchHandler, fetchFaceRefusals } from './fetch.js';
import type { GatehouseDeps } from './handler.js';
import type { ServerOptions } from './options.js';
import { createRedirectFetchListener } from './redirect-listener.js';

export { type NativeRuntime, nativeRuntime } from '../fetch/hosts.js';

/** A listening server on the runtime's own HTTP server. */
export interface NativeServer {
  listen(): Promise<{
    url: string;
    host: string;
    port: number;
    runtime: string;
    server: string;
    /** With tls and listen.httpPort: the plain-HTTP listener that redirects to HTTPS. */
    httpUrl?: string | undefined;
  }>;
  /** Stops listening, lets the requests in progress finish, then closes the features. */
  close(): Promise<void>;
  readonly logger: Logger;
  /** The static files' handler (its file view: assetUrl, hashes, compression stats), as createHandler's. */
  readonly static: StaticHandler;
}

const SERVER: Record<NativeRuntime, string> = { bun: 'Bun.serve', deno: 'Deno.serve' };

/** The three TLS 1.3 suites BoringSSL (Bun) always offers; it has no setting to leave one out. */
const TLS13_SUITES = DEFAULT_CIPHERS.filter(isTls13Suite);

const sameSet = (a: readonly string[], b: readonly string[]): boolean => {
  const x = new Set(a.map((n) => n.toUpperCase()));
  return x.size === new Set(b.map((n) => n.toUpperCase())).size && b.every((n) => x.has(n.toUpperCase()));
};

/**
 * tls.http3 where it cannot be served: a config error, never a fallback (no transport here has it).
 * `runtime`: the one gatehouse serve runs on ('node' also for Bun's and Deno's node:http emulation).
 */
export function http3Refusal(o: ServerOptions, runtime: NativeRuntime | 'node'): string | undefined {
  if (o.tls?.http3 !== true || runtime === 'bun') return undefined;
  return runtime === 'deno'
    ? 'tls.http3: Deno.serve has no HTTP/3 (QUIC is only a raw API there): run gatehouse serve with Bun, or set tls.http3: false'
    : 'tls.http3: HTTP/3 needs QUIC, which official Node builds do not include: run gatehouse serve with Bun (Bun.serve), or set tls.http3: false';
}

/** What TLS settings a runtime's own server cannot honour, by key (the CLI then keeps node:http). */
function tlsRefusals(t: TlsOptions, runtime: NativeRuntime): string[] {
  const server = SERVER[runtime];
  const out: string[] = [];
  const nodeOnly = (key: string, what: string) =>
    out.push(`tls.${key}: ${what} on the Node transport only (gatehouse serve on Node)`);
  if (t.acme !== undefined) nodeOnly('acme', 'ACME certificates (ordering, HTTP-01, renewal) run');
  if (t.dev) nodeOnly('dev', 'the development CA (serve --https) issues and serves its certificate');
  if (t.watch)
    out.push(
      `tls.watch: ${server} cannot swap certificates without a restart (nor on SIGHUP); set tls.watch: false to serve on it`,
    );
  const st = t.sessionTickets;
  if (
    st !== undefined &&
    (!st.enabled ||
      st.keyFile !== undefined ||
      st.store !== 'local' ||
      st.rotateSecs !== SESSION_TICKET_DEFAULTS.rotateSecs)
  )
    out.push(
      `tls.sessionTickets: ${server} keeps its own ticket keys in process; shared, rotated or disabled tickets are on the Node transport only`,
    );
  if (t.ca !== undefined)
    out.push(
      `tls.ca: ${server} sends the cert file's chain as it is: put the intermediates in tls.cert instead`,
    );
  if (runtime === 'deno') {
    if (Object.keys(t.sni).length > 0)
      out.push('tls.sni: Deno.serve takes one certificate (no per-name certificates by SNI)');
    if (t.minVersion !== 'TLSv1.2')
      out.push(
        'tls.minVersion: Deno.serve (rustls) accepts TLS 1.2 and 1.3 and has no setting for the floor',
      );
    if (!sameSet(t.ciphers, DEFAULT_CIPHERS))
      out.push("tls.ciphers: Deno.serve (rustls) has no setting for the suites (its own are the default's)");
    if (!t.http2) out.push('tls.http2: Deno.serve always offers h2 by ALPN');
  } else {
    const tls13 = t.ciphers.filter(isTls13Suite);
    if (tls13.length > 0 && !sameSet(tls13, TLS13_SUITES))
      out.push(
        'tls.ciphers: Bun.serve (BoringSSL) offers all three TLS 1.3 suites or none; list all or none of them',
      );
  }
  return out;
}

/** What a runtime's own server cannot do yet, by config key (the CLI then keeps node:http). */
export function nativeRefusals(o: ServerOptions, runtime: NativeRuntime): string[] {
  // Both hosts switch WebSocket handshakes (fetch/hosts.ts).
  const out = fetchFaceRefusals(o, { upgrades: true });
  if (o.tls !== undefined) out.push(...tlsRefusals(o.tls, runtime));
  const h3 = http3Refusal(o, runtime);
  if (h3 !== undefined) out.push(h3);
  return out;
}

/** A certificate file and its key file, read; the error names the file that failed. */
async function readPem(f: CertFiles): Promise<HostPem> {
  const read = (p: string) =>
    readFile(p, 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw Object.assign(new Error(`tls: ${p}: cannot read (${err.code ?? err.message})`), {
        code: 'GATEHOUSE_TLS',
      });
    });
  const [cert, key] = await Promise.all([read(f.cert), read(f.key)]);
  return { cert, key };
}

/** The host's TLS from the config (tlsRefusals has passed, so cert and key are files). */
async function hostTls(t: TlsOptions, runtime: NativeRuntime): Promise<HostTls> {
  const fallback = await readPem({ cert: t.cert!, key: t.key! });
  const sni = await Promise.all(
    Object.entries(t.sni).map(async ([serverName, files]) => ({ serverName, ...(await readPem(files)) })),
  );
  if (runtime === 'deno') return { fallback, sni: [], http2: true, http3: false };
  const tls12 = t.ciphers.filter((n) => !isTls13Suite(n));
  return {
    fallback,
    sni,
    ...(tls12.length > 0 ? { ciphers: cipherString(tls12) } : {}),
    // RFC 8446 §4.2.1: the versions' wire codes, which Bun takes.
    minVersion: t.minVersion === 'TLSv1.3' ? 0x0304 : 0x0303,
    http2: t.http2,
    http3: t.http3 === true,
  };
}

const urlOf = (scheme: string, host: string, port: number): string =>
  `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;

export function createNativeServer(
  runtime: NativeRuntime,
  options: ServerOptions,
  deps: GatehouseDeps = {},
): NativeServer {
  const refused = nativeRefusals(options, runtime);
  if (refused.length > 0) throw new Error(refused.join('; '));
  const h = createFetchHandler(options, { ...deps, upgrades: true });
  let host: HostServer | undefined;
  let plain: HostServer | undefined;
  return {
    async listen() {
      await h.ready();
      const tls = options.tls === undefined ? undefined : await hostTls(options.tls, runtime);
      host = await listenNative(runtime, h.fetch, {
        ...options.listen,
        tls,
        webSocket: hostWebSocket(options),
      });
      let httpUrl: string | undefined;
      const httpPort = options.listen.httpPort;
      if (tls !== undefined && httpPort !== undefined) {
        // The plain-HTTP listener beside the HTTPS one: 308 to https:// (RFC 9110 §15.4.9).
        const redirect = createRedirectFetchListener(options, { logger: h.logger, httpsPort: host.port });
        plain = await listenNative(runtime, redirect, { host: options.listen.host, port: httpPort });
        httpUrl = urlOf('http', plain.host, plain.port);
      }
      return {
        url: urlOf(tls === undefined ? 'http' : 'https', host.host, host.port),
        host: host.host,
        port: host.port,
        runtime: host.runtime,
        server: host.server,
        httpUrl,
      };
    },
    async close() {
      const stopping = Promise.all([host?.stop(), plain?.stop()]);
      await h.close();
      await stopping;
    },
    logger: h.logger,
    static: h.static,
  };
}

/**
 * What the host needs of the WebSocket endpoints and the proxy's relayed routes for the whole server;
 * undefined without either. Bun's message bound is server-wide: each endpoint checks its own, and a
 * relayed message may be as large as Bun's default allows.
 */
function hostWebSocket(o: ServerOptions): HostWebSocketOptions | undefined {
  const relayed = o.proxy.some((r) => r.websocket);
  if (o.websocket.length === 0 && !relayed) return undefined;
  return {
    maxPayloadBytes: Math.max(
      ...o.websocket.map((e) => e.maxPayloadBytes),
      relayed ? RELAY_MAX_MESSAGE_BYTES : 0,
    ),
    // permessage-deflate (RFC 7692) is per hop; a relay alone does not ask the host for it.
    perMessageDeflate: o.websocket.length > 0 && o.websocket.every((e) => e.perMessageDeflate),
  };
}

/** The largest message a relayed route takes from the client on Bun.serve (Bun's own default, 16 MiB). */
const RELAY_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
