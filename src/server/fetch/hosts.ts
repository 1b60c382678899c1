// The runtimes' own servers as hosts of the Fetch-API transport: Bun.serve and Deno.serve call the
// listener with each Request and send the Response it resolves to. Found on globalThis, so this file
// loads on Node too (where neither exists and nothing here runs). With WebSocket endpoints, each host
// also switches their handshakes (Bun: server.upgrade and the server's `websocket` handlers; Deno:
// Deno.upgradeWebSocket) and carries the connections as PeerSockets (websocket/types.ts).
import { Buffer } from 'node:buffer';
import type { HostUpgrade, PeerEvents, PeerSocket } from '../websocket/index.js';
import type { FetchListener } from './entry.js';
import type { UpgradeWebSocket } from './request.js';

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
  /**
   * Stops listening; resolves once the requests in progress are answered (on Bun also once its
   * WebSockets have closed, which stay open meanwhile). HTTP/1.1 answers after this say
   * `Connection: close` on Bun, so a keep-alive client does not send on a closing connection. Deno:
   * resolves after `graceMs` (when given) whatever is still open.
   */
  stop(graceMs?: number): Promise<void>;
}

export interface HostOptions {
  readonly host: string;
  readonly port: number;
  /** HTTPS: what app/native.ts read from the tls config (undefined: plain HTTP). */
  readonly tls?: HostTls | undefined;
  /** WebSocket endpoints are served: what the host needs of them for the whole server. */
  readonly webSocket?: HostWebSocketOptions | undefined;
  /** Bun: SO_REUSEPORT, so a second server with new certificates can listen on the same port. */
  readonly reusePort?: boolean | undefined;
  /**
   * Bun: how long a connection may sit idle between requests, in whole seconds (1-255, Bun's idleTimeout;
   * 0: no bound); a request in progress has none, as on Node. Undefined: Bun's default (10 s), requests
   * in progress included. Deno.serve has no such bound (docs/runtimes.md).
   */
  readonly idleTimeoutSec?: number | undefined;
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

export interface HostWebSocketOptions {
  /** The largest message any endpoint takes (Bun refuses bigger ones with 1009; the endpoint its own). */
  readonly maxPayloadBytes: number;
  /** permessage-deflate (RFC 7692), which Bun sets for the whole server: on only if every endpoint wants it. */
  readonly perMessageDeflate: boolean;
}

/** What a Bun WebSocket carries: the endpoint's open, then the connection's events. */
interface BunSocketData {
  readonly open: HostUpgrade['open'];
  events: PeerEvents | undefined;
}
interface BunWebSocket {
  readonly readyState: number;
  readonly data: BunSocketData;
  getBufferedAmount(): number;
  sendText(data: string): number;
  sendBinary(data: Uint8Array): number;
  close(code?: number, reason?: string): void;
  terminate(): void;
  ping(): number;
}
interface BunServer {
  readonly port: number;
  readonly hostname: string;
  requestIP(req: Request): { address: string } | null;
  upgrade(req: Request, o: { data: BunSocketData; headers: [string, string][] }): boolean;
  /** This request's connection's idle bound, in seconds (0: none), until another call. */
  timeout(req: Request, seconds: number): void;
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
    reusePort?: boolean;
    idleTimeout?: number;
    fetch: (req: Request, server: BunServer) => Response | Promise<Response>;
    error?: (err: Error) => Response;
    /** Request bodies over this get Bun's own 413 (default 128 MiB). */
    maxRequestBodySize?: number;
    tls?: BunTls[];
    http2?: boolean;
    http3?: boolean;
    websocket?: {
      maxPayloadLength: number;
      perMessageDeflate: boolean;
      idleTimeout: number;
      sendPings: boolean;
      open(ws: BunWebSocket): void;
      message(ws: BunWebSocket, message: string | Uint8Array): void;
      close(ws: BunWebSocket, code: number, reason: string): void;
      ping(ws: BunWebSocket): void;
      pong(ws: BunWebSocket): void;
    };
  }): BunServer;
}
interface DenoServer {
  readonly addr: { hostname: string; port: number };
  shutdown(): Promise<void>;
}
interface DenoGlobal {
  readonly version: { deno: string };
  upgradeWebSocket(req: Request, o: { idleTimeout: number }): { socket: WebSocket; response: Response };
  serve(
    o: {
      port: number;
      hostname: string;
      onListen?: () => void;
      cert?: string;
      key?: string;
    },
    handler: (req: Request, info: { remoteAddr: { hostname: string } }) => Response | Promise<Response>,
  ): DenoServer;
}

const g = globalThis as { Bun?: BunGlobal; Deno?: DenoGlobal };

/** The runtime this process runs on, when it has a server of its own; undefined on Node. */
export function nativeRuntime(): NativeRuntime | undefined {
  if (typeof g.Bun?.serve === 'function') return 'bun';
  if (typeof g.Deno?.serve === 'function') return 'deno';
  return undefined;
}

/**
 * RFC 9112 §9.6: an answer from a server that stops says so, and Bun closes the connection after it
 * (Bun leaves the field out on HTTP/2). A 101 and fields another fetch made immutable are left as they are.
 */
function closing(res: Response): Response {
  // Undefined after Bun's own upgrade (fetch/entry.ts).
  if (res === undefined || res.status === 101) return res;
  try {
    res.headers.set('connection', 'close');
  } catch {
    // Immutable fields (a fetched Response passed through): Bun still closes after it.
  }
  return res;
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
    let upgrade: UpgradeWebSocket | undefined;
    let stopping = false;
    const idleSec = o.idleTimeoutSec;
    // Bun's idleTimeout is the connection's, requests in progress included: off while one is (a slow
    // upstream within proxy headersMs, a streamed body that pauses, as node:http which times only the
    // keep-alive wait), back as its last content goes out. Set after the content has gone, it would
    // never apply: the connection would stay open idle.
    const bounded = idleSec !== undefined && idleSec > 0;
    const server = bun.serve({
      port: o.port,
      hostname: o.host,
      ...(o.reusePort === true ? { reusePort: true } : {}),
      ...(idleSec === undefined ? {} : { idleTimeout: idleSec }),
      fetch: (req, srv) => {
        // A response whose last content went out before the listener returned (a cached file, a 304)
        // never unbounds its connection: two native calls saved on the common path.
        let ended = false;
        let unbounded = false;
        const res = listener(req, {
          // Asked only when a step reads it (Bun's requestIP costs a lookup per call).
          get remoteAddress() {
            return srv.requestIP(req)?.address;
          },
          upgradeWebSocket: upgrade,
          responseEnding: bounded
            ? () => {
                ended = true;
                if (unbounded) srv.timeout(req, idleSec);
              }
            : undefined,
        });
        if (bounded && !ended) {
          unbounded = true;
          srv.timeout(req, 0);
        }
        if (!stopping) return res;
        return res instanceof Response ? closing(res) : res.then(closing);
      },
      error: lastResort,
      // Bun.serve answers a body over 128 MiB with its own 413 before the handler runs; the limits are
      // Gatehouse's (limits.maxBodyBytes on endpoints that read bodies, proxy[].maxBodyBytes), as on Node.
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      ...(tls === undefined ? {} : bunTls(tls)),
      ...(o.webSocket && { websocket: bunWebSocket(o.webSocket) }),
    });
    if (o.webSocket !== undefined) upgrade = bunUpgrade(server);
    return {
      runtime: `Bun ${bun.version}`,
      server: 'Bun.serve',
      host: o.host,
      port: server.port,
      stop: async () => {
        stopping = true;
        await server.stop(false);
      },
    };
  }
  const deno = g.Deno!;
  const upgrade = o.webSocket && denoUpgrade(deno);
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
        (req, info) => listener(req, { remoteAddress: info.remoteAddr.hostname, upgradeWebSocket: upgrade }),
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
    // shutdown() waits for every connection, a handshake or a WebSocket whose peer never answers the
    // Close included, and Deno has no way to drop them (aborting its signal then throws BadResource):
    // past the grace the stop is over, and the command exits with what is left (cli/main.ts).
    stop: async (graceMs) => {
      const done = server.shutdown();
      if (graceMs === undefined) return done;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
      });
      await Promise.race([done, late]);
      clearTimeout(timer);
    },
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

/** The 101's fields: the steps' and the chosen subprotocol (RFC 6455 §4.2.2). */
function switchHeaders(o: HostUpgrade): [string, string][] {
  const out = [...o.fields];
  if (o.protocol !== undefined) out.push(['Sec-WebSocket-Protocol', o.protocol]);
  return out;
}

/** A text message goes out as a string (Bun's sendText, Deno's send), a binary one as bytes. */
function textOf(data: Buffer | string): string {
  return typeof data === 'string' ? data : data.toString('utf8');
}

function bytesOf(data: Buffer | string): Uint8Array {
  return typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
}

/** Bun's upgrade: the endpoint's open travels with the socket (its `data`). */
function bunUpgrade(server: BunServer): UpgradeWebSocket {
  return (request, o) => {
    // Bun answers with the client's first offered subprotocol when it is given none; RFC 6455 §4.2.2:
    // none of them chosen is no Sec-WebSocket-Protocol at all. Bun's request fields are mutable.
    if (o.protocol === undefined) request.headers.delete('sec-websocket-protocol');
    return server.upgrade(request, { data: { open: o.open, events: undefined }, headers: switchHeaders(o) })
      ? null
      : false;
  };
}

/**
 * Bun's server-wide WebSocket handlers, which hand each event to the connection's. Bun's own idle
 * timeout and pings are off: the endpoints' heartbeat pings and ends silent peers, as on Node.
 */
function bunWebSocket(o: HostWebSocketOptions) {
  return {
    maxPayloadLength: o.maxPayloadBytes,
    perMessageDeflate: o.perMessageDeflate,
    idleTimeout: 0,
    sendPings: false,
    open: (ws: BunWebSocket) => {
      ws.data.events = ws.data.open(bunPeer(ws));
    },
    message: (ws: BunWebSocket, m: string | Uint8Array) => {
      const text = typeof m === 'string';
      ws.data.events?.receive(
        text ? Buffer.from(m, 'utf8') : Buffer.from(m.buffer, m.byteOffset, m.byteLength),
        !text,
      );
    },
    close: (ws: BunWebSocket, code: number, reason: string) => ws.data.events?.closed(code, reason),
    ping: (ws: BunWebSocket) => ws.data.events?.ping(),
    pong: (ws: BunWebSocket) => ws.data.events?.pong(),
  };
}

function bunPeer(ws: BunWebSocket): PeerSocket {
  return {
    get readyState() {
      return ws.readyState;
    },
    get bufferedAmount() {
      return ws.getBufferedAmount();
    },
    send: (data, binary) => {
      if (binary) ws.sendBinary(bytesOf(data));
      else ws.sendText(textOf(data));
    },
    close: (code, reason) => ws.close(code, reason),
    terminate: () => ws.terminate(),
    ping: () => {
      ws.ping();
      return true;
    },
  };
}

/**
 * Deno's upgrade: its 101 Response, with the steps' fields and the subprotocol set here (Deno's own
 * `protocol` option wants the offer spelt "a, b" and refuses "a,b"). Deno pings by itself: its
 * idleTimeout is the endpoint's heartbeat (a peer that misses the Pong is closed).
 */
function denoUpgrade(deno: DenoGlobal): UpgradeWebSocket {
  return (request, o) => {
    let up: { socket: WebSocket; response: Response };
    try {
      up = deno.upgradeWebSocket(request, { idleTimeout: Math.ceil(o.heartbeatIntervalMs / 1000) });
    } catch {
      return false;
    }
    const { socket, response } = up;
    for (const [name, value] of switchHeaders(o)) response.headers.append(name, value);
    socket.binaryType = 'arraybuffer';
    let events: PeerEvents | undefined;
    socket.onopen = () => {
      events = o.open(denoPeer(socket));
    };
    socket.onmessage = (e: MessageEvent<string | ArrayBuffer>) => {
      const text = typeof e.data === 'string';
      events?.receive(
        text ? Buffer.from(e.data as string, 'utf8') : Buffer.from(e.data as ArrayBuffer),
        !text,
      );
    };
    socket.onclose = (e: CloseEvent) => events?.closed(e.code, e.reason);
    return response;
  };
}

function denoPeer(socket: WebSocket): PeerSocket {
  return {
    get readyState() {
      return socket.readyState;
    },
    get bufferedAmount() {
      return socket.bufferedAmount;
    },
    send: (data, binary) => socket.send(binary ? bytesOf(data) : textOf(data)),
    close: (code, reason) => socket.close(code, reason),
    // Deno's WebSocket has no abort: a closing handshake it is.
    terminate: () => socket.close(),
    ping: () => false,
  };
}
