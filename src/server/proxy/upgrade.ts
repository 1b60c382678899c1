// WebSocket (any Upgrade) pass-through: the client gets the upstream's 101, or its refusal as
// a plain HTTP response, only after the upstream answered; then bytes flow both ways.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import { stripHopByHop } from '../../http/proxy-headers.js';
import type { Logger } from '../log.js';
import type { Upstream } from './upstreams.js';

export interface UpgradeOptions {
  readonly upstream: Upstream;
  readonly target: string;
  readonly headers: Record<string, string | string[]>;
  readonly timeoutMs: number;
  readonly logger: Logger;
  readonly onFailure: () => void;
}

/** Serialises a response head; header values never hold CR/LF (they came from a parser). */
function head(status: number, message: string, rawHeaders: readonly string[]): string {
  let s = `HTTP/1.1 ${status} ${message}\r\n`;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) s += `${rawHeaders[i]}: ${rawHeaders[i + 1]}\r\n`;
  return `${s}\r\n`;
}

function refuse(socket: Duplex, status: number, message: string, body: string): void {
  if (socket.destroyed) return;
  socket.end(
    `HTTP/1.1 ${status} ${message}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export function proxyUpgrade(
  req: IncomingMessage,
  socket: Duplex,
  clientHead: Buffer,
  o: UpgradeOptions,
): void {
  // Both sockets always have error handlers: a reset never crashes the process.
  socket.on('error', () => socket.destroy());
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
  let answered = false;
  const timer = setTimeout(() => {
    if (answered) return;
    answered = true;
    up.destroy();
    o.onFailure();
    refuse(socket, 504, 'Gateway Timeout', '{"title":"Gateway Timeout","status":504}');
  }, o.timeoutMs);
  socket.once('close', () => {
    if (!answered) {
      answered = true;
      clearTimeout(timer);
      up.destroy();
    }
  });

  up.on('upgrade', (res, upSocket, upHead) => {
    clearTimeout(timer);
    upSocket.on('error', () => upSocket.destroy());
    if (answered || socket.destroyed) {
      upSocket.destroy();
      return;
    }
    answered = true;
    socket.write(head(101, res.statusMessage || 'Switching Protocols', res.rawHeaders));
    if (upHead.length > 0) socket.write(upHead);
    if (clientHead.length > 0) upSocket.write(clientHead);
    // An end or error on either side closes the other.
    upSocket.pipe(socket);
    socket.pipe(upSocket);
    upSocket.on('close', () => socket.destroy());
    socket.on('close', () => upSocket.destroy());
  });

  up.on('response', (res) => {
    // A refusal (401, 403, 404...): relay it as a plain response and close.
    clearTimeout(timer);
    if (answered || socket.destroyed) {
      res.destroy();
      return;
    }
    answered = true;
    const h = stripHopByHop(res.headers);
    delete h['content-length'];
    const raw: string[] = [];
    for (const [k, v] of Object.entries(h)) for (const one of Array.isArray(v) ? v : [v]) raw.push(k, one);
    raw.push('connection', 'close');
    socket.write(head(res.statusCode ?? 502, res.statusMessage || 'Error', raw));
    res.pipe(socket);
    res.on('error', () => socket.destroy());
  });

  up.on('error', (err) => {
    clearTimeout(timer);
    if (answered) return;
    answered = true;
    o.onFailure();
    o.logger.warn({ err, url: req.url, upstream: o.upstream.origin }, 'upstream upgrade failed');
    refuse(socket, 502, 'Bad Gateway', '{"title":"Bad Gateway","status":502}');
  });
  up.end();
}
