// `--workers N` (issue 17 §1): a primary process forks N workers that share one port through
// node:cluster. The primary serves nothing itself: it restarts dead workers with a backoff, stops on a
// crash loop, drains every worker on SIGTERM/SIGINT and restarts them one at a time on SIGHUP.
// Workers run the ordinary `serve` (main.ts) and report `listening` over the IPC channel.
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import type { Logger } from '../server/log.js';

/** A crash loop: this many unrequested worker deaths within windowMs stop the primary (exit 1). */
export const CRASH_LOOP = { deaths: 5, windowMs: 30_000 } as const;
const RESTART_BASE_MS = 100;
const RESTART_MAX_MS = 5_000;

/** The env var that tells a forked worker its slot (1..N), which its log lines carry as `worker`. */
export const WORKER_ENV = 'GATEHOUSE_WORKER';

/** IPC messages between the primary and its workers. */
export type WorkerMessage =
  | { gatehouse: 'listening'; url: string; httpUrl?: string | undefined }
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
  /** Answers a worker's request for the cluster's metrics (metrics.ts, with `metrics` on). */
  clusterMetrics?: (() => Promise<string>) | undefined;
}

const isMessage = (m: unknown): m is WorkerMessage =>
  typeof m === 'object' && m !== null && typeof (m as { gatehouse?: unknown }).gatehouse === 'string';

/** Runs the primary until every worker has exited; resolves with the exit code. */
export function runPrimary(o: PrimaryOptions): Promise<number> {
  const { logger } = o;
  /** The worker each slot counts on; a SIGHUP replacement joins only once it listens. */
  const occupant = new Map<number, Worker>();
  const slotOf = new Map<Worker, number>();
  const retiring = new Set<Worker>();
  const listened = new Set<number>();
  const waiters = new Map<Worker, (ok: boolean) => void>();
  let deathsMs: number[] = [];
  let stopping = false;
  let exitCode = 0;
  let rolling: Promise<void> | undefined;
  let rollAgain = false;

  const spawn = (slot: number): Worker => {
    const w = cluster.fork({ [WORKER_ENV]: String(slot) });
    slotOf.set(w, slot);
    return w;
  };
  const alive = () => [...slotOf.keys()];

  return new Promise<number>((resolve) => {
    const finishIfDone = () => {
      if (!stopping || slotOf.size > 0) return;
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
      process.off('SIGHUP', onHup);
      cluster.off('exit', onExit);
      cluster.off('message', onMessage);
      resolve(exitCode);
    };
    const stop = (why: string, code: number) => {
      if (stopping) return;
      stopping = true;
      exitCode = code;
      logger.info(`${why}: draining ${slotOf.size} worker(s)`);
      // Each worker runs the ordinary graceful drain on SIGTERM (app/lifecycle.ts close()).
      for (const w of alive()) w.process.kill('SIGTERM');
      finishIfDone();
    };
    const onTerm = () => stop('SIGTERM', 0);
    const onInt = () => stop('SIGINT', 0);
    const onHup = () => {
      if (stopping) return;
      if (rolling !== undefined) {
        rollAgain = true;
        return;
      }
      rolling = roll().finally(() => {
        rolling = undefined;
        if (rollAgain && !stopping) {
          rollAgain = false;
          onHup();
        }
      });
    };

    /** SIGHUP: per slot, a new worker first; once it listens, the old one drains. */
    const roll = async (): Promise<void> => {
      logger.info('SIGHUP: restarting workers one at a time');
      for (const slot of [...occupant.keys()].sort((a, b) => a - b)) {
        if (stopping) return;
        const old = occupant.get(slot);
        const fresh = spawn(slot);
        const ok = await new Promise<boolean>((r) => waiters.set(fresh, r));
        if (!ok || stopping) {
          logger.warn({ worker: slot }, 'SIGHUP: the new worker did not start; the old one keeps serving');
          continue;
        }
        occupant.set(slot, fresh);
        if (old === undefined || !slotOf.has(old)) continue;
        retiring.add(old);
        const gone = new Promise<void>((r) => old.once('exit', () => r()));
        old.process.kill('SIGTERM');
        await gone;
      }
      logger.info('SIGHUP: workers restarted');
    };

    const onMessage = (w: Worker, m: unknown) => {
      if (!isMessage(m)) return;
      const slot = slotOf.get(w);
      if (slot === undefined) return;
      if (m.gatehouse === 'listening') {
        waiters.get(w)?.(true);
        waiters.delete(w);
        if (!occupant.has(slot)) occupant.set(slot, w);
        if (listened.has(slot)) return;
        listened.add(slot);
        // DESIGN: one `listening on` line, once every worker listens.
        if (listened.size === o.count) {
          o.stdout.write(`listening on ${m.url}\n`);
          if (m.httpUrl !== undefined) o.stdout.write(`redirecting ${m.httpUrl} to HTTPS\n`);
          logger.info(`${o.count} workers listening`);
        }
      } else if (m.gatehouse === 'metrics-req') {
        const reply = (r: Omit<Extract<WorkerMessage, { gatehouse: 'metrics-res' }>, 'gatehouse'>) => {
          if (w.isConnected()) w.send({ gatehouse: 'metrics-res', ...r });
        };
        if (o.clusterMetrics === undefined) reply({ id: m.id, error: 'metrics are off' });
        else
          o.clusterMetrics().then(
            (text) => reply({ id: m.id, text }),
            (err: Error) => reply({ id: m.id, error: err.message }),
          );
      }
    };

    const onExit = (w: Worker, code: number | null, signal: string | null) => {
      const slot = slotOf.get(w) ?? 0;
      slotOf.delete(w);
      waiters.get(w)?.(false);
      waiters.delete(w);
      if (retiring.delete(w) || stopping) {
        finishIfDone();
        return;
      }
      const d = decideOnDeath(deathsMs, Date.now());
      deathsMs = d.recentMs;
      const how = signal !== null ? `signal ${signal}` : `exit code ${code}`;
      if (d.kind === 'give-up') {
        o.stderr.write(
          `gatehouse: workers keep dying (${d.recentMs.length} deaths within ${CRASH_LOOP.windowMs / 1000} s, ` +
            `the last by ${how}); stopping\n`,
        );
        stop('crash loop', 1);
        return;
      }
      // Only the slot's current worker is replaced: a failed SIGHUP replacement leaves the old one.
      if (occupant.has(slot) && occupant.get(slot) !== w) return;
      occupant.delete(slot);
      logger.warn({ worker: slot, code, signal }, `worker died (${how}); restarting in ${d.delayMs} ms`);
      setTimeout(() => {
        if (!stopping && !occupant.has(slot)) spawn(slot);
      }, d.delayMs);
    };

    cluster.on('exit', onExit);
    cluster.on('message', onMessage);
    process.on('SIGTERM', onTerm);
    process.on('SIGINT', onInt);
    process.on('SIGHUP', onHup);
    for (let slot = 1; slot <= o.count; slot++) spawn(slot);
  });
}
