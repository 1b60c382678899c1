// A real `ws` client on a test server that keeps every message it receives.
import { WebSocket } from 'ws';
import { type TestServer, wsTarget } from './http.js';

export interface Peer {
  ws: WebSocket;
  /** Text messages as strings, binary ones as `bin:<hex>`. */
  got: string[];
}

/** Opens a WebSocket to `path` on `s` and resolves once it is open. */
export async function openPeer(s: TestServer, path: string): Promise<Peer> {
  const { url, options } = wsTarget(s, path);
  const ws = new WebSocket(url, options);
  const got: string[] = [];
  ws.on('message', (data, isBinary) =>
    got.push(isBinary ? `bin:${Buffer.from(data as Buffer).toString('hex')}` : String(data)),
  );
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, got };
}

/** Sends `text` to the WebSocket at `url` (ws://...) and resolves with the first message back. */
export async function echoOnce(url: string, text: string): Promise<string> {
  const ws = new WebSocket(url);
  try {
    return await new Promise<string>((resolve, reject) => {
      ws.once('open', () => ws.send(text));
      ws.once('message', (d) => resolve(String(d)));
      ws.once('error', reject);
    });
  } finally {
    ws.close();
  }
}
