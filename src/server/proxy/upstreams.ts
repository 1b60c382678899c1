// Upstream pools for one proxied prefix: balancing, passive and active health, admission.
// The pool bounds idle keep-alive connections (nginx `keepalive N`), not concurrency: a request
// never waits for a pooled connection unless `maxConnections` is set, and then at most `queueMs`.
import { createRequire } from 'node:module';
import { exactConnector } from './connect.js';
import { FetchPool, fetchOnlyRuntime, type UpstreamPool } from './fetch-pool.js';
import { SocketPool } from './socket-pool.js';

// undici is loaded only when a proxy route exists (it costs ~20 MB of RSS).
const loadUndici = (): typeof import('undici') =>
  createRequire(import.meta.url)('undici') as typeof import('undici');

/** connections: null: the pool opens a connection whenever all are busy, so stalled clients holding
 *  some can never starve the others (the limit, if any, is ours: `tryEnter`/`enqueue`). */
function undiciPool(origin: string, connectTimeoutMs: number): UpstreamPool {
  const undici = loadUndici();
  return new undici.Pool(origin, {
    connections: null,
    connect: exactConnector(undici, connectTimeoutMs),
    keepAliveTimeout: 4_000,
    pipelining: 1,
  }) as unknown as UpstreamPool;
}

export interface UpstreamOptions {
  readonly urls: readonly string[];
  readonly balance: 'round-robin' | 'least-busy';
  readonly connectTimeoutMs: number;
  /** Idle keep-alive connections to keep (about): requests beyond this many in flight close theirs. */
  readonly connections: number;
  /** Concurrent requests (each holds one connection) at most; undefined: no limit. */
  readonly maxConnections?: number | undefined;
  /** How long a request waits for a slot under maxConnections before it is refused. */
  readonly queueMs?: number | undefined;
  readonly failures: number;
  readonly cooldownMs: number;
  readonly healthPath?: string | undefined;
  readonly healthIntervalMs: number;
  readonly nowMs?: () => number;
}

/** A request waiting for a connection slot under maxConnections. */
interface Waiter {
  readonly start: () => void;
  readonly refuse: () => void;
  readonly timer: NodeJS.Timeout;
  done: boolean;
}

export class Upstream {
  readonly url: URL;
  /** scheme://host:port */
  readonly origin: string;
  /** Path prefix of the upstream URL without trailing slash ('' for the root). */
  readonly basePath: string;
  readonly pool: UpstreamPool;
  /** Requests dispatched to the pool and not finished (each holds one connection: no pipelining). */
  inFlight = 0;
  /** Consecutive failures (passive health). */
  failures = 0;
  /** Every failure and failed health check so far (the metrics' upstream errors). */
  errors = 0;
  downUntilMs = 0;
  private readonly keepAlive: number;
  private readonly max: number;
  private readonly queueMs: number;
  private readonly waiting: Waiter[] = [];

  constructor(url: string, o: UpstreamOptions) {
    this.url = new URL(url);
    this.origin = this.url.origin;
    this.basePath = this.url.pathname.replace(/\/+$/, '');
    this.keepAlive = o.connections;
    this.max = o.maxConnections ?? Number.POSITIVE_INFINITY;
    this.queueMs = o.queueMs ?? 5000;
    this.pool = fetchOnlyRuntime()
      ? this.url.protocol === 'http:'
        ? new SocketPool(this.origin, o.connectTimeoutMs)
        : new FetchPool(this.origin)
      : undiciPool(this.origin, o.connectTimeoutMs);
  }

  /** Whether the request about to start should close its connection afterwards (idle bound). */
  get overKeepAlive(): boolean {
    return this.inFlight > this.keepAlive;
  }

  /** Takes a connection slot when one is free (every taken slot is given back with `release`). */
  tryEnter(): boolean {
    if (this.inFlight >= this.max) return false;
    this.inFlight++;
    return true;
  }

  /**
   * Queues a request that found no free slot (maxConnections): `start` runs when one frees up
   * (the slot taken for it), `refuse` after `queueMs`. Returns the cancel for a client that leaves.
   */
  enqueue(start: () => void, refuse: () => void): () => void {
    const w: Waiter = {
      start,
      refuse,
      done: false,
      timer: setTimeout(() => {
        w.done = true;
        this.drop(w);
        refuse();
      }, this.queueMs),
    };
    this.waiting.push(w);
    return () => {
      if (w.done) return;
      w.done = true;
      clearTimeout(w.timer);
      this.drop(w);
    };
  }

  /** A started request finished: its slot goes to the longest waiter. */
  release(): void {
    this.inFlight--;
    while (this.waiting.length > 0 && this.inFlight < this.max) {
      const w = this.waiting.shift()!;
      if (w.done) continue;
      w.done = true;
      clearTimeout(w.timer);
      this.inFlight++;
      w.start();
    }
  }

  /** Refuses every queued request now (shutdown). */
  refuseWaiting(): void {
    for (const w of this.waiting.splice(0)) {
      if (w.done) continue;
      w.done = true;
      clearTimeout(w.timer);
      w.refuse();
    }
  }

  private drop(w: Waiter): void {
    const i = this.waiting.indexOf(w);
    if (i !== -1) this.waiting.splice(i, 1);
  }
}

export class UpstreamSet {
  readonly all: readonly Upstream[];
  private next = 0;
  private readonly o: UpstreamOptions;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;

  constructor(o: UpstreamOptions) {
    this.o = o;
    this.now = o.nowMs ?? Date.now;
    this.all = o.urls.map((u) => new Upstream(u, o));
    if (o.healthPath !== undefined) {
      this.timer = setInterval(() => void this.checkAll(), o.healthIntervalMs);
      this.timer.unref();
    }
  }

  /** The upstream for the next request, skipping those cooling down (all down: the least recently failed). */
  pick(exclude?: Upstream): Upstream | undefined {
    const now = this.now();
    const live = this.all.filter((u) => u.downUntilMs <= now && u !== exclude);
    if (live.length === 0) {
      const others = this.all.filter((u) => u !== exclude);
      return others.sort((a, b) => a.downUntilMs - b.downUntilMs)[0];
    }
    if (this.o.balance === 'least-busy') {
      let best = live[0]!;
      for (const u of live) if (u.inFlight < best.inFlight) best = u;
      return best;
    }
    const u = live[this.next % live.length]!;
    this.next = (this.next + 1) % 1_000_000;
    return u;
  }

  /** Passive health: `failures` consecutive failures take an upstream out for `cooldownMs`. */
  failed(u: Upstream): void {
    u.failures++;
    u.errors++;
    if (u.failures >= this.o.failures) u.downUntilMs = this.now() + this.o.cooldownMs;
  }

  succeeded(u: Upstream): void {
    u.failures = 0;
    u.downUntilMs = 0;
  }

  private async checkAll(): Promise<void> {
    await Promise.all(
      this.all.map(async (u) => {
        try {
          const r = await u.pool.request({
            method: 'GET',
            path: u.basePath + this.o.healthPath,
            headersTimeout: this.o.healthIntervalMs,
            bodyTimeout: this.o.healthIntervalMs,
          });
          await r.body.dump();
          if (r.statusCode < 500) this.succeeded(u);
          else this.checkFailed(u);
        } catch {
          this.checkFailed(u);
        }
      }),
    );
  }

  /** Active health: a failed check takes the upstream out for `cooldownMs`. */
  private checkFailed(u: Upstream): void {
    u.errors++;
    u.downUntilMs = this.now() + this.o.cooldownMs;
  }

  /** Whether `pick` balances to `u` now (it is not cooling down after failures). */
  isUp(u: Upstream): boolean {
    return u.downUntilMs <= this.now();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    for (const u of this.all) u.refuseWaiting();
    await Promise.all(this.all.map((u) => u.pool.destroy().catch(() => {})));
  }
}
