// WebSocket pass-through (RFC 6455 over RFC 9110 §7.8): the handshake reaches here only after every
// request step let it through (src/server/entry.ts). The client gets the upstream's 101 and then
// bytes flow both ways; any other answer is relayed as an ordinary response on the step's
// ServerResponse and the upstream connection is closed: it was opened for this one exchange.
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { stripHopByHop } from '../../http/proxy-headers.js';
import type { Tunnel } from '../context.js';
import { ERRORS, sendError } from '../errors.js';
import type { Logger } from '../log.js';
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

/** Serialises a response head; header values never hold CR/LF (they came from a parser). */
function head(status: number, message: string, rawHeaders: readonly string[]): string {
  let s = `HTTP/1.1 ${status} ${message}\r\n`;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) s += `${rawHeaders[i]}: ${rawHeaders[i + 1]}\r\n`;
  return `${s}\r\n`;
}

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
  const timer = setTimeout(() => {
    if (answered) return;
    answered = true;
    up.destroy();
    o.onFailure();
    sendError(req, res, ERRORS.gatewayTimeout, 'The upstream did not answer the handshake in time.');
  }, o.timeoutMs);
  socket.once('close', () => {
    clearTimeout(timer);
    answered = true;
    // The client went away: nothing is left to relay, in either state.
    up.destroy();
    upSocket?.destroy();
  });

  up.on('upgrade', (upRes, upgraded: Socket, upHead) => {
    clearTimeout(timer);
    upgraded.on('error', () => upgraded.destroy());
    if (answered || socket.destroyed) {
      upgraded.destroy();
      return;
    }
    answered = true;
    tunnel.accept();
    socket.write(head(101, upRes.statusMessage || 'Switching Protocols', upRes.rawHeaders));
    if (upHead.length > 0) socket.write(upHead);
    if (tunnel.head.length > 0) upgraded.write(tunnel.head);
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
      upSocket?.destroy();
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
