// A server process's CPU time over a timed window, from /proc: utime + stime of /proc/<pid>/stat (fields
// 14 and 15, in clock ticks, all threads of the process), which gives requests per server CPU-second and the
// server's CPU utilisation (CPU-s / wall-s). When the server is pinned to one CPU, that CPU's line of
// /proc/stat over the same window tells why a utilisation below 1 happened: the CPU sat idle (the server was
// not the bottleneck) or something else ran on it (other processes, interrupts, hypervisor steal).
// Ticks are coarse (1 / CLK_TCK s): over a 5 s run a share is good to about 0.2 %, over 2 s to 0.5 %.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Clock ticks per second for /proc/<pid>/stat and /proc/stat times (`getconf CLK_TCK`, 100 if that fails). */
export const CLK_TCK = (() => {
  const n = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim());
  return Number.isInteger(n) && n > 0 ? n : 100;
})();

/** utime + stime of `pid` in seconds, or undefined when it cannot be read (process gone, no /proc). */
export function readCpuSec(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is parenthesised and may contain spaces: split after its closing ')'.
    // What follows starts at field 3 (state), so utime (14) and stime (15) are at indexes 11 and 12.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(f[11]) + Number(f[12]);
    return Number.isFinite(ticks) ? ticks / CLK_TCK : undefined;
  } catch {
    return undefined;
  }
}

/** utime + stime of `pid` and its direct children (a cluster primary and its workers), or undefined. */
export function readTreeCpuSec(pid) {
  const own = readCpuSec(pid);
  if (own === undefined) return undefined;
  let children = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  } catch {
    return own;
  }
  return children.reduce((sum, c) => sum + (readCpuSec(c) ?? 0), own);
}

/**
 * The `cpuN` line of /proc/stat in ticks: { idle (idle + iowait), steal, total }, or undefined when `cpu` is
 * undefined or the line cannot be read.
 */
export function readCpuLine(cpu) {
  if (cpu === undefined) return undefined;
  try {
    const line = readFileSync('/proc/stat', 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`cpu${cpu} `));
    if (!line) return undefined;
    // user nice system idle iowait irq softirq steal (guest and guest_nice are already in user and nice).
    const f = line.trim().split(/\s+/).slice(1, 9).map(Number);
    const t = { idle: f[3] + (f[4] ?? 0), steal: f[7] ?? 0, total: f.reduce((a, b) => a + b, 0) };
    return Number.isFinite(t.total) ? t : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Starts a CPU window on `pid` (and on `cpu`, the CPU it is pinned to, if any). `stop()` returns
 * `{ cpuSec, wallSec, util, cpuShares? }`, or undefined when the process could not be read at either end.
 * util = the server's CPU-s / wall-s. cpuShares (pinned servers only) splits the pinned CPU's time over the
 * window into { server, idle, rest, steal }: rest = 1 - server - idle is what other processes and interrupt
 * work outside the server took (the server's own share already holds the softirq work the kernel did in its
 * context, so /proc/stat's irq columns are not subtracted separately); steal (hypervisor) is part of rest.
 */
export function cpuWindow(pid, cpu, { tree = false } = {}) {
  // tree: the process and its children (--workers): workers that live through the whole window count.
  const read = tree ? readTreeCpuSec : readCpuSec;
  const line0 = readCpuLine(cpu);
  const cpu0 = read(pid);
  const t0 = process.hrtime.bigint();
  return {
    stop() {
      const t1 = process.hrtime.bigint();
      const cpu1 = read(pid);
      const line1 = readCpuLine(cpu);
      if (cpu0 === undefined || cpu1 === undefined) return undefined;
      const wallSec = Number(t1 - t0) / 1e9;
      const cpuSec = cpu1 - cpu0;
      const result = { cpuSec, wallSec, util: cpuSec / wallSec };
      const total = line0 && line1 ? line1.total - line0.total : 0;
      if (total > 0) {
        const server = Math.min(1, (cpuSec * CLK_TCK) / total);
        const idle = (line1.idle - line0.idle) / total;
        const steal = (line1.steal - line0.steal) / total;
        result.cpuShares = { server, idle, rest: Math.max(0, 1 - server - idle), steal };
      }
      return result;
    },
  };
}
