// Runs h2load (Debian's nghttp2-client) pinned to the load CPU for a fixed duration and parses its summary:
// req/s, requests done and succeeded, failures, status classes and the negotiated application protocol.
// Every run is bounded in time (its duration plus a grace, then SIGKILL).
import { spawnSync } from 'node:child_process';
import { CPU, pinned, spawnTracked, stopChild } from './proc.mjs';

/** h2load's version, or undefined when it is not installed. */
export function h2loadVersion() {
  const res = spawnSync('h2load', ['--version'], { encoding: 'utf8' });
  if (res.error) return undefined;
  return /nghttp2\/(\S+)/.exec(`${res.stdout}${res.stderr}`)?.[1] ?? 'unknown';
}

/** Parses h2load's text summary; undefined when the summary lines are missing. Exported for tests. */
export function parseH2loadOutput(text) {
  const finished = /^finished in ([\d.]+)(ms|s), ([\d.]+) req\/s/m.exec(text);
  const reqs =
    /^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/m.exec(
      text,
    );
  const codes = /^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/m.exec(text);
  if (!finished || !reqs) return undefined;
  const n = (m, i) => Number(m[i]);
  const result = {
    seconds: n(finished, 1) / (finished[2] === 'ms' ? 1000 : 1),
    requestsPerSec: n(finished, 3),
    requests: n(reqs, 3),
    succeeded: n(reqs, 4),
    failed: n(reqs, 5),
    errored: n(reqs, 6),
    timeout: n(reqs, 7),
    status: codes ? { '2xx': n(codes, 1), '3xx': n(codes, 2), '4xx': n(codes, 3), '5xx': n(codes, 4) } : {},
    protocol: /^Application protocol: (\S+)/m.exec(text)?.[1],
    tls: /^TLS Protocol: (\S+)/m.exec(text)?.[1],
  };
  const errors = [];
  if (result.failed || result.errored || result.timeout) {
    errors.push(`${result.failed} failed, ${result.errored} errored, ${result.timeout} timed out`);
  }
  const bad = (result.status['4xx'] ?? 0) + (result.status['5xx'] ?? 0);
  if (bad) errors.push(`${bad} 4xx/5xx responses`);
  result.errors = errors;
  return result;
}

/**
 * `h2load -D durationSec [args] URL` pinned to the load CPU, or with `requests` `-n requests` instead (h2load
 * 1.52 in timing mode never exits when the server closes connections, as with `Connection: close`), then
 * bounded by `timeoutSec`. `expectProtocol` ('h2' or 'http/1.1'): a run that negotiated another one is an
 * error (ALPN fell back), as is one without any request done.
 */
export async function runH2load({ url, args, durationSec, requests, timeoutSec, expectProtocol }) {
  const amount = requests ? ['-n', String(requests)] : ['-D', String(durationSec)];
  const [cmd, argv] = pinned(CPU.load, 'h2load', ['-t', '1', ...amount, ...args, url]);
  const child = spawnTracked(cmd, argv);
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    out += d;
  });
  const limitSec = requests ? timeoutSec : durationSec + 15;
  const limit = setTimeout(() => stopChild(child, 1000), limitSec * 1000);
  const code = await new Promise((resolve) => child.once('exit', (c, s) => resolve(c ?? s)));
  clearTimeout(limit);
  const result = parseH2loadOutput(out);
  if (!result) {
    const why = code === 'SIGTERM' ? `stopped after ${limitSec} s` : `exited (${code})`;
    throw new Error(`h2load ${why} without a summary: ${out.trim().slice(-400)}`);
  }
  if (expectProtocol && result.protocol !== expectProtocol) {
    result.errors.push(`negotiated ${result.protocol ?? 'no protocol'}, expected ${expectProtocol}`);
  }
  if (result.requests === 0) result.errors.push('no request done');
  return result;
}
