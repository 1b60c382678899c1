// Vary is a list (RFC 9110 §12.5.5): add names, never replace what is there.
import type { ResponseSink } from './exchange.js';

const memo = new Map<string, string>();

/** Merges two Vary values, keeping order and dropping case-insensitive duplicates; `*` wins. */
export function mergeVary(a: number | string | readonly string[] | undefined, b: string): string {
  if (a === undefined || a === '') return b;
  const existing = String(a);
  // The same few pairs repeat on every request (e.g. Accept-Encoding + Origin).
  const k = `${existing}\n${b}`;
  let v = memo.get(k);
  if (v === undefined) {
    v = mergeVaryUncached(existing, b);
    if (memo.size < 256) memo.set(k, v);
  }
  return v;
}

function mergeVaryUncached(existing: string, b: string): string {
  if (existing.trim() === '*' || b.trim() === '*') return '*';
  const names = existing
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const lower = new Set(names.map((n) => n.toLowerCase()));
  for (const n of b.split(',')) {
    const t = n.trim();
    if (t && !lower.has(t.toLowerCase())) {
      names.push(t);
      lower.add(t.toLowerCase());
    }
  }
  return names.join(', ');
}

/** Adds names to the response's Vary header. */
export function appendVary(res: ResponseSink, names: string): void {
  res.setHeader('Vary', mergeVary(res.getHeader('vary'), names));
}

/**
 * writeHead that keeps Vary names set earlier by a step (CORS) when `headers` has its own Vary.
 * Fast path: nothing set earlier.
 */
export function writeHeadMerged(
  res: ResponseSink,
  status: number,
  headers: Record<string, string | string[]>,
): void {
  const vary = headers.Vary;
  if (vary !== undefined) {
    const before = res.getHeader('vary');
    if (before !== undefined)
      headers = { ...headers, Vary: mergeVary(before, Array.isArray(vary) ? vary.join(', ') : vary) };
  }
  res.writeHead(status, headers);
}
