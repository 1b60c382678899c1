// WebSocket pass-through admission: a handshake that cleared every request step goes to its
// route's upstream (bounded per upstream origin by maxUpgrades). On Node the tunnel carries bytes
// (upgrade.ts); on a host that switches handshakes itself (Bun.serve, Deno.serve) it relays messages
// (relay.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseSubprotocolOffer } from '../../http/websocket-relay.js';
import { ERRORS, sendError } from '../core/errors.js';
import type { HostTunnel } from '../core/host-tunnel.js';
import type { Tunnel } from '../node/types.js';
import { type Relay, relayUpgrade } from './relay.js';
import { findRoute, type Route, upstreamTarget } from './routes.js';
import { type ProxyState, upstreamHeadersFor } from './state.js';
import { proxyUpgrade } from './upgrade.js';
import type { Upstream } from './upstreams.js';

/** Whether a WebSocket handshake for this request goes to a pass-through route. */
export function ownsUpgrade(state: ProxyState, req: IncomingMessage): boolean {
  return findRoute(state.routes, req.url!)?.o.websocket === true;
}

/** false when no pass-through route matches; otherwise the handshake is answered or tunnelled. */
export function upgradeRoute(
  state: ProxyState,
  req: IncomingMessage,
  res: ServerResponse,
  tunnel: Tunnel | HostTunnel,
): boolean {
  const route = findRoute(state.routes, req.url!);
  if (route === undefined || !route.o.websocket) return false;
  // RFC 6455 §4.1: the opening handshake is a GET.
  if (req.method !== 'GET') {
    sendError(req, res, ERRORS.badRequest, 'A WebSocket handshake must be a GET request.');
    return true;
  }
  const u = route.upstreams.pick();
  if (u === undefined) {
    sendError(req, res, ERRORS.badGateway, 'No upstream is available.');
    return true;
  }
  const host = 'upgradeWebSocket' in tunnel;
  // The relay reads the offer itself (on Node the upstream does): RFC 6455 §4.1, malformed -> 400.
  const offered = req.headers['sec-websocket-protocol'];
  const offer = host
    ? parseSubprotocolOffer(Array.isArray(offered) ? offered.join(', ') : offered)
    : undefined;
  if (offer?.kind === 'malformed') {
    sendError(req, res, ERRORS.badRequest, 'Invalid Sec-WebSocket-Protocol header.');
    return true;
  }
  if (host && state.closing) {
    sendError(req, res, ERRORS.serviceUnavailable, 'The server is shutting down.');
    return true;
  }
  const { upgrades, tunnels } = state;
  // Counted per origin, not per route: two routes to one upstream share its bound.
  const origin = u.origin;
  const open = upgrades.get(origin) ?? 0;
  if (open >= route.o.maxUpgrades) {
    sendError(req, res, ERRORS.serviceUnavailable, 'Too many WebSocket connections to this upstream.');
    return true;
  }
  upgrades.set(origin, open + 1);
  const onDone = () => {
    const n = (upgrades.get(origin) ?? 1) - 1;
    if (n <= 0) upgrades.delete(origin);
    else upgrades.set(origin, n);
  };
  const target = upstreamTarget(req.url!, route.prefix, {
    stripPrefix: route.o.stripPrefix,
    basePath: u.basePath,
    rewrite: route.rewrite,
  });
  const timeoutMs = route.o.timeouts.connectMs + route.o.timeouts.headersMs;
  if (host) {
    relayUpgrade(
      req,
      res,
      tunnel,
      {
        url: relayUrl(u, target),
        protocols: offer?.kind === 'offered' ? offer.protocols : [],
        headers: relayHeaders(upstreamHeadersFor(state, req, route, u, true)),
        timeoutMs,
        maxBufferedBytes: relayBufferBytes(route),
        upstreamOrigin: origin,
        logger: state.logger,
        onFailure: () => route.upstreams.failed(u),
        onDone,
      },
      state.relays,
    );
    return true;
  }
  const headers = upstreamHeadersFor(state, req, route, u, true);
  // Only the WebSocket protocol is tunnelled: the upstream is offered exactly that (RFC 9110 §7.8),
  // never another protocol the client listed beside it.
  headers.upgrade = 'websocket';
  headers.connection = 'Upgrade';
  const { socket } = tunnel;
  tunnels.add(socket);
  socket.once('close', () => tunnels.delete(socket));
  proxyUpgrade(req, res, tunnel, {
    upstream: u,
    target,
    headers,
    timeoutMs,
    logger: state.logger,
    onFailure: () => route.upstreams.failed(u),
    onDone,
  });
  return true;
}

/** The upstream's WebSocket URL (RFC 6455 §3): ws: for http:, wss: for https:. */
function relayUrl(u: Upstream, target: string): string {
  return `${u.url.protocol === 'https:' ? 'wss:' : 'ws:'}//${u.url.host}${target}`;
}

/**
 * The upstream fields for the relay's WebSocket client: the forwarding fields and the client's
 * end-to-end ones. The handshake's own (Upgrade, Connection, Sec-WebSocket-*) are the client API's:
 * it makes its own key, offers the protocols it is given and its own extensions. Host is kept (Bun
 * sends it; Deno's client always sends the upstream's).
 */
function relayHeaders(h: Record<string, string | string[]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(h)) {
    if (name === 'upgrade' || name === 'connection' || name.startsWith('sec-websocket-')) continue;
    // RFC 9110 §5.3 joins repeated lines with commas; Cookie's lines with "; " (RFC 6265 §5.4).
    out[name] = typeof value === 'string' ? value : value.join(name === 'cookie' ? '; ' : ', ');
  }
  return out;
}

/** What a relay holds for a slow side: the route's bufferBytes, at least one 1 MiB message. */
function relayBufferBytes(route: Route): number {
  return Math.max(route.o.bufferBytes, 1024 * 1024);
}

/** Closes every relay with 1001 Going Away, then waits for them (terminated after `graceMs`). */
export async function closeRelays(state: ProxyState, graceMs: number): Promise<void> {
  state.closing = true;
  const relays = [...state.relays];
  if (relays.length === 0) return;
  for (const r of relays) r.close(1001, 'server shutting down');
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      for (const r of relays) r.terminate();
      resolve();
    }, graceMs);
  });
  await Promise.race([Promise.all(relays.map((r: Relay) => r.done)), late]);
  clearTimeout(timer);
}

/** Destroys tunnelled (upgraded) connections: they are invisible to server.close(). */
export function closeTunnels(state: ProxyState): void {
  for (const t of state.tunnels) t.destroy();
}
