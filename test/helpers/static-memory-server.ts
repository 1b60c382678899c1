// A Gatehouse in a process of its own, for the static-cache memory tests (test/server/
// static-memory.test.ts, test/security/static-404-memory.test.ts): the heap it reports is the server's
// alone. STATIC_MEMORY_ROOT: the folder served; STATIC_MEMORY_CACHE_BYTES: static.memoryCacheBytes;
// STATIC_MEMORY_CONFIG: more config as JSON (test/security/proxy-key-memory.test.ts: a proxy route).
// Prints `port N` when it listens; each `stats` line on stdin gets one JSON line back, after full
// GCs (live memory is what counts): heapUsed, external (Buffer bodies), rss, requests seen.
import { createInterface } from 'node:readline';
import { startServer } from './http.js';

const root = process.env.STATIC_MEMORY_ROOT;
if (root === undefined) throw new Error('STATIC_MEMORY_ROOT is not set');
const s = await startServer(root, {
  static: { memoryCacheBytes: Number(process.env.STATIC_MEMORY_CACHE_BYTES ?? 4 * 1024 * 1024) },
  ...JSON.parse(process.env.STATIC_MEMORY_CONFIG ?? '{}'),
});
let requests = 0;
s.app.server.on('request', () => requests++);
process.stdout.write(`port ${s.port}\n`);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line !== 'stats') return;
  // Twice: the first pass may leave weakly held objects the second one frees.
  gc();
  gc();
  const m = process.memoryUsage();
  const stats = { heapUsed: m.heapUsed, external: m.external, rss: m.rss, requests };
  process.stdout.write(`${JSON.stringify(stats)}\n`);
});
process.stdin.on('end', () => process.exit(0));
