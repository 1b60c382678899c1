// Coalescing (RFC 9111 §4: one response can serve them all): concurrent misses and stale
// revalidations of one key and request variant share one upstream exchange; the others wait for it
// and then look the request up again.
import { getHeader, varyKey } from '../../../cache/index.js';
import type { StoredEntry } from '../../../cache/store/types.js';
import type { CacheState, Exchange } from './state.js';

/**
 * When an exchange for `ckey` is under way, waits for it and looks again (a hit now, usually; when
 * nothing was stored this request goes upstream on its own, as every waiter does). True when it did.
 */
export async function waitFor(s: CacheState, x: Exchange, ckey: string): Promise<boolean> {
  const running = s.inflight.get(ckey);
  if (running === undefined) return false;
  await running;
  if (!x.res.destroyed) await s.lookup(x, false);
  return true;
}

/** Registers an exchange others may wait on; the returned function ends the wait (once). */
export function lead(s: CacheState, ckey: string): () => void {
  let release!: () => void;
  const p = new Promise<void>((resolve) => {
    release = resolve;
  });
  s.inflight.set(ckey, p);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    if (s.inflight.get(ckey) === p) s.inflight.delete(ckey);
    release();
  };
}

/** The key exchanges are shared by: the primary key, plus the request's variant of `like` (a stored response). */
export function coalesceKey(x: Exchange, like: StoredEntry | undefined): string {
  if (like === undefined) return x.key;
  return `${x.key}\n${varyKey(getHeader(like.meta.response.headers, 'vary'), x.reqHeaders) ?? ''}`;
}
