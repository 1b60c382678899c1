// Test helpers: a Gatehouse on 127.0.0.1:0 over a temp folder, and plain HTTP clients
// (node:http, no decompression, and raw sockets for hostile targets).
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseConfig, toServerOptions } from '../../src/config/load.js';
import type { GatehouseConfigInput } from '../../src/config/schema.js';
import { createGatehouse, type Gatehouse } from '../../src/server/app.js';

export interface Res {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

/** Creates a temp folder holding `files` (path -> content). */
export function makeSite(files: Record<string, string | Buffer>): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-test-'));
  for (const [p, content] of Object.entries(files)) {
    const abs = join(dir, p);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, content);
    // An hour old: a Last-Modified within a second of now is weak (RFC 9110 §8.8.2.2).
    const t = new Date(Date.now() - 3600_000);
    utimesSync(abs, t, t);
  }
  return dir;
}

export function removeSite(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export interface TestServer {
  app: Gatehouse;
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startServer(root: string, config: GatehouseConfigInput = {}): Promise<TestServer> {
  const c = parseConfig({
    log: { format: 'off' },
    ...config,
    root,
    listen: { ...config.listen, host: '127.0.0.1', port: 0 },
  });
  const app = createGatehouse(toServerOptions(c));
  const { url, port } = await app.listen();
  return { app, url, port, close: () => app.close() };
}

export function get(
  base: string,
  path: string,
  o: { method?: string; headers?: Record<string, string>; body?: string; localAddress?: string } = {},
): Promise<Res> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: u.hostname,
        port: u.port,
        path,
        method: o.method ?? 'GET',
        headers: o.headers,
        agent: false,
        localAddress: o.localAddress,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode!, headers: res.headers, body, text: body.toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(o.body);
  });
}

/**
 * Sends raw bytes and returns the raw response text, once the server closes the connection. `untilMs`
 * is a deadline for a server that keeps it open (then the text so far comes back), not a wait: keep it
 * generous unless the test means to stop reading early.
 */
export function raw(port: number, data: string | Buffer, untilMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => sock.destroy(), untilMs);
    sock.on('data', (c) => chunks.push(c));
    sock.on('error', reject);
    sock.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('latin1'));
    });
    sock.write(data);
  });
}

/** Status code of a raw response's first line. */
export function rawStatus(text: string): number {
  return Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0);
}
