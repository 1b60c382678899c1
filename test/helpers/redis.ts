// A real redis-server (Debian's) per test file, on a free loopback port, no persistence; it can be
// paused (SIGSTOP), stopped and started again on the same port for outage tests. Issue 17.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const REDIS_SERVER = '/usr/bin/redis-server';

/** A port that was free a moment ago (bound to 0 and closed). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface TestRedis {
  readonly port: number;
  readonly url: string;
  /** SIGSTOP: connections stay open, nothing answers (a hung server). */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
  /** Kills the server (connections refused until start()). */
  stop(): Promise<void>;
  /** Starts it again on the same port (empty: no persistence). */
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startRedis(): Promise<TestRedis> {
  // A free port can be taken between the probe and redis-server's bind (other tests run at the same
  // time): a bind failure tries another port.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startRedisOn(await freeLoopbackPort());
    } catch (err) {
      if (attempt >= 5 || !/already in use|bind/i.test((err as Error).message)) throw err;
    }
  }
}

/** A redis-server on `port` (for a test that points Gatehouse at the port before anything listens). */
export async function startRedisOn(port: number): Promise<TestRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-redis-'));
  let child: ChildProcess | undefined;
  const launch = () =>
    new Promise<void>((resolve, reject) => {
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
      const c = spawn(REDIS_SERVER, [...args, '--dir', dir, '--logfile', ''], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child = c;
      let out = '';
      const onData = (b: Buffer) => {
        out += b.toString();
        if (out.includes('Ready to accept connections')) {
          c.stdout!.off('data', onData);
          c.stdout!.resume();
          resolve();
        }
      };
      c.stdout!.on('data', onData);
      c.stderr!.resume();
      c.once('exit', (code) =>
        reject(new Error(`redis-server exited (${code}) before it was ready: ${out.slice(-500)}`)),
      );
    });
  const kill = () =>
    new Promise<void>((resolve) => {
      const c = child;
      child = undefined;
      if (c === undefined || c.exitCode !== null) return resolve();
      c.once('exit', () => resolve());
      c.kill('SIGCONT');
      c.kill('SIGKILL');
    });
  await launch();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    stop: kill,
    start: launch,
    async close() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
