// Misbehaving upstreams and clients for the proxy attack tests: real sockets on 127.0.0.1:0.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import type { GatehouseConfigInput } from '../../src/config/schema.js';
import { makeSite, rawConnect, removeSite, startServer, type TestServer } from './http.js';
import { WAIT_DEADLINE_MS } from './wait.js';

export interface HttpUpstream {
  url: string;
  seen: IncomingMessage[];
  close(): Promise<void>;
}

/** A node:http upstream that records every request it receives. */
export async function httpUpstream(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<HttpUpstream> {
  const seen: IncomingMessage[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(req);
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export interface RawUpstream {
  url: string;
  sockets: Socket[];
  close(): Promise<void>;
}

/** A node:net upstream: `onRequest` gets the socket once the request head has arrived. */
export async function rawUpstream(onRequest: (sock: Socket, head: string) => void): Promise<RawUpstream> {
  const sockets: Socket[] = [];
  const server = createNetServer((sock) => {
    sockets.push(sock);
    sock.on('error', () => {});
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d.toString('latin1');
      if (!buf.includes('\r\n\r\n')) return;
      sock.off('data', onData);
      onRequest(sock, buf);
    };
    sock.on('data', onData);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sockets,
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** Polls `cond` every 10 ms; rejects with `what` after `deadlineMs` (a failure, not a measurement). */
export async function waitFor(
  cond: () => boolean,
  what: string,
  deadlineMs = WAIT_DEADLINE_MS,
): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export interface RawClient {
  sock: Socket;
  /** Everything received so far (latin1). */
  text(): string;
  closed: Promise<void>;
}

/** A raw client connection to the proxy; it reads unless `paused`. */
export function rawClient(port: number, data: string | Buffer, o: { paused?: boolean } = {}): RawClient {
  const sock = rawConnect(port);
  const chunks: Buffer[] = [];
  sock.on('data', (c: Buffer) => chunks.push(c));
  sock.on('error', () => {});
  if (o.paused) sock.pause();
  const closed = new Promise<void>((r) => sock.once('close', () => r()));
  sock.write(data);
  return { sock, text: () => Buffer.concat(chunks).toString('latin1'), closed };
}

/** The status codes of every response head in a raw stream, in order. */
export function statusLines(text: string): number[] {
  return [...text.matchAll(/(?:^|\r\n)HTTP\/1\.[01] (\d{3}) /g)].map((m) => Number(m[1]));
}

export interface Proxy {
  server: TestServer;
  close(): Promise<void>;
}

/** Gatehouse proxying /api to `upstream` with `route` merged into the route. */
export async function proxyTo(
  upstream: string,
  route: Record<string, unknown> = {},
  config: GatehouseConfigInput = {},
): Promise<Proxy> {
  const site = makeSite({});
  const server = await startServer(site, {
    log: { format: 'off' },
    ...config,
    proxy: [{ prefix: '/api', upstream, ...route }],
  } as GatehouseConfigInput);
  return {
    server,
    close: async () => {
      await server.close();
      removeSite(site);
    },
  };
}
