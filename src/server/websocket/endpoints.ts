// The endpoint table, built and validated once per factory call; the heartbeat and the shutdown.
import { createRequire } from 'node:module';
import {
  CLOSE_CODES,
  type Endpoint,
  WebSocketConfigError,
  type WebSocketDeps,
  type WebSocketEndpoint,
  WS_CLOSED,
  WS_OPEN,
  type WsState,
} from './types.js';

// ws is loaded only when an endpoint is configured (it costs ~12 MB of RSS).
const loadWs = (): typeof import('ws') => createRequire(import.meta.url)('ws') as typeof import('ws');

/**
 * RFC 6455 §5.5.2: every Ping is answered with a Pong. A peer that sends Pings and never reads the
 * Pongs would queue them without end; past this many Pongs not yet written the connection is
 * terminated (ws's default, pinned here so no upgrade of ws can silently lift it).
 */
export const MAX_PENDING_PONGS = 60;
/** Fragments of one message (RFC 6455 §5.4): a message of a million 1-byte frames is refused. */
export const MAX_FRAGMENTS = 16 * 1024;

/** RFC 6455 §4.2.2 /subprotocol/: the first of ours (our preference order) that the client offered. */
function protocolChooser(ours: readonly string[]): (offered: Set<string>) => string | false {
  return (offered) => {
    for (const p of ours) if (offered.has(p)) return p;
    // Never agree to a subprotocol we do not speak; the client decides whether to go on without one.
    return false;
  };
}

/** One WebSocketServer per endpoint, by path; throws WebSocketConfigError for a list it cannot run. */
export function buildEndpoints(
  endpoints: readonly WebSocketEndpoint[],
  deps: WebSocketDeps,
): Map<string, Endpoint> {
  const byPath = new Map<string, Endpoint>();
  for (const [i, config] of endpoints.entries()) {
    if (byPath.has(config.path)) {
      throw new WebSocketConfigError(`websocket[${i}].path: duplicate path ${config.path}`);
    }
    const handler = deps.handlers?.[config.path];
    if (config.mode === 'custom' && handler === undefined) {
      throw new WebSocketConfigError(
        `websocket[${i}]: mode "custom" on ${config.path} needs deps.handlers['${config.path}']`,
      );
    }
    const wss = new (loadWs().WebSocketServer)({
      noServer: true,
      clientTracking: false,
      // Checked while inflating too (RFC 7692 §7.2.2): a compressed bomb is refused with 1009
      // once the inflated bytes pass the bound, not after.
      maxPayload: config.maxPayloadBytes,
      maxFragments: MAX_FRAGMENTS,
      perMessageDeflate: config.perMessageDeflate,
      handleProtocols: protocolChooser(config.subprotocols),
      // ws >= 8.19 reads it; @types/ws does not name it yet.
      ...{ maxPendingAutoPongs: MAX_PENDING_PONGS },
    });
    const rl = config.rateLimit;
    if (rl !== undefined && (!(rl.messagesPerSec > 0) || !Number.isInteger(rl.burst) || rl.burst < 1)) {
      throw new WebSocketConfigError(
        `websocket[${i}].rateLimit: messagesPerSec must be > 0 and burst an integer >= 1`,
      );
    }
    const ep: Endpoint = {
      config,
      wss,
      clients: new Map(),
      rooms: new Map(),
      handler,
      timer: undefined,
      messagePolicy: rl ? { ratePerSec: rl.messagesPerSec, burst: rl.burst } : undefined,
      fanout: undefined,
    };
    if (config.heartbeatIntervalMs > 0) {
      ep.timer = setInterval(() => heartbeat(ep), config.heartbeatIntervalMs);
      ep.timer.unref();
    }
    byPath.set(config.path, ep);
  }
  return byPath;
}

function heartbeat(ep: Endpoint): void {
  for (const c of ep.clients.values()) {
    if (!c.alive) {
      c.socket.terminate();
      continue;
    }
    c.alive = false;
    if (c.socket.readyState === WS_OPEN) c.socket.ping();
  }
}

/** Closes every connection with 1001, terminates stragglers after the grace, stops the heartbeats. */
export function closeEndpoints(ws: WsState): Promise<void> {
  const { byPath } = ws;
  ws.closing ??= (async () => {
    const waits: Promise<void>[] = [];
    for (const ep of byPath.values()) {
      if (ep.timer) clearInterval(ep.timer);
      ep.timer = undefined;
      for (const { socket } of ep.clients.values()) {
        waits.push(
          new Promise<void>((resolve) => {
            if (socket.readyState === WS_CLOSED) return resolve();
            socket.once('close', () => resolve());
            socket.close(CLOSE_CODES.goingAway, 'server shutting down');
          }),
        );
      }
    }
    const grace = setTimeout(() => {
      for (const ep of byPath.values()) for (const { socket } of ep.clients.values()) socket.terminate();
    }, ws.closeGraceMs);
    await Promise.all(waits);
    clearTimeout(grace);
    await Promise.all([...byPath.values()].map((ep) => ep.fanout?.close()));
    await Promise.all([...byPath.values()].map((ep) => new Promise<void>((r) => ep.wss.close(() => r()))));
  })();
  return ws.closing;
}
