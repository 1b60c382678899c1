// `gatehouse serve` on Bun and Deno: the fetch face (app/fetch.ts) hosted by the runtime's own server
// (fetch/hosts.ts: Bun.serve, Deno.serve) instead of its emulation of node:http.
import {
  type HostServer,
  type HostWebSocketOptions,
  listenNative,
  type NativeRuntime,
} from '../fetch/hosts.js';
import type { Logger } from '../ops/log.js';
import { createFetchHandler, fetchFaceRefusals } from './fetch.js';
import type { GatehouseDeps } from './handler.js';
import type { ServerOptions } from './options.js';

export { type NativeRuntime, nativeRuntime } from '../fetch/hosts.js';

/** A listening server on the runtime's own HTTP server. */
export interface NativeServer {
  listen(): Promise<{ url: string; host: string; port: number; runtime: string; server: string }>;
  /** Stops listening, lets the requests in progress finish, then closes the features. */
  close(): Promise<void>;
  readonly logger: Logger;
}

/** What a runtime's own server cannot do yet, by config key (the CLI then keeps node:http). */
export function nativeRefusals(o: ServerOptions): string[] {
  // Both hosts switch WebSocket handshakes (fetch/hosts.ts).
  const out = fetchFaceRefusals(o, { upgrades: true });
  if (o.tls !== undefined) out.push('tls: HTTPS is served on the Node transport only for now');
  return out;
}

export function createNativeServer(
  runtime: NativeRuntime,
  options: ServerOptions,
  deps: GatehouseDeps = {},
): NativeServer {
  const refused = nativeRefusals(options);
  if (refused.length > 0) throw new Error(refused.join('; '));
  const h = createFetchHandler(options, { ...deps, upgrades: true });
  let host: HostServer | undefined;
  return {
    async listen() {
      await h.ready();
      host = await listenNative(runtime, h.fetch, { ...options.listen, webSocket: hostWebSocket(options) });
      const name = host.host.includes(':') ? `[${host.host}]` : host.host;
      return {
        url: `http://${name}:${host.port}`,
        host: host.host,
        port: host.port,
        runtime: host.runtime,
        server: host.server,
      };
    },
    async close() {
      const stopping = host?.stop();
      await h.close();
      await stopping;
    },
    logger: h.logger,
  };
}

/** What the host needs of the WebSocket endpoints for the whole server; undefined without any. */
function hostWebSocket(o: ServerOptions): HostWebSocketOptions | undefined {
  if (o.websocket.length === 0) return undefined;
  return {
    maxPayloadBytes: Math.max(...o.websocket.map((e) => e.maxPayloadBytes)),
    perMessageDeflate: o.websocket.every((e) => e.perMessageDeflate),
  };
}
