// Starts and stops the WebSocket flood (ws/flood.mjs) around a timed wrk run of the ws-flood group. The
// flood is pinned to the load CPU like wrk, at nice 10 so that wrk, which measures, gets the CPU it needs
// first and the flood takes the rest (on the same CPU at the same priority the flood would slow wrk down
// and the latencies would measure the load generator).
import { spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { CPU, pinned, spawnTracked, stopChild } from './proc.mjs';

const floodScript = fileURLToPath(new URL('../ws/flood.mjs', import.meta.url));
const hasNice = spawnSync('nice', ['-n', '10', 'true'], { stdio: 'ignore' }).status === 0;

/** Flood settings: 50 clients, 64-byte text messages, 32 unflushed writes per client at most. */
export const FLOOD = { clients: 50, sizeBytes: 64, window: 32 };

/**
 * Starts the flood against ws://127.0.0.1:port/path and resolves once its clients are open:
 * `{ open, mark(), stop() -> Promise<stats> }` (see ws/flood.mjs for the stats). Rejects when no client
 * could connect or it is not ready within `timeoutMs`.
 */
export async function startFlood({ port, path, timeoutMs = 10_000 }) {
  const args = [
    floodScript,
    ...['--port', String(port), '--path', path, '--clients', String(FLOOD.clients)],
    ...['--size', String(FLOOD.sizeBytes), '--window', String(FLOOD.window)],
  ];
  const [cmd, argv] = hasNice
    ? pinned(CPU.load, 'nice', ['-n', '10', process.execPath, ...args])
    : pinned(CPU.load, process.execPath, args);
  const child = spawnTracked(cmd, argv, { stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (c) => {
    err += c;
  });
  const lines = createInterface({ input: child.stdout });
  const nextLine = (what) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`flood: no ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      const onLine = (line) => {
        cleanup();
        resolve(line);
      };
      const onExit = (code) => {
        cleanup();
        reject(new Error(`flood exited (${code}) before its ${what}: ${err.trim().split('\n').pop() ?? ''}`));
      };
      const cleanup = () => {
        clearTimeout(timer);
        lines.off('line', onLine);
        child.off('exit', onExit);
      };
      lines.once('line', onLine);
      child.once('exit', onExit);
    });
  let open;
  try {
    open = Number(/^ready (\d+)$/.exec(await nextLine('ready line'))?.[1]);
    if (!(open > 0)) throw new Error('flood: no WebSocket client could connect');
  } catch (e) {
    await stopChild(child, 500);
    throw e;
  }
  return {
    open,
    mark: () => child.stdin.write('mark\n'),
    async stop() {
      const result = nextLine('result');
      child.stdin.write('stop\n');
      try {
        return JSON.parse(await result);
      } finally {
        await stopChild(child, 1000);
      }
    },
  };
}
