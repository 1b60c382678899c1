// Access and error logs on pino: JSON lines, one readable line per request, or off.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { pino as Pino } from 'pino';
import type { Logger } from '../core/context.js';
import type { ResponseSink } from '../core/exchange.js';

export interface LogOptions {
  format: 'json' | 'pretty' | 'off';
  level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';
}

export type { Logger } from '../core/context.js';

const OFF: Logger = { info() {}, warn() {}, error() {}, isLevelEnabled: () => false };

// pino is loaded only when logging is on (it costs ~9 MB of RSS).
const loadPino = (): typeof Pino => (createRequire(import.meta.url)('pino') as { pino: typeof Pino }).pino;

interface Line {
  time?: number;
  level?: number;
  msg?: string;
  method?: string;
  url?: string;
  status?: number;
  bytes?: number;
  ms?: number;
  cache?: string;
  err?: { message?: string };
  worker?: number;
}

const LEVEL_NAMES: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** One line a record: `12:00:01 GET /index.html 200 1.2 kB 0.4 ms` (plus `[Cache-Status]` from a cache). */
export function prettyLine(o: Line): string {
  const t = `${new Date(o.time ?? 0).toISOString().slice(11, 19)}${o.worker === undefined ? '' : ` [w${o.worker}]`}`;
  if (o.method !== undefined) {
    const size =
      o.bytes === undefined ? '-' : o.bytes < 1024 ? `${o.bytes} B` : `${(o.bytes / 1024).toFixed(1)} kB`;
    const cache = o.cache === undefined ? '' : ` [${o.cache}]`;
    return `${t} ${o.method} ${o.url} ${o.status} ${size} ${o.ms?.toFixed(1)} ms${cache}\n`;
  }
  const lvl = LEVEL_NAMES[o.level ?? 30] ?? 'INFO';
  return `${t} ${lvl} ${o.msg ?? ''}${o.err?.message ? `: ${o.err.message}` : ''}\n`;
}

let droppedWrites = 0;

/** Log writes that failed (the reader of stdout went away: EPIPE) and were dropped, since start. */
export function droppedLogWrites(): number {
  return droppedWrites;
}

const guarded = new WeakSet<object>();

/**
 * A log that cannot be written must not stop the server: a closed stdout (the reader of a pipe gone,
 * `gatehouse serve | head`) makes every write fail with EPIPE, and an unhandled 'error' event would end
 * the process. Such writes are dropped and counted (droppedLogWrites; the metric of the same name).
 */
export function dropWriteErrors(stream: {
  on(event: 'error', listener: (err: Error) => void): unknown;
}): void {
  if (guarded.has(stream)) return;
  guarded.add(stream);
  stream.on('error', () => {
    droppedWrites++;
  });
}

/** `base` goes into every line (e.g. `{ worker: 2 }` in a cluster worker; pretty lines show `[w2]`). */
export function createLogger(
  o: LogOptions,
  out: NodeJS.WritableStream = process.stdout,
  base?: Record<string, unknown>,
): Logger {
  if (o.format === 'off') return OFF;
  const pino = loadPino();
  dropWriteErrors(out);
  if (o.format === 'pretty') {
    return pino(
      { level: o.level, base },
      { write: (s: string) => void out.write(prettyLine(JSON.parse(s) as Line)) },
    );
  }
  if (out !== process.stdout) return pino({ level: o.level, base }, out);
  const dest = pino.destination({ dest: 1, sync: false });
  dropWriteErrors(dest);
  return pino({ level: o.level, base }, dest);
}

const CACHE_STATUS = Symbol('gatehouse.log.cacheStatus');
const QUIET = Symbol('gatehouse.log.quiet');
const ON_SWITCH = Symbol('gatehouse.log.onSwitch');
type Noted = ServerResponse & { [CACHE_STATUS]?: string; [QUIET]?: true; [ON_SWITCH]?: (() => void)[] };

/** Puts the Cache-Status (RFC 9211) a cache answered with into the request's access-log line. */
export function logCacheStatus(res: ResponseSink, value: string): void {
  (res as Noted)[CACHE_STATUS] = value;
}

/** The Cache-Status a cache answered with (logCacheStatus), for the metrics. */
export function cacheStatusOf(res: ResponseSink): string | undefined {
  return (res as Noted)[CACHE_STATUS];
}

/** Leaves this request out of the access log (health probes and allowed metrics scrapes). */
export function quietAccessLog(res: ResponseSink): void {
  (res as Noted)[QUIET] = true;
}

/**
 * Runs `done` once when the request is over: its response closed (finished, or the client left), or,
 * for a handshake, its handler switched protocols (101, RFC 9110 §15.2.2), after which the detached
 * response never closes. The access log and the metrics observe requests through this.
 */
export function whenAnswered(req: IncomingMessage, res: ServerResponse, done: () => void): void {
  let called = false;
  const once = () => {
    if (called) return;
    called = true;
    done();
  };
  // 'close' fires once: on() saves once()'s wrapper.
  res.on('close', once);
  if ((req as { upgrade?: boolean }).upgrade === true) ((res as Noted)[ON_SWITCH] ??= []).push(once);
}

/** The status an observer reports: 101 for a switch, the one sent, or 499 when the client left first. */
export function answeredStatus(res: ServerResponse): number {
  return res.statusCode === 101 || res.writableFinished ? res.statusCode : 499;
}

/**
 * Bytes sent for this response since `sentBefore` (the socket's count when it began): head and body;
 * on HTTP/2 the stream's own DATA bytes (tls/h2-exchange.ts), since streams share the connection's count.
 */
export function answeredBytes(req: IncomingMessage, res: ServerResponse, sentBefore: number): number {
  return (res as { bytesSent?: number }).bytesSent ?? Math.max(0, req.socket.bytesWritten - sentBefore);
}

/**
 * The handler switched protocols on this response (entry.ts bindTunnel): status 101, observers told
 * after the handler's synchronous write of the 101 head, so the bytes they read include it.
 */
export function switched(res: ServerResponse): void {
  res.statusCode = 101;
  const fns = (res as Noted)[ON_SWITCH];
  (res as Noted)[ON_SWITCH] = undefined;
  if (fns !== undefined)
    queueMicrotask(() => {
      for (const fn of fns) fn();
    });
}

/**
 * Logs each request once it finished (or 499 when the client went away first): method, target,
 * status, bytes sent on the connection for it (head and body, like nginx's $bytes_sent; on HTTP/2 the
 * stream's body bytes, like $body_bytes_sent, since streams share the connection), time, peer,
 * and `cache`, the Cache-Status of a proxy cache answer.
 */
export function accessLogger(
  logger: Logger,
): ((req: IncomingMessage, res: ServerResponse) => void) | undefined {
  if (!logger.isLevelEnabled('info')) return undefined;
  return (req, res) => {
    const start = performance.now();
    const socket = req.socket;
    const sentBefore = socket.bytesWritten;
    whenAnswered(req, res, () => {
      if ((res as Noted)[QUIET] === true) return;
      const cache = (res as Noted)[CACHE_STATUS];
      logger.info({
        method: req.method,
        url: req.url,
        status: answeredStatus(res),
        bytes: answeredBytes(req, res, sentBefore),
        ms: Math.round((performance.now() - start) * 10) / 10,
        remote: socket.remoteAddress,
        ...(cache === undefined ? {} : { cache }),
      });
    });
  };
}
