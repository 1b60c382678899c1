// The memory budget of one serving process (issue 40, docs/deploy.md "Memory"): what its config bounds
// (the file view, each proxy cache's memory, the send queues when the connections are bounded), plus
// the heap everything else needs, plus what the runtime holds itself; or `limits.memoryBytes`; never more
// than a container's share. The V8 heap limit follows from it (cli/memory.ts applies it). Pure: the
// container's limit is read by the caller and passed in.
//
// The numbers are measured (bench/README.md, "Soak" and "Memory per request"). Under the soak load, with a
// 64 MiB cache filled to its bound, the live heap was 80-100 MB (the cache's entries' objects included); a
// proxied request in flight adds some 20 kB more. The 256 MiB of heap headroom (208 MiB of old generation
// and 48 of young, cli/memory.ts) holds that live set with twice its size for the collector to work in,
// or some 5,000 more proxied requests in flight before the pressure watch sheds (server/ops/pressure.ts:
// at 80 % of the limit). A 96 MiB heap ran out; RSS came to some 280 MB: the heap, the Buffers the bounds
// hold, and about 70 MB of runtime (code, sockets, pools).

import type { GatehouseConfig } from './schema.js';

const MiB = 1024 * 1024;

/** What the runtime holds besides the heap and the bounded Buffers: code, sockets, pools, threads. */
export const RUNTIME_RESERVE_BYTES = 72 * MiB;
/** The heap a budget derived from the bounds leaves for all that is not a bound (entries' objects too). */
export const HEAP_HEADROOM_BYTES = 256 * MiB;
/** The least heap a budget may leave: below it the start fails, naming the bounds to lower. */
export const MIN_HEAP_BYTES = 128 * MiB;
/**
 * What one connection may hold outside the heap while its client reads slowly: a download's send queue, a
 * chunk in the socket and one read ahead from the file (64 KiB each), plus its socket. Measured
 * (bench/request-memory.mjs): 117-212 kB of Buffers for each download whose client stopped reading; a
 * proxied request waiting on its upstream, some 20 kB of heap and 54 kB of RSS.
 */
export const CONNECTION_BYTES = 160 * 1024;
/**
 * What a --workers primary holds (it serves nothing, but loads the CLI and holds the cluster): measured
 * 74-105 MB under the soak load (bench/README.md, "Soak").
 */
export const PRIMARY_RESERVE_BYTES = 112 * MiB;
/** A disk or Redis cache's in-memory tier when its memoryCacheBytes is not set (config/proxy.ts). */
const DEFAULT_TIER_BYTES = 16 * MiB;

/** One bound of the config on memory, by the key that sets it. */
export interface MemoryBound {
  readonly key: string;
  readonly bytes: number;
}

/** The bounds the config sets on what a serving process holds in memory. */
export function memoryBounds(c: GatehouseConfig): MemoryBound[] {
  const out: MemoryBound[] = [{ key: 'static.memoryCacheBytes', bytes: c.static.memoryCacheBytes }];
  c.proxy.forEach((p, i) => {
    const cache = p.cache;
    if (cache?.enabled !== true) return;
    if (cache.store === 'memory')
      out.push({ key: `proxy[${i}].cache.maxSizeBytes`, bytes: cache.maxSizeBytes });
    else
      out.push({
        key: `proxy[${i}].cache.memoryCacheBytes`,
        bytes: cache.memoryCacheBytes ?? DEFAULT_TIER_BYTES,
      });
  });
  // Each connection's send queue: a download's (CONNECTION_BYTES), or a WebSocket client's, bounded by
  // maxBufferedBytes; their number only by limits.maxConnections.
  const ws = Math.max(0, ...c.websocket.map((w) => w.maxBufferedBytes));
  if (c.limits.maxConnections > 0)
    out.push({
      key:
        ws > CONNECTION_BYTES
          ? 'limits.maxConnections x websocket[].maxBufferedBytes'
          : 'limits.maxConnections x 160 KiB (a send queue)',
      bytes: c.limits.maxConnections * Math.max(ws, CONNECTION_BYTES),
    });
  return out;
}

export interface MemoryBudget {
  /** What the process may hold in all (RSS). */
  readonly budgetBytes: number;
  /** Where the budget came from. */
  readonly source: 'limits.memoryBytes' | 'the bounds' | 'the container';
  readonly boundsBytes: number;
  /** The V8 heap limit it leaves: the budget less the bounds and the runtime's reserve. */
  readonly heapBytes: number;
}

export interface BudgetInput {
  readonly bounds: readonly MemoryBound[];
  /** limits.memoryBytes, when set. */
  readonly configuredBytes?: number | undefined;
  /** The container's memory limit (cgroup), when there is one. */
  readonly containerBytes?: number | undefined;
  /** Serving processes sharing the container (--workers); each gets an equal share. */
  readonly processes: number;
}

/** Bytes in whole MiB, for the lines that name sizes ("64 MiB"). */
export const mib = (bytes: number): string => `${Math.floor(bytes / MiB)} MiB`;

/**
 * The budget of one serving process, or why the bounds cannot fit it: one line naming the keys to lower
 * (the largest bound first) or the budget to raise.
 */
export function memoryBudget(i: BudgetInput): MemoryBudget | { readonly error: string } {
  const boundsBytes = i.bounds.reduce((n, b) => n + b.bytes, 0);
  let budgetBytes = i.configuredBytes ?? boundsBytes + HEAP_HEADROOM_BYTES + RUNTIME_RESERVE_BYTES;
  let source: MemoryBudget['source'] = i.configuredBytes === undefined ? 'the bounds' : 'limits.memoryBytes';
  if (i.containerBytes !== undefined) {
    // With workers, the primary keeps its own reserve of the container.
    const share =
      i.processes > 1
        ? Math.floor((i.containerBytes - PRIMARY_RESERVE_BYTES) / i.processes)
        : i.containerBytes;
    if (share < budgetBytes) {
      budgetBytes = share;
      source = 'the container';
    }
  }
  const heapBytes = budgetBytes - boundsBytes - RUNTIME_RESERVE_BYTES;
  if (heapBytes < MIN_HEAP_BYTES) {
    const largest = [...i.bounds].sort((a, b) => b.bytes - a.bytes).filter((b) => b.bytes > 0);
    const keys = largest.map((b) => `${b.key} (${mib(b.bytes)})`).join(', ');
    const per = i.processes > 1 ? ` per worker (${i.processes})` : '';
    return {
      error:
        `the memory budget ${mib(budgetBytes)}${per}, from ${source}, leaves ${mib(Math.max(0, heapBytes))} of heap ` +
        `(at least ${mib(MIN_HEAP_BYTES)}) after its bounds and ${mib(RUNTIME_RESERVE_BYTES)} of runtime: ` +
        `lower ${keys || 'the bounds'}${source === 'the container' ? ', or give the container more memory' : ', or raise limits.memoryBytes'}`,
    };
  }
  return { budgetBytes, source, boundsBytes, heapBytes };
}
