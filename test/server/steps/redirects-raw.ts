// Raw requests and responses for the redirect tests (redirects.test.ts, redirects-steps.test.ts).
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { raw, rawStatus } from '../../helpers/http.js';

/** Status, Location and the header block of a raw response. */
export function parseRaw(text: string): { status: number; location: string | undefined; head: string } {
  const head = text.slice(0, text.indexOf('\r\n\r\n'));
  return { status: rawStatus(text), location: /^location: (.*)$/im.exec(head)?.[1], head };
}

/** A raw GET with an arbitrary target (hostile bytes reach the server as written). */
export async function rawGet(port: number, target: string, headers = 'Host: site.test\r\n'): Promise<string> {
  return raw(port, `GET ${target} HTTP/1.1\r\n${headers}Connection: close\r\n\r\n`);
}

/** Listens on 127.0.0.1:0; resolves with the port. */
export async function listen(server: Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}
