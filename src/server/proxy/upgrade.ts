// WebSocket pass-through (RFC 6455 over RFC 9110 §7.8): the handshake reaches here only after every
// request step let it through (src/server/core/entry.ts). The client gets the upstream's 101 (with the
// steps' fields, see switchHead) and then bytes flow both ways; any other answer is relayed as an
// ordinary response on the step's ServerResponse and the upstream connection is closed: it was
// opened for this one exchange. Until the switch, the upstream connection is closed with a reset
// (resetUpstream), so an upstream that keeps the socket open still sees the close.
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { connectionTokens, isHopByHop, stripHopByHop } from '../../http/proxy-headers.js';
import { switchFields } from '../../http/switch-fields.js';
import { ERRORS, sendError } from '../core/errors.js';
import { responseFields } from '../core/response-headers.js';
import { mergeVary } from '../core/vary.js';
import type { Tunnel } from '../node/types.js';
import type { Logger } from '../ops/log.js';
import type { Upstream } from './upstreams.js';

export interface UpgradeOptions {
  readonly upstream: Upstream;
  readonly target: string;
  readonly headers: Record<string, string | string[]>;
  readonly timeoutMs: number;
  readonly logger: Logger;
  readonly onFailure: () => void;
  /** Called once, when both the client and the upstream side of this exchange are closed. */
  readonly onDone: () => void;
}

/**
 * The 101 the client gets: the upstream's fields minus hop-by-hop ones (RFC 9110 §7.6.1), then
 * `Connection: Upgrade` (the switch is to the protocol the upstream named in Upgrade, §7.8), then
 * the steps' fields (switchFields). As on any proxied response, a step's field replaces the
 * upstream's of the same name and Vary is merged (§12.5.5); the handshake's own fields (Upgrade,
 * Sec-WebSocket-*) are always the upstream's. Values never hold CR/LF (a parser or setHeader
 * checked them).
 */
export function switchHead(
  message: string,
  upstreamRaw: readonly string[],
  steps: readonly (readonly [string, string])[],
): string {
  const ours = new Set(steps.map(([n]) => n.toLowerCase()));
  const connection: string[] = [];
  for (let i = 0; i + 1 < upstreamRaw.length; i += 2) {
    if (upstreamRaw[i]!.toLowerCase() === 'connection') connection.push(upstreamRaw[i + 1]!);
  }
  const listed = connectionTokens(connection);
  let s = `HTTP/1.1 101 ${message}\r\n`;
  let upstreamVary: string | undefined;
  for (let i = 0; i + 1 < upstreamRaw.length; i += 2) {
    const name = upstreamRaw[i]!;
    const value = upstreamRaw[i + 1]!;
    const lower = name.toLowerCase();
    if (lower !== 'upgrade' && (isHopByHop(lower) || listed.has(lower))) continue;
    if (!ours.has(lower)) s += `${name}: ${value}\r\n`;
    else if (lower === 'vary') upstreamVary = mergeVary(upstreamVary, value);
  }
  s += 'Connection: Upgrade\r\n';
  for (const [name, value] of steps) {
    const v =
      upstreamVary !== undefined && name.toLowerCase() === 'vary' ? mergeVary(upstreamVary, value) : value;
    s += `${name}: ${v}\r\n`;
  }
  return `${s}\r\n`;
}

/**
 * Closes the upstream connection of a handshake that did not switch. A FIN alone is not enough: a
 * Node upstream answers a refusal from its 'upgrade' listener and keeps the socket open (its server
 * allows half-open connections), so it holds the connection forever; a reset (RST) ends it. An
 * upstream that already closed its side gets the FIN. TLS sockets have no TCP handle to reset
 * (resetAndDestroy throws): they get the FIN.
 */
function resetUpstream(s: Socket | undefined): void {
  if (s === undefined || s.destroyed) return;
  // Not after our own end(): libuv refuses a reset once a shutdown is queued (uv_tcp_close_reset:
  // EINVAL) and the handle was left spinning the event loop at 100% CPU. Not while still connecting.
  if (s.readableEnded || s.writableEnded || s.connecting) {
    s.destroy();
    return;
  }
  try {
    s.resetAndDestroy();
  } catch {
    s.destroy();
  }
}

/** Bytes a client may send between its handshake and the upstream's answer; more closes it. */
const MAX_EARLY_BYTES = 64 * 1024;

export function proxyUpgrade(
  req: IncomingMessage,
  res: ServerResponse,
  tunnel: Tunnel,
  o: UpgradeOptions,
): void {
  const { socket } = tunnel;
  const u = o.upstream.url;
  const request = u.protocol === 'https:' ? httpsRequest : httpRequest;
  const up = request({
    host: u.hostname,
    port: u.port || (u.protocol === 'https:' ? 443 : 80),
    method: req.method,
    path: o.target,
    headers: o.headers,
    agent: false,
  });
  // Counted until both sides are gone, whatever happens in between.
  let open = 2;
  const closed = () => {
    if (--open === 0) o.onDone();
  };
  socket.once('close', closed);
  up.once('close', closed);
  let upSocket: Socket | undefined;
  up.once('socket', (s: Socket) => {
    upSocket = s;
  });

  let answered = false;
  /** The upstream answered 101 and the tunnel carries the bytes: its sockets close each other. */
  let switched = false;
  /** The exchange is over without a switch: nothing more is read from or sent to the upstream. */
  const abandon = () => {
    resetUpstream(upSocket);
    up.destroy();
  };
  const timer = setTimeout(() => {
    if (answered) return;
    answered = true;
    abandon();
    o.onFailure();
    sendError(req, res, ERRORS.gatewayTimeout, 'The upstream did not answer the handshake in time.');
  }, o.timeoutMs);
  socket.once('close', () => {
    clearTimeout(timer);
    answered = true;
    // The client went away: nothing is left to relay, in either state.
    if (switched) {
      up.destroy();
      upSocket?.destroy();
    } else abandon();
  });
  // Node stopped reading the client at the upgrade; read it while the upstream decides, or its FIN
  // would go unseen and the exchange would wait for the upstream forever. Bytes sent before the
  // answer (RFC 6455 §4.1: a client waits for it) are kept for the tunnel, up to MAX_EARLY_BYTES.
  const early: Buffer[] = [];
  let earlyBytes = 0;
  const onEarly = (chunk: Buffer) => {
    earlyBytes += chunk.length;
    if (earlyBytes > MAX_EARLY_BYTES) socket.destroy();
    else early.push(chunk);
  };
  socket.on('data', onEarly);
  // A client that half-closes before the answer cannot use a tunnel: the exchange ends.
  socket.once('end', () => {
    if (!answered) socket.destroy();
  });

  up.on('upgrade', (upRes, upgraded: Socket, upHead) => {
    clearTimeout(timer);
    upgraded.on('error', () => upgraded.destroy());
    if (answered || socket.destroyed) {
      upgraded.destroy();
      return;
    }
    answered = true;
    switched = true;
    const steps = switchFields(responseFields(res));
    tunnel.accept();
    socket.write(switchHead(upRes.statusMessage || 'Switching Protocols', upRes.rawHeaders, steps));
    if (upHead.length > 0) socket.write(upHead);
    socket.removeListener('data', onEarly);
    if (tunnel.head.length > 0) upgraded.write(tunnel.head);
    for (const chunk of early) upgraded.write(chunk);
    // An end or error on either side closes the other.
    upgraded.pipe(socket);
    socket.pipe(upgraded);
    upgraded.on('close', () => socket.destroy());
    socket.on('close', () => upgraded.destroy());
  });

  up.on('response', (upRes) => {
    // A refusal (401, 403, 404...): relay it as an ordinary response; the connection closes after it.
    clearTimeout(timer);
    const closeUpstream = () => {
      upRes.destroy();
      abandon();
    };
    upRes.once('end', closeUpstream);
    upRes.once('error', () => {
      closeUpstream();
      res.destroy();
    });
    if (answered || socket.destroyed) {
      closeUpstream();
      return;
    }
    answered = true;
    const h = stripHopByHop(upRes.headers);
    res.writeHead(upRes.statusCode ?? 502, upRes.statusMessage || undefined, h);
    upRes.pipe(res);
  });

  up.on('error', (err) => {
    clearTimeout(timer);
    if (answered) return;
    answered = true;
    o.onFailure();
    o.logger.warn({ err, url: req.url, upstream: o.upstream.origin }, 'upstream upgrade failed');
    sendError(req, res, ERRORS.badGateway, 'The upstream could not be reached for the handshake.');
  });
  up.end();
}
