// Samples a process's resident set size (VmRSS from /proc/<pid>/status) on an interval and keeps the peak.
import { readFileSync } from 'node:fs';

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
