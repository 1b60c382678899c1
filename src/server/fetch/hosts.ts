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
}

interface BunServer {
  readonly port: number;
  readonly hostname: string;
  requestIP(req: Request): { address: string } | null;
  stop(closeActive?: boolean): Promise<void> | void;
}
interface BunGlobal {
  readonly version: string;
  serve(o: {
    port: number;
    hostname: string;
    fetch: (req: Request, server: BunServer) => Promise<Response>;
    error?: (err: Error) => Response;
  }): BunServer;
}
interface DenoServer {
  readonly addr: { hostname: string; port: number };
  shutdown(): Promise<void>;
}
interface DenoGlobal {
  readonly version: { deno: string };
  serve(
    o: { port: number; hostname: string; onListen?: () => void },
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
  if (runtime === 'bun') {
    const bun = g.Bun!;
    const server = bun.serve({
      port: o.port,
      hostname: o.host,
      fetch: (req, srv) => listener(req, { remoteAddress: srv.requestIP(req)?.address }),
      error: lastResort,
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
        { port: o.port, hostname: o.host, onListen: () => queueMicrotask(() => resolve(s)) },
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
