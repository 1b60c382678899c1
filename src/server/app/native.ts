// `gatehouse serve` on Bun and Deno: the fetch face (app/fetch.ts) hosted by the runtime's own server
// (fetch/hosts.ts: Bun.serve, Deno.serve) instead of its emulation of node:http. HTTPS from certificate
// files; what a runtime's server cannot do is refused by config key, naming the runtime.
import type { FSWatcher } from 'node:fs';
import {
  type HostServer,
  type HostTls,
  type HostWebSocketOptions,
  listenNative,
  type NativeRuntime,
} from '../fetch/hosts.js';
import type { FileAccess } from '../files/access.js';
import { createBunFiles } from '../files/bun.js';
import { createDenoFiles } from '../files/deno.js';
import type { Logger } from '../ops/log.js';
import type { StaticHandler } from '../static/handler.js';
import { type CertificateStore, createCertificateStore } from '../tls/certificates.js';
import { cipherString, DEFAULT_CIPHERS, isTls13Suite } from '../tls/ciphers.js';
import { SESSION_TICKET_DEFAULTS, type TlsOptions } from '../tls/options.js';
import { reloadCertificates, watchFiles } from '../tls/reload.js';
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
  /**
   * With tls on a server that swaps them (Bun on Linux): re-reads the certificate files and serves
   * them from a new server on the port; a bad pair is logged and the old one stays. Resolves with the
   * reason it refused, or undefined. Undefined where certificates are read at start only.
   */
  readonly reload: (() => Promise<string | undefined>) | undefined;
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

/** The runtime's own FileAccess (files/bun.ts, files/deno.ts): the default of createNativeServer. */
function runtimeFiles(runtime: NativeRuntime): FileAccess {
  return runtime === 'bun' ? createBunFiles() : createDenoFiles();
}

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

/**
 * Why a runtime's server cannot swap certificates, or undefined where it can: Bun on Linux listens
 * with SO_REUSEPORT, so a server with the new pairs joins the port and the old one drains.
 */
function swapRefusal(runtime: NativeRuntime): string | undefined {
  if (runtime === 'deno')
    return 'a second server on its port needs reusePort, which Deno keeps unstable (--unstable-net), and its shutdown drops connections that have not sent a request yet';
  if (process.platform !== 'linux')
    return 'a second server on its port needs SO_REUSEPORT to share connections, which only Linux does';
  return undefined;
}

/** What TLS settings a runtime's own server cannot honour, by key (the CLI then keeps node:http). */
function tlsRefusals(t: TlsOptions, runtime: NativeRuntime): string[] {
  const server = SERVER[runtime];
  const out: string[] = [];
  const nodeOnly = (key: string, what: string) =>
    out.push(`tls.${key}: ${what} on the Node transport only (gatehouse serve on Node)`);
  if (t.acme !== undefined) nodeOnly('acme', 'ACME certificates (ordering, HTTP-01, renewal) run');
  if (t.dev) nodeOnly('dev', 'the development CA (serve --https) issues and serves its certificate');
  // Left to its default, watch is dropped where no swap exists (createNativeServer says so).
  if (t.watch && !t.watchDefaulted) {
    const why = swapRefusal(runtime);
    if (why !== undefined)
      out.push(
        `tls.watch: ${server} cannot swap certificates without a restart (nor on SIGHUP): ${why}; set tls.watch: false to serve on it`,
      );
  }
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

/** The store's pairs as the host takes them (tlsRefusals has passed: cert and key are files). */
function hostTls(t: TlsOptions, store: CertificateStore, runtime: NativeRuntime): HostTls {
  const fallback = store.defaultPair!;
  if (runtime === 'deno') return { fallback, sni: [], http2: true, http3: false };
  const tls12 = t.ciphers.filter((n) => !isTls13Suite(n));
  return {
    fallback,
    sni: store.sniPairs,
    ...(tls12.length > 0 ? { ciphers: cipherString(tls12) } : {}),
    // RFC 8446 §4.2.1: the versions' wire codes, which Bun takes.
    minVersion: t.minVersion === 'TLSv1.3' ? 0x0304 : 0x0303,
    http2: t.http2,
    http3: t.http3 === true,
  };
}

/** The first read of the files, refused as a start-up error naming the file. */
async function loadFirst(store: CertificateStore): Promise<void> {
  try {
    await store.reload();
  } catch (err) {
    throw Object.assign(new Error(`tls: ${(err as Error).message}`), { code: 'GATEHOUSE_TLS' });
  }
}

/** Both servers take connections this long before the old one stops listening. */
const SWAP_SETTLE_MS = 50;

const urlOf = (scheme: string, host: string, port: number): string =>
  `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;

/**
 * Certificates are swapped (Bun on Linux, tls.watch or SIGHUP) by a second server with the new pairs
 * on the same port (SO_REUSEPORT), after which the old one stops listening: its requests in progress
 * finish, its keep-alive connections close after their current answer, its WebSockets stay until they
 * close (as on Node, where a connection keeps the certificate it was made with). No bound on that: the
 * endpoints' heartbeat ends dead peers, and close() ends the rest with the server. Files are read
 * through the runtime's own FileAccess unless deps.files says otherwise (measured no slower than
 * node:fs on either runtime: docs/runtimes.md).
 */
export function createNativeServer(
  runtime: NativeRuntime,
  options: ServerOptions,
  deps: GatehouseDeps = {},
): NativeServer {
  const refused = nativeRefusals(options, runtime);
  if (refused.length > 0) throw new Error(refused.join('; '));
  const h = createFetchHandler(options, {
    ...deps,
    files: deps.files ?? runtimeFiles(runtime),
    upgrades: true,
  });
  const t = options.tls;
  const store = t === undefined ? undefined : createCertificateStore(t);
  const swaps = t !== undefined && swapRefusal(runtime) === undefined;
  const webSocket = hostWebSocket(options);
  let host: HostServer | undefined;
  let plain: HostServer | undefined;
  let closed = false;
  let watchers: FSWatcher[] = [];
  /** Old servers draining after a swap. */
  const retired = new Set<Promise<void>>();
  const idleTimeoutSec = keepAliveIdleSec(options.limits.keepAliveTimeoutMs);
  const listenHost = (port: number) =>
    listenNative(runtime, h.serve, {
      host: options.listen.host,
      port,
      idleTimeoutSec,
      tls: t === undefined ? undefined : hostTls(t, store!, runtime),
      webSocket,
      reusePort: swaps,
    });
  const swap = async () => {
    if (closed || host === undefined) return;
    const next = await listenHost(host.port);
    const old = host;
    host = next;
    // Building the new server held the event loop: the old one accepts what queued meanwhile before
    // it closes (Linux resets what a closing listener's queue holds), and closes right after a poll.
    await new Promise((r) => setTimeout(r, SWAP_SETTLE_MS));
    await new Promise((r) => setImmediate(r));
    const stopping = old.stop().catch(() => {});
    retired.add(stopping);
    void stopping.then(() => retired.delete(stopping));
    if (closed) await next.stop();
  };
  let reloading: Promise<unknown> = Promise.resolve();
  const reload = (): Promise<string | undefined> => {
    // One reload at a time: a renewal's two file events may come close together.
    const r = reloading.then(() => reloadCertificates(store!, h.logger, swap));
    reloading = r;
    return r;
  };
  return {
    async listen() {
      await h.ready();
      if (store !== undefined) await loadFirst(store);
      const port = options.listen.port;
      // SO_REUSEPORT would also let a second gatehouse share a port in use: a bind without it first
      // fails as node:http's would (EADDRINUSE). Port 0 is the kernel's free choice.
      if (swaps && port !== 0)
        await (
          await listenNative(runtime, async () => new Response(null, { status: 503 }), options.listen)
        ).stop();
      host = await listenHost(port);
      if (swaps && t.watch) watchers = watchFiles(store!.files, reload);
      let httpUrl: string | undefined;
      const httpPort = options.listen.httpPort;
      if (t !== undefined && httpPort !== undefined) {
        // The plain-HTTP listener beside the HTTPS one: 308 to https:// (RFC 9110 §15.4.9); a swap
        // keeps the port, so it needs no swap of its own.
        const redirect = createRedirectFetchListener(options, { logger: h.logger, httpsPort: host.port });
        plain = await listenNative(runtime, redirect, {
          host: options.listen.host,
          port: httpPort,
          idleTimeoutSec,
        });
        httpUrl = urlOf('http', plain.host, plain.port);
      }
      return {
        url: urlOf(t === undefined ? 'http' : 'https', host.host, host.port),
        host: host.host,
        port: host.port,
        runtime: host.runtime,
        server: host.server,
        httpUrl,
      };
    },
    reload: swaps ? reload : undefined,
    async close() {
      closed = true;
      for (const w of watchers) w.close();
      const grace = options.limits.shutdownTimeoutMs;
      const stopping = Promise.all([host?.stop(grace), plain?.stop(grace), ...retired]);
      await h.close();
      await stopping;
    },
    logger: h.logger,
    static: h.static,
  };
}

/** Bun's idleTimeout takes whole seconds up to this. */
const MAX_IDLE_TIMEOUT_SEC = 255;

/**
 * The idle bound between requests on Bun.serve: limits.keepAliveTimeoutMs plus the 1 s Node keeps after
 * it (so a client reusing the connection at the last moment does not meet a closed one), in whole
 * seconds up to Bun's 255; 0 (no keep-alive timeout) is none, as on Node.
 */
export function keepAliveIdleSec(keepAliveTimeoutMs: number): number {
  if (keepAliveTimeoutMs === 0) return 0;
  return Math.min(MAX_IDLE_TIMEOUT_SEC, Math.ceil((keepAliveTimeoutMs + 1000) / 1000));
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
