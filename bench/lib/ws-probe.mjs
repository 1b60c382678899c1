// One real WebSocket echo (with `ws`) to check a server's endpoint before a flooded scenario is timed.
import { WebSocket } from 'ws';

/** Resolves when ws://127.0.0.1:port/path echoes a text message; rejects with the reason otherwise. */
export async function wsEcho({ port, path, timeoutMs = 3000 }) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, { perMessageDeflate: false });
  try {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no echo on ${path} within ${timeoutMs} ms`)),
        timeoutMs,
      );
      ws.once('unexpected-response', (_req, res) => {
        clearTimeout(timer);
        reject(new Error(`handshake on ${path} answered ${res.statusCode}`));
      });
      ws.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      ws.once('open', () => ws.send('probe'));
      ws.once('message', (data) => {
        clearTimeout(timer);
        if (String(data) === 'probe') resolve();
        else reject(new Error(`${path} echoed '${String(data).slice(0, 40)}', expected 'probe'`));
      });
    });
  } finally {
    ws.terminate();
  }
}
