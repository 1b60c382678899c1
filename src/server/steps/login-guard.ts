// Fairness for password checks: scrypt is slow on purpose, so one client must not be able
// to take every check slot (FairQueue), nor guess without end (failure throttle). Both are plain state
// machines over plain values (keys, nowMs); no timers, no I/O, so tests drive them step by step.

export interface FairQueueLimits {
  /** Tasks running at once. */
  readonly maxRunning: number;
  /** Tasks one key may have waiting (running ones do not count). */
  readonly maxQueuedPerKey: number;
  /** Tasks waiting across all keys: the memory bound. */
  readonly maxQueued: number;
}

export type Admission =
  /** A slot was free: the caller starts the task now (it counts as running). */
  | { readonly kind: 'run' }
  /** Queued; `finish()` hands it back when its turn comes. */
  | { readonly kind: 'queued' }
  /** `key-full`: this key already has its share waiting; `queue-full`: every waiting place is taken. */
  | { readonly kind: 'refused'; readonly reason: 'key-full' | 'queue-full' };

const RUN: Admission = { kind: 'run' };
const QUEUED: Admission = { kind: 'queued' };
const KEY_FULL: Admission = { kind: 'refused', reason: 'key-full' };
const QUEUE_FULL: Admission = { kind: 'refused', reason: 'queue-full' };

/**
 * A queue served round-robin across keys: each turn takes the oldest task of the key that waited
 * longest for a turn, so a key with many tasks waits its turn like a key with one. The Map's
 * insertion order is the ring: a key served goes to the back while it still has tasks.
 */
export class FairQueue<T> {
  private running = 0;
  private queued = 0;
  private readonly waiting = new Map<string, T[]>();

  constructor(private readonly limits: FairQueueLimits) {}

  /** Admits `item` for `key`: run it now, queue it, or refuse it. */
  admit(key: string, item: T): Admission {
    if (this.running < this.limits.maxRunning && this.queued === 0) {
      this.running++;
      return RUN;
    }
    const mine = this.waiting.get(key);
    if ((mine?.length ?? 0) >= this.limits.maxQueuedPerKey) return KEY_FULL;
    if (this.queued >= this.limits.maxQueued) return QUEUE_FULL;
    if (mine === undefined) this.waiting.set(key, [item]);
    else mine.push(item);
    this.queued++;
    return QUEUED;
  }

  /** A running task ended: returns the next task to start (now counted as running), if any. */
  finish(): T | undefined {
    this.running--;
    const first = this.waiting.entries().next();
    if (first.done === true) return undefined;
    const [key, items] = first.value;
    const item = items.shift() as T;
    this.waiting.delete(key);
    if (items.length > 0) this.waiting.set(key, items); // to the back of the ring
    this.queued--;
    this.running++;
    return item;
  }

  /** Counts, for tests and metrics. */
  size(): { running: number; queued: number; keys: number } {
    return { running: this.running, queued: this.queued, keys: this.waiting.size };
  }
}

// ---------------------------------------------------------------------------------------------------
// Failed logins per client: after `maxFailures` in a window, refuse without checking until it ends.

export interface FailurePolicy {
  readonly maxFailures: number;
  readonly windowMs: number;
}

/** One client's failures in its current window (the window starts at its first failure). */
export interface FailureRecord {
  readonly windowStartMs: number;
  readonly failures: number;
  /** The throttle was logged for this window. */
  readonly warned: boolean;
}

export type ThrottleDecision =
  | { readonly kind: 'allow'; readonly record: FailureRecord | undefined }
  | {
      readonly kind: 'throttled';
      /** Whole seconds until the window ends (at least 1), for Retry-After (RFC 9110 §10.2.3). */
      readonly retryAfterSec: number;
      /** First refusal in this window: log it (once per client and window). */
      readonly warn: boolean;
      readonly record: FailureRecord;
    };

function current(
  record: FailureRecord | undefined,
  nowMs: number,
  policy: FailurePolicy,
): FailureRecord | undefined {
  if (record === undefined) return undefined;
  return nowMs - record.windowStartMs >= policy.windowMs ? undefined : record;
}

/** May this client have its password checked now? `record` is the stored one (undefined: none). */
export function checkThrottle(
  record: FailureRecord | undefined,
  nowMs: number,
  policy: FailurePolicy,
): ThrottleDecision {
  const r = current(record, nowMs, policy);
  if (r === undefined || r.failures < policy.maxFailures) return { kind: 'allow', record: r };
  const retryAfterSec = Math.max(1, Math.ceil((r.windowStartMs + policy.windowMs - nowMs) / 1000));
  return {
    kind: 'throttled',
    retryAfterSec,
    warn: !r.warned,
    record: r.warned ? r : { ...r, warned: true },
  };
}

/** The record after one more failed check at `nowMs`. (A success deletes the record.) */
export function recordFailure(
  record: FailureRecord | undefined,
  nowMs: number,
  policy: FailurePolicy,
): FailureRecord {
  const r = current(record, nowMs, policy);
  if (r === undefined) return { windowStartMs: nowMs, failures: 1, warned: false };
  return { ...r, failures: r.failures + 1 };
}
