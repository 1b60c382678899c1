// Shared HTTP cache (RFC 9111) in front of a proxy route. The decisions come from src/cache/ (pure);
// this file does the I/O: looks variants up in a store, serves stored responses (Age, §5.1), sends
// conditional requests upstream (§4.3), freshens with a 304 (§4.3.4), tees storable responses into
// the store while they stream to the client, and invalidates after unsafe requests (§4.4).
// Cache-Status (RFC 9211) tells what happened. Off unless the route's `cache.enabled` is set.
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ageFieldSeconds,
  completeFromPartial,
  conditionalHeaders,
  currentAgeSec,
  decideServe,
  type FreshnessOptions,
  freshEndMs,
  freshenStored,
  getHeader,
  type HeaderMap,
  invalidationUris,
  isFresh,
  isStorable,
  matchesVary,
  plainFreshUntilMs,
  type StoredResponse,
  selectForUpdate,
  varyKey,
} from '../../cache/index.js';
import { openDiskStore } from '../../cache/store/disk.js';
import { createMemoryStore } from '../../cache/store/memory.js';
import type { CacheStore, EntryMeta, StoredEntry } from '../../cache/store/types.js';
import {
  forwardedSurrogateControl,
  policyHeaders,
  surrogateCapability,
  type TargetedOptions,
} from '../../cache/targeted.js';
import { hasDirective, parseCacheControl } from '../../http/cache-control.js';
import { compileIpRanges, parseIp } from '../../http/ip.js';
import { stripHopByHop } from '../../http/proxy-headers.js';
import { ERRORS, sendError } from '../errors.js';
import { type Logger, logCacheStatus } from '../log.js';
import { isPlainRead, serveFromStore } from './cache-serve.js';

export interface ProxyCacheOptions {
  enabled: boolean;
  store: 'memory' | 'disk';
  /** Folder of the disk store; default a new folder under the OS temp dir (removed on close). */
  dir?: string | undefined;
  maxSizeBytes: number;
  maxEntryBytes: number;
  /** Disk store: bytes of bodies also kept in memory (see DiskStoreOptions.memoryCacheBytes). */
  memoryCacheBytes?: number | undefined;
  heuristicCapSec?: number | undefined;
  /** Concurrent misses / stale revalidations of one key share one upstream request. Default true. */
  coalesce?: boolean | undefined;
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

/**
 * Memoised per stored response: when it stops being fresh (RFC 9211 ttl), until when plain requests
 * may take it without decideServe, and its corrected initial age (§4.2.3).
 */
interface Timing {
  readonly endMs: number;
  readonly plainUntilMs: number | null;
  readonly initialAgeSec: number;
}

/**
 * A stored response's plain-hit fields (name, value, ...) and the last head list built from them, with
 * the Age seconds, ttl and status word it was built for.
 */
interface PlainHead {
  readonly fields: readonly (string | string[])[];
  last: (string | string[])[] | undefined;
  lastAgeSec: number;
  lastTtl: number | undefined;
  lastWord: string;
  lastStatus: string;
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

/** What the cache needs from the proxy for one request. */
export interface CacheRequestContext {
  forward(hooks: ForwardHooks): void;
  /** The headers the proxy would send for these upstream headers (Via, rewrites, step headers). */
  responseHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]>;
  /** The Cache-Control the proxy sends with these upstream headers (its cachePolicy applied). */
  cacheControl(headers: IncomingHttpHeaders): string | undefined;
  /** The client's address (through trusted proxies), for PURGE. */
  clientAddress(): string;
}

export interface RouteCache {
  /**
   * The hit path without a promise: answers a plain GET from a fresh response already served once
   * from a store that reads synchronously (memory). False when it did not answer: call handle().
   */
  tryHit(req: IncomingMessage, res: ServerResponse): boolean;
  handle(req: IncomingMessage, res: ServerResponse, ctx: CacheRequestContext): Promise<void>;
  /** Opens the store now; rejects, naming the store, when it cannot be opened. */
  open(): Promise<void>;
  close(): Promise<void>;
}

const NAME = 'gatehouse';
const NO_FIELDS: readonly string[] = Object.freeze([]);
const CONDITIONAL_REQUEST_FIELDS = ['if-none-match', 'if-modified-since', 'if-match', 'if-unmodified-since'];
/** Several Set-Cookie lines are kept apart with a newline (it cannot occur in a field value). */
const COOKIE_SEP = '\n';
/** RFC 5861 §4: the statuses after which stale-if-error may serve a stale response. */
const ORIGIN_ERRORS = new Set([500, 502, 503, 504]);

/** §4.1: the newest stored variant (stores list them newest first) whose Vary the request matches. */
function selectVariant(variants: readonly StoredEntry[], reqHeaders: HeaderMap): StoredEntry | undefined {
  return variants.find((v) =>
    matchesVary(getHeader(v.meta.response.headers, 'vary'), v.meta.varyHeaders, reqHeaders),
  );
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

function toIncoming(headers: HeaderMap, omit: readonly string[]): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const [name, v] of Object.entries(headers)) {
    if (omit.includes(name) || name === 'age') continue;
    if (name === 'set-cookie') out[name] = v.split(COOKIE_SEP);
    else out[name] = v;
  }
  return out;
}

/** Keys already worked out, by scheme, Host and target; cleared when it holds KEY_MEMO_MAX of them. */
const keyMemo = {
  http: new Map<string, Map<string, string | undefined>>(),
  https: new Map<string, Map<string, string | undefined>>(),
};
let keyMemoSize = 0;
const KEY_MEMO_MAX = 10_000;

/** `GET <absolute public URI>`: method- and upstream-independent; undefined when it cannot be built. */
export function primaryKey(req: IncomingMessage): string | undefined {
  const host = req.headers.host;
  const url = req.url;
  if (host === undefined || url === undefined) return undefined;
  const proto = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  let byUrl = keyMemo[proto].get(host);
  if (byUrl !== undefined) {
    const known = byUrl.get(url);
    if (known !== undefined || byUrl.has(url)) return known;
  }
  const key = primaryKeyOf(proto, host, url);
  if (keyMemoSize >= KEY_MEMO_MAX) {
    keyMemo.http.clear();
    keyMemo.https.clear();
    keyMemoSize = 0;
    byUrl = undefined;
  }
  if (byUrl === undefined) keyMemo[proto].set(host, (byUrl = new Map()));
  byUrl.set(url, key);
  keyMemoSize++;
  return key;
}

/** Hosts and targets the WHATWG URL parser leaves exactly as they are (no default port, no dot segments). */
const PLAIN_HOST = /^[a-z0-9.-]+(?::[0-9]{1,5})?$/;
const PLAIN_TARGET = /^\/[A-Za-z0-9\-_~/?=&+,;:@!$*()]*$/;

/**
 * The cache key (RFC 9111 §2: method + target URI) for a request target, normalised by the URL parser
 * (case of scheme and host, default port, dot segments, percent-encoding of unsafe characters; the
 * fragment dropped). Targets that the parser would leave as they are skip it (the hit path).
 */
export function primaryKeyOf(proto: 'http' | 'https', host: string, url: string): string | undefined {
  if (!url.startsWith('/')) return undefined;
  if (
    PLAIN_HOST.test(host) &&
    PLAIN_TARGET.test(url) &&
    !url.includes('/.') &&
    !host.endsWith(proto === 'http' ? ':80' : ':443') &&
    !host.includes('..') &&
    !host.startsWith('.')
  ) {
    return `GET ${proto}://${host}${url}`;
  }
  try {
    const u = new URL(`${proto}://${host}${url}`);
    u.hash = '';
    return `GET ${u.href}`;
  } catch {
    return undefined;
  }
}

export function createRouteCache(o: ProxyCacheOptions, logger: Logger): RouteCache {
  const storeOptions = { maxSizeBytes: o.maxSizeBytes, maxEntryBytes: o.maxEntryBytes };
  const freshness: FreshnessOptions =
    o.heuristicCapSec === undefined ? {} : { heuristicCapSec: o.heuristicCapSec };
  const coalesce = o.coalesce ?? true;
  const disconnectedStaleSec = o.staleIfUnreachableSec ?? 300;
  const targeted: TargetedOptions = {
    targets: (o.targets ?? ['CDN-Cache-Control', 'Surrogate-Control']).map((t) => t.toLowerCase()),
    surrogateToken: o.surrogateToken ?? NAME,
  };
  const surrogate = targeted.targets.includes('surrogate-control');
  const tagHeader = (o.tagHeader ?? 'Cache-Tag').toLowerCase();
  const purgeAllowed = compileIpRanges(o.purge?.allow ?? ['loopback']);
  const tempDir =
    o.store === 'disk' && o.dir === undefined
      ? join(tmpdir(), `gatehouse-cache-${process.pid}-${randomUUID().slice(0, 8)}`)
      : undefined;
  let storePromise: Promise<CacheStore> | undefined;
  /** The store once it is open. */
  let storeNow: CacheStore | undefined;
  const getStore = (): Promise<CacheStore> => {
    storePromise ??= (
      o.store === 'disk'
        ? openDiskStore({
            ...storeOptions,
            dir: o.dir ?? tempDir!,
            ...(o.memoryCacheBytes === undefined ? {} : { memoryCacheBytes: o.memoryCacheBytes }),
          })
        : Promise.resolve(createMemoryStore(storeOptions))
    ).then((store) => {
      storeNow = store;
      return store;
    });
    return storePromise;
  };
  const warn = (err: unknown, msg: string) => logger.warn({ err }, msg);
  /**
   * Invalidations (§4.4) and purges, counted, so that a response to a request sent upstream before one
   * is not stored after it: the store only refuses puts that began before an invalidation, and an
   * answer can be on its way for a while before its put begins. `invalidatedAt` holds the count at the
   * last invalidation of each key; a purge by prefix, tag or past the map's bound raises `floor`, which
   * counts for every key.
   */
  let invalidations = 0;
  let invalidationFloor = 0;
  const invalidatedAt = new Map<string, number>();
  const noteInvalidated = (key: string | undefined): void => {
    invalidations++;
    if (key === undefined || invalidatedAt.size >= 10_000) {
      invalidatedAt.clear();
      invalidationFloor = invalidations;
    } else invalidatedAt.set(key, invalidations);
  };
  /** Whether `key` was invalidated or purged after the count `since` was taken. */
  const invalidatedSince = (key: string, since: number): boolean =>
    invalidationFloor > since || (invalidatedAt.get(key) ?? 0) > since;
  /** Upstream exchanges other requests may wait on (coalescing), by primary key + request variant. */
  const inflight = new Map<string, Promise<void>>();
  /**
   * Per stored response (never modified, only replaced): when it stops being fresh (freshEndMs, for
   * Cache-Status ttl) and until when plain requests may take it without decideServe (plainFreshUntilMs).
   */
  const timings = new WeakMap<StoredResponse, Timing>();
  const timingOf = (r: StoredResponse): Timing => {
    let t = timings.get(r);
    if (t === undefined) {
      const v = policyView(r);
      t = {
        endMs: freshEndMs(v, true, freshness),
        plainUntilMs: plainFreshUntilMs(v, true, freshness),
        // §4.2.3 corrected_initial_age: current_age is this plus the resident time.
        initialAgeSec: currentAgeSec(r, r.responseTimeMs),
      };
      timings.set(r, t);
    }
    return t;
  };
  /** Response fields sent for a stored response on plain requests (see serveStored). */
  const sentFields = new WeakMap<StoredResponse, Record<string, string | string[]>>();
  /** The same as a flat name/value list without Content-Length, and the last head built from it. */
  const sentFlat = new WeakMap<StoredResponse, PlainHead>();

  /** The stored response as the decisions must see it: targeted fields applied (RFC 9213 §2.1). */
  const policyView = (r: StoredResponse): StoredResponse => {
    const headers = policyHeaders(r.headers, targeted);
    return headers === r.headers ? r : { ...r, headers };
  };

  function tryHit(req: IncomingMessage, res: ServerResponse): boolean {
    const store = storeNow;
    if (store?.getVariantsSync === undefined || store.openBodySync === undefined) return false;
    const h = req.headers as HeaderMap;
    if (req.method !== 'GET' || h['cache-control'] !== undefined || h.pragma !== undefined) return false;
    if (!isPlainRead(h) || req.headers['set-cookie'] !== undefined) return false;
    if (res.destroyed || res.getHeaderNames().length !== 0) return false;
    const key = primaryKey(req);
    if (key === undefined) return false;
    const variants = store.getVariantsSync(key);
    const entry = selectVariant(variants, h);
    if (entry === undefined) return false;
    const response = entry.meta.response;
    // Only a response whose fields serveStored has worked out already (its first hit goes there).
    const plain = sentFlat.get(response);
    if (plain === undefined) return false;
    const nowMs = Date.now();
    const t = timingOf(response);
    if (t.plainUntilMs === null || nowMs >= t.plainUntilMs) return false;
    const body = store.openBodySync(entry);
    if (body?.whole === undefined) return false;
    writePlainHit(res, key, response, t, plain, body.whole, 'hit', nowMs);
    return true;
  }

  /** RFC 9211 §2.6: ttl, the remaining freshness in seconds (negative when stale); none when unknown. */
  function ttlOf(t: Timing, nowMs: number): number | undefined {
    return Number.isFinite(t.endMs) ? Math.ceil((t.endMs - nowMs) / 1000) : undefined;
  }

  /** Cache-Status (RFC 9211 §2.1) for a stored response served now; §2.7 key when configured. */
  function cacheStatusOf(key: string, status: string, ttl: number | undefined): string {
    let out = `${NAME}; ${status}`;
    if (ttl !== undefined) out += `; ttl=${ttl}`;
    if (o.statusKey === true) out += `; key=${JSON.stringify(key)}`;
    return out;
  }

  /** Age (§5.1) in seconds: current_age (§4.2.3) from the memoised initial age plus the resident time. */
  function ageSecOf(response: StoredResponse, t: Timing, nowMs: number): number {
    return ageFieldSeconds(t.initialAgeSec + (nowMs - response.responseTimeMs) / 1000);
  }

  /**
   * Writes a whole stored response to a plain GET: the memoised fields, Age, Cache-Status and the body
   * in one write. The head list is rebuilt only when Age or Cache-Status changed since the last one.
   */
  function writePlainHit(
    res: ServerResponse,
    key: string,
    response: StoredResponse,
    t: Timing,
    plain: PlainHead,
    whole: Uint8Array,
    status: string,
    nowMs: number,
  ): void {
    const ageSec = ageSecOf(response, t, nowMs);
    const ttl = ttlOf(t, nowMs);
    let head = plain.last;
    if (
      head === undefined ||
      plain.lastAgeSec !== ageSec ||
      plain.lastTtl !== ttl ||
      plain.lastWord !== status
    ) {
      const noBody = response.status === 204 || response.status === 304;
      const cacheStatus = cacheStatusOf(key, status, ttl);
      head = plain.fields.concat('age', String(ageSec), 'cache-status', cacheStatus);
      if (!noBody) head.push('content-length', String(whole.byteLength));
      plain.last = head;
      plain.lastAgeSec = ageSec;
      plain.lastTtl = ttl;
      plain.lastWord = status;
      plain.lastStatus = cacheStatus;
    }
    res.writeHead(response.status, head);
    res.end(response.status === 204 || response.status === 304 ? undefined : whole);
    logCacheStatus(res, plain.lastStatus);
  }

  async function handle(req: IncomingMessage, res: ServerResponse, ctx: CacheRequestContext): Promise<void> {
    const method = req.method ?? 'GET';
    if (method === 'PURGE') return purge(req, res, ctx);
    const key = primaryKey(req);
    if (key === undefined) {
      ctx.forward({});
      return;
    }
    // Node already gives lowercase names with repeated lines joined; only Set-Cookie stays a list.
    const reqHeaders =
      req.headers['set-cookie'] === undefined ? (req.headers as HeaderMap) : toHeaderMap(req.headers);
    if (method !== 'GET' && method !== 'HEAD') {
      const x: Exchange = { req, res, ctx, store: undefined, key, method, reqHeaders };
      x.store = await getStore().catch(() => undefined);
      forwardUnsafe(x);
      return;
    }
    await lookup({ req, res, ctx, store: undefined, key, method, reqHeaders }, coalesce);
  }

  interface Exchange {
    readonly req: IncomingMessage;
    readonly res: ServerResponse;
    readonly ctx: CacheRequestContext;
    store: CacheStore | undefined;
    readonly key: string;
    readonly method: string;
    readonly reqHeaders: HeaderMap;
  }

  /** Finds a stored response for the request (§4) and serves it, or goes upstream. */
  async function lookup(x: Exchange, mayWait: boolean): Promise<void> {
    const { res, key, reqHeaders } = x;
    let variants: StoredEntry[];
    try {
      // A store answering from memory is read without a promise: the hit is served in this tick.
      const now = storeNow;
      if (now?.getVariantsSync !== undefined) {
        x.store = now;
        variants = now.getVariantsSync(key);
      } else {
        x.store = await getStore();
        variants = await x.store.getVariants(key);
      }
    } catch (err) {
      warn(err, 'cache lookup failed');
      x.ctx.forward({ requestHeaders: upstreamExtras(reqHeaders) });
      return;
    }
    if (res.destroyed) return;
    const entry = selectVariant(variants, reqHeaders);
    const ranged = x.method === 'GET' && reqHeaders.range !== undefined;
    if (entry === undefined) {
      if (onlyIfCached(reqHeaders)) return gatewayTimeout(x);
      const reason = variants.length > 0 ? 'vary-miss' : 'uri-miss';
      if (ranged) {
        // A full response to the same URL being fetched or stored right now will answer it.
        if (mayWait && (await waitFor(x, coalesceKey(x, variants[0])))) return;
        return rangeMiss(x, reason);
      }
      return upstream(x, reason, undefined, mayWait, variants[0]);
    }
    const stored = entry.meta.response;
    const nowMs = Date.now();
    if (reqHeaders['cache-control'] === undefined && reqHeaders.pragma === undefined) {
      // The hit path: a plain request and a response fresh until a known time (memoised per response).
      const until = timingOf(stored).plainUntilMs;
      if (until !== null && nowMs < until && (await serveStored(x, entry, NO_FIELDS, 'hit'))) return;
    }
    const view = policyView(stored);
    const d = decideServe({ stored: view, requestHeaders: reqHeaders, nowMs, shared: true, freshness });
    if (d.kind === 'fresh' || d.kind === 'stale-ok') {
      let status = 'hit';
      if (d.kind === 'stale-ok') {
        status = `hit; detail=${d.reason}`;
        // RFC 5861 §3: serve stale now, revalidate in the background.
        if (d.reason === 'stale-while-revalidate') revalidateInBackground(x, entry);
      }
      if (await serveStored(x, entry, d.omitHeaders, status)) return;
      return upstream(x, 'uri-miss', undefined, false, undefined);
    }
    if (d.kind === 'miss-only-if-cached') return gatewayTimeout(x);
    // Revalidate (§4.3): stale, or the client asked for it (then the client's request is not shared).
    const reason = isFresh(view, nowMs, true, freshness) ? 'request' : 'stale';
    return upstream(x, reason, entry, mayWait && reason === 'stale', entry);
  }

  /**
   * Goes upstream, or waits for an exchange already under way for the same key and variant and then
   * looks again (§4: one response can serve them all). `like` is a stored variant whose Vary names the
   * request fields that tell variants apart.
   */
  async function upstream(
    x: Exchange,
    reason: string,
    entry: StoredEntry | undefined,
    mayWait: boolean,
    like: StoredEntry | undefined,
  ): Promise<void> {
    const ckey = mayWait ? coalesceKey(x, like) : undefined;
    if (ckey !== undefined && (await waitFor(x, ckey))) return;
    // Only GET leads: HEAD may wait for a GET under way, never the other way round.
    fetchAndStore(x, reason, entry, ckey !== undefined && x.method === 'GET' ? lead(ckey) : undefined);
  }

  /**
   * When an exchange for `ckey` is under way, waits for it and looks again (a hit now, usually; when
   * nothing was stored this request goes upstream on its own, as every waiter does). True when it did.
   */
  async function waitFor(x: Exchange, ckey: string): Promise<boolean> {
    const running = inflight.get(ckey);
    if (running === undefined) return false;
    await running;
    if (!x.res.destroyed) await lookup(x, false);
    return true;
  }

  /** Registers an exchange others may wait on; the returned function ends the wait (once). */
  function lead(ckey: string): () => void {
    let release!: () => void;
    const p = new Promise<void>((resolve) => {
      release = resolve;
    });
    inflight.set(ckey, p);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (inflight.get(ckey) === p) inflight.delete(ckey);
      release();
    };
  }

  function coalesceKey(x: Exchange, like: StoredEntry | undefined): string {
    if (like === undefined) return x.key;
    return `${x.key}\n${varyKey(getHeader(like.meta.response.headers, 'vary'), x.reqHeaders) ?? ''}`;
  }

  /** Request fields every upstream request of this route gets (Edge Architecture §2). */
  function upstreamExtras(reqHeaders: HeaderMap): Record<string, string> {
    if (!surrogate) return {};
    const mine = surrogateCapability(targeted.surrogateToken);
    const theirs = getHeader(reqHeaders, 'surrogate-capability');
    return { 'surrogate-capability': theirs === undefined ? mine : `${theirs}, ${mine}` };
  }

  /** Headers to set on a response sent downstream: our targeted directives and purge tags removed. */
  function downstreamFixes(headers: HeaderMap): Record<string, string> {
    const out: Record<string, string> = {};
    if (getHeader(headers, tagHeader) !== undefined) out[tagHeader] = '';
    const sc = surrogate ? getHeader(headers, 'surrogate-control') : undefined;
    if (sc !== undefined) {
      const left = forwardedSurrogateControl(sc, targeted.surrogateToken);
      if (left !== sc) out['surrogate-control'] = left ?? '';
    }
    return out;
  }

  /**
   * A Range request with nothing stored goes upstream as it is. Its answer is stored when it is the
   * complete response: a 200 (the origin ignored Range, or If-Range failed), or a 206 carrying every
   * byte (completeFromPartial, §3.3). Other answers pass through unstored; a later full GET fills the
   * cache (parts are not combined, §3.4).
   */
  function rangeMiss(x: Exchange, reason: string): void {
    const requestTimeMs = Date.now();
    const sentAt = invalidations;
    const hadIfRange = x.reqHeaders['if-range'] !== undefined;
    x.ctx.forward({
      requestHeaders: upstreamExtras(x.reqHeaders),
      onHead: (status, upHeaders) => {
        const responseTimeMs = Date.now();
        const headers = upstreamHeaders(x, status, upHeaders);
        const statusText = `fwd=${reason}; fwd-status=${status}`;
        const fixes = downstreamFixes(headers);
        const complete =
          status === 200 ? headers : status === 206 ? completeFromPartial(headers, hadIfRange) : null;
        if (complete === null) return pass(statusText, fixes);
        const t = { statusText, fixes, done: () => {}, detached: false, sentAt };
        return storeOrPass(x, 'GET', 200, complete, requestTimeMs, responseTimeMs, t);
      },
    });
  }

  function gatewayTimeout(x: Exchange): void {
    const status = `${NAME}; detail=only-if-cached`;
    sendError(
      x.req,
      x.res,
      ERRORS.gatewayTimeout,
      'The request asked for a stored response only (only-if-cached) and none is available.',
      { 'cache-status': status },
    );
    logCacheStatus(x.res, status);
  }

  /**
   * §4.4: after a non-error response to an unsafe request, drop what is stored for the URIs involved.
   * RFC 9110 §9.3.3: a POST response with explicit freshness and a Content-Location equal to the
   * target URI is the GET response of that URI: it is stored as one.
   */
  function forwardUnsafe(x: Exchange): void {
    const { method, key, ctx, reqHeaders } = x;
    const requestTimeMs = Date.now();
    ctx.forward({
      requestHeaders: upstreamExtras(reqHeaders),
      onHead: (status, upHeaders) => {
        const headers = upstreamHeaders(x, status, upHeaders);
        const targetUri = key.slice(4);
        const uris = invalidationUris({ method, status, targetUri, responseHeaders: headers });
        for (const u of uris) noteInvalidated(`GET ${u}`);
        if (uris.length > 0 && x.store !== undefined) {
          const store = x.store;
          void Promise.all(uris.map((u) => store.delete(`GET ${u}`))).catch((err) =>
            warn(err, 'cache invalidation failed'),
          );
        }
        const statusText = `fwd=method; fwd-status=${status}`;
        const fixes = downstreamFixes(headers);
        if (method === 'POST' && x.store !== undefined && postIsGetResponse(headers, targetUri)) {
          const t = { statusText, fixes, done: () => {}, detached: false, sentAt: invalidations };
          return storeOrPass(x, 'GET', status, headers, requestTimeMs, Date.now(), t);
        }
        return pass(statusText, fixes);
      },
    });
  }

  /**
   * An upstream response's fields as the cache decides on them: with the Cache-Control the proxy
   * sends (its cachePolicy applied), so a response clients are told not to store is not stored here
   * either, and a rule's freshness applies here too. A 304 keeps its own: it updates a stored
   * response whose Cache-Control was settled when it was stored (§4.3.4).
   */
  function upstreamHeaders(x: Exchange, status: number, upHeaders: IncomingHttpHeaders): HeaderMap {
    const headers = toHeaderMap(stripHopByHop(upHeaders));
    if (status === 304) return headers;
    const cc = x.ctx.cacheControl(upHeaders);
    if (cc === headers['cache-control']) return headers;
    if (cc === undefined) delete headers['cache-control'];
    else headers['cache-control'] = cc;
    return headers;
  }

  /** RFC 9110 §9.3.3: explicit freshness (RFC 9111 §4.2.1) and Content-Location = the target URI. */
  function postIsGetResponse(headers: HeaderMap, targetUri: string): boolean {
    const location = getHeader(headers, 'content-location');
    if (location === undefined) return false;
    let same: boolean;
    try {
      same = new URL(location, targetUri).href === targetUri;
    } catch {
      return false;
    }
    const policy = policyHeaders(headers, targeted);
    const cc = parseCacheControl(getHeader(policy, 'cache-control'));
    const explicit =
      hasDirective(cc, 'max-age') ||
      hasDirective(cc, 's-maxage') ||
      getHeader(policy, 'expires') !== undefined;
    return same && explicit;
  }

  /** PURGE from an allowed address: one URL, a URL prefix (`/path*`), or tags (`Cache-Tag: a, b`). */
  async function purge(req: IncomingMessage, res: ServerResponse, ctx: CacheRequestContext): Promise<void> {
    const addr = parseIp(ctx.clientAddress());
    if (addr === null || !purgeAllowed(addr)) {
      sendError(req, res, ERRORS.forbidden, 'PURGE is not allowed from this address.');
      return;
    }
    const key = primaryKey(req);
    if (key === undefined) {
      sendError(req, res, ERRORS.badRequest, 'The PURGE target is not a valid URL.');
      return;
    }
    const tagValue = req.headers[tagHeader];
    const tags = parseTags(Array.isArray(tagValue) ? tagValue.join(',') : tagValue);
    try {
      const store = await getStore();
      let purged = 0;
      if (tags.length > 0) {
        noteInvalidated(undefined);
        for (const tag of tags) purged += await store.purge({ tag });
      } else if (key.endsWith('*')) {
        noteInvalidated(undefined);
        purged = await store.purge({ keyPrefix: key.slice(0, -1) });
      } else {
        noteInvalidated(key);
        purged = (await store.getVariants(key)).length;
        await store.delete(key);
      }
      const body = `${JSON.stringify({ purged })}\n`;
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'cache-control': 'no-store',
      });
      res.end(body);
    } catch (err) {
      warn(err, 'cache purge failed');
      sendError(req, res, ERRORS.internal, 'The purge failed.');
    }
  }

  /** RFC 5861 §3: a conditional request that nobody waits on; its answer updates or replaces the entry. */
  function revalidateInBackground(x: Exchange, entry: StoredEntry): void {
    const ckey = coalesceKey(x, entry);
    if (inflight.has(ckey) || x.method !== 'GET') return;
    fetchAndStore(x, 'stale', entry, lead(ckey), true);
  }

  /**
   * Forwards upstream (conditionally when `entry` is being revalidated) and stores what may be stored.
   * `reason` is the Cache-Status fwd parameter. `settle` ends the wait of coalesced requests, once the
   * response is stored or known not to be (they then look again). `detached`: a background revalidation, nothing goes to the client.
   */
  function fetchAndStore(
    x: Exchange,
    reason: string,
    entry: StoredEntry | undefined,
    settle: (() => void) | undefined,
    detached = false,
  ): void {
    const { req, res, key, method, reqHeaders } = x;
    const store = x.store!;
    const done = settle ?? (() => {});
    const sentAt = invalidations;
    const cond = entry === undefined ? {} : conditionalHeaders([entry.meta.response]);
    const requestHeaders: Record<string, string> = upstreamExtras(reqHeaders);
    if (Object.keys(cond).length > 0) {
      // Our validators replace the client's: the answer must be about the stored response.
      for (const name of CONDITIONAL_REQUEST_FIELDS) requestHeaders[name] = '';
      Object.assign(requestHeaders, cond);
    }
    // A revalidation asks about the whole stored response, never a part of it.
    if (entry !== undefined) requestHeaders.range = '';
    const requestTimeMs = Date.now();
    let bodyDone = false;
    if (settle !== undefined && !detached) {
      // The client going away aborts the exchange: waiters must not wait for it.
      res.once('close', () => {
        if (!bodyDone) done();
      });
    }
    /** Serves `entry` stale after an origin error when the decisions allow it (RFC 5861 §4, §4.2.4). */
    const staleOnError = (status: string, unreachable: boolean): boolean => {
      if (entry === undefined || detached) return false;
      const d = decideServe({
        stored: policyView(entry.meta.response),
        requestHeaders: reqHeaders,
        nowMs: Date.now(),
        shared: true,
        freshness,
        originError: true,
        originUnreachable: unreachable,
        disconnectedStaleSec,
      });
      if (d.kind !== 'stale-ok') return false;
      void serveStored(x, entry, d.omitHeaders, `hit; fwd=${reason}; ${status}`).then((ok) => {
        if (!ok && !res.headersSent) sendError(req, res, ERRORS.badGateway, 'The upstream failed.');
      });
      return true;
    };
    /** Ends a response we are not passing on: swallowed, and for a detached exchange nothing else. */
    const swallow = (onEnd: () => void): HeadAction => ({ kind: 'swallow', onEnd });
    x.ctx.forward({
      requestHeaders,
      detached,
      onFailure: () => {
        done();
        return staleOnError('detail=origin-unreachable', true);
      },
      onHead: (status, upHeaders) => {
        const responseTimeMs = Date.now();
        const headers = upstreamHeaders(x, status, upHeaders);
        const fixes = downstreamFixes(headers);
        if (entry !== undefined && status === 304 && Object.keys(cond).length > 0) {
          // Departure from §4.3.4's letter: a 304 without any validator answers the one response we
          // asked about (our If-None-Match / If-Modified-Since named only its validator), so it is
          // selected even though it has one. Origins often omit ETag on 304s.
          const noValidator =
            getHeader(headers, 'etag') === undefined && getHeader(headers, 'last-modified') === undefined;
          const selected = noValidator
            ? [entry.meta.response]
            : selectForUpdate([entry.meta.response], headers);
          if (selected.length === 0) {
            // The 304 is not about our response (§4.3.4): ask again without validators.
            return swallow(() => {
              bodyDone = true;
              if (detached) return done();
              fetchAndStore(x, reason, undefined, settle);
            });
          }
          const response = freshenStored(entry.meta.response, headers, requestTimeMs, responseTimeMs);
          return swallow(() => {
            bodyDone = true;
            void (async () => {
              const updated = await store.updateMeta(key, entry.id, metaFor(entry.meta, response));
              done();
              if (detached) return;
              const served =
                updated !== null &&
                (await serveStored(x, updated, [], `fwd=${reason}; fwd-status=304`, response));
              if (!served && !res.headersSent) fetchAndStore(x, reason, undefined, undefined);
            })().catch((err) => {
              done();
              warn(err, 'cache update failed');
              if (!detached && !res.headersSent) sendError(req, res, ERRORS.badGateway, 'The cache failed.');
            });
          });
        }
        if (ORIGIN_ERRORS.has(status) && entry !== undefined && !detached) {
          const d = decideServe({
            stored: policyView(entry.meta.response),
            requestHeaders: reqHeaders,
            nowMs: responseTimeMs,
            shared: true,
            freshness,
            originError: true,
          });
          if (d.kind === 'stale-ok') {
            done();
            return swallow(() => void staleOnError(`fwd-status=${status}`, false));
          }
        }
        const statusText = `fwd=${reason}; fwd-status=${status}`;
        const notStored = (): HeadAction => {
          done();
          return detached ? swallow(() => {}) : pass(statusText, fixes);
        };
        if (method === 'HEAD') {
          // §4.3.5: a 200 to HEAD freshens the stored GET response its validators select.
          if (status === 200 && entry !== undefined)
            freshenFromHead(x, entry, headers, requestTimeMs, responseTimeMs);
          return notStored();
        }
        return storeOrPass(x, method, status, headers, requestTimeMs, responseTimeMs, {
          statusText,
          fixes,
          done,
          detached,
          sentAt,
          onBodyEnd: () => {
            bodyDone = true;
          },
        });
      },
    });
  }

  /**
   * The action for a response that may be stored: tee it into the store while it goes to the client
   * (or only into the store when detached). `done` hears whether it was stored.
   */
  function storeOrPass(
    x: Exchange,
    method: string,
    status: number,
    headers: HeaderMap,
    requestTimeMs: number,
    responseTimeMs: number,
    t: {
      statusText: string;
      fixes: Record<string, string>;
      done: () => void;
      detached: boolean;
      /** The invalidation count when the request went upstream (see invalidatedSince). */
      sentAt: number;
      onBodyEnd?: () => void;
    },
  ): HeadAction {
    const { key, reqHeaders } = x;
    const { done, detached } = t;
    const notStored = (): HeadAction => {
      done();
      return detached ? { kind: 'swallow', onEnd: () => {} } : pass(t.statusText, t.fixes);
    };
    const storable = isStorable({
      method,
      requestHeaders: reqHeaders,
      status,
      responseHeaders: policyHeaders(headers, targeted),
      shared: true,
    });
    if (!storable.ok) return notStored();
    const vary = getHeader(headers, 'vary');
    const vk = varyKey(vary, reqHeaders);
    if (vk === null) return notStored();
    // Set-Cookie is stored like any other field (RFC 9111 §3.1, §7.3 leaves it to the origin to
    // mark personal responses private or no-cache="set-cookie").
    const lengthText = getHeader(headers, 'content-length');
    const declared = lengthText === undefined ? undefined : Number(lengthText);
    if (declared !== undefined && declared > o.maxEntryBytes) return notStored();
    const toStore: Record<string, string> = {};
    for (const [name, v] of Object.entries(headers)) {
      if (!storable.omitHeaders.includes(name)) toStore[name] = v;
    }
    // A cache with a clock dates what it stores (RFC 9110 §6.6.1).
    toStore.date ??= new Date(responseTimeMs).toUTCString();
    const varyHeaders: Record<string, string> = {};
    if (vary !== undefined) {
      for (const name of vary.split(',')) {
        const n = name.trim().toLowerCase();
        const v = getHeader(reqHeaders, n);
        if (n !== '' && v !== undefined) varyHeaders[n] = v;
      }
    }
    const tags = parseTags(getHeader(headers, tagHeader));
    const meta: EntryMeta = {
      response: { status, headers: toStore, requestTimeMs, responseTimeMs },
      varyKey: vk,
      varyHeaders,
      ...(tags.length > 0 ? { tags } : {}),
    };
    let chunks: Buffer[] | undefined = [];
    let bytes = 0;
    const onData = (chunk: Buffer) => {
      if (chunks === undefined) return;
      bytes += chunk.byteLength;
      if (bytes > o.maxEntryBytes) {
        chunks = undefined;
        done();
      } else chunks.push(chunk);
    };
    const onEnd = () => {
      t.onBodyEnd?.();
      // §4.4: an invalidation since the request went out makes this answer possibly outdated.
      if (
        chunks === undefined ||
        (declared !== undefined && declared !== bytes) ||
        invalidatedSince(key, t.sentAt)
      ) {
        done();
        return;
      }
      x.store!.put(key, meta, Buffer.concat(chunks, bytes)).then(
        () => done(),
        (err) => {
          done();
          warn(err, 'cache store failed');
        },
      );
    };
    if (detached) return { kind: 'swallow', onData, onEnd };
    return {
      kind: 'pass',
      headers: { ...t.fixes, 'cache-status': `${NAME}; ${t.statusText}; stored` },
      onData,
      onEnd,
    };
  }

  /** §4.3.5: freshen a stored GET response with the fields of a 200 to HEAD that selects it. */
  function freshenFromHead(
    x: Exchange,
    entry: StoredEntry,
    headers: HeaderMap,
    requestTimeMs: number,
    responseTimeMs: number,
  ): void {
    if (selectForUpdate([entry.meta.response], headers).length === 0) return;
    const response = freshenStored(entry.meta.response, headers, requestTimeMs, responseTimeMs);
    x.store!.updateMeta(x.key, entry.id, metaFor(entry.meta, response)).catch((err) =>
      warn(err, 'cache update failed'),
    );
  }

  /** The entry's meta with a freshened response; purge tags follow the newest Cache-Tag (§3.2). */
  function metaFor(meta: EntryMeta, response: StoredResponse): EntryMeta {
    const tags = parseTags(getHeader(response.headers, tagHeader));
    const { tags: _old, ...rest } = meta;
    return { ...rest, response, ...(tags.length > 0 ? { tags } : {}) };
  }

  /**
   * Answers from the store (§4): the stored status and headers, Age (§5.1), the body unless HEAD;
   * the client's preconditions and Range are evaluated against the stored response (cache-serve.ts).
   * False when the body is gone (evicted meanwhile): the caller forwards instead.
   */
  async function serveStored(
    x: Exchange,
    entry: StoredEntry,
    omit: readonly string[],
    status: string,
    response: StoredResponse = entry.meta.response,
  ): Promise<boolean> {
    const { res } = x;
    const store = x.store!;
    const body = store.openBodySync?.(entry) ?? (await store.openBody(entry));
    if (body === null) return false;
    if (res.destroyed || res.headersSent) {
      await body.close();
      return true;
    }
    const nowMs = Date.now();
    // The fields sent for a stored response depend on it, its key (host, path) and the headers earlier
    // steps set on `res`; with none of those and nothing to omit they are the same every time.
    const plain = omit.length === 0 && res.getHeaderNames().length === 0;
    let base = plain ? sentFields.get(response) : undefined;
    if (base === undefined) {
      base = x.ctx.responseHeaders(toIncoming(response.headers, omit));
      setFields(base, downstreamFixes(response.headers));
      if (plain) sentFields.set(response, base);
    }
    if (plain && body.whole !== undefined && x.method === 'GET' && isPlainRead(x.reqHeaders)) {
      // The hit path (see tryHit, which takes the following ones without this function).
      let flat = sentFlat.get(response);
      if (flat === undefined) {
        // Several lines of one field (Set-Cookie) stay one array value: when an earlier step has
        // touched the response's fields, writeHead sets each pair of a flat list with setHeader,
        // so a repeated name would keep only its last line.
        const fields: (string | string[])[] = [];
        for (const [name, v] of Object.entries(base)) if (name !== 'content-length') fields.push(name, v);
        flat = { fields, last: undefined, lastAgeSec: -1, lastTtl: undefined, lastWord: '', lastStatus: '' };
        sentFlat.set(response, flat);
      }
      writePlainHit(res, x.key, response, timingOf(response), flat, body.whole, status, nowMs);
      return true;
    }
    const out = { ...base };
    const t = timingOf(response);
    out.age = String(ageSecOf(response, t, nowMs));
    out['cache-status'] = cacheStatusOf(x.key, status, ttlOf(t, nowMs));
    logCacheStatus(res, out['cache-status']);
    try {
      await serveFromStore({
        req: x.req,
        res,
        method: x.method,
        reqHeaders: x.reqHeaders,
        response,
        headers: out,
        body,
        nowMs,
      });
    } catch (err) {
      warn(err, 'cache read failed');
      res.destroy(err as Error);
    }
    return true;
  }

  return {
    tryHit,
    handle,
    async open() {
      try {
        await getStore();
      } catch (err) {
        const where = o.store === 'disk' ? ` in ${o.dir ?? tempDir}` : '';
        const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
        throw Object.assign(new Error(`the ${o.store} cache store${where} cannot be opened: ${why}`), {
          code: 'GATEHOUSE_CACHE_STORE',
          cause: err,
        });
      }
    },
    async close() {
      if (storePromise !== undefined) {
        const store = await storePromise.catch(() => undefined);
        await store?.close();
      }
      if (tempDir !== undefined) await rm(tempDir, { recursive: true, force: true });
    },
  };
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

function onlyIfCached(reqHeaders: HeaderMap): boolean {
  return hasDirective(parseCacheControl(getHeader(reqHeaders, 'cache-control')), 'only-if-cached');
}

function pass(status: string, fixes?: Record<string, string>): HeadAction {
  return { kind: 'pass', headers: { ...fixes, 'cache-status': `${NAME}; ${status}` } };
}
