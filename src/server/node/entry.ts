// The Node transport's side of the one way in. Node hands a request over in two ways: the 'request'
// event (with a response) and the 'upgrade' event (with the raw socket). Both go to the kernel's entry
// (core/entry.ts), which runs the same ordered steps.
//
// - A WebSocket handshake for a path that has a tunnel gets a ServerResponse bound to its socket and
//   enters the kernel as a handshake.
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
import type { Mounted } from '../core/context.js';
import type { Entry as KernelEntry } from '../core/entry.js';
import { belowMount, normalMount } from '../core/mount.js';
import { switched } from '../ops/log.js';
import { takeUnparsed } from './pipelining.js';
import type { Tunnel } from './types.js';

/** A server's 'upgrade' listener. */
export type UpgradeListener = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

/** The kernel's entry as Node's server events drive it. */
export interface Entry {
  /** The server's 'request' listener (`mounted`: what a mounting app brings, for createHandler). */
  readonly onRequest: (req: IncomingMessage, res: ServerResponse, mounted?: Mounted) => void;
  /** The server's 'upgrade' listener. */
  readonly onUpgrade: UpgradeListener;
  /**
   * The 'upgrade' listener of a handler mounted at `mount` ('' for the root; a path such as '/static',
   * no trailing slash), or at what `mount()` finds once the app has mounted it: it takes the WebSocket
   * handshakes below the mount that a tunnel owns, with the mount stripped from req.url, as the app's
   * router strips it from requests.
   */
  readonly upgradeAt: (mount: string | (() => string | undefined)) => UpgradeListener;
  /** Draining: responses carry Connection: close. */
  readonly setClosing: () => void;
}

type NodeKernelEntry = KernelEntry<IncomingMessage, ServerResponse, Tunnel>;

const guarded = new WeakSet<Duplex>();
/** Every 'upgrade' listener a mounted handler made, whichever handler (several may share a server). */
const mountedListeners = new WeakSet<(...args: never[]) => unknown>();
/** Handshakes a mounted handler's listener took: no other Gatehouse listener touches them. */
const claimed = new WeakSet<IncomingMessage>();

function destroyOnError(this: Duplex): void {
  this.destroy();
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
 * Node's server events for the kernel's `entry`. `server`: where an ignored Upgrade's connection is fed
 * back to be parsed again; without it (a handler mounted in an app's server), the server the socket
 * came from.
 */
export function nodeEntry(entry: NodeKernelEntry, server?: Pick<Server, 'emit'>): Entry {
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
      entry.handshake(req, res, tunnel);
    });
  };

  /** The listener of the server Gatehouse owns (createGatehouse): every Upgrade is its to answer. */
  const onUpgrade: UpgradeListener = (req, socket, head) =>
    take(req, socket, head, entry.owns(req), req.url!);

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
        const ours = entry.owns(req);
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
    onRequest: entry.request,
    onUpgrade,
    upgradeAt,
    setClosing: entry.setClosing,
  };
}
