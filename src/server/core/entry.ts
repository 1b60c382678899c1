// The one way in. Node hands a request to us in two ways: the 'request' event (with a response) and
// the 'upgrade' event (with the raw socket). Both become the same request context here and run the
// same ordered steps; no handler is reachable otherwise (DESIGN: "Request path (one way in)").
//
// - A WebSocket handshake for a path that has a tunnel (an endpoint, a proxied prefix) gets a
//   ServerResponse bound to its socket, so every step answers it as it answers any request (401,
//   403, 429, redirects, all through sendError and the access log). Only after the gate steps does
//   the tunnel handler see it, at one fixed point (the handoff after the gate).
// - Any other Upgrade (h2c, TLS/1.0, websocket to a path without a tunnel) is ignored (RFC 9110
//   §7.8): its head, minus Upgrade, and the bytes already read are fed back to the HTTP server's
//   connection handling, which parses it again (body included) and emits an ordinary 'request'.
// - A handler mounted in an app's server (createHandler, the adapters) owns only the handshakes below its
//   mount that it has a tunnel for. Any other Upgrade is the app's: while the server has another
//   'upgrade' listener, the socket is left untouched (nothing written, read or destroyed); when
//   Gatehouse's listeners are the only ones, the request is read again as above, which is what Node
//   does with an Upgrade when no 'upgrade' listener exists.
import { type IncomingMessage, type Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { takeUnparsed } from '../app/pipelining.js';
import { switched } from '../ops/log.js';
import type { Final, Step, Tunnel, TunnelHandler } from './context.js';
import { ERRORS, type ErrorEntry, sendError } from './errors.js';
import { compilePipeline } from './pipeline.js';

/** A tunnel target: which handshakes are its (by path), and the handler that takes them. */
export interface TunnelRoute {
  readonly owns: (req: IncomingMessage) => boolean;
  readonly handle: TunnelHandler;
}

/** A request the entry refuses before any step (the request-target / Host check). */
export interface EntryRefusal {
  readonly entry: ErrorEntry;
  readonly detail: string;
  /** Extra fields (e.g. Connection: close after a malformed head). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

export interface EntryOptions {
  readonly maxUrlBytes: number;
  /** Steps every request passes, handshakes included: header rules, CORS, rate limit, auth,
   *  redirects. */
  readonly gate: readonly Step[];
  /** Steps that answer ordinary requests (routes, JSONP, proxy), then the final handler (static). */
  readonly handlers: readonly Step[];
  readonly final: Final;
  /** WebSocket tunnels, tried in order after the gate. */
  readonly tunnels: readonly TunnelRoute[];
  readonly onError: (err: unknown, req: IncomingMessage, res: ServerResponse) => void;
  /** Access log hook (log.ts accessLogger), called once per request before any step. */
  readonly logAccess: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  /**
   * The request-target and Host check: runs first, for requests and handshakes alike, and may
   * rewrite req.url / req.headers.host to their canonical form. A refusal is sent as is (400).
   */
  readonly checkTarget?: ((req: IncomingMessage) => EntryRefusal | undefined) | undefined;
}

/** A server's 'upgrade' listener. */
export type UpgradeListener = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

export interface Entry {
  /** The server's 'request' listener. */
  readonly onRequest: (req: IncomingMessage, res: ServerResponse) => void;
  /** The server's 'upgrade' listener. */
  readonly onUpgrade: UpgradeListener;
  /**
   * The 'upgrade' listener of a handler mounted at `mount` ('' for the root; a path such as '/static',
   * no trailing slash): it takes the WebSocket handshakes below the mount that a tunnel owns, with the
   * mount stripped from req.url, as the app's router strips it from requests.
   */
  /** The listener for a handler mounted at `mount`, or at what `mount()` finds once the app has mounted it. */
  readonly upgradeAt: (mount: string | (() => string | undefined)) => UpgradeListener;
  /** Draining: responses carry Connection: close. */
  readonly setClosing: () => void;
}

const guarded = new WeakSet<Duplex>();
/** Every 'upgrade' listener a mounted handler made, whichever handler (several may share a server). */
const mountedListeners = new WeakSet<(...args: never[]) => unknown>();
/** Handshakes a mounted handler's listener took: no other Gatehouse listener touches them. */
const claimed = new WeakSet<IncomingMessage>();

/**
 * `url` below `mount` ('' is the root), the mount stripped; undefined outside it. Segment-wise:
 * '/static' covers '/static', '/static/a' and '/static?q', never '/statics'.
 */
export function belowMount(url: string, mount: string): string | undefined {
  if (mount === '') return url;
  if (!url.startsWith(mount)) return undefined;
  const c = url.charCodeAt(mount.length);
  if (Number.isNaN(c) || c === 0x3f) return `/${url.slice(mount.length)}`;
  return c === 0x2f ? url.slice(mount.length) : undefined;
}

/**
 * A mount path as given to an adapter ('/static', '/static/', '/', '' or undefined) in the form
 * belowMount takes: '' for the root, else no trailing slash. Throws on anything but an origin-form path.
 */
export function normalMount(mountPath: string | undefined, option = 'mountPath'): string {
  if (mountPath === undefined || mountPath === '') return '';
  // Not `//host` or `/\host`: the mount is put back on Locations, which must stay path-only.
  if (!mountPath.startsWith('/') || mountPath.startsWith('//') || /[?#\\\s]/.test(mountPath))
    throw new TypeError(`${option} must be a path such as "/app", not ${JSON.stringify(mountPath)}`);
  return mountPath.replace(/\/+$/, '');
}
function destroyOnError(this: Duplex): void {
  this.destroy();
}

/** True when the Upgrade field offers `websocket` (RFC 9110 §7.8: a list of protocols). */
export function offersWebSocket(upgrade: string | undefined): boolean {
  if (upgrade === undefined) return false;
  for (const p of upgrade.split(',')) if (p.trim().toLowerCase() === 'websocket') return true;
  return false;
}

/**
 * The request head again, without Upgrade and without the `upgrade` connection option (RFC 9110
 * §7.6.1, §7.8), so that the parser sees an ordinary request. Names, values and order are the
 * client's (rawHeaders); strings are latin1 as Node's parser produced them.
 */
export function headWithoutUpgrade(i: {
  method: string;
  url: string;
  httpVersion: string;
  rawHeaders: readonly string[];
}): string {
  let s = `${i.method} ${i.url} HTTP/${i.httpVersion}\r\n`;
  for (let k = 0; k + 1 < i.rawHeaders.length; k += 2) {
    const name = i.rawHeaders[k]!;
    const lower = name.toLowerCase();
    let value = i.rawHeaders[k + 1]!;
    if (lower === 'upgrade') continue;
    if (lower === 'connection') {
      value = value
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t !== '' && t.toLowerCase() !== 'upgrade')
        .join(', ');
      if (value === '') continue;
    }
    s += `${name}: ${value}\r\n`;
  }
  return `${s}\r\n`;
}

/** Runs `go` once no earlier (pipelined) response is still being written on `socket`. */
function whenSocketFree(socket: Duplex, go: () => void): void {
  const busy = (socket as { _httpMessage?: ServerResponse | null })._httpMessage;
  if (!busy) {
    go();
    return;
  }
  // Node's own 'finish' listener (registered first) detaches the earlier response.
  const next = () => {
    busy.off('finish', next);
    socket.off('close', onClose);
    whenSocketFree(socket, go);
  };
  const onClose = () => busy.off('finish', next);
  busy.once('finish', next);
  socket.once('close', onClose);
}

/**
 * A response bound to an upgrade socket (the parser is gone, so the connection closes after it) and
 * the tunnel the handler takes the socket from. When the handler switches protocols, the response's
 * observers (access log, metrics) are told (log.ts switched): it never closes.
 */
export function bindTunnel(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): { res: ServerResponse; tunnel: Tunnel } {
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket as Socket);
  res.once('finish', () => {
    if (res.socket === socket) (socket as Socket).destroySoon();
  });
  const tunnel: Tunnel = {
    socket,
    head,
    accept: () => {
      if (res.socket === socket) res.detachSocket(socket as Socket);
      switched(res);
    },
  };
  return { res, tunnel };
}

/**
 * The entry of one pipeline. `server`: where an ignored Upgrade's connection is fed back to be parsed
 * again; without it (a handler mounted in an app's server), the server the socket came from.
 */
export function createEntry(o: EntryOptions, server?: Pick<Server, 'emit'>): Entry {
  const { maxUrlBytes, logAccess, checkTarget } = o;
  /** Ordinary requests: the gate steps, then the handlers, in one loop. */
  const requests = compilePipeline([...o.gate, ...o.handlers], o.final, o.onError);
  const handlers = compilePipeline(o.handlers, o.final, o.onError);
  const tunnels = new WeakMap<IncomingMessage, Tunnel>();
  /**
   * Handshakes: the same gate steps, then the fixed handoff point: the tunnel that owns the (possibly
   * canonicalised) target; one that no tunnel owns any more is served like any request (Upgrade
   * ignored, RFC 9110 §7.8) on the bound response.
   */
  const handshakes = compilePipeline(
    o.gate,
    (req, res) => {
      const tunnel = tunnels.get(req);
      if (tunnel !== undefined) {
        const route = o.tunnels.find((t) => t.owns(req));
        if (route?.handle(req, res, tunnel)) return;
      }
      handlers(req, res);
    },
    o.onError,
  );
  let closing = false;

  const enter = (req: IncomingMessage, res: ServerResponse, run: Final): void => {
    if (logAccess) logAccess(req, res);
    if (closing) res.setHeader('Connection', 'close');
    // The request-target / Host validation runs here, first, for requests and handshakes alike.
    const bad = checkTarget?.(req);
    if (bad !== undefined) {
      sendError(req, res, bad.entry, bad.detail, bad.headers);
      return;
    }
    // RFC 9110 §15.5.15: 414 for a target longer than we are willing to interpret.
    if (req.url!.length > maxUrlBytes) {
      sendError(req, res, ERRORS.uriTooLong, `The request target is longer than ${maxUrlBytes} bytes.`);
      return;
    }
    run(req, res);
  };

  /** Takes a handshake's socket: the gate steps, then the tunnel (`handshake`), or read again as a request. */
  const take = (
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    handshake: boolean,
    url: string,
  ): void => {
    // Node's own error listener left with the parser: a reset must not crash the process. Once per
    // socket: a keep-alive connection may ignore many Upgrades in a row.
    if (!guarded.has(socket)) {
      guarded.add(socket);
      socket.on('error', destroyOnError);
    }
    // Bytes after this head that the pipelining gate still holds belong after `head`, whatever
    // happens next (re-parsed, or the first frames of a tunnel).
    const unparsed = takeUnparsed(socket);
    if (unparsed !== undefined) head = head.length === 0 ? unparsed : Buffer.concat([head, unparsed]);
    whenSocketFree(socket, () => {
      if (socket.destroyed) return;
      if (!handshake) {
        // RFC 9110 §7.8: a server MAY ignore Upgrade. Parse the request again without it, with the
        // target the client sent.
        const again = headWithoutUpgrade({
          method: req.method!,
          url,
          httpVersion: req.httpVersion,
          rawHeaders: req.rawHeaders,
        });
        const owner = server ?? (socket as { server?: Pick<Server, 'emit'> }).server;
        if (owner === undefined) {
          socket.destroy();
          return;
        }
        socket.unshift(Buffer.concat([Buffer.from(again, 'latin1'), head]));
        // The HTTP layer's connection listener: 'secureConnection' on a TLS server.
        owner.emit((socket as { encrypted?: boolean }).encrypted ? 'secureConnection' : 'connection', socket);
        return;
      }
      const { res, tunnel } = bindTunnel(req, socket, head);
      tunnels.set(req, tunnel);
      enter(req, res, handshakes);
    });
  };

  /** A WebSocket handshake for a path with a tunnel (chosen again after the steps). */
  const owned = (req: IncomingMessage): boolean =>
    offersWebSocket(req.headers.upgrade) && o.tunnels.some((t) => t.owns(req));

  /** The listener of the server Gatehouse owns (createGatehouse): every Upgrade is its to answer. */
  const onUpgrade: UpgradeListener = (req, socket, head) => take(req, socket, head, owned(req), req.url!);

  const upgradeAt = (mountOrFind: string | (() => string | undefined)): UpgradeListener => {
    // A mount found from the app (an adapter's finder) is looked for at each handshake until found.
    let known = typeof mountOrFind === 'string' ? mountOrFind : undefined;
    const listener: UpgradeListener = (req, socket, head) => {
      if (claimed.has(req)) return;
      const url = req.url!;
      if (known === undefined && typeof mountOrFind === 'function') {
        const found = mountOrFind();
        if (found !== undefined) known = normalMount(found);
      }
      const inner = belowMount(url, known ?? '');
      if (inner !== undefined) {
        req.url = inner;
        const ours = owned(req);
        req.url = url;
        if (ours) {
          claimed.add(req);
          // The server's other 'upgrade' listeners run after this one, on the same request: they see
          // it as it came (and leave it, by its path); the mount is stripped once they have run.
          process.nextTick(() => {
            req.url = inner;
            take(req, socket, head, true, url);
          });
          return;
        }
      }
      // Not ours: the app's. Node leaves an Upgrade to the 'upgrade' listeners once there is one, so
      // Gatehouse stands in for Node only where no listener but its own (or one wrapping it) exists.
      const owner = (socket as { server?: Pick<Server, 'listeners'> }).server;
      if (owner === undefined) return;
      const all = owner.listeners('upgrade');
      const sole =
        all.length === 1 ||
        (all.every((l) => mountedListeners.has(l as UpgradeListener)) && all[all.length - 1] === listener);
      if (sole) take(req, socket, head, false, url);
    };
    mountedListeners.add(listener);
    return listener;
  };

  return {
    onRequest: (req, res) => enter(req, res, requests),
    onUpgrade,
    upgradeAt,
    setClosing: () => {
      closing = true;
    },
  };
}
