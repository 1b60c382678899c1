// On-the-fly compression off the request path. A few worker threads (static.compressConcurrency, one
// by default) each compress one body at a time with zlib's synchronous calls, which run on that thread:
// neither the event loop nor libuv's thread pool, which every stat, open and read of the file view
// shares, ever waits behind a compression. Jobs wait in two bounded queues, `fast` (a variant that is
// missing) before `best` (a kept variant made again at the highest level); a job past a bound is
// dropped, and the response it would have served goes out identity. A job is asked whether it is still
// wanted (its file still kept) when its turn comes, so nothing is compressed to be thrown away.
import { Worker } from 'node:worker_threads';

/** The content codings made on the fly (zstd where node:zlib has it). */
export type Coding = 'br' | 'zstd' | 'gzip';
export type Tier = 'fast' | 'best';

export interface CompressJob {
  readonly coding: Coding;
  readonly tier: Tier;
  readonly src: Buffer;
  /** Text (brotli's text mode) or binary (wasm, ttf). */
  readonly textual: boolean;
  /** Asked when the job's turn comes: false drops it. */
  wanted(): boolean;
  /**
   * Called once: the compressed bytes, or undefined when the job was dropped (a queue full, no longer
   * wanted, the compressor closed or out of threads) or failed (zlib threw, its thread died).
   */
  done(out: Buffer | undefined, outcome: 'ok' | 'dropped' | 'failed'): void;
}

export interface CompressionStats {
  /** Worker threads alive now. */
  readonly threads: number;
  /** Compressions running now, by tier. */
  readonly running: { readonly fast: number; readonly best: number };
  /** Jobs waiting, by tier. */
  readonly queued: { readonly fast: number; readonly best: number };
  /** The most compressions that ran at once. */
  readonly peakRunning: number;
  /** Compressions finished, by tier (each coding of each file version at most once per tier). */
  readonly done: { readonly fast: number; readonly best: number };
  /** Jobs not run: a queue full, the file no longer kept, the compressor closed. */
  readonly dropped: number;
  /** Jobs whose compression threw or whose thread died. */
  readonly failed: number;
  /** Worker threads that died while the compressor was open. */
  readonly crashes: number;
}

/** Levels by tier: fast as nginx's gzip 6 costs (brotli 5 is about as fast, smaller than gzip 9). */
const FAST: Readonly<Record<Coding, number>> = { br: 5, zstd: 3, gzip: 6 };
/** The highest levels, for variants that are kept; above BEST_SMALL_MAX_BYTES a step lower (seconds per MiB). */
const BEST: Readonly<Record<Coding, number>> = { br: 11, zstd: 19, gzip: 9 };
const BEST_LARGE: Readonly<Record<Coding, number>> = { br: 9, zstd: 12, gzip: 9 };
const BEST_SMALL_MAX_BYTES = 256 * 1024;

/** The zlib level of a job. */
export function levelOf(coding: Coding, tier: Tier, sizeBytes: number): number {
  if (tier === 'fast') return FAST[coding];
  return sizeBytes <= BEST_SMALL_MAX_BYTES ? BEST[coding] : BEST_LARGE[coding];
}

/** Jobs waiting per tier, and the bytes all waiting jobs hold (files evicted since stay referenced). */
export const MAX_QUEUED_JOBS = 64;
export const MAX_QUEUED_BYTES = 32 * 1024 * 1024;
/** How much nicer than the event loop a compression thread runs on Linux (nice 10 under a nice-0 process). */
const THREAD_NICE = 10;
/** Threads that may die before compression is turned off for the compressor's lifetime. */
export const MAX_CRASHES = 3;

// The thread's whole program (CommonJS: an eval worker has `require`), so it loads the same way from
// the sources, dist/ or a bundle. The result goes back in an ArrayBuffer of exactly its size, moved,
// not copied (zlib's own output buffer may be larger than the bytes it holds).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const zlib = require('node:zlib');
const c = zlib.constants;
// Below the event loop's priority (setpriority(2) on Linux renices the calling thread only): a request
// gets the CPU first and a compression the rest. Elsewhere it would renice the whole process: not done.
// Relative to the nice the thread starts with; where the call is refused, the thread runs as it is.
if (workerData.nice > 0) {
  try {
    const os = require('node:os');
    os.setPriority(Math.min(19, os.getPriority() + workerData.nice));
  } catch {}
}
parentPort.on('message', (m) => {
  let out;
  try {
    if (m.coding === 'br') {
      out = zlib.brotliCompressSync(m.src, { params: {
        [c.BROTLI_PARAM_QUALITY]: m.level,
        [c.BROTLI_PARAM_SIZE_HINT]: m.src.length,
        [c.BROTLI_PARAM_MODE]: m.textual ? c.BROTLI_MODE_TEXT : c.BROTLI_MODE_GENERIC,
      } });
    } else if (m.coding === 'zstd') {
      // ZSTD_c_compressionLevel is 100 in zstd.h (as in zstd.ts).
      out = zlib.zstdCompressSync(m.src, { params: { [c.ZSTD_c_compressionLevel ?? 100]: m.level } });
    } else {
      out = zlib.gzipSync(m.src, { level: m.level });
    }
  } catch (err) {
    parentPort.postMessage({ error: String((err && err.message) || err) });
    return;
  }
  const own = out.byteOffset === 0 && out.byteLength === out.buffer.byteLength ? out : new Uint8Array(out);
  parentPort.postMessage({ out: own }, [own.buffer]);
});
`;

interface Slot {
  readonly worker: Worker;
  job: CompressJob | undefined;
}

export interface CompressorOptions {
  /** Compressions at once, one thread each (static.compressConcurrency). */
  readonly concurrency: number;
  /** One line when a thread dies, and when compression is turned off. */
  readonly onWarning?: (message: string) => void;
}

export class Compressor {
  private readonly concurrency: number;
  private readonly onWarning: (message: string) => void;
  private readonly queues: Record<Tier, CompressJob[]> = { fast: [], best: [] };
  private queuedBytes = 0;
  private readonly slots = new Set<Slot>();
  private closed = false;
  private crashes = 0;
  private readonly runningCount = { fast: 0, best: 0 };
  private peakRunning = 0;
  private readonly doneCount = { fast: 0, best: 0 };
  private dropped = 0;
  private failed = 0;

  constructor(o: CompressorOptions) {
    this.concurrency = Math.max(1, Math.floor(o.concurrency));
    this.onWarning = o.onWarning ?? (() => {});
  }

  /** False once closed, or after MAX_CRASHES threads died: nothing more will be compressed. */
  get available(): boolean {
    return !this.closed && this.crashes < MAX_CRASHES;
  }

  /** Queues a job; false (and `done` is not called) when it cannot wait: a queue is full or not available. */
  submit(job: CompressJob): boolean {
    const q = this.queues[job.tier];
    if (
      !this.available ||
      q.length >= MAX_QUEUED_JOBS ||
      this.queuedBytes + job.src.length > MAX_QUEUED_BYTES
    ) {
      this.dropped++;
      return false;
    }
    q.push(job);
    this.queuedBytes += job.src.length;
    this.pump();
    return true;
  }

  stats(): CompressionStats {
    return {
      threads: this.slots.size,
      running: { ...this.runningCount },
      queued: { fast: this.queues.fast.length, best: this.queues.best.length },
      peakRunning: this.peakRunning,
      done: { ...this.doneCount },
      dropped: this.dropped,
      failed: this.failed,
      crashes: this.crashes,
    };
  }

  /** Drops what waits and ends the threads (what runs is dropped too). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.dropQueued();
    for (const slot of this.slots) {
      const job = slot.job;
      slot.job = undefined;
      void slot.worker.terminate();
      if (job !== undefined) this.finish(job, undefined, 'dropped');
    }
    this.slots.clear();
  }

  private next(): CompressJob | undefined {
    for (;;) {
      const job = this.queues.fast.shift() ?? this.queues.best.shift();
      if (job === undefined) return undefined;
      this.queuedBytes -= job.src.length;
      if (job.wanted()) return job;
      this.dropped++;
      job.done(undefined, 'dropped');
    }
  }

  private pump(): void {
    while (this.available && this.queues.fast.length + this.queues.best.length > 0) {
      let slot: Slot | undefined;
      for (const s of this.slots) if (s.job === undefined) slot = s;
      if (slot === undefined) {
        if (this.slots.size >= this.concurrency) return;
        try {
          slot = this.spawn();
        } catch (err) {
          this.crashed(err);
          continue;
        }
      }
      const job = this.next();
      if (job === undefined) return;
      slot.job = job;
      this.runningCount[job.tier]++;
      const running = this.runningCount.fast + this.runningCount.best;
      if (running > this.peakRunning) this.peakRunning = running;
      // A copy of exactly the body's bytes, moved to the thread: the file view keeps its own.
      const src = new Uint8Array(job.src);
      slot.worker.postMessage(
        { coding: job.coding, level: levelOf(job.coding, job.tier, src.length), textual: job.textual, src },
        [src.buffer],
      );
    }
  }

  private spawn(): Slot {
    // No execArgv: the thread needs no loader or --import hook of the process around it.
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      execArgv: [],
      workerData: { nice: process.platform === 'linux' ? THREAD_NICE : 0 },
    });
    const slot: Slot = { worker, job: undefined };
    this.slots.add(slot);
    let error: unknown;
    worker.on('message', (m: { out?: Uint8Array; error?: string }) => {
      const job = slot.job;
      if (job === undefined) return;
      slot.job = undefined;
      if (m.out === undefined) this.finish(job, undefined, 'failed');
      else this.finish(job, Buffer.from(m.out.buffer, m.out.byteOffset, m.out.byteLength), 'ok');
      this.pump();
    });
    // An uncaught error ends the thread: 'exit' follows.
    worker.on('error', (err) => {
      error = err;
    });
    worker.on('exit', (code) => {
      if (!this.slots.delete(slot) || this.closed) return;
      const job = slot.job;
      slot.job = undefined;
      if (job !== undefined) this.finish(job, undefined, 'failed');
      this.crashed(error ?? `exit code ${code}`);
      this.pump();
    });
    // A compression never keeps the process alive (a server that closes, a CLI that ends). After the
    // listeners: a 'message' listener refs the worker's port again.
    worker.unref();
    return slot;
  }

  /** A thread died or could not start: after MAX_CRASHES, compression stops for good. */
  private crashed(err: unknown): void {
    this.crashes++;
    const why = err instanceof Error ? err.message : String(err);
    if (this.available) {
      this.onWarning(`a compression thread stopped (${why}); the next compression starts another`);
      return;
    }
    this.onWarning(`${this.crashes} compression threads stopped (last: ${why}); files go out uncompressed`);
    this.dropQueued();
  }

  private finish(job: CompressJob, out: Buffer | undefined, outcome: 'ok' | 'dropped' | 'failed'): void {
    this.runningCount[job.tier]--;
    if (outcome === 'ok') this.doneCount[job.tier]++;
    else if (outcome === 'failed') this.failed++;
    else this.dropped++;
    job.done(out, outcome);
  }

  private dropQueued(): void {
    for (const tier of ['fast', 'best'] as const) {
      const q = this.queues[tier].splice(0);
      for (const job of q) {
        this.dropped++;
        job.done(undefined, 'dropped');
      }
    }
    this.queuedBytes = 0;
  }
}
