// The memory budget at `gatehouse serve`'s start (issue 40; the decision is config/memory.ts): the
// container's limit read from the cgroup, the V8 heap limit applied by restarting the process in place
// with --max-old-space-size (process.execve keeps its PID, so supervisors, signals and measurements still
// see one process), and the start-up line that says what was used.
import { readFileSync } from 'node:fs';
import { type MemoryBudget, memoryBounds, memoryBudget, mib } from '../config/memory.js';
import type { GatehouseConfig } from '../config/schema.js';
import { nativeRuntime } from '../server/index.js';

const MiB = 1024 * 1024;
/** Where cgroups are mounted; an override for the tests (a folder shaped like /sys/fs/cgroup). */
const CGROUP_ROOT_ENV = 'GATEHOUSE_CGROUP_ROOT';
/** cgroup v1 writes a page-rounded 2^63 for "no limit": anything this large is none. */
const NO_LIMIT_BYTES = 2 ** 60;

const readText = (file: string): string | undefined => {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
};

/** A limit file's bytes, or undefined for none ("max", unreadable, or the v1 "unlimited" value). */
function limitIn(file: string): number | undefined {
  const text = readText(file);
  if (text === undefined || !/^\d+$/.test(text)) return undefined;
  const bytes = Number(text);
  return bytes >= NO_LIMIT_BYTES ? undefined : bytes;
}

/**
 * The memory limit of the container this process runs in: cgroup v2 `memory.max` of its own cgroup (from
 * /proc/self/cgroup), else at the root; cgroup v1 `memory/memory.limit_in_bytes`. Undefined when none.
 */
export function containerMemoryLimit(
  root = process.env[CGROUP_ROOT_ENV] ?? '/sys/fs/cgroup',
): { readonly bytes: number; readonly file: string } | undefined {
  const own = /^0::(\/.*)$/m.exec(readText('/proc/self/cgroup') ?? '')?.[1];
  const candidates = [
    ...(own !== undefined && own !== '/' ? [`${root}${own}/memory.max`] : []),
    `${root}/memory.max`,
    `${root}/memory/memory.limit_in_bytes`,
  ];
  for (const file of candidates) {
    const bytes = limitIn(file);
    if (bytes !== undefined) return { bytes, file };
  }
  return undefined;
}

/** The budget of each serving process of `config` (`processes`: the worker count, 1 without workers). */
export function budgetOf(
  config: GatehouseConfig,
  processes: number,
): (MemoryBudget & { readonly containerFile?: string | undefined }) | { readonly error: string } {
  // Read once: the start-up line names the file the limit came from.
  const container = containerMemoryLimit();
  const b = memoryBudget({
    bounds: memoryBounds(config),
    configuredBytes: config.limits.memoryBytes,
    containerBytes: container?.bytes,
    processes,
  });
  return 'error' in b ? b : { ...b, containerFile: container?.file };
}

/** The heap limit in MiB a budget gives. */
export const heapMb = (b: MemoryBudget): number => Math.floor(b.heapBytes / MiB);

/**
 * A semi-space of the young generation (MiB). The young generation is two of them plus its large objects,
 * on top of --max-old-space-size. Node 24's V8 sizes it to 64 MiB when not told: with an old generation
 * near its limit, a scavenge could no longer promote into it, so every collection was a full one. The soak
 * in a 400 MiB container served 2.8 times more at 16 MiB, with 87 MB less RSS (bench/README.md, "Soak").
 */
export const SEMI_SPACE_MB = 16;
/** What the young generation takes of the heap limit: three semi-spaces' worth. */
const YOUNG_MB = 3 * SEMI_SPACE_MB;

/** The V8 flags that hold the heap to the budget's limit: the old generation and the young one within it. */
export const heapFlags = (b: MemoryBudget): string[] => [
  `--max-old-space-size=${heapMb(b) - YOUNG_MB}`,
  `--max-semi-space-size=${SEMI_SPACE_MB}`,
];

/** A --max-<space>-size the process (or NODE_OPTIONS) was started with, in MiB. */
function ownFlag(space: 'old' | 'semi'): number | undefined {
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  const re = new RegExp(`^--max-${space}-space-size=(\\d+)$`);
  for (const f of flags) {
    const m = re.exec(f);
    if (m !== null) return Number(m[1]);
  }
  return undefined;
}
const ownHeapFlag = (): number | undefined => ownFlag('old');
/** The process runs with the very flags the budget gives (restarted with them, or started as told). */
const hasBudgetFlags = (b: MemoryBudget): boolean =>
  ownHeapFlag() === heapMb(b) - YOUNG_MB && ownFlag('semi') === SEMI_SPACE_MB;

/** How the heap limit stands for this process: applied (by us or the operator), or why not. */
export type HeapState =
  | { readonly kind: 'applied'; readonly mb: number }
  | { readonly kind: 'operator'; readonly mb: number }
  | { readonly kind: 'cannot'; readonly why: string };

/**
 * Applies the budget's heap limit to this process (Node): restarts it in place with --max-old-space-size
 * when it has none (this call then does not return), else says how it stands. An operator's own
 * --max-old-space-size wins. Bun and Deno have no such restart here: their start-up line says so.
 */
export function applyHeapLimit(b: MemoryBudget): HeapState {
  const want = heapMb(b);
  const flags = heapFlags(b);
  if (hasBudgetFlags(b)) return { kind: 'applied', mb: want };
  const own = ownHeapFlag();
  if (own !== undefined) return { kind: 'operator', mb: own };
  if (nativeRuntime() !== undefined) return { kind: 'cannot', why: 'the runtime sizes its own heap' };
  const execve = (process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never })
    .execve;
  if (typeof execve !== 'function')
    return {
      kind: 'cannot',
      why: `Node ${process.version} cannot restart in place (22.15 and later can): start it with node ${flags.join(' ')}`,
    };
  execve.call(
    process,
    process.execPath,
    [process.execPath, ...process.execArgv, ...flags, ...process.argv.slice(1)],
    process.env,
  );
  return { kind: 'applied', mb: want };
}

/** The execArgv a worker gets: the budget's heap limit (node:cluster starts workers with it). */
export const workerHeapArgs = (b: MemoryBudget): string[] =>
  ownHeapFlag() === undefined ? heapFlags(b) : [];

/** How the heap limit stands for the workers (workerHeapArgs): the primary itself serves nothing. */
export function workersHeap(b: MemoryBudget): HeapState {
  const own = ownHeapFlag();
  return own === undefined ? { kind: 'applied', mb: heapMb(b) } : { kind: 'operator', mb: own };
}

/** The start-up line: the budget, where it came from, and the heap limit. */
export function budgetLine(
  b: MemoryBudget & { readonly containerFile?: string | undefined },
  heap: HeapState,
  processes: number,
): string {
  const per = processes > 1 ? ` per worker (${processes})` : '';
  const from =
    b.source === 'the bounds'
      ? `from the bounds (${mib(b.boundsBytes)}) plus heap and runtime`
      : b.source === 'the container'
        ? `from the container's limit (${b.containerFile ?? 'cgroup'})`
        : 'from limits.memoryBytes';
  const state =
    heap.kind === 'applied'
      ? `heap limit ${heap.mb} MiB`
      : heap.kind === 'operator'
        ? `heap limit ${heap.mb} MiB (the process's own --max-old-space-size)`
        : `heap limit not set: ${heap.why}`;
  return `memory budget ${mib(b.budgetBytes)}${per}, ${from}; ${state}`;
}
