// The state one proxy's parts share: compiled routes, cache policy, open tunnels, exchange env.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { CacheRule, compileRuleList } from '../../http/cache-policy.js';
import { upstreamRequestHeaders } from '../../http/proxy-headers.js';
import type { StepContext } from '../node/types.js';
import type { Logger } from '../ops/log.js';
import type { ExchangeEnv } from './forward.js';
import type { Relay } from './relay.js';
import type { Route } from './routes.js';
import type { Upstream } from './upstreams.js';

export interface ProxyDeps {
  readonly ctx: StepContext;
  /** Whether the socket peer is a trusted proxy (its X-Forwarded-* are kept and extended). */
  readonly isTrustedPeer: (req: IncomingMessage) => boolean;
  /** User cache rules, tried on proxied responses without Cache-Control (or with, when `override`). */
  readonly cachePolicy: readonly CacheRule[];
  /** limits.sendTimeoutMs: a client that takes no response byte for this long is dropped. */
  readonly sendTimeoutMs?: number | undefined;
}

/** One per proxy, built by createProxy and passed to each part explicitly. */
export interface ProxyState {
  readonly deps: ProxyDeps;
  readonly logger: Logger;
  /** Longest prefix first. */
  readonly routes: readonly Route[];
  /** The compiled deps.cachePolicy. */
  readonly policy: ReturnType<typeof compileRuleList>;
  /** Whether deps.cachePolicy has a rule (else `policy` is not asked). */
  readonly hasPolicy: boolean;
  /** Upgraded (tunnelled) connections: invisible to server.close(), destroyed by closeTunnels. */
  readonly tunnels: Set<Duplex>;
  /** WebSocket message relays (hosts that switch handshakes themselves: Bun.serve, Deno.serve). */
  readonly relays: Set<Relay>;
  /** Shutting down: later relayed handshakes get 503. */
  closing: boolean;
  /** Upgraded connections open per upstream origin, shared by every route to that origin (each
   *  route checks it against its own maxUpgrades). */
  readonly upgrades: Map<string, number>;
  /** What each exchange (forward.ts) calls back into. */
  readonly env: ExchangeEnv;
}

export const VIA_NAME = 'gatehouse';

/** The fields sent upstream for `req` on `route` to `u` (RFC 9110 §7.6; RFC 7239), plain or upgrade. */
export function upstreamHeadersFor(
  state: ProxyState,
  req: IncomingMessage,
  route: Route,
  u: Upstream,
  upgrade = false,
): Record<string, string | string[]> {
  const o = route.o;
  return upstreamRequestHeaders({
    headers: req.headers,
    peer: req.socket.remoteAddress,
    peerTrusted: state.deps.isTrustedPeer(req),
    proto: (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http',
    upstreamHost: u.url.host,
    changeOrigin: o.changeOrigin,
    xForwarded: o.xForwarded,
    forwarded: o.forwarded,
    via: o.via ? VIA_NAME : undefined,
    // RFC 9110 §7.6.3: the protocol the request was received with; HTTP/2's version is "2".
    viaVersion: req.httpVersionMajor === 2 ? '2' : req.httpVersion,
    upgrade,
  });
}
