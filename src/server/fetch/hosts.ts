// The runtimes' own servers as hosts of the Fetch-API transport: Bun.serve and Deno.serve call the
// listener with each Request and send the Response it resolves to. Found on globalThis, so this file
// loads on Node too (where neither exists and nothing here runs).
import type { FetchListener } from './entry.js';

/** A runtime whose own HTTP server can host the fetch face. */
export type NativeRuntime = 'bun' | 'deno';

/** What a host server is while it listens. */
export interface HostServer {
  /** The runtime and its version, e.g. `Bun 1.4.5`. */
  readonly runtime: string;
  /** The server that listens, e.g. `Bun.serve`. */
  readonly server: string;
  readonly host: string;
  readonly port: number;
  /** Stops listening; resolves once the requests in progress are answered. */
  stop(): Promise<void>;
}

export interface HostOptions {
  readonly host: string;
  readonly port: number;
  /** HTTPS: what app/native.ts read from the tls config (undefined: plain HTTP). */
  readonly tls?: HostTls | undefined;
}

/** A certificate chain and its key, as PEM text. */
export interface HostPem {
  readonly cert: string;
  readonly key: string;
}

/** HTTPS on a host server; app/native.ts refuses what a runtime cannot do before it gets here. */
export interface HostTls {
  /** The pair for a ClientHello without a listed name (or without SNI). */
  readonly fallback: HostPem;
  /** Per-name pairs (RFC 6066 §3), `*.` names included: Bun.serve only. */
  readonly sni: readonly (HostPem & { readonly serverName: string })[];
  /** OpenSSL's suite list (tls/ciphers.ts cipherString): Bun.serve only. */
  readonly ciphers?: string | undefined;
  /** Oldest TLS version as its wire code (RFC 8446 §4.2.1: 0x0303 TLS 1.2, 0x0304 TLS 1.3): Bun only. */
  readonly minVersion?: number | undefined;
  /** h2 by ALPN beside http/1.1 (Deno.serve always offers it). */
  readonly http2: boolean;
  /** HTTP/3 on the same port over UDP: Bun.serve only (experimental there). */
  readonly http3: boolean;
}

interface BunServer {
  readonly port: number;
  readonly hostname: string;
  requestIP(req: Request): { address: string } | null;
  stop(closeActive?: boolean): Promise<void> | void;
}
interface BunTls {
  cert: string;
  key: string;
  serverName?: string;
  ciphers?: string;
  minVersion?: number;
}
interface BunGlobal {
  readonly version: string;
  serve(o: {
    port: number;
    hostname: string;
    fetch: (req: Request, server: BunServer) => Promise<Response>;
    error?: (err: Error) => Response;
    tls?: BunTls[];
    http2?: boolean;
    http3?: boolean;
  }): BunServer;
}
interface DenoServer {
  readonly addr: { hostname: string; port: number };
  shutdown(): Promise<void>;
}
interface DenoGlobal {
  readonly version: { deno: string };
  serve(
    o: { port: number; hostname: string; onListen?: () => void; cert?: string; key?: string },
    handler: (req: Request, info: { remoteAddr: { hostname: string } }) => Promise<Response>,
  ): DenoServer;
}

const g = globalThis as { Bun?: BunGlobal; Deno?: DenoGlobal };

/** The runtime this process runs on, when it has a server of its own; undefined on Node. */
export function nativeRuntime(): NativeRuntime | undefined {
  if (typeof g.Bun?.serve === 'function') return 'bun';
  if (typeof g.Deno?.serve === 'function') return 'deno';
  return undefined;
}

/** A response for a Request whose handling threw past the kernel's own error handler. */
const lastResort = () => new Response(null, { status: 500 });

/** Listens with the runtime's own server; rejects as node:http would (EADDRINUSE, EACCES). */
export async function listenNative(
  runtime: NativeRuntime,
  listener: FetchListener,
  o: HostOptions,
): Promise<HostServer> {
  const tls = o.tls;
  if (runtime === 'bun') {
    const bun = g.Bun!;
    const server = bun.serve({
      port: o.port,
      hostname: o.host,
      fetch: (req, srv) => listener(req, { remoteAddress: srv.requestIP(req)?.address }),
      error: lastResort,
      ...(tls === undefined ? {} : bunTls(tls)),
    });
    return {
      runtime: `Bun ${bun.version}`,
      server: 'Bun.serve',
      host: o.host,
      port: server.port,
      stop: async () => {
        await server.stop(false);
      },
    };
  }
  const deno = g.Deno!;
  const server = await new Promise<DenoServer>((resolve, reject) => {
    try {
      const s = deno.serve(
        {
          port: o.port,
          hostname: o.host,
          onListen: () => queueMicrotask(() => resolve(s)),
          // Deno.serve takes one pair and offers h2 and http/1.1 by ALPN (app/native.ts refuses the rest).
          ...(tls === undefined ? {} : { cert: tls.fallback.cert, key: tls.fallback.key }),
        },
        (req, info) => listener(req, { remoteAddress: info.remoteAddr.hostname }),
      );
    } catch (err) {
      reject(err);
    }
  });
  return {
    runtime: `Deno ${deno.version.deno}`,
    server: 'Deno.serve',
    host: o.host,
    port: server.addr.port,
    stop: () => server.shutdown(),
  };
}

/**
 * Bun.serve's TLS: a list whose first entry (no serverName) is the default and the others are chosen by
 * SNI; every entry gets the same suites and floor. With http3, Bun listens for QUIC on the same port
 * over UDP and itself adds `Alt-Svc: h3=":PORT"; ma=86400` (RFC 7838 §3) to the HTTP/1.1 and HTTP/2
 * responses, so the kernel adds nothing (a second copy would repeat the alternative).
 */
function bunTls(tls: HostTls): { tls: BunTls[]; http2: boolean; http3?: true } {
  const terms = {
    ...(tls.ciphers === undefined ? {} : { ciphers: tls.ciphers }),
    ...(tls.minVersion === undefined ? {} : { minVersion: tls.minVersion }),
  };
  return {
    tls: [
      { cert: tls.fallback.cert, key: tls.fallback.key, ...terms },
      ...tls.sni.map((p) => ({ cert: p.cert, key: p.key, serverName: p.serverName, ...terms })),
    ],
    http2: tls.http2,
    ...(tls.http3 ? { http3: true as const } : {}),
  };
}
