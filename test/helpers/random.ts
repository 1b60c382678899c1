// Seeded randomness for fuzz and property tests, so a failure reproduces. FUZZ_SEED shifts every seed
// (FUZZ_SEED=7 FUZZ_ITERATIONS=100000 node scripts/run-tests.mjs test/http); FUZZ_ITERATIONS scales the
// runs that use ITERATIONS. CI (.ci/run) picks a fresh FUZZ_SEED each run and prints it; unset, it is 0,
// so a local run feeds the same inputs every time.

import type { IpBytes } from '../../src/http/ip.js';

function envInteger(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  // A typo must not silently fall back to seed 0 (NaN >>> 0): the run would not explore.
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`${name}=${raw}: expected an integer >= ${min}`);
  return n;
}

/** The run's seed (FUZZ_SEED, default 0). Put it in failure messages: `FUZZ_SEED=n npm test` replays. */
export const FUZZ_SEED = envInteger('FUZZ_SEED', 0, 0);
export const SEED_OFFSET = FUZZ_SEED * 0x10000;
export const ITERATIONS = envInteger('FUZZ_ITERATIONS', 3000, 1);

/** mulberry32: a tiny seeded PRNG giving floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A seeded generator of the shapes fuzzers need. `seed` is the test's own; FUZZ_SEED shifts it. */
export class Gen {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed + SEED_OFFSET);
  }
  /** A float in [0, 1). */
  float(): number {
    return this.next();
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  /** Up to `maxPieces` pieces drawn from `alphabet` (pieces may be several characters). */
  string(alphabet: readonly string[], maxPieces: number): string {
    let s = '';
    const n = this.int(maxPieces + 1);
    for (let i = 0; i < n; i++) s += this.pick(alphabet);
    return s;
  }
  /** Up to `max` random bytes. */
  bytes(max: number): Uint8Array {
    const b = new Uint8Array(this.int(max + 1));
    for (let i = 0; i < b.length; i++) b[i] = this.int(256);
    return b;
  }
  /** Any UTF-16 code units, lone surrogates and controls included. */
  anyString(maxLength: number): string {
    let s = '';
    const n = this.int(maxLength + 1);
    for (let i = 0; i < n; i++) {
      s += String.fromCharCode(this.chance(0.7) ? this.int(0x80) : this.int(0x10000));
    }
    return s;
  }
  /** `s` with up to `edits` random characters inserted, deleted or replaced from `alphabet`. */
  mutate(s: string, alphabet: readonly string[], edits = 3): string {
    let out = s;
    const n = 1 + this.int(edits);
    for (let k = 0; k < n; k++) {
      const at = this.int(out.length + 1);
      const op = this.int(3);
      if (op === 0) out = out.slice(0, at) + this.pick(alphabet) + out.slice(at);
      else if (op === 1) out = out.slice(0, at) + out.slice(at + 1);
      else out = out.slice(0, at) + this.pick(alphabet) + out.slice(at + 1);
    }
    return out;
  }
}

/** How to replay a failing input: the seed, the test's base seed and the iteration. */
export function replayHint(baseSeed: number, iteration: number): string {
  return `FUZZ_SEED=${FUZZ_SEED} (base seed ${baseSeed}, iteration ${iteration}; replay: FUZZ_SEED=${FUZZ_SEED} npm test)`;
}

function show(v: unknown): string {
  try {
    const s = JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x));
    return s === undefined ? String(v) : s.length > 2000 ? `${s.slice(0, 2000)}...` : s;
  } catch {
    return String(v);
  }
}

/**
 * Runs `check` on `iterations` inputs drawn by `make` from a generator seeded with `baseSeed` (shifted
 * by FUZZ_SEED). A failure is rethrown with the input and the replay hint, the original as `cause`.
 */
export function forAll<T>(
  baseSeed: number,
  iterations: number,
  make: (g: Gen) => T,
  check: (input: T) => void,
): void {
  const g = new Gen(baseSeed);
  for (let i = 0; i < iterations; i++) {
    const input = make(g);
    try {
      check(input);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      throw new Error(`${message}\n  input: ${show(input)}\n  ${replayHint(baseSeed, i)}`, { cause: err });
    }
  }
}

/** 16 random address bytes: IPv4-mapped, mostly zero (loopback-ish, zero runs) or anything. */
export function randomIpBytes(g: Gen): IpBytes {
  const b = new Uint8Array(16);
  const kind = g.int(4);
  if (kind === 0) {
    b[10] = 0xff;
    b[11] = 0xff;
    for (let i = 12; i < 16; i++) b[i] = g.int(256);
  } else {
    for (let i = 0; i < 16; i++) b[i] = kind === 1 && g.chance(0.6) ? 0 : g.int(256);
  }
  return b;
}
