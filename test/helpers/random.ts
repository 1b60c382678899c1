// Seeded randomness for fuzz and property tests, so a failure reproduces. FUZZ_SEED shifts every seed
// (FUZZ_SEED=7 FUZZ_ITERATIONS=100000 node scripts/run-tests.mjs test/http); FUZZ_ITERATIONS scales the
// runs that use ITERATIONS.

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

export const SEED_OFFSET = Number(process.env.FUZZ_SEED ?? 0) * 0x10000;
export const ITERATIONS = Number(process.env.FUZZ_ITERATIONS ?? 3000);
