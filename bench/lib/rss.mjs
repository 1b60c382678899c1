// Samples a process's resident set size (VmRSS from /proc/<pid>/status) on an interval and keeps the peak;
// `readTreeRssKb` reads that of a process and its descendants (a cluster primary and its workers).
import { readdirSync, readFileSync } from 'node:fs';

/** VmRSS of `pid` in kB, or undefined when the process is gone. */
export function readRssKb(pid) {
  try {
    const match = /^VmRSS:\s*(\d+)\s*kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Starts sampling every `intervalMs`; `stop()` returns the peak in kB (undefined if never readable). */
export function sampleRss(pid, intervalMs = 250) {
  let peak;
  const sample = () => {
    const kb = readRssKb(pid);
    if (kb !== undefined && (peak === undefined || kb > peak)) peak = kb;
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

/** The children of `pid` (of every thread of it: /proc/<pid>/task/<tid>/children), [] when it is gone. */
export function childPids(pid) {
  let tids;
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const out = [];
  for (const tid of tids) {
    try {
      for (const c of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(/\s+/)) {
        if (c !== '') out.push(Number(c));
      }
    } catch {}
  }
  return out;
}

/** `pid` and its descendants (a cluster primary and its workers), the root first. */
export function treePids(pid) {
  const out = [pid];
  for (let i = 0; i < out.length; i++) for (const c of childPids(out[i])) if (!out.includes(c)) out.push(c);
  return out;
}

/** VmRSS in kB of every live process of `pid`'s tree: Map pid -> kB (empty when the root is gone). */
export function readTreeRssKb(pid) {
  const out = new Map();
  for (const p of treePids(pid)) {
    const kb = readRssKb(p);
    if (kb !== undefined) out.set(p, kb);
  }
  return out;
}
