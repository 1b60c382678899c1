// The state one route's shared cache holds, in one object every cache module takes as its first
// argument: the options worked out once, the store, the invalidation counts, the exchanges under way
// (coalescing) and the memoised per-response timings and fields. Also the types the proxy sees
// (RouteCache, ForwardHooks, HeadAction) and small helpers without state.

import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  currentAgeSec,
  type FreshnessOptions,
  freshEndMs,
  getHeader,
  type HeaderMap,
  plainFreshUntilMs,
  type StoredResponse,
} from '../../../cache/index.js';
import { openDiskCache } from '../../../cache/store/disk.js';
import type { EntryCache } from '../../../cache/store/entry-cache.js';
import { createMemoryCache } from '../../../cache/store/memory.js';
import { openRedisCache, type RedisLink } from '../../../cache/store/redis.js';
import type { Selected, StoreOptions } from '../../../cache/store/types.js';
import {
  forwardedSurrogateControl,
  policyHeaders,
  surrogateCapability,
  type TargetedOptions,
} from '../../../cache/targeted.js';
import { deltaSeconds, parseCacheControl } from '../../../http/cache-control.js';
import { compileIpRanges, type IpBytes } from '../../../http/ip.js';
import type { RequestContext, RequestFacts } from '../../core/context.js';
import type { Logger } from '../../ops/log.js';
import type { RedisOptions } from '../../redis/connection.js';

export interface ProxyCacheOptions {
  enabled: boolean;
  store: 'memory' | 'disk' | 'redis';
  /** The store's own Redis, in place of the top-level one. */
  redis?: Partial<RedisOptions> | undefined;
  /** Folder of the disk store; default a new folder under the OS temp dir (removed on close). */
  dir?: string | undefined;
  maxSizeBytes: number;
  maxEntryBytes: number;
  /** Disk store: bytes of bodies also kept in memory (see DiskStoreOptions.memoryCacheBytes); redis store: its memory tier. */
  memoryCacheBytes?: number | undefined;
  heuristicCapSec?: number | undefined;
  /** Concurrent misses / stale revalidations of one key share one upstream request. Default true. */
  coalesce?: boolean | undefined;
  /** Stored variants (Vary, §4.1) per URL at most; the least recently used goes. Default 32. */
  maxVariants?: number | undefined;
  /** Partial responses: pieces per entry at most (held bytes within maxEntryBytes); 0 stores no 206. Default 16. */
  maxPiecesPerEntry?: number | undefined;
  /**
   * Requests an auth rule let through: false (default) bypasses the cache for them (nothing stored,
   * nothing served); true keys them by the authenticated user id.
   */
  perUser?: boolean | undefined;
  /** §4.2.4: how stale a response may be served while the upstream is unreachable. Default 300. */
  staleIfUnreachableSec?: number | undefined;
  /** RFC 9213 targeted fields, highest precedence first. Default CDN-Cache-Control, Surrogate-Control. */
  targets?: readonly string[] | undefined;
  /** Edge Architecture device token of this cache. Default 'gatehouse'. */
  surrogateToken?: string | undefined;
  /** Add `key="<cache key>"` to Cache-Status (RFC 9211 §2.7). Default false. */
  statusKey?: boolean | undefined;
  /** Response field with purge tags. Default Cache-Tag. */
  tagHeader?: string | undefined;
  /** Who may PURGE: addresses, CIDRs or keywords (see trustProxy). Default loopback. */
  purge?: { readonly allow: readonly string[] } | undefined;
}

/** What the proxy does with an upstream response head. */
export type HeadAction =
  /** Send it to the client as usual, with `headers` set ('' removes one); `onData` sees each body chunk, `onEnd` a complete body. */
  | {
      readonly kind: 'pass';
      readonly headers?: Record<string, string>;
      readonly onData?: (chunk: Buffer) => void;
      readonly onEnd?: () => void;
    }
  /** Read the upstream response without sending it (`onData` sees the body); `onEnd` runs when it has ended. */
  | { readonly kind: 'swallow'; readonly onData?: (chunk: Buffer) => void; readonly onEnd: () => void };

/** Cache hooks into one upstream exchange (see forward() in handler.ts). */
export interface ForwardHooks {
  /** Request fields to set, replacing the client's (conditional headers for validation); '' removes one. */
  readonly requestHeaders?: Record<string, string>;
  readonly onHead?: (status: number, headers: IncomingHttpHeaders) => HeadAction;
  /** The exchange failed before a response head; true when the hook answered the client. */
  readonly onFailure?: (err: unknown) => boolean;
  /**
   * Not tied to the client's response (background revalidation): the client going away does not
   * abort it, nothing is written to the client, failures only reach onFailure. onHead must swallow.
   */
  readonly detached?: boolean;
}

/** What the cache needs from the proxy: one per route, made once, told the request on each call. */
export interface CacheRequestContext {
  /** `mount`: where an app mounted Gatehouse ('' at the root), for rewritten URLs. */
  forward(req: IncomingMessage, res: ServerResponse, mount: string, hooks: ForwardHooks): void;
  /** The headers the proxy would send for these upstream headers (Via, rewrites, step headers). */
  responseHeaders(
    req: IncomingMessage,
    res: ServerResponse,
    mount: string,
    headers: IncomingHttpHeaders,
  ): Record<string, string | string[]>;
  /** The Cache-Control the proxy sends with these upstream headers (its cachePolicy applied). */
  cacheControl(req: IncomingMessage, headers: IncomingHttpHeaders): string | undefined;
  /** The client's address (through trusted proxies), for PURGE. */
  clientAddress(req: IncomingMessage): string;
}

/** What tryHit looked up without answering: handle() goes on from it instead of looking again. */
export interface LookedUp {
  /** The primary key (see primaryKey in keys.ts). */
  readonly key: string;
  readonly match: Selected;
}

export interface RouteCache {
  /**
   * The hit path without a promise: answers a plain GET from a fresh response already served once
   * from a store that reads synchronously (memory, disk's memory tier). True when it answered; else
   * call handle(), with what it looked up when it did.
   */
  tryHit(req: IncomingMessage, res: ServerResponse, facts: RequestFacts): true | LookedUp | undefined;
  handle(
    req: IncomingMessage,
    res: ServerResponse,
    ctx: CacheRequestContext,
    cx: RequestContext,
    looked?: LookedUp,
  ): Promise<void>;
  /** Opens the store now; rejects, naming the store, when it cannot be opened. */
  open(): Promise<void>;
  /** Bytes the store accounts to entries (EntryCache.readSizeBytes: afresh from a shared store); 0 before it is open. */
  storedBytes(): Promise<number>;
  /** Stored entries found unservable and dropped so far (CacheState.invalidEntries). */
  invalidEntries(): number;
  /** Memory pressure: the store drops `fraction` of what it holds in memory; the bytes dropped. */
  shed(fraction: number): number;
  /** Whether `purge.allow` admits this client address. */
  mayPurge(clientAddress: string): boolean;
  close(): Promise<void>;
}

/**
 * Memoised per stored response: when it stops being fresh (RFC 9211 ttl), until when plain requests
 * may take it without decideServe (null: never, e.g. a partial entry), and its corrected initial age (§4.2.3).
 */
export interface Timing {
  readonly endMs: number;
  readonly plainUntilMs: number | null;
  readonly initialAgeSec: number;
}

/**
 * A stored response's plain-hit fields (name, value, ...) and the last head list built from them, with
 * the Age seconds, ttl and status word it was built for.
 */
export interface PlainHead {
  readonly fields: readonly (string | string[])[];
  last: (string | string[])[] | undefined;
  lastAgeSec: number;
  lastTtl: number | undefined;
  lastWord: string;
  lastStatus: string;
}

/** One request the cache is handling. */
export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** Where an app mounted Gatehouse ('' at the root). */
  readonly mount: string;
  readonly ctx: CacheRequestContext;
  store: EntryCache | undefined;
  /** The primary key (see primaryKey in keys.ts). */
  readonly key: string;
  readonly method: string;
  readonly reqHeaders: HeaderMap;
}

/** Everything the cache modules of one route share. */
export interface CacheState {
  readonly o: ProxyCacheOptions;
  readonly freshness: FreshnessOptions;
  readonly coalesce: boolean;
  readonly disconnectedStaleSec: number;
  readonly targeted: TargetedOptions;
  /** Surrogate-Control is one of the targeted fields (Edge Architecture). */
  readonly surrogate: boolean;
  /** Lowercased name of the purge tag field. */
  readonly tagHeader: string;
  readonly purgeAllowed: (addr: IpBytes) => boolean;
  /** The redis store's connection (opened on first use) and the namespace of its keys (the route prefix). */
  readonly redis: { readonly link: () => RedisLink; readonly namespace: string } | undefined;
  /** The disk store's folder when it is ours to remove on close. */
  readonly tempDir: string | undefined;
  storePromise: Promise<EntryCache> | undefined;
  /** The store once it is open. */
  storeNow: EntryCache | undefined;
  readonly warn: (err: unknown, msg: string) => void;
  /** Entries the store would not serve (cache/entry-check.ts), so far: a warning each, and the metrics. */
  invalidEntries: number;
  readonly onInvalidEntry: (key: string, reason: string) => void;
  /**
   * Invalidations (§4.4) and purges, counted, so that a response to a request sent upstream before one
   * is not stored after it: the store only refuses puts that began before an invalidation, and an
   * answer can be on its way for a while before its put begins. `invalidatedAt` holds the count at the
   * last invalidation of each key; a purge by prefix, tag or past the map's bound raises `floor`, which
   * counts for every key.
   */
  invalidations: number;
  invalidationFloor: number;
  readonly invalidatedAt: Map<string, number>;
  /** Upstream exchanges other requests may wait on (coalescing), by primary key + request variant. */
  readonly inflight: Map<string, Promise<void>>;
  /** Per stored response (never modified, only replaced): see Timing. */
  readonly timings: WeakMap<StoredResponse, Timing>;
  /** Response fields sent for a stored response on plain requests (see serveStored). */
  readonly sentFields: WeakMap<StoredResponse, Record<string, string | string[]>>;
  /** The same as a flat name/value list without Content-Length, and the last head built from it. */
  readonly sentFlat: WeakMap<StoredResponse, PlainHead>;
  /**
   * The last write to the store failed: Cache-Status does not say `stored` until a write succeeds
   * again. The head goes out before the body is written, so a store whose writes can fail (disk,
   * EntryCache.putMayFail) never claims `stored` on the response being stored.
   */
  writesFailing: boolean;
  /** Looks a request up again (after waiting on a coalesced exchange); set by index.ts. */
  lookup: (x: Exchange, mayWait: boolean) => Promise<void>;
}

export const NAME = 'gatehouse';
/** Several Set-Cookie lines are kept apart with a newline (it cannot occur in a field value). */
const COOKIE_SEP = '\n';

/** Validates nothing (the config did) and works out what does not depend on the request. */
export function createCacheState(
  o: ProxyCacheOptions,
  logger: Logger,
  redis?: CacheState['redis'],
): CacheState {
  const targeted: TargetedOptions = {
    targets: (o.targets ?? ['CDN-Cache-Control', 'Surrogate-Control']).map((t) => t.toLowerCase()),
    surrogateToken: o.surrogateToken ?? NAME,
  };
  const state: CacheState = {
    o,
    freshness: o.heuristicCapSec === undefined ? {} : { heuristicCapSec: o.heuristicCapSec },
    coalesce: o.coalesce ?? true,
    disconnectedStaleSec: o.staleIfUnreachableSec ?? 300,
    targeted,
    surrogate: targeted.targets.includes('surrogate-control'),
    tagHeader: (o.tagHeader ?? 'Cache-Tag').toLowerCase(),
    purgeAllowed: compileIpRanges(o.purge?.allow ?? ['loopback']),
    redis,
    tempDir:
      o.store === 'disk' && o.dir === undefined
        ? join(tmpdir(), `gatehouse-cache-${process.pid}-${randomUUID().slice(0, 8)}`)
        : undefined,
    storePromise: undefined,
    storeNow: undefined,
    warn: (err, msg) => logger.warn({ err }, msg),
    invalidEntries: 0,
    onInvalidEntry: (key, reason) => {
      state.invalidEntries++;
      logger.warn(
        { key, reason, store: o.store },
        'cache: a stored entry cannot be served (a miss); dropped',
      );
    },
    invalidations: 0,
    invalidationFloor: 0,
    invalidatedAt: new Map(),
    inflight: new Map(),
    timings: new WeakMap(),
    sentFields: new WeakMap(),
    sentFlat: new WeakMap(),
    writesFailing: false,
    lookup: () => Promise.reject(new Error('route cache not wired')),
  };
  return state;
}

/** The store, opened on first use. */
export function getStore(s: CacheState): Promise<EntryCache> {
  const { o } = s;
  const storeOptions = {
    maxSizeBytes: o.maxSizeBytes,
    maxEntryBytes: o.maxEntryBytes,
    maxVariantsPerKey: o.maxVariants ?? 32,
    onInvalidEntry: s.onInvalidEntry,
  };
  s.storePromise ??= (
    o.store === 'disk'
      ? openDiskCache({
          ...storeOptions,
          dir: o.dir ?? s.tempDir!,
          ...(o.memoryCacheBytes === undefined ? {} : { memoryCacheBytes: o.memoryCacheBytes }),
        })
      : o.store === 'redis'
        ? openRedis(s, storeOptions)
        : Promise.resolve<EntryCache>(createMemoryCache(storeOptions))
  ).then((store) => {
    s.storeNow = store;
    return store;
  });
  return s.storePromise;
}

/** The redis store on the route's connection; rejects when the server has no Redis pool. */
function openRedis(s: CacheState, storeOptions: StoreOptions): Promise<EntryCache> {
  if (s.redis === undefined) return Promise.reject(new Error('no redis connection (top-level redis.url)'));
  return openRedisCache({
    ...storeOptions,
    redis: s.redis.link(),
    namespace: s.redis.namespace,
    ...(s.o.memoryCacheBytes === undefined ? {} : { memoryTierBytes: s.o.memoryCacheBytes }),
  });
}

/** Counts an invalidation of `key` (undefined: of every key). */
export function noteInvalidated(s: CacheState, key: string | undefined): void {
  s.invalidations++;
  if (key === undefined || s.invalidatedAt.size >= 10_000) {
    s.invalidatedAt.clear();
    s.invalidationFloor = s.invalidations;
  } else s.invalidatedAt.set(key, s.invalidations);
}

/** Whether `key` was invalidated or purged after the count `since` was taken. */
export function invalidatedSince(s: CacheState, key: string, since: number): boolean {
  return s.invalidationFloor > since || (s.invalidatedAt.get(key) ?? 0) > since;
}

/** The stored response as the decisions must see it: targeted fields applied (RFC 9213 §2.1). */
export function policyView(s: CacheState, r: StoredResponse): StoredResponse {
  const headers = policyHeaders(r.headers, s.targeted);
  return headers === r.headers ? r : { ...r, headers };
}

/**
 * Redis store: `{ discardAfterMs }`, when the entry stops being usable so Redis expires it:
 * the end of freshness (RFC 9111 §4.2) plus the longest stale allowance (RFC 5861 stale-while-revalidate
 * and stale-if-error, §4.2.4 staleIfUnreachableSec). Other stores keep entries until evicted: `{}`.
 */
export function discardField(s: CacheState, r: StoredResponse): { discardAfterMs?: number } {
  if (s.o.store !== 'redis') return {};
  const v = policyView(s, r);
  const cc = parseCacheControl(getHeader(v.headers, 'cache-control'));
  const staleSec = Math.max(
    deltaSeconds(cc, 'stale-while-revalidate') ?? 0,
    deltaSeconds(cc, 'stale-if-error') ?? 0,
    s.disconnectedStaleSec,
  );
  const endMs = freshEndMs(v, true, s.freshness);
  const at = (Number.isFinite(endMs) ? endMs : r.responseTimeMs) + staleSec * 1000;
  return Number.isFinite(at) ? { discardAfterMs: at } : {};
}

/** The memoised Timing of a stored response. */
export function timingOf(s: CacheState, r: StoredResponse): Timing {
  let t = s.timings.get(r);
  if (t === undefined) {
    const v = policyView(s, r);
    t = {
      endMs: freshEndMs(v, true, s.freshness),
      // A partial entry (status 206, §3.3) is never sent as it is: no plain hits.
      plainUntilMs: r.status === 206 ? null : plainFreshUntilMs(v, true, s.freshness),
      // §4.2.3 corrected_initial_age: current_age is this plus the resident time.
      initialAgeSec: currentAgeSec(r, r.responseTimeMs),
    };
    s.timings.set(r, t);
  }
  return t;
}

/** Request fields every upstream request of this route gets (Edge Architecture §2). */
export function upstreamExtras(s: CacheState, reqHeaders: HeaderMap): Record<string, string> {
  if (!s.surrogate) return {};
  const mine = surrogateCapability(s.targeted.surrogateToken);
  const theirs = getHeader(reqHeaders, 'surrogate-capability');
  return { 'surrogate-capability': theirs === undefined ? mine : `${theirs}, ${mine}` };
}

/** Headers to set on a response sent downstream: our targeted directives and purge tags removed. */
export function downstreamFixes(s: CacheState, headers: HeaderMap): Record<string, string> {
  const out: Record<string, string> = {};
  if (getHeader(headers, s.tagHeader) !== undefined) out[s.tagHeader] = '';
  const sc = s.surrogate ? getHeader(headers, 'surrogate-control') : undefined;
  if (sc !== undefined) {
    const left = forwardedSurrogateControl(sc, s.targeted.surrogateToken);
    if (left !== sc) out['surrogate-control'] = left ?? '';
  }
  return out;
}

/** Sets `fields` on `out`; an empty value removes the field (the HeadAction / ForwardHooks convention). */
export function setFields(
  out: Record<string, string | string[]>,
  fields: Readonly<Record<string, string>>,
): void {
  for (const [name, v] of Object.entries(fields)) {
    if (v === '') delete out[name];
    else out[name] = v;
  }
}

/** Lowercase header map with several field lines joined (Set-Cookie kept apart, see COOKIE_SEP). */
export function toHeaderMap(
  headers: IncomingHttpHeaders | Record<string, string | string[]>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(headers)) {
    if (v === undefined) continue;
    out[name] = Array.isArray(v) ? v.join(name === 'set-cookie' ? COOKIE_SEP : ', ') : String(v);
  }
  return out;
}

/** Back to Node's shape: Set-Cookie lines apart again; `omit` and Age left out. */
export function toIncoming(headers: HeaderMap, omit: readonly string[]): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const [name, v] of Object.entries(headers)) {
    if (omit.includes(name) || name === 'age') continue;
    if (name === 'set-cookie') out[name] = v.split(COOKIE_SEP);
    else out[name] = v;
  }
  return out;
}

/** Purge tags from a Cache-Tag value: comma- or space-separated, lowercased, at most 64 of 128 chars. */
export function parseTags(value: string | undefined): string[] {
  if (value === undefined) return [];
  const out: string[] = [];
  for (const t of value.split(/[\s,]+/)) {
    if (t.length === 0 || t.length > 128) continue;
    const tag = t.toLowerCase();
    if (!out.includes(tag)) out.push(tag);
    if (out.length === 64) break;
  }
  return out;
}

/** Passes an upstream response on with Cache-Status. */
export function pass(status: string, fixes?: Record<string, string>): HeadAction {
  return { kind: 'pass', headers: { ...fixes, 'cache-status': `${NAME}; ${status}` } };
}
