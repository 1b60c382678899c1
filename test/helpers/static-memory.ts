// The parent side of the static-cache memory tests: a Gatehouse in a child process
// (static-memory-server.ts) with a given static.memoryCacheBytes, its GC'd memory on demand, and a
// keep-alive load generator that requests a list of paths once each over real sockets.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { createInterface } from 'node:readline';

export interface MemoryStats {
  heapUsed: number;
  external: number;
  rss: number;
  /** Requests the server has seen. */
  requests: number;
}

export interface MemoryServer {
  readonly port: number;
  /** The server's memory after full GCs. */
  stats(): Promise<MemoryStats>;
  close(): void;
}

export async function startMemoryServer(
  root: string,
  memoryCacheBytes: number,
  config: object = {},
): Promise<MemoryServer> {
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', 'test/helpers/static-memory-server.ts'],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: {
        ...process.env,
        STATIC_MEMORY_ROOT: root,
        STATIC_MEMORY_CACHE_BYTES: String(memoryCacheBytes),
        STATIC_MEMORY_CONFIG: JSON.stringify(config),
      },
    },
  );
  const lines = createInterface({ input: child.stdout! });
  const replies: ((line: string) => void)[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`memory server exited with ${code}`)));
    lines.on('line', (line) => {
      if (line.startsWith('port ')) resolve(Number(line.slice(5)));
      else replies.shift()?.(line);
    });
  });
  return {
    port,
    stats: () =>
      new Promise((resolve) => {
        replies.push((line) => resolve(JSON.parse(line) as MemoryStats));
        child.stdin!.write('stats\n');
      }),
    close: () => {
      child.stdin!.end();
      child.kill();
    },
  };
}

/** Live memory the server holds: the heap and what Buffers hold outside it. */
export function liveBytes(s: MemoryStats): number {
  return s.heapUsed + s.external;
}

/**
 * GETs every path once (`pathAt(i)` for i < n) over `connections` keep-alive connections, each
 * answer read to its end; every status must be `status`.
 */
export async function getEach(
  port: number,
  n: number,
  pathAt: (i: number) => string,
  status: number,
  connections = 16,
): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const get = (path: string) =>
    new Promise<number>((resolve, reject) => {
      request({ host: '127.0.0.1', port, path, agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      })
        .on('error', reject)
        .end();
    });
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (next < n) {
          const i = next++;
          const path = pathAt(i);
          assert.equal(await get(path), status, path);
        }
      }),
    );
  } finally {
    agent.destroy();
  }
}
