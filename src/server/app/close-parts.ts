// Closing what outlives the requests (WebSocket endpoints, the proxy's pools and stores, Redis), for the
// listener's drain (app/lifecycle.ts) and a mounted handler's close() (app/handler.ts) alike.
import type { Logger } from '../ops/log.js';
import type { Proxy as ReverseProxy } from '../proxy/handler.js';
import type { RedisPool } from '../redis/pool.js';

/** What the parts get to close when the drain used the whole shutdownTimeoutMs (requests hung). */
const PARTS_GRACE_MS = 1000;

/**
 * Closes what outlives the server (WebSocket endpoints, the proxy's pools and cache stores). A part
 * whose close rejects is logged and does not stop the others or the shutdown: close() always resolves.
 * The parts get until `deadlineMs` (performance.now(): the start of the shutdown plus
 * shutdownTimeoutMs), at least PARTS_GRACE_MS; a part still closing then (a hung Redis that answers
 * nothing) is logged, Redis is dropped without QUIT, and close() resolves.
 */
export async function closeParts(
  p: { readonly proxy: ReverseProxy; readonly redis: RedisPool; readonly logger: Logger },
  wsClosed: Promise<void>,
  deadlineMs: number,
): Promise<void> {
  const names = ['websocket', 'proxy', 'redis'] as const;
  const open = new Set<string>(names);
  const settle = <T>(name: string, promise: Promise<T>) => promise.finally(() => open.delete(name));
  // Redis last: the proxy and the endpoints may still publish or store while they close.
  const all = (async () => {
    const results = await Promise.allSettled([
      settle('websocket', wsClosed),
      settle('proxy', p.proxy.close()),
    ]);
    results.push(...(await Promise.allSettled([settle('redis', p.redis.close())])));
    return results;
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), Math.max(deadlineMs - performance.now(), PARTS_GRACE_MS));
  });
  const results = await Promise.race([all, late]);
  clearTimeout(timer);
  if (results === undefined) {
    p.logger.error(
      { parts: [...open] },
      'shutdown: still closing at the deadline (shutdownTimeoutMs); dropped',
    );
    p.redis.disconnect();
  } else {
    for (const [i, r] of results.entries()) {
      if (r.status === 'rejected')
        p.logger.error({ err: r.reason, part: names[i] }, 'shutdown: close failed');
    }
  }
  p.logger.flush?.();
}
