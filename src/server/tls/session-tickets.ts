// TLS session tickets shared across workers and instances (RFC 8446 §4.6.1, RFC 5077): every process
// derives the ticket key of the current time window from one shared secret, HKDF(secret, window), so
// a ticket issued by one worker or instance resumes on any other with no coordination, and the key
// changes every rotateSecs. The secret comes from a file, from Redis, from the primary (--workers),
// or is made in process. Node's server holds one ticket key (no decrypt-only old ones): a ticket
// outlives neither its window nor sessionTimeout (set to rotateSecs); after a rotation the client
// makes a full handshake. Existing connections are unaffected by a rotation.
import { hkdfSync, randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';
import type { Logger } from '../ops/log.js';
import type { RedisConnection } from '../redis/connection.js';
import type { RedisPool } from '../redis/pool.js';
import { SECRET_MAX_BYTES, SECRET_MIN_BYTES, type SessionTicketOptions } from './options.js';

/** Node's ticket key: 16 bytes name, 16 HMAC, 16 AES (tls.Server#setTicketKeys). */
export const TICKET_KEY_BYTES = 48;
/** What the primary hands its workers (hex) when the secret is made in process. */
export const TICKET_SECRET_ENV = 'GATEHOUSE_TICKET_SECRET';
/** The same on every instance: OpenSSL resumes a session only under the context it was made in
 *  (Node's default is a hash of process.argv, which differs between instances). */
export const SESSION_ID_CONTEXT = 'gatehouse-session';
const HKDF_SALT = 'gatehouse tls session ticket key';
/** How long a Redis read of the secret may take before the local key is used. */
const REDIS_WAIT_MS = 1000;

/** The time window `nowMs` falls in and when it ends (windows start at the Unix epoch). */
export function ticketWindow(nowMs: number, rotateSecs: number): { index: number; endsMs: number } {
  const spanMs = rotateSecs * 1000;
  const index = Math.floor(nowMs / spanMs);
  return { index, endsMs: (index + 1) * spanMs };
}

/** The window's ticket key: HKDF-SHA256 (RFC 5869) over the secret, the span and the window. */
export function ticketKeyFor(secret: Buffer, rotateSecs: number, index: number): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, HKDF_SALT, `${rotateSecs}:${index}`, TICKET_KEY_BYTES));
}

/** A key file or secret that cannot be used: the source and the reason, one line. */
export class TicketSecretError extends Error {
  constructor(
    readonly source: string,
    reason: string,
  ) {
    super(`${source}: ${reason}`);
    this.name = 'TicketSecretError';
  }
}

/** Why a secret's length is refused, or undefined. */
export function secretLengthProblem(bytes: number): string | undefined {
  if (bytes < SECRET_MIN_BYTES) return `${bytes} bytes: at least ${SECRET_MIN_BYTES} are needed`;
  if (bytes > SECRET_MAX_BYTES) return `over ${SECRET_MAX_BYTES} bytes`;
  return undefined;
}

/** Reads the key file: present, a regular file, not readable by group or others, 48..1024 bytes. */
export async function readKeyFile(path: string): Promise<Buffer> {
  const source = `sessionTickets.keyFile ${path}`;
  const fh = await open(path, 'r').catch((err: NodeJS.ErrnoException) => {
    throw new TicketSecretError(source, `cannot read (${err.code ?? err.message})`);
  });
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new TicketSecretError(source, 'not a regular file');
    if ((st.mode & 0o077) !== 0)
      throw new TicketSecretError(
        source,
        `readable by group or others (mode ${(st.mode & 0o777).toString(8)}): chmod 600 it`,
      );
    const problem = secretLengthProblem(st.size);
    if (problem !== undefined) throw new TicketSecretError(source, problem);
    return await fh.readFile();
  } finally {
    await fh.close();
  }
}

/**
 * The secret in Redis (`<keyPrefix>tls:ticket-secret`), made by the first instance (SET NX). Only the
 * first SECRET_MAX_BYTES + 1 bytes are read (GETRANGE): a value planted there is not trusted, and a
 * huge one would cost every instance its size at each rotation. A wrong length is refused.
 */
async function redisSecret(conn: RedisConnection): Promise<Buffer> {
  // Commands fail at once while the connection is not ready (no offline queue): wait for it first.
  if (!conn.isUp())
    await new Promise<void>((resolve) => {
      const off = conn.onStateChange((up) => {
        if (!up) return;
        off();
        resolve();
      });
    });
  const key = conn.key('tls', 'ticket-secret');
  const read = () => conn.client.getrangeBuffer(key, 0, SECRET_MAX_BYTES);
  let value = await read();
  if (value.length === 0) {
    await conn.client.set(key, randomBytes(TICKET_KEY_BYTES), 'NX');
    value = await read();
  }
  const problem = secretLengthProblem(value.length);
  if (problem !== undefined) throw new TicketSecretError(`redis ${key}`, problem);
  return value;
}

function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

export interface TicketKeys {
  /** Loads the secret and sets the current key (a bad key file throws TicketSecretError). */
  start(): Promise<void>;
  /** The key in use (the listener passes it along when it swaps its default context). */
  current(): Buffer | undefined;
  /** Stops the rotation timer. */
  close(): void;
}

/**
 * The rotation for one server: `apply(key)` is called at start and at each window's end. A key file
 * or Redis that fails later (or Redis at start) is logged and the last good secret (else one made in
 * process) stays.
 */
export function createTicketKeys(
  o: SessionTicketOptions,
  d: { apply(key: Buffer): void; logger: Logger; redis: RedisPool; nowMs?: () => number },
): TicketKeys {
  const nowMs = d.nowMs ?? Date.now;
  let secret: Buffer | undefined = o.secret;
  let key: Buffer | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let failing = false;
  const load = async (): Promise<Buffer> => {
    if (o.keyFile !== undefined) return readKeyFile(o.keyFile);
    if (o.store === 'redis') return withDeadline(redisSecret(d.redis.get(o.redis)), REDIS_WAIT_MS, 'redis');
    return secret ?? randomBytes(TICKET_KEY_BYTES);
  };
  const refresh = async (first: boolean) => {
    try {
      secret = await load();
      if (failing) d.logger.info('tls: session ticket secret readable again');
      failing = false;
    } catch (err) {
      if (first && err instanceof TicketSecretError && o.keyFile !== undefined) throw err;
      if (!failing)
        d.logger.warn(
          { reason: (err as Error).message },
          secret === undefined
            ? 'tls: session ticket secret refused; this process uses its own key (tickets resume only here)'
            : 'tls: session ticket secret refused; the last good one stays',
        );
      failing = true;
      secret ??= randomBytes(TICKET_KEY_BYTES);
    }
  };
  const rotate = () => {
    const w = ticketWindow(nowMs(), o.rotateSecs);
    key = ticketKeyFor(secret!, o.rotateSecs, w.index);
    d.apply(key);
    clearTimeout(timer);
    // At the window's end: reread the secret (a replaced file or Redis value takes effect), derive.
    timer = setTimeout(
      () =>
        void refresh(false).then(() => {
          if (!closed) rotate();
        }),
      Math.max(w.endsMs - nowMs(), 0) + 1,
    );
    timer.unref();
  };
  // Redis back after an outage (or after a start without it): the shared secret replaces the local one.
  const stopWatching =
    o.store === 'redis' && o.keyFile === undefined
      ? d.redis.get(o.redis).onStateChange((up) => {
          if (up && failing && !closed)
            void refresh(false).then(() => {
              if (!closed) rotate();
            });
        })
      : undefined;
  return {
    async start() {
      await refresh(true);
      rotate();
    },
    current: () => key,
    close() {
      closed = true;
      clearTimeout(timer);
      stopWatching?.();
    },
  };
}
