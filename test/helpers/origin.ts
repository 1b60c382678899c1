// A real origin server on 127.0.0.1 that counts the requests reaching it, for cache tests.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Origin {
  server: Server;
  url: string;
  seen: IncomingMessage[];
  count(path: string): number;
  close(): Promise<void>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

export async function origin(routes: Record<string, Handler>): Promise<Origin> {
  const seen: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    seen.push(req);
    const path = req.url!.split('?', 1)[0]!;
    const h = routes[path];
    if (h === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    h(req, res, seen.filter((r) => r.url!.split('?', 1)[0] === path).length);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    seen,
    count: (path) => seen.filter((r) => r.url!.split('?', 1)[0] === path).length,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export const text = (res: ServerResponse, status: number, headers: Record<string, string>, body: string) => {
  res.writeHead(status, { 'content-type': 'text/plain', ...headers });
  res.end(body);
};
