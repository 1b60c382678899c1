// Shared HTTP cache (RFC 9111) in front of a proxy route. The decisions come from src/cache/ (pure);
// these modules do the I/O: lookup.ts looks variants up and serves or goes upstream, serve.ts answers
// from the store (Age, §5.1), revalidate.ts sends conditional requests upstream (§4.3) and freshens
// (§4.3.4), write.ts tees storable responses into the store while they stream to the client, purge.ts
// invalidates after unsafe requests (§4.4) and answers PURGE, coalesce.ts lets concurrent requests
// share one upstream exchange. Cache-Status (RFC 9211) tells what happened. Off unless the route's
// `cache.enabled` is set. The state they share is one object (state.ts).
import { rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HeaderMap } from '../../../cache/index.js';
import { parseIp } from '../../../http/ip.js';
import type { RequestContext } from '../../core/context.js';
import type { Logger } from '../../ops/log.js';
import { primaryKey, userKey } from './keys.js';
import { lookup } from './lookup.js';
import { forwardUnsafe, purge } from './purge.js';
import { tryHit } from './serve.js';
import {
  type CacheRequestContext,
  type CacheState,
  createCacheState,
  downstreamFixes,
  type Exchange,
  getStore,
  type LookedUp,
  type ProxyCacheOptions,
  pass,
  type RouteCache,
  toHeaderMap,
} from './state.js';

export { primaryKey, primaryKeyOf } from './keys.js';
export {
  type CacheRequestContext,
  type ForwardHooks,
  type HeadAction,
  type LookedUp,
  type ProxyCacheOptions,
  parseTags,
  type RouteCache,
  setFields,
  toHeaderMap,
} from './state.js';

export function createRouteCache(
  o: ProxyCacheOptions,
  logger: Logger,
  redis?: CacheState['redis'],
): RouteCache {
  const s = createCacheState(o, logger, redis);
  s.lookup = (x, mayWait) => lookup(s, x, mayWait);
  return {
    tryHit: (req, res, facts) => tryHit(s, req, res, facts),
    handle: (req, res, ctx, cx, looked) => handle(s, req, res, ctx, cx, looked),
    open: () => open(s),
    storedBytes: async () => (s.storeNow === undefined ? 0 : s.storeNow.readSizeBytes()),
    invalidEntries: () => s.invalidEntries,
    shed: (fraction) => s.storeNow?.shed(fraction) ?? 0,
    mayPurge: (clientAddress) => {
      const addr = parseIp(clientAddress);
      return addr !== null && s.purgeAllowed(addr);
    },
    close: () => close(s),
  };
}

async function handle(
  s: CacheState,
  req: IncomingMessage,
  res: ServerResponse,
  ctx: CacheRequestContext,
  cx: RequestContext,
  looked: LookedUp | undefined,
): Promise<void> {
  const mount = cx.mount?.path ?? '';
  if (looked !== undefined) {
    // tryHit looked this plain GET up (no auth rule let it through, no Set-Cookie): go on from there.
    const x: Exchange = {
      req,
      res,
      mount,
      ctx,
      store: s.storeNow,
      key: looked.key,
      method: 'GET',
      reqHeaders: req.headers as HeaderMap,
    };
    return lookup(s, x, s.coalesce, looked.match);
  }
  const method = req.method ?? 'GET';
  if (method === 'PURGE') return purge(s, req, res, ctx);
  let key = primaryKey(req);
  if (key === undefined) {
    ctx.forward(req, res, mount, {});
    return;
  }
  const facts = cx.facts;
  if (facts.authorized === true) {
    // An auth rule let the request through: its answer is for this user only (RFC 9111 §3.5, §7.3).
    // It bypasses the shared cache, or with perUser is kept apart under the user's id.
    const user = s.o.perUser === true ? facts.user : undefined;
    if (user === undefined) return bypass(s, req, res, mount, ctx);
    key = userKey(key, user);
  }
  // Node already gives lowercase names with repeated lines joined; only Set-Cookie stays a list.
  const reqHeaders =
    req.headers['set-cookie'] === undefined ? (req.headers as HeaderMap) : toHeaderMap(req.headers);
  if (method !== 'GET' && method !== 'HEAD') {
    const x: Exchange = { req, res, mount, ctx, store: undefined, key, method, reqHeaders };
    x.store = await getStore(s).catch(() => undefined);
    forwardUnsafe(s, x);
    return;
  }
  await lookup(s, { req, res, mount, ctx, store: undefined, key, method, reqHeaders }, s.coalesce);
}

/** Forwards without the cache (RFC 9211 fwd=bypass): nothing stored, nothing served. */
function bypass(
  s: CacheState,
  req: IncomingMessage,
  res: ServerResponse,
  mount: string,
  ctx: CacheRequestContext,
): void {
  ctx.forward(req, res, mount, {
    onHead: (status, headers) =>
      pass(`fwd=bypass; fwd-status=${status}`, downstreamFixes(s, toHeaderMap(headers))),
  });
}

async function open(s: CacheState): Promise<void> {
  try {
    await getStore(s);
  } catch (err) {
    const where = s.o.store === 'disk' ? ` in ${s.o.dir ?? s.tempDir}` : '';
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw Object.assign(new Error(`the ${s.o.store} cache store${where} cannot be opened: ${why}`), {
      code: 'GATEHOUSE_CACHE_STORE',
      cause: err,
    });
  }
}

async function close(s: CacheState): Promise<void> {
  if (s.storePromise !== undefined) {
    const store = await s.storePromise.catch(() => undefined);
    // A broken store folder must not stop the shutdown: what is lost is a cache.
    await store?.close().catch((err) => s.warn(err, 'cache store close failed'));
  }
  if (s.tempDir !== undefined) await rm(s.tempDir, { recursive: true, force: true });
}
