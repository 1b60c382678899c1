// Test helpers: a Gatehouse on 127.0.0.1:0 over a temp folder, and plain HTTP clients
// (node:http, no decompression, and raw sockets for hostile targets).
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import {
  type ClientRequest,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from 'node:http';
import { connect as http2Connect } from 'node:http2';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { parseConfig, toServerOptions } from '../../src/config/load.js';
import type { GatehouseConfigInput } from '../../src/config/schema.js';
import { createGatehouse, type Gatehouse } from '../../src/server/app/gatehouse.js';
import { TEST_PROTOCOL, testTls, testTlsFiles } from './tls.js';

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
  /** The plain-HTTP listener beside TLS (listen.httpPort), when there is one. */
  httpUrl?: string | undefined;
  close(): Promise<void>;
}

/**
 * A Gatehouse on 127.0.0.1:0. Under GATEHOUSE_TEST_PROTOCOL=h2 or h1-tls it listens with TLS (the
 * test certificate of tls.ts) unless the config has its own `tls`; `get` and `raw` follow.
 */
export async function startServer(
  root: string,
  config: GatehouseConfigInput = {},
  o: { plainHttp?: boolean } = {},
): Promise<TestServer> {
  // The adapter matrix: the same config through a framework's app (adapter-server.ts).
  // Loaded only then: the four frameworks stay out of every other test file's start-up.
  if (process.env.GATEHOUSE_TEST_ADAPTER) {
    const { startAdapterServer, TEST_ADAPTER } = await import('./adapter-server.js');
    if (TEST_ADAPTER !== undefined)
      return startAdapterServer(TEST_ADAPTER, { log: { format: 'off' }, ...config, root });
  }
  // The runtime matrix: the same config served by Bun or Deno in a child process (runtime-server.ts).
  if (process.env.GATEHOUSE_TEST_RUNTIME) {
    const { startRuntimeServer, TEST_RUNTIME } = await import('./runtime-server.js');
    if (TEST_RUNTIME !== undefined)
      return startRuntimeServer(TEST_RUNTIME, {
        log: { format: 'off' },
        ...config,
        root,
        listen: { ...config.listen, host: '127.0.0.1', port: 0 },
      });
  }
  // plainHttp: a server that is plain HTTP by its nature (listen.redirectToHttps), on every run.
  const files = TEST_PROTOCOL === 'http1' || o.plainHttp ? undefined : await testTls();
  const tls = config.tls ?? (files === undefined ? undefined : { cert: files.cert, key: files.key });
  const c = parseConfig({
    log: { format: 'off' },
    ...config,
    root,
    listen: { ...config.listen, host: '127.0.0.1', port: 0 },
    ...(tls ? { tls } : {}),
  });
  const app = createGatehouse(toServerOptions(c));
  const { url, port, httpUrl } = await app.listen();
  if (tls) tlsPorts.add(port);
  return {
    app,
    url,
    port,
    httpUrl,
    close: () => {
      tlsPorts.delete(port);
      return app.close();
    },
  };
}

/** Ports of the test servers listening with TLS, for raw(). */
const tlsPorts = new Set<number>();

type GetOptions = { method?: string; headers?: Record<string, string>; body?: string; localAddress?: string };

/** RFC 9113 §8.2.2: fields an HTTP/2 client never sends (a browser drops them too). */
const H2_FORBIDDEN = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
]);

function collect(res: IncomingMessage, resolve: (r: Res) => void, reject: (e: Error) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => {
    const body = Buffer.concat(chunks);
    resolve({ status: res.statusCode!, headers: res.headers, body, text: body.toString('utf8') });
  });
  res.on('error', reject);
}

/** One request on its own HTTP/2 connection: Host becomes :authority, pseudo-headers leave the result. */
function getH2(u: URL, path: string, o: GetOptions): Promise<Res> {
  return new Promise((resolve, reject) => {
    const ca = testTlsFiles().caPem;
    const session = http2Connect(u.origin, {
      ca,
      createConnection: () =>
        tlsConnect({
          ca,
          ALPNProtocols: ['h2'],
          // a plain TCP socket from the chosen local address, then TLS over it
          socket: connect({ host: u.hostname, port: Number(u.port), localAddress: o.localAddress }),
        }),
    });
    session.on('error', reject);
    const headers: Record<string, string> = { ':method': o.method ?? 'GET', ':path': path };
    for (const [k, v] of Object.entries(o.headers ?? {})) {
      const name = k.toLowerCase();
      if (name === 'host') headers[':authority'] = v;
      else if (!H2_FORBIDDEN.has(name)) headers[name] = v;
    }
    const req = session.request(headers);
    const chunks: Buffer[] = [];
    let status = 0;
    let resHeaders: IncomingHttpHeaders = {};
    req.on('response', (h) => {
      status = Number(h[':status']);
      resHeaders = {};
      for (const [k, v] of Object.entries(h)) if (!k.startsWith(':')) resHeaders[k] = v as string;
    });
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      session.close();
      const body = Buffer.concat(chunks);
      resolve({ status, headers: resHeaders, body, text: body.toString('utf8') });
    });
    req.on('error', (err) => {
      session.destroy();
      reject(err);
    });
    req.end(o.body);
  });
}

export function get(base: string, path: string, o: GetOptions = {}): Promise<Res> {
  const u = new URL(base);
  if (u.protocol === 'https:' && TEST_PROTOCOL === 'h2') return getH2(u, path, o);
  const options = {
    host: u.hostname,
    port: u.port,
    path,
    method: o.method ?? 'GET',
    headers: o.headers,
    agent: false as const,
    localAddress: o.localAddress,
  };
  return new Promise((resolve, reject) => {
    const req =
      u.protocol === 'https:'
        ? httpsRequest(
            // SNI localhost whatever Host the test sends (the test certificate's name).
            {
              ...options,
              ca: testTlsFiles().caPem,
              servername: 'localhost',
              ALPNProtocols: ['http/1.1'],
            } as RequestOptions,
            (res) => collect(res, resolve, reject),
          )
        : httpRequest(options, (res) => collect(res, resolve, reject));
    req.on('error', reject);
    req.end(o.body);
  });
}

/**
 * node:http's request, or node:https's with the test CA (HTTP/1.1 by ALPN) for an https URL: for
 * tests that need the streaming request/response objects themselves.
 */
export function request(url: string, cb?: (res: IncomingMessage) => void): ClientRequest;
export function request(
  url: string,
  options: RequestOptions,
  cb?: (res: IncomingMessage) => void,
): ClientRequest;
export function request(
  url: string,
  a?: RequestOptions | ((res: IncomingMessage) => void),
  b?: (res: IncomingMessage) => void,
): ClientRequest {
  const options = typeof a === 'function' ? {} : (a ?? {});
  const cb = typeof a === 'function' ? a : b;
  if (!url.startsWith('https:')) return httpRequest(url, options, cb);
  const tlsOptions = { ca: testTlsFiles().caPem, servername: 'localhost', ALPNProtocols: ['http/1.1'] };
  return httpsRequest(url, { ...options, ...tlsOptions } as RequestOptions, cb);
}

/** 'http' or 'https': the scheme a test server was reached by. */
export function scheme(s: TestServer): 'http' | 'https' {
  return s.url.startsWith('https:') ? 'https' : 'http';
}

/** The ws:// or wss:// URL of a path on a test server, and the client options (the test CA) for it. */
export function wsTarget(s: TestServer, path: string): { url: string; options: { ca?: string } } {
  const secure = s.url.startsWith('https:');
  return {
    url: `${secure ? 'wss' : 'ws'}://127.0.0.1:${s.port}${path}`,
    options: secure ? { ca: testTlsFiles().caPem } : {},
  };
}

/** A raw connection to a test server: TCP, or TLS speaking HTTP/1.1 (ALPN) when the tests run on TLS. */
export function rawConnect(port: number, onConnect?: () => void): Socket {
  if (!tlsPorts.has(port)) return connect(port, '127.0.0.1', onConnect);
  return tlsConnect(
    { port, host: '127.0.0.1', ca: testTlsFiles().caPem, ALPNProtocols: ['http/1.1'] },
    onConnect,
  );
}

/**
 * Sends raw bytes and returns the raw response text, once the server closes the connection. `untilMs`
 * is a deadline for a server that keeps it open (then the text so far comes back), not a wait: keep it
 * generous unless the test means to stop reading early.
 */
export function raw(port: number, data: string | Buffer, untilMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const tls = tlsPorts.has(port);
    const sock = rawConnect(port);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => sock.destroy(), untilMs);
    sock.on('data', (c) => chunks.push(c));
    sock.on('error', (err: NodeJS.ErrnoException) => {
      // A TLS connection the server closes before the handshake (maxConnections) reads as a reset:
      // the same "closed without a byte" as the plain one.
      if (tls && err.code === 'ECONNRESET' && chunks.length === 0) return;
      reject(err);
    });
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
