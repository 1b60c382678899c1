// Waiting for something to happen without guessing how long it takes: poll a condition until it holds
// or a deadline passes. The deadline only turns a hang into a failure; a slow, shared machine makes
// the wait longer, never the test wrong. (No fixed sleeps in tests: see CONTRIBUTING.md, "Tests and benchmarks".)
import type { CompressionStats } from '../../src/server/static/compressor.js';
import { get, type Res } from './http.js';

/** Long enough for a loaded 2-core machine; a condition that never comes true fails after it. */
export const WAIT_DEADLINE_MS = 15_000;

/**
 * Resolves with the first truthy value `probe` returns, polling every `intervalMs`; rejects naming
 * `what` after `deadlineMs`.
 */
export async function waitUntil<T>(
  what: string,
  probe: () => T | Promise<T>,
  o: { deadlineMs?: number; intervalMs?: number } = {},
): Promise<Exclude<T, undefined | null | false | 0 | ''>> {
  const deadline = Date.now() + (o.deadlineMs ?? WAIT_DEADLINE_MS);
  for (;;) {
    const v = await probe();
    if (v) return v as Exclude<T, undefined | null | false | 0 | ''>;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${o.deadlineMs ?? WAIT_DEADLINE_MS} ms waiting until ${what}`);
    await new Promise((r) => setTimeout(r, o.intervalMs ?? 5));
  }
}

/**
 * A request the proxy cache answers from the store or not at all: `only-if-cached` (RFC 9111
 * §5.2.1.7) never reaches the origin and gets 504 on a miss; `max-stale` (§5.2.1.2) lets a stale entry
 * answer too. Counts as a use of the entry, nothing else.
 */
export function probeStore(base: string, path: string, headers: Record<string, string> = {}): Promise<Res> {
  return get(base, path, { headers: { ...headers, 'cache-control': 'only-if-cached, max-stale' } });
}

/** Waits until the proxy cache at `base` holds a response for `path` (with these request headers). */
export function waitUntilStored(
  base: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<Res> {
  return waitUntil(`${path} is stored`, async () => {
    const r = await probeStore(base, path, headers);
    return r.status !== 504 ? r : undefined;
  });
}

/** Waits until the proxy cache at `base` holds no response for `path` (after an invalidation). */
export async function waitUntilGone(
  base: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<void> {
  await waitUntil(
    `${path} is gone from the store`,
    async () => (await probeStore(base, path, headers)).status === 504,
  );
}

/**
 * GETs `path` with `Accept-Encoding: coding` (or `o.acceptEncoding`) until the answer has
 * Content-Encoding `coding`, and returns that answer. A variant compressed on the fly is made off the
 * request path from the file's second request on, at a fast level and then once more at the highest
 * (a new ETag); until then the server answers identity (docs/static.md, "Compression on the fly").
 * With `o.files` (the server's file view) it also waits until no compression is queued or running, and
 * returns an answer of the final variant.
 */
export async function waitUntilEncoded(
  base: string,
  path: string,
  coding: string,
  o: {
    headers?: Record<string, string>;
    acceptEncoding?: string;
    files?: { compressionStats(): CompressionStats | Promise<CompressionStats> };
  } = {},
): Promise<Res> {
  const ask = () =>
    get(base, path, { headers: { ...o.headers, 'accept-encoding': o.acceptEncoding ?? coding } });
  const first = await waitUntil(`${path} is sent with Content-Encoding: ${coding}`, async () => {
    const r = await ask();
    return r.headers['content-encoding'] === coding ? r : undefined;
  });
  const files = o.files;
  if (files === undefined) return first;
  await waitUntil('no compression is queued or running', async () => {
    const { queued, running } = await files.compressionStats();
    return queued.fast + queued.best + running.fast + running.best === 0;
  });
  const last = await ask();
  if (last.headers['content-encoding'] !== coding) throw new Error(`${path}: no longer ${coding}`);
  return last;
}

/** Waits until `ms` have passed on the wall clock (for freshness lifetimes: time itself is the event). */
export async function waitUntilElapsed(sinceMs: number, ms: number): Promise<void> {
  for (let left = sinceMs + ms - Date.now(); left > 0; left = sinceMs + ms - Date.now()) {
    await new Promise((r) => setTimeout(r, left));
  }
}

/** How late this process's timers have run since a probe started (lagProbe). */
export interface LagProbe {
  /** The largest delay past its due time any tick had so far, in ms. */
  maxMs(): number;
  stop(): void;
}

/**
 * Measures event-loop lag from now on: a 10 ms timer re-armed continuously, keeping the largest delay
 * past its due time. Tests that bound a time from above allow this much on top, so a loaded machine
 * widens the bound as much as it delayed every timer of the process, instead of failing the test.
 */
export function lagProbe(): LagProbe {
  const TICK_MS = 10;
  let max = 0;
  let due = performance.now() + TICK_MS;
  const tick = () => {
    const now = performance.now();
    max = Math.max(max, now - due);
    due = now + TICK_MS;
    timer = setTimeout(tick, TICK_MS);
  };
  let timer = setTimeout(tick, TICK_MS);
  return {
    maxMs: () => Math.max(max, performance.now() - due),
    stop: () => clearTimeout(timer),
  };
}

/**
 * Asserts that `probe` stays truthy for `ms` (a thing that must not happen, such as a late store
 * write): polls throughout and throws at the first falsy answer. A slow machine can only make the
 * check weaker, never fail it when the code is right.
 */
export async function holdsFor(what: string, probe: () => unknown, ms: number): Promise<void> {
  const end = Date.now() + ms;
  do {
    if (!(await probe())) throw new Error(`no longer true: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  } while (Date.now() < end);
}
