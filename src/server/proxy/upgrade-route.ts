// WebSocket pass-through admission: a handshake that cleared every request step goes to its
// route's upstream (bounded per upstream origin by maxUpgrades); the tunnel itself is upgrade.ts.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ERRORS, sendError } from '../core/errors.js';
import type { Tunnel } from '../node/types.js';
import { findRoute, upstreamTarget } from './routes.js';
import { type ProxyState, upstreamHeadersFor } from './state.js';
import { proxyUpgrade } from './upgrade.js';

/** Whether a WebSocket handshake for this request goes to a pass-through route. */
export function ownsUpgrade(state: ProxyState, req: IncomingMessage): boolean {
  return findRoute(state.routes, req.url!)?.o.websocket === true;
}

/** false when no pass-through route matches; otherwise the handshake is answered or tunnelled. */
export function upgradeRoute(
  state: ProxyState,
  req: IncomingMessage,
  res: ServerResponse,
  tunnel: Tunnel,
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
  const { upgrades, tunnels } = state;
  // Counted per origin, not per route: two routes to one upstream share its bound.
  const origin = u.origin;
  const open = upgrades.get(origin) ?? 0;
  if (open >= route.o.maxUpgrades) {
    sendError(req, res, ERRORS.serviceUnavailable, 'Too many WebSocket connections to this upstream.');
    return true;
  }
  upgrades.set(origin, open + 1);
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
    target: upstreamTarget(req.url!, route.prefix, {
      stripPrefix: route.o.stripPrefix,
      basePath: u.basePath,
      rewrite: route.rewrite,
    }),
    headers,
    timeoutMs: route.o.timeouts.connectMs + route.o.timeouts.headersMs,
    logger: state.logger,
    onFailure: () => route.upstreams.failed(u),
    onDone: () => {
      const n = (upgrades.get(origin) ?? 1) - 1;
      if (n <= 0) upgrades.delete(origin);
      else upgrades.set(origin, n);
    },
  });
  return true;
}

/** Destroys tunnelled (upgraded) connections: they are invisible to server.close(). */
export function closeTunnels(state: ProxyState): void {
  for (const t of state.tunnels) t.destroy();
}
