// Runs wrk (installing it with apt-get when missing) pinned to the load CPU and parses its summary:
// requests/s, total requests, socket errors and non-2xx/3xx responses. Every run is bounded in time.
import { spawnSync } from 'node:child_process';
import { CPU, pinned, spawnTracked, stopChild } from './proc.mjs';

function wrkVersion() {
  const res = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
  if (res.error) return undefined;
  return /wrk\s+(\S+)/.exec(`${res.stdout}${res.stderr}`)?.[1] ?? 'unknown';
}

/** Returns wrk's version, installing it with apt-get first if needed; throws when that is impossible. */
export function ensureWrk(log = console.error) {
  let version = wrkVersion();
  if (version) return version;
  if (process.platform !== 'linux' || spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status !== 0) {
    throw new Error(
      'wrk is not installed and apt-get is not available: install wrk (https://github.com/wg/wrk)',
    );
  }
  const sudo = process.getuid?.() === 0 ? [] : ['sudo'];
  const steps = [
    ['apt-get', 'update'],
    ['apt-get', 'install', '-y', 'wrk'],
  ];
  for (const step of steps) {
    const cmd = [...sudo, ...step];
    log(`bench: wrk not found; running: ${cmd.join(' ')}`);
    const res = spawnSync(cmd[0], cmd.slice(1), {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      timeout: 300_000,
    });
    if (res.status !== 0)
      throw new Error(`'${cmd.join(' ')}' failed (${res.error?.message ?? `exit ${res.status}`})`);
  }
  version = wrkVersion();
  if (!version) throw new Error('wrk is still not on PATH after apt-get install');
  log(`bench: installed wrk ${version}`);
  return version;
}

const UNITS = { '': 1, k: 1e3, K: 1e3, M: 1e6, G: 1e9 };

/** Parses wrk's text summary. Exported for tests. */
export function parseWrkOutput(text) {
  const rps = /^Requests\/sec:\s*([\d.]+)\s*$/m.exec(text);
  const total = /^\s*(\d+) requests in ([\d.]+)(m?s|m|h)/m.exec(text);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(text);
  const latency = /^\s*Latency\s+([\d.]+)(us|ms|s)\b/m.exec(text);
  const transfer = /^Transfer\/sec:\s*([\d.]+)([KMG]?)B/m.exec(text);
  if (!rps || !total) return undefined;
  const latencyScale = { us: 0.001, ms: 1, s: 1000 };
  // `--latency`: the "Latency Distribution" lines, e.g. `     99%    2.34ms`.
  const percentilesMs = {};
  for (const m of text.matchAll(/^\s*(50|75|90|99)%\s+([\d.]+)(us|ms|s)\s*$/gm)) {
    percentilesMs[`p${m[1]}`] = Number(m[2]) * latencyScale[m[3]];
  }
  return {
    requestsPerSec: Number(rps[1]),
    requests: Number(total[1]),
    socketErrors: sock
      ? { connect: +sock[1], read: +sock[2], write: +sock[3], timeout: +sock[4] }
      : { connect: 0, read: 0, write: 0, timeout: 0 },
    non2xx3xx: non2xx ? Number(non2xx[1]) : 0,
    latencyAvgMs: latency ? Number(latency[1]) * latencyScale[latency[2]] : undefined,
    transferBytesPerSec: transfer ? Number(transfer[1]) * UNITS[transfer[2]] : undefined,
    ...(Object.keys(percentilesMs).length ? { latencyMs: percentilesMs } : {}),
  };
}

/**
 * One wrk run: `wrk -t<threads> -c<connections> -d<duration>s` against 127.0.0.1, pinned to the load CPU.
 * With `latency`, also `--latency`, whose percentiles come back as `latencyMs: { p50, p75, p90, p99 }`.
 * Resolves with the parsed summary plus `errors` (a list of human-readable problems; empty when clean).
 */
export async function runWrk({
  port,
  path,
  headers = {},
  durationSec,
  connections = 50,
  threads = 1,
  latency = false,
}) {
  const args = [`-t${threads}`, `-c${connections}`, `-d${durationSec}s`, '--timeout', '5s'];
  if (latency) args.push('--latency');
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
  args.push(`http://127.0.0.1:${port}${path}`);
  const [file, argv] = pinned(CPU.load, 'wrk', args);
  const child = spawnTracked(file, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c) => {
    out += c;
  });
  child.stderr.setEncoding('utf8').on('data', (c) => {
    out += c;
  });
  const limitMs = (durationSec + 15) * 1000;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stopChild(child, 1000);
  }, limitMs);
  const code = await new Promise((resolve) => {
    child.once('error', (err) => {
      out += String(err);
      resolve(-1);
    });
    child.once('exit', (c) => resolve(c));
  });
  clearTimeout(timer);
  if (timedOut) throw new Error(`wrk did not finish within ${limitMs / 1000} s`);
  const result = parseWrkOutput(out);
  if (code !== 0 || !result)
    throw new Error(`wrk failed (exit ${code}): ${out.trim().split('\n').slice(-3).join(' | ')}`);
  const errors = [];
  const sock = result.socketErrors;
  const sockTotal = sock.connect + sock.read + sock.write + sock.timeout;
  if (sockTotal > 0) {
    errors.push(
      `socket errors connect ${sock.connect}, read ${sock.read}, write ${sock.write}, timeout ${sock.timeout}`,
    );
  }
  if (result.non2xx3xx > 0) errors.push(`${result.non2xx3xx} non-2xx/3xx responses`);
  if (result.requests === 0) errors.push('no requests completed');
  return { ...result, errors };
}
