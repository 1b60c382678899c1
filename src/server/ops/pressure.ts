// Memory pressure (issue 40 §3, docs/deploy.md "Memory"): near its budget the server drops what it keeps
// only to be faster (each feature's shed: cached files, cached responses), least recently used first,
// and readiness says so; it keeps answering. Two signals:
// - the live heap against the V8 heap limit (what runs out first, as "JavaScript heap out of memory"):
//   the least heap in use over the last few seconds, since garbage is collected between samples;
// - the RSS against the budget (limits.memoryBytes; the CLI sets it, config/memory.ts), what a
//   container's OOM killer counts. Without a budget (a mounted handler) only the heap counts.
// decidePressure is pure; createPressureWatch samples the process on an unref'd timer.
import { getHeapStatistics } from 'node:v8';
import type { Logger, MemoryPressure } from '../core/context.js';

/** One look at the process. */
export interface MemorySample {
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
}

export interface PressureLimits {
  /** What the process may hold (RSS); undefined: the RSS is not watched. */
  readonly budgetBytes?: number | undefined;
  /** The V8 heap limit; undefined where there is none to watch (Bun's JavaScriptCore). */
  readonly heapLimitBytes?: number | undefined;
}

/** A decision: MemoryPressure without the running total. */
export type Pressure = Omit<MemoryPressure, 'shedBytes'>;

/** Live heap at this share of the heap limit: shed. */
export const SHED_HEAP_SHARE = 0.8;
/** Live heap at this share, after shedding: readiness 503 (the next allocations may fail). */
export const CRITICAL_HEAP_SHARE = 0.95;
/** RSS at this share of the budget: shed. */
export const SHED_RSS_SHARE = 0.9;
/** RSS at the budget itself: readiness 503. */
export const CRITICAL_RSS_SHARE = 1;
/** What each shed drops of every feature's memory. */
export const SHED_FRACTION = 0.25;
export const SAMPLE_MS = 500;
/** Samples a decision looks at (5 s): a window holds at least one collection under load. */
export const WINDOW_SAMPLES = 10;

const NONE: Pressure = Object.freeze({ level: 'none', reason: '' });
const MiB = 1024 * 1024;
const mib = (bytes: number): number => Math.round(bytes / MiB);

/**
 * The pressure a full window of samples shows: its least heap in use (the live heap, near enough) against
 * the heap limit, and its least RSS against the budget. Undefined until the window is full.
 */
export function decidePressure(window: readonly MemorySample[], l: PressureLimits): Pressure | undefined {
  if (window.length < WINDOW_SAMPLES) return undefined;
  let heap = Number.POSITIVE_INFINITY;
  let rss = Number.POSITIVE_INFINITY;
  for (const s of window) {
    heap = Math.min(heap, s.heapUsedBytes);
    rss = Math.min(rss, s.rssBytes);
  }
  const heapShare = l.heapLimitBytes === undefined ? 0 : heap / l.heapLimitBytes;
  const rssShare = l.budgetBytes === undefined ? 0 : rss / l.budgetBytes;
  const critical = heapShare >= CRITICAL_HEAP_SHARE || rssShare >= CRITICAL_RSS_SHARE;
  if (!critical && heapShare < SHED_HEAP_SHARE && rssShare < SHED_RSS_SHARE) return NONE;
  const parts: string[] = [];
  if (l.heapLimitBytes !== undefined) parts.push(`live heap ${mib(heap)} of ${mib(l.heapLimitBytes)} MiB`);
  if (l.budgetBytes !== undefined) parts.push(`RSS ${mib(rss)} of a ${mib(l.budgetBytes)} MiB budget`);
  return { level: critical ? 'critical' : 'shed', reason: `Memory pressure: ${parts.join(', ')}.` };
}

export interface PressureWatch {
  state(): MemoryPressure;
  close(): void;
}

export interface PressureWatchOptions extends PressureLimits {
  readonly logger: Logger;
  /** Asks every feature to drop `fraction` of its memory; returns the bytes dropped. */
  readonly shed: (fraction: number) => number;
  /** Injected for tests; default process.memoryUsage(). */
  readonly sample?: (() => MemorySample) | undefined;
  readonly sampleMs?: number | undefined;
}

const processSample = (): MemorySample => {
  const m = process.memoryUsage();
  return { rssBytes: m.rss, heapUsedBytes: m.heapUsed };
};

/** The V8 heap limit of this process; undefined on Bun (JavaScriptCore has none to reach). */
export function heapLimitBytes(): number | undefined {
  if (typeof (globalThis as { Bun?: unknown }).Bun === 'object') return undefined;
  return getHeapStatistics().heap_size_limit;
}

/**
 * Samples the process every sampleMs; once a window shows pressure, every feature sheds SHED_FRACTION
 * and the window starts over (the next decision sees the memory after the shed).
 */
export function createPressureWatch(o: PressureWatchOptions): PressureWatch {
  const sample = o.sample ?? processSample;
  const window: MemorySample[] = [];
  let current: Pressure = NONE;
  let shedBytes = 0;
  const tick = () => {
    window.push(sample());
    if (window.length > WINDOW_SAMPLES) window.shift();
    const p = decidePressure(window, o);
    if (p === undefined) return;
    if (p.level === 'none') {
      if (current.level !== 'none') o.logger.info('memory pressure: over');
      current = p;
      return;
    }
    const dropped = o.shed(SHED_FRACTION);
    shedBytes += dropped;
    current = p;
    window.length = 0;
    o.logger.warn(
      { level: p.level, droppedBytes: dropped },
      `${p.reason} The caches dropped ${mib(dropped)} MiB.`,
    );
  };
  const timer = setInterval(tick, o.sampleMs ?? SAMPLE_MS);
  timer.unref?.();
  return {
    state: () => ({ ...current, shedBytes }),
    close: () => clearInterval(timer),
  };
}
