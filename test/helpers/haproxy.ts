// Debian's HAProxy in front of real Gatehouse processes (issue 17): round robin, HTTP health checks,
// retries with redispatch, a CSV stats page to read server states. Loopback ports only.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort } from './redis.js';
import { waitUntil } from './wait.js';

export const HAPROXY = '/usr/sbin/haproxy';

export interface HaproxyOptions {
  /** name -> loopback port of each backend server. */
  servers: Record<string, number>;
  /** The health check path (GET), 200 expected. */
  checkPath: string;
}

export interface TestHaproxy {
  readonly url: string;
  /** Each server's state from the stats page: UP, DOWN, ... */
  states(): Promise<Record<string, string>>;
  close(): Promise<void>;
}

/** The config users can start from too (docs/deploy.md shows the same one). */
export function haproxyConfig(port: number, statsPort: number, o: HaproxyOptions): string {
  const servers = Object.entries(o.servers)
    .map(([name, p]) => `  server ${name} 127.0.0.1:${p} check`)
    .join('\n');
  return `global
  maxconn 2000
defaults
  mode http
  timeout connect 1s
  timeout client 10s
  timeout server 10s
  # A request whose server vanished is tried again on another (idempotent ones only).
  retries 3
  option redispatch 1
  retry-on conn-failure empty-response response-timeout
frontend fe
  bind 127.0.0.1:${port}
  default_backend gatehouse
backend gatehouse
  balance roundrobin
  option httpchk GET ${o.checkPath}
  http-check expect status 200
  default-server inter 200ms fall 2 rise 1
${servers}
listen stats
  bind 127.0.0.1:${statsPort}
  stats enable
  stats uri /stats
`;
}

export async function startHaproxy(o: HaproxyOptions): Promise<TestHaproxy> {
  const [port, statsPort] = [await freeLoopbackPort(), await freeLoopbackPort()];
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-haproxy-'));
  const cfg = join(dir, 'haproxy.cfg');
  writeFileSync(cfg, haproxyConfig(port, statsPort, o));
  const child: ChildProcess = spawn(HAPROXY, ['-db', '-f', cfg], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout!.on('data', (b: Buffer) => {
    log += b.toString();
  });
  child.stderr!.on('data', (b: Buffer) => {
    log += b.toString();
  });
  const states = async (): Promise<Record<string, string>> => {
    const res = await fetch(`http://127.0.0.1:${statsPort}/stats;csv`);
    const out: Record<string, string> = {};
    for (const line of (await res.text()).split('\n')) {
      const f = line.split(',');
      if (f[0] === 'gatehouse' && f[1] !== 'BACKEND' && f[1] !== 'FRONTEND' && f[1] !== undefined)
        out[f[1]] = f[17]!;
    }
    return out;
  };
  await waitUntil(`haproxy up (${log.slice(-300)})`, async () => {
    if (child.exitCode !== null) throw new Error(`haproxy exited: ${log.slice(-500)}`);
    try {
      const s = await states();
      return Object.keys(s).length === Object.keys(o.servers).length;
    } catch {
      return false;
    }
  });
  return {
    url: `http://127.0.0.1:${port}`,
    states,
    async close() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
