// A WebSocket handshake on a host that switches the connection itself (Bun's server.upgrade, Deno's
// upgradeWebSocket; fetch/entry.ts), and the open connection as a handler drives it: the WebSocket
// endpoints (websocket/) and the proxy's message relay (proxy/relay.ts) both take these.
import type { TunnelBase } from './context.js';

/**
 * One open WebSocket as the endpoints and the proxy's relay drive it, whatever carries it: `ws` on Node
 * (websocket/ws-peer.ts), Bun's ServerWebSocket or Deno's WebSocket (fetch/hosts.ts). readyState as
 * RFC 6455's (WS_OPEN...).
 */
export interface PeerSocket {
  readonly readyState: number;
  /** Bytes queued for the peer and not yet written. */
  readonly bufferedAmount: number;
  /** A text message (`binary` false) or a binary one (RFC 6455 §5.6). */
  send(data: Buffer | string, binary: boolean): void;
  /** Starts the closing handshake (RFC 6455 §7.1.2) with a §7.4.1 code; none: a Close without a status. */
  close(code?: number, reason?: string): void;
  /** Drops the connection without a closing handshake (where the host cannot: close 1001). */
  terminate(): void;
  /** Sends a Ping (RFC 6455 §5.5.2); false where the host pings by itself (Deno's idleTimeout). */
  ping(): boolean;
}

/** What the host tells an open connection (websocket/connection.ts, proxy/relay.ts). */
export interface PeerEvents {
  /** A message, checked first against the endpoint's size and rate (admit). */
  receive(data: Buffer, isBinary: boolean): void;
  /** A Ping from the peer: it counts against the message rate (RFC 6455 §5.5.2: each costs a Pong). */
  ping(): void;
  /** The answer to our heartbeat's Ping. */
  pong(): void;
  /** The connection is closed (either side, or dropped): the peer's code and reason (RFC 6455 §7.1.5), 1005
   *  when its Close had none, 1006 when there was no Close. */
  closed(code: number, reason: string): void;
}

/**
 * A handshake on a host that switches the connection itself (Bun's server.upgrade, Deno's
 * upgradeWebSocket; fetch/entry.ts): the endpoint (or the proxy's relay) decides, the host writes the 101.
 */
export interface HostTunnel extends TunnelBase {
  /** Switches the connection to WebSocket; false when the host could not (nothing was sent). */
  upgradeWebSocket(o: HostUpgrade): boolean;
}

export interface HostUpgrade {
  /** The subprotocol chosen (RFC 6455 §4.2.2), or none. */
  readonly protocol: string | undefined;
  /** The request steps' fields for the 101 (http/switch-fields.ts). */
  readonly fields: readonly [string, string][];
  /** The heartbeat period, for a host that pings by itself (Deno's idleTimeout); 0: off. */
  readonly heartbeatIntervalMs: number;
  /** Called once the connection is open; the host feeds the connection's events to what it returns. */
  open(peer: PeerSocket): PeerEvents;
}
