// `--workers N`: a primary process forks N workers that share one port through
// node:cluster. The primary serves nothing itself: it restarts dead workers with a backoff, stops on a
// crash loop, drains every worker on SIGTERM/SIGINT and restarts them one at a time on SIGHUP.
// Workers run the ordinary `serve` (main.ts) and report `listening` over the IPC channel.
import cluster, { type Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { type Logger, TICKET_KEY_BYTES, TICKET_SECRET_ENV, type TlsOptions } from '../server/index.js';

/** A crash loop: this many unrequested worker deaths within windowMs stop the primary (exit 1). */
export const CRASH_LOOP = { deaths: 5, windowMs: 30_000 } as const;
const RESTART_BASE_MS = 100;
const RESTART_MAX_MS = 5_000;

/** The env var that tells a forked worker its slot (1..N), which its log lines carry as `worker`. */
export const WORKER_ENV = 'GATEHOUSE_WORKER';

/** IPC messages between the primary and its workers. */
export type WorkerMessage =
  | { gatehouse: 'listening'; url: string; httpUrl?: string | undefined }
  | { gatehouse: 'drained' }
  | { gatehouse: 'drained-ack' }
  | { gatehouse: 'metrics-req'; id: number }
  | { gatehouse: 'metrics-res'; id: number; text?: string; error?: string };

/** `workers` in config: "auto" is the number of cores the process may use. */
export function workerCount(workers: number | 'auto'): number {
  return workers === 'auto' ? availableParallelism() : workers;
}

/** This process's worker slot when it is a cluster worker, else undefined. */
export function workerSlot(): number | undefined {
  if (!cluster.isWorker) return undefined;
  const n = Number(process.env[WORKER_ENV]);
  return Number.isInteger(n) && n > 0 ? n : cluster.worker?.id;
}

/**
 * The primary's share of the session ticket secret: with tickets on, kept locally and no key file,
 * one secret made here goes to every worker (and every SIGHUP replacement), so a ticket one worker
 * issued resumes on the others. Undefined when the workers find the secret themselves.
 */
export function ticketSecretEnv(tls: TlsOptions | undefined): Record<string, string> | undefined {
  const t = tls?.sessionTickets;
  if (tls === undefined || t?.enabled === false || t?.keyFile !== undefined || t?.store === 'redis')
    return undefined;
  return { [TICKET_SECRET_ENV]: randomBytes(TICKET_KEY_BYTES).toString('hex') };
}

/** A worker's secret from the primary, removed from the environment once read. */
export function takeTicketSecret(): Buffer | undefined {
  const hex = process.env[TICKET_SECRET_ENV];
  delete process.env[TICKET_SECRET_ENV];
  return hex !== undefined && /^[0-9a-f]{96}$/.test(hex) ? Buffer.from(hex, 'hex') : undefined;
}

export type DeathDecision =
  | { kind: 'restart'; delayMs: number; recentMs: number[] }
  | { kind: 'give-up'; recentMs: number[] };

/**
 * What to do after an unrequested worker death at nowMs, given earlier deaths: restart after an
 * exponential backoff (100 ms doubling, at most 5 s) or give up on a crash loop.
 */
export function decideOnDeath(
  earlierMs: readonly number[],
  nowMs: number,
  rule: { deaths: number; windowMs: number } = CRASH_LOOP,
): DeathDecision {
  const recentMs = [...earlierMs.filter((t) => nowMs - t < rule.windowMs), nowMs];
  if (recentMs.length >= rule.deaths) return { kind: 'give-up', recentMs };
  const delayMs = Math.min(RESTART_BASE_MS * 2 ** (recentMs.length - 1), RESTART_MAX_MS);
  return { kind: 'restart', delayMs, recentMs };
}

export interface PrimaryOptions {
  count: number;
  logger: Logger;
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
  /** Answers a worker's request for the cluster's metrics (server/ops/metrics.ts, with `metrics` on). */
  clusterMetrics?: (() => Promise<string>) | undefined;
  /** More environment for every worker (the session ticket secret, tls/session-tickets.ts). */
  env?: Record<string, string> | undefined;
  /** Node flags for every worker besides the primary's own (the memory budget's heap limit, cli/memory.ts). */
  execArgv?: readonly string[] | undefined;
}

const isMessage = (m: unknown): m is WorkerMessage =>
  typeof m === 'object' && m !== null && typeof (m as { gatehouse?: unknown }).gatehouse === 'string';

/** Runs the primary until every worker has exited; resolves with the exit code. */
export function runPrimary(o: PrimaryOptions): Promise<number> {
  return new Promise<number>((resolve) => new Primary(o, resolve).start());
}

/** The primary's state: which worker holds which slot, and what it is doing (starting, stopping). */
class Primary {
  /** The worker each slot counts on; a SIGHUP replacement joins only once it listens. */
  private readonly occupant = new Map<number, Worker>();
  private readonly slotOf = new Map<Worker, number>();
  private readonly retiring = new Set<Worker>();
  private readonly listened = new Set<number>();
  private readonly waiters = new Map<Worker, (ok: boolean) => void>();
  private deathsMs: number[] = [];
  private stopping = false;
  private exitCode = 0;
  private rolling: Promise<void> | undefined;
  private rollAgain = false;
  private readonly onTerm = () => this.stop('SIGTERM', 0);
  private readonly onInt = () => this.stop('SIGINT', 0);
  private readonly onHup = () => this.hup();
  private readonly onExit = (w: Worker, code: number | null, signal: string | null) =>
    this.exited(w, code, signal);
  private readonly onMessage = (w: Worker, m: unknown) => this.message(w, m);

  constructor(
    private readonly o: PrimaryOptions,
    private readonly resolve: (code: number) => void,
  ) {}

  start(): void {
    cluster.on('exit', this.onExit);
    cluster.on('message', this.onMessage);
    process.on('SIGTERM', this.onTerm);
    process.on('SIGINT', this.onInt);
    process.on('SIGHUP', this.onHup);
    for (let slot = 1; slot <= this.o.count; slot++) this.spawn(slot);
  }

  private spawn(slot: number): Worker {
    if (this.o.execArgv !== undefined && this.o.execArgv.length > 0)
      cluster.setupPrimary({ execArgv: [...process.execArgv, ...this.o.execArgv] });
    const w = cluster.fork({ ...this.o.env, [WORKER_ENV]: String(slot) });
    this.slotOf.set(w, slot);
    return w;
  }

  private finishIfDone(): void {
    if (!this.stopping || this.slotOf.size > 0) return;
    process.off('SIGTERM', this.onTerm);
    process.off('SIGINT', this.onInt);
    process.off('SIGHUP', this.onHup);
    cluster.off('exit', this.onExit);
    cluster.off('message', this.onMessage);
    this.resolve(this.exitCode);
  }

  private stop(why: string, code: number): void {
    if (this.stopping) return;
    this.stopping = true;
    this.exitCode = code;
    this.o.logger.info(`${why}: draining ${this.slotOf.size} worker(s)`);
    // Each worker runs the ordinary graceful drain on SIGTERM (app/lifecycle.ts close()).
    for (const w of this.slotOf.keys()) w.process.kill('SIGTERM');
    this.finishIfDone();
  }

  private hup(): void {
    if (this.stopping) return;
    if (this.rolling !== undefined) {
      this.rollAgain = true;
      return;
    }
    this.rolling = this.roll().finally(() => {
      this.rolling = undefined;
      if (this.rollAgain && !this.stopping) {
        this.rollAgain = false;
        this.hup();
      }
    });
  }

  /** SIGHUP: per slot, a new worker first; once it listens, the old one drains. */
  private async roll(): Promise<void> {
    const { logger } = this.o;
    logger.info('SIGHUP: restarting workers one at a time');
    for (const slot of [...this.occupant.keys()].sort((a, b) => a - b)) {
      if (this.stopping) return;
      const old = this.occupant.get(slot);
      const fresh = this.spawn(slot);
      const ok = await new Promise<boolean>((r) => this.waiters.set(fresh, r));
      if (!ok || this.stopping) {
        logger.warn({ worker: slot }, 'SIGHUP: the new worker did not start; the old one keeps serving');
        continue;
      }
      this.occupant.set(slot, fresh);
      if (old === undefined || !this.slotOf.has(old)) continue;
      this.retiring.add(old);
      const gone = new Promise<void>((r) => old.once('exit', () => r()));
      old.process.kill('SIGTERM');
      await gone;
    }
    logger.info('SIGHUP: workers restarted');
  }

  private message(w: Worker, m: unknown): void {
    if (!isMessage(m)) return;
    const slot = this.slotOf.get(w);
    if (slot === undefined) return;
    if (m.gatehouse === 'listening') this.listening(w, slot, m);
    else if (m.gatehouse === 'metrics-req') this.metricsRequest(w, m.id);
    // The worker's last round trip before it exits: every connection this primary handed it before
    // it closed its server was sent before this ack, so the worker has answered each (accepted: false,
    // and the primary deals it to another worker). Exiting earlier could strand one in flight.
    else if (m.gatehouse === 'drained' && w.isConnected())
      w.send({ gatehouse: 'drained-ack' } satisfies WorkerMessage);
  }

  private listening(w: Worker, slot: number, m: Extract<WorkerMessage, { gatehouse: 'listening' }>): void {
    this.waiters.get(w)?.(true);
    this.waiters.delete(w);
    if (!this.occupant.has(slot)) this.occupant.set(slot, w);
    if (this.listened.has(slot)) return;
    this.listened.add(slot);
    // DESIGN: one `listening on` line, once every worker listens.
    if (this.listened.size === this.o.count) {
      this.o.stdout.write(`listening on ${m.url}\n`);
      if (m.httpUrl !== undefined) this.o.stdout.write(`redirecting ${m.httpUrl} to HTTPS\n`);
      this.o.logger.info(`${this.o.count} workers listening`);
    }
  }

  private metricsRequest(w: Worker, id: number): void {
    const reply = (r: { text?: string; error?: string }) => {
      if (w.isConnected()) w.send({ gatehouse: 'metrics-res', id, ...r } satisfies WorkerMessage);
    };
    if (this.o.clusterMetrics === undefined) reply({ error: 'metrics are off' });
    else
      this.o.clusterMetrics().then(
        (text) => reply({ text }),
        (err: Error) => reply({ error: err.message }),
      );
  }

  private exited(w: Worker, code: number | null, signal: string | null): void {
    const slot = this.slotOf.get(w) ?? 0;
    this.slotOf.delete(w);
    this.waiters.get(w)?.(false);
    this.waiters.delete(w);
    if (this.retiring.delete(w) || this.stopping) {
      this.finishIfDone();
      return;
    }
    const d = decideOnDeath(this.deathsMs, Date.now());
    this.deathsMs = d.recentMs;
    const how = signal !== null ? `signal ${signal}` : `exit code ${code}`;
    if (d.kind === 'give-up') {
      this.o.stderr.write(
        `gatehouse: workers keep dying (${d.recentMs.length} deaths within ${CRASH_LOOP.windowMs / 1000} s, ` +
          `the last by ${how}); stopping\n`,
      );
      this.stop('crash loop', 1);
      return;
    }
    // Only the slot's current worker is replaced: a failed SIGHUP replacement leaves the old one.
    if (this.occupant.has(slot) && this.occupant.get(slot) !== w) return;
    this.occupant.delete(slot);
    this.o.logger.warn({ worker: slot, code, signal }, `worker died (${how}); restarting in ${d.delayMs} ms`);
    setTimeout(() => {
      if (!this.stopping && !this.occupant.has(slot)) this.spawn(slot);
    }, d.delayMs);
  }
}
