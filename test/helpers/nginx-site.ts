// nginx (Debian's /usr/sbin/nginx) with a typical hand-written config, for `gatehouse check` (issue 16):
// run as the test user from a temp prefix on 127.0.0.1 and a free port (nginx cannot listen on port 0:
// one is picked by binding to 0 and closing). NGINX_MISTAKES says what the config gets wrong.
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { needsBinary } from './ci.js';

export const NGINX = '/usr/sbin/nginx';

/** Path -> the mistake of the config there. */
export const NGINX_MISTAKES = {
  '/index.html': '`expires 1y` on the HTML page: browsers keep a stale page for a year',
  '/assets/app.3f9a1c2b7d.js':
    '`add_header Cache-Control` inside the location: the server-level add_headers (nosniff, frame options) are lost there',
  '/app.css': '`gzip on` without `gzip_vary on`: gzip responses carry no Vary: Accept-Encoding',
} as const;

/** describe() options: skipped without nginx, except under CI (.ci/run installs it; there it must run). */
export const NGINX_SUITE = needsBinary(NGINX);

const CSS = 'body { margin: 0; padding: 0; color: #222; }\n'.repeat(200);

function config(prefix: string, port: number): string {
  return `worker_processes 1;
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log;
events { worker_connections 64; }
http {
  types { text/html html; text/css css; application/javascript js; }
  default_type application/octet-stream;
  access_log off;
  client_body_temp_path ${prefix}/tmp/body;
  proxy_temp_path ${prefix}/tmp/proxy;
  fastcgi_temp_path ${prefix}/tmp/fastcgi;
  uwsgi_temp_path ${prefix}/tmp/uwsgi;
  scgi_temp_path ${prefix}/tmp/scgi;
  gzip on;
  gzip_types text/css application/javascript;
  server {
    listen 127.0.0.1:${port};
    root ${prefix}/html;
    add_header X-Content-Type-Options nosniff;
    add_header X-Frame-Options DENY;
    location = /index.html {
      expires 1y;
    }
    location /assets/ {
      add_header Cache-Control "public, max-age=31536000, immutable";
    }
  }
}
`;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as { port: number };
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = connect(port, '127.0.0.1');
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

export interface NginxSite {
  base: string;
  url(path: string): string;
  close(): Promise<void>;
}

const START_DEADLINE_MS = 15_000;

/** Starts nginx in the foreground; resolves once it accepts connections (polled, with a deadline). */
export async function startNginxSite(): Promise<NginxSite> {
  const prefix = mkdtempSync(join(tmpdir(), 'gatehouse-nginx-'));
  // Started as root, nginx's workers run as nobody: they must be able to read the site.
  chmodSync(prefix, 0o755);
  mkdirSync(join(prefix, 'tmp'));
  mkdirSync(join(prefix, 'html/assets'), { recursive: true });
  writeFileSync(join(prefix, 'html/index.html'), '<!doctype html><title>nginx</title><p>Hello.</p>\n');
  writeFileSync(join(prefix, 'html/app.css'), CSS);
  writeFileSync(join(prefix, 'html/assets/app.3f9a1c2b7d.js'), 'console.log("app");\n'.repeat(50));
  const port = await freePort();
  writeFileSync(join(prefix, 'nginx.conf'), config(prefix, port));
  const child: ChildProcess = spawn(
    NGINX,
    ['-p', prefix, '-e', join(prefix, 'error.log'), '-c', join(prefix, 'nginx.conf'), '-g', 'daemon off;'],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(prefix, { recursive: true, force: true });
  };
  const deadline = Date.now() + START_DEADLINE_MS;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      const log = existsSync(join(prefix, 'error.log'))
        ? readFileSync(join(prefix, 'error.log'), 'utf8')
        : '';
      await close();
      throw new Error(`nginx did not start on 127.0.0.1:${port}: ${log.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  const base = `http://127.0.0.1:${port}`;
  return { base, url: (path) => `${base}${path}`, close };
}
