// WebSocket clients for the endpoint tests (test/server/websocket/): a `ws` client with a message
// queue, a refused handshake's status and body, raw handshake heads.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { WebSocket } from 'ws';
import { WAIT_DEADLINE_MS } from './wait.js';

export const ALLOWED_ORIGIN = 'https://app.example';
export const KEY = 'dGhlIHNhbXBsZSBub25jZQ==';
// Longer than any one wait below, so a wait that fails reports what it waited for.
export const T = { timeout: 3 * WAIT_DEADLINE_MS };

/** `p`, or a failure naming `what` after `ms` (a deadline that turns a hang into a failure, not a bound). */
export function within<V>(p: Promise<V>, what: string, ms = WAIT_DEADLINE_MS): Promise<V> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

export interface Msg {
  data: Buffer;
  isBinary: boolean;
  text: string;
}

/** A connected ws client with a message queue. */
export class Peer {
  readonly ws: WebSocket;
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly pings: number[] = [];
  private readonly queue: Msg[] = [];
  private readonly waiters: ((m: Msg) => void)[] = [];

  constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on('message', (data, isBinary) => {
      const buf = data as Buffer;
      const m = { data: buf, isBinary, text: buf.toString('utf8') };
      const w = this.waiters.shift();
      if (w) w(m);
      else this.queue.push(m);
    });
    ws.on('ping', () => this.pings.push(Date.now()));
    ws.on('error', () => {});
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
  }

  next(): Promise<Msg> {
    const m = this.queue.shift();
    if (m) return Promise.resolve(m);
    return within(new Promise<Msg>((resolve) => this.waiters.push(resolve)), 'a message');
  }

  async nextJson(): Promise<unknown> {
    return JSON.parse((await this.next()).text);
  }

  send(data: string | Buffer, binary = typeof data !== 'string'): Promise<void> {
    return new Promise((resolve, reject) =>
      this.ws.send(data, { binary }, (err) => (err ? reject(err) : resolve())),
    );
  }

  get rawSocket(): Socket {
    return (this.ws as unknown as { _socket: Socket })._socket;
  }
}

export function open(
  url: string,
  options: WebSocket.ClientOptions = {},
  protocols?: string[],
): Promise<Peer> {
  const ws = new WebSocket(url, protocols, options);
  const peer = new Peer(ws);
  return within(
    new Promise<Peer>((resolve, reject) => {
      ws.once('open', () => resolve(peer));
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => {
        res.resume();
        reject(new Error(`unexpected response ${res.statusCode}`));
      });
    }),
    `open ${url}`,
  );
}

/** The status and body of a refused handshake, from the client's 'unexpected-response' event. */
export function refused(
  url: string,
  options: WebSocket.ClientOptions = {},
): Promise<{ status: number; body: string }> {
  const ws = new WebSocket(url, options);
  return within(
    new Promise((resolve, reject) => {
      ws.once('open', () => {
        ws.terminate();
        reject(new Error('the handshake was accepted'));
      });
      ws.once('error', reject);
      ws.once('unexpected-response', (req, res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
          req.destroy();
        });
      });
    }),
    `the refusal of ${url}`,
  );
}

export function handshake(path: string, lines: string[] = [], method = 'GET'): string {
  return `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${lines.map((l) => `${l}\r\n`).join('')}\r\n`;
}

export const UPGRADE = ['Upgrade: websocket', 'Connection: Upgrade'];
export const VALID = [...UPGRADE, `Sec-WebSocket-Key: ${KEY}`, 'Sec-WebSocket-Version: 13'];
