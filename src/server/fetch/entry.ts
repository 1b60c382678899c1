// The Fetch-API transport: a host that calls `fetch(request, info)` and awaits a Response (Bun.serve,
// Deno.serve, workers) drives the kernel's entry through it, as node/entry.ts drives it from node:http's
// 'request' event. One FetchRequest and one FetchSink per request. A WebSocket handshake for an
// endpoint enters as a handshake (the same gate steps) when the host can switch it (info.upgradeWebSocket,
// from listenNative): the endpoint decides, the host writes the 101 (Bun's server.upgrade,
// Deno.upgradeWebSocket). Without that, it is an ordinary request (RFC 9110 §7.8: Upgrade ignored).

import type { MountFacts, TunnelBase } from '../core/context.js';
import type { Entry } from '../core/entry.js';
import { switched } from '../ops/log.js';
import type { HostTunnel } from '../websocket/index.js';
import { type ConnectionInfo, FetchRequest, type UpgradeWebSocket } from './request.js';
import { FetchSink } from './sink.js';

export type { ConnectionInfo, UpgradeWebSocket } from './request.js';
export { FetchRequest } from './request.js';
export { FetchSink } from './sink.js';

/**
 * The host's handler: a Request in, its Response out (rejects only when the response was dropped). A
 * Response made before the handler returns (a cached file, a 304) comes back as it is, not in a promise:
 * Bun.serve and Deno.serve take either, and send it without a turn of the loop.
 */
export type FetchListener = (request: Request, info?: ConnectionInfo) => Response | Promise<Response>;

/**
 * A mounted face's handler (an app's middleware, Hono's): undefined when nothing here answers the request,
 * so the app's next handler does. `mount`: where the app routes it, already stripped from the Request's URL.
 */
export type MountedFetchListener = (
  request: Request,
  info?: ConnectionInfo,
  mount?: MountFacts,
) => Promise<Response | undefined>;

export function fetchEntry(entry: Entry<FetchRequest, FetchSink, TunnelBase>): FetchListener {
  return (request, info) => {
    const req = new FetchRequest(request, info);
    // RFC 9110 §9.3.2: HEAD gets the fields of GET and no content.
    const res = new FetchSink(req.method === 'HEAD', info?.responseEnding, req);
    const upgrade = info?.upgradeWebSocket;
    if (upgrade !== undefined && entry.owns(req)) {
      req.upgrade = true;
      // A refused handshake closes its connection, as on Node (where the parser has let go of it):
      // RFC 9112 §9.6. Connection is hop-by-hop, so a 101 never carries it (http/switch-fields.ts).
      res.setHeader('Connection', 'close');
      entry.handshake(req, res, hostTunnel(request, res, upgrade));
    } else entry.request(req, res);
    // Undefined only after a host upgrade that answers by itself (Bun's).
    return (res.made ?? res.response) as Response | Promise<Response>;
  };
}

/** The handshake's tunnel on a host that switches it: the upgrade, then the switch on the sink. */
function hostTunnel(request: Request, res: FetchSink, upgrade: UpgradeWebSocket): HostTunnel {
  let response: Response | undefined;
  return {
    upgradeWebSocket: (o) => {
      const r = upgrade(request, o);
      if (r === false) return false;
      response = r ?? undefined;
      return true;
    },
    accept: () => {
      res.switchTo(response);
      // The access log and the metrics see the 101 (log.ts).
      switched(res as unknown as Parameters<typeof switched>[0]);
    },
  };
}

export function mountedFetchEntry(entry: Entry<FetchRequest, FetchSink, TunnelBase>): MountedFetchListener {
  return (request, info, mount) => {
    const req = new FetchRequest(request, info);
    const res = new FetchSink(req.method === 'HEAD', undefined, req);
    entry.request(req, res, { passOn: (err) => res.passOn(err), mount });
    return mount === undefined ? res.response : res.response.then((r) => r && atMount(r, mount.path));
  };
}

/**
 * A path-only Location (RFC 9110 §10.2.2) names a path below the mount: the app's router stripped the
 * mount from the URL, so it goes back on (adapters/shared.ts answerAtMount does this on Node).
 */
function atMount(r: Response, mountPath: string): Response {
  const location = r.headers.get('location');
  if (
    location === null ||
    !location.startsWith('/') ||
    location.startsWith('//') ||
    location.startsWith('/\\')
  )
    return r;
  // Never a protocol-relative result, whatever the app's router took as its mount.
  r.headers.set('location', mountPath.replace(/^[/\\]+/, '/') + location);
  return r;
}
