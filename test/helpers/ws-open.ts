// A `ws` client for the runtime tests: a WebSocket opened by URL with its 101's head, or the status and
// body of a refused handshake.
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';

export interface Opened {
  readonly socket: WebSocket;
  readonly head: IncomingMessage;
}

/** Opens a WebSocket; rejects with the status (and body) of a refused handshake. */
export function openWebSocket(
  base: string,
  path: string,
  protocols: string[] = [],
  origin?: string,
): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(base.replace(/^http/, 'ws') + path, protocols, origin ? { origin } : {});
    let head: IncomingMessage | undefined;
    socket.once('upgrade', (res) => {
      head = res;
    });
    socket.once('open', () => resolve({ socket, head: head! }));
    socket.once('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => {
        body += c;
      });
      res.on('end', () =>
        reject(Object.assign(new Error(`status ${res.statusCode}`), { status: res.statusCode, body })),
      );
    });
    socket.once('error', reject);
  });
}

/** The status and body of a handshake expected to be refused (an accepted one fails the test). */
export async function refusedWebSocket(p: Promise<Opened>): Promise<{ status: number; body: string }> {
  try {
    const { socket } = await p;
    socket.terminate();
  } catch (err) {
    return err as { status: number; body: string };
  }
  throw new Error('the handshake was accepted');
}
