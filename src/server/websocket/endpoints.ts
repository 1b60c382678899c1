// The endpoint table, built and validated once per factory call; the heartbeat and the shutdown.
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

/** The endpoints by path; throws WebSocketConfigError for a list it cannot run. */
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
    const rl = config.rateLimit;
    if (rl !== undefined && (!(rl.messagesPerSec > 0) || !Number.isInteger(rl.burst) || rl.burst < 1)) {
      throw new WebSocketConfigError(
        `websocket[${i}].rateLimit: messagesPerSec must be > 0 and burst an integer >= 1`,
      );
    }
    const ep: Endpoint = {
      config,
      wss: undefined,
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
    // A host that pings by itself (Deno) keeps the client alive here.
    if (c.socket.readyState === WS_OPEN && c.socket.ping()) c.alive = false;
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
      for (const client of ep.clients.values()) {
        waits.push(
          new Promise<void>((resolve) => {
            client.onClosed = resolve;
            // RFC 6455 §7.4.1: 1001, the server is going away.
            if (client.socket.readyState !== WS_CLOSED)
              client.socket.close(CLOSE_CODES.goingAway, 'server shutting down');
          }),
        );
      }
    }
    let grace: ReturnType<typeof setTimeout> | undefined;
    // After the grace the stragglers are dropped; a host that cannot drop one (Deno has no abort, and
    // may never report a close it began: denoland/deno#21642) is not waited for past a second grace.
    const dropped = new Promise<void>((resolve) => {
      grace = setTimeout(() => {
        for (const ep of byPath.values()) for (const { socket } of ep.clients.values()) socket.terminate();
        grace = setTimeout(resolve, ws.closeGraceMs);
      }, ws.closeGraceMs);
    });
    await Promise.race([Promise.all(waits), dropped]);
    clearTimeout(grace);
    await Promise.all([...byPath.values()].map((ep) => ep.fanout?.close()));
    await Promise.all(
      [...byPath.values()].map((ep) => new Promise<void>((r) => (ep.wss ? ep.wss.close(() => r()) : r()))),
    );
  })();
  return ws.closing;
}
