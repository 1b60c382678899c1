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
  conditionalHeaders,
  currentAgeSec,
  decideServe,
  type FreshnessOptions,
  freshenStored,
  getHeader,
  type HeaderMap,
  invalidationUris,
  isFresh,
  isStorable,
  matchesVary,
  type StoredResponse,
  selectForUpdate,
  varyKey,
} from '../../cache/index.js';
import { openDiskStore } from '../../cache/store/disk.js';
import { createMemoryStore } from '../../cache/store/memory.js';
import type { CacheStore, EntryMeta, StoredEntry } from '../../cache/store/types.js';
import { hasDirective, parseCacheControl } from '../../http/cache-control.js';
import { evaluatePreconditions } from '../../http/conditional.js';
import { parseHttpDate } from '../../http/dates.js';
import { formatEntityTag, parseEntityTag } from '../../http/etag.js';
import { stripHopByHop } from '../../http/proxy-headers.js';
import { ERRORS, sendError } from '../errors.js';
import type { Logger } from '../log.js';

export interface ProxyCacheOptions {
  enabled: boolean;
  store: 'memory' | 'disk';
  /** Folder of the disk store; default a new folder under the OS temp dir (removed on close). */
  dir?: string | undefined;
  maxSizeBytes: number;
  maxEntryBytes: number;
  heuristicCapSec?: number | undefined;
}

/** What the proxy does with an upstream response head. */
export type HeadAction =
  /** Send it to the client as usual, with `headers` added; `onData` sees each body chunk, `onEnd` a complete body. */
  | {
      readonly kind: 'pass';
      readonly headers?: Record<string, string>;
      readonly onData?: (chunk: Buffer) => void;
      readonly onEnd?: () => void;
    }
  /** Read and drop the upstream response; `onEnd` answers the client when it has ended. */
  | { readonly kind: 'swallow'; readonly onEnd: () => void };

/** Cache hooks into one upstream exchange (see forward() in handler.ts). */
export interface ForwardHooks {
  /** Request fields to set, replacing the client's (conditional headers for validation); '' removes one. */
  readonly requestHeaders?: Record<string, string>;
  readonly onHead?: (status: number, headers: IncomingHttpHeaders) => HeadAction;
  /** The exchange failed before a response head; true when the hook answered the client. */
  readonly onFailure?: (err: unknown) => boolean;
}

/** What the cache needs from the proxy for one request. */
export interface CacheRequestContext {
  forward(hooks: ForwardHooks): void;
  /** The headers the proxy would send for these upstream headers (Via, rewrites, step headers). */
  responseHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]>;
}

export interface RouteCache {
  handle(req: IncomingMessage, res: ServerResponse, ctx: CacheRequestContext): Promise<void>;
  close(): Promise<void>;
}

const NAME = 'gatehouse';
const CONDITIONAL_REQUEST_FIELDS = ['if-none-match', 'if-modified-since', 'if-match', 'if-unmodified-since'];
/** Several Set-Cookie lines are kept apart with a newline (it cannot occur in a field value). */
const COOKIE_SEP = '\n';
/** RFC 5861 §4: the statuses after which stale-if-error may serve a stale response. */
const ORIGIN_ERRORS = new Set([500, 502, 503, 504]);

/** Lowercase header map with several field lines joined (Set-Cookie kept apart, see COOKIE_SEP). */
export function toHeaderMap(headers: IncomingHttpHeaders | Record<string, string | string[]>): HeaderMap {
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

/** `GET <absolute public URI>`: method- and upstream-independent; undefined when it cannot be built. */
export function primaryKey(req: IncomingMessage): string | undefined {
  const host = req.headers.host;
  const url = req.url;
  if (host === undefined || url === undefined || !url.startsWith('/')) return undefined;
  const proto = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
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
  const tempDir =
    o.store === 'disk' && o.dir === undefined
      ? join(tmpdir(), `gatehouse-cache-${process.pid}-${randomUUID().slice(0, 8)}`)
      : undefined;
  let storePromise: Promise<CacheStore> | undefined;
  const getStore = (): Promise<CacheStore> => {
    storePromise ??=
      o.store === 'disk'
        ? openDiskStore({ ...storeOptions, dir: o.dir ?? tempDir! })
        : Promise.resolve(createMemoryStore(storeOptions));
    return storePromise;
  };
  const warn = (err: unknown, msg: string) => logger.warn({ err }, msg);

  async function handle(req: IncomingMessage, res: ServerResponse, ctx: CacheRequestContext): Promise<void> {
    const method = req.method ?? 'GET';
    const key = primaryKey(req);
    if (key === undefined) {
      ctx.forward({});
      return;
    }
    const reqHeaders = toHeaderMap(req.headers);
    if (method !== 'GET' && method !== 'HEAD') {
      forwardUnsafe(method, key, ctx);
      return;
    }
    // Range requests go through: partial content is not stored (§3.3, §3.4 not implemented).
    if (reqHeaders.range !== undefined) {
      ctx.forward({ onHead: (s) => pass(`fwd=bypass; fwd-status=${s}`) });
      return;
    }
    let store: CacheStore;
    let variants: StoredEntry[];
    try {
      store = await getStore();
      variants = await store.getVariants(key);
    } catch (err) {
      warn(err, 'cache lookup failed');
      ctx.forward({});
      return;
    }
    if (res.destroyed) return;
    const entry = variants.find((v) =>
      matchesVary(getHeader(v.meta.response.headers, 'vary'), v.meta.varyHeaders, reqHeaders),
    );
    const x: Exchange = { req, res, ctx, store, key, method, reqHeaders };
    if (entry === undefined) {
      if (onlyIfCached(reqHeaders)) return gatewayTimeout(x);
      fetchAndStore(x, variants.length > 0 ? 'vary-miss' : 'uri-miss', undefined);
      return;
    }
    const stored = entry.meta.response;
    const nowMs = Date.now();
    const d = decideServe({ stored, requestHeaders: reqHeaders, nowMs, shared: true, freshness });
    if (d.kind === 'fresh' || d.kind === 'stale-ok') {
      if (await serveStored(x, entry, d.omitHeaders, 'hit')) return;
      fetchAndStore(x, 'uri-miss', undefined);
      return;
    }
    if (d.kind === 'miss-only-if-cached') return gatewayTimeout(x);
    // Revalidate (§4.3): stale, or the client asked for it.
    const reason = isFresh(stored, nowMs, true, freshness) ? 'request' : 'stale';
    fetchAndStore(x, reason, entry);
  }

  interface Exchange {
    readonly req: IncomingMessage;
    readonly res: ServerResponse;
    readonly ctx: CacheRequestContext;
    readonly store: CacheStore;
    readonly key: string;
    readonly method: string;
    readonly reqHeaders: HeaderMap;
  }

  function gatewayTimeout(x: Exchange): void {
    sendError(
      x.req,
      x.res,
      ERRORS.gatewayTimeout,
      'The request asked for a stored response only (only-if-cached) and none is available.',
      { 'cache-status': `${NAME}; detail=only-if-cached` },
    );
  }

  /** §4.4: after a non-error response to an unsafe request, drop what is stored for the URIs involved. */
  function forwardUnsafe(method: string, key: string, ctx: CacheRequestContext): void {
    ctx.forward({
      onHead: (status, headers) => {
        const uris = invalidationUris({
          method,
          status,
          targetUri: key.slice(4),
          responseHeaders: toHeaderMap(headers),
        });
        if (uris.length > 0) {
          void getStore()
            .then((store) => Promise.all(uris.map((u) => store.delete(`GET ${u}`))))
            .catch((err) => warn(err, 'cache invalidation failed'));
        }
        return pass(`fwd=method; fwd-status=${status}`);
      },
    });
  }

  /**
   * Forwards upstream (conditionally when `entry` is being revalidated) and stores what may be stored.
   * `reason` is the Cache-Status fwd parameter.
   */
  function fetchAndStore(x: Exchange, reason: string, entry: StoredEntry | undefined): void {
    const { req, res, store, key, method, reqHeaders } = x;
    const cond = entry === undefined ? {} : conditionalHeaders([entry.meta.response]);
    const requestHeaders: Record<string, string> = {};
    if (Object.keys(cond).length > 0) {
      // Our validators replace the client's: the answer must be about the stored response.
      for (const name of CONDITIONAL_REQUEST_FIELDS) requestHeaders[name] = '';
      Object.assign(requestHeaders, cond);
    }
    const requestTimeMs = Date.now();
    const staleOnError = (status: string): boolean => {
      if (entry === undefined) return false;
      const d = decideServe({
        stored: entry.meta.response,
        requestHeaders: reqHeaders,
        nowMs: Date.now(),
        shared: true,
        freshness,
        originError: true,
      });
      if (d.kind !== 'stale-ok') return false;
      void serveStored(x, entry, d.omitHeaders, `hit; fwd=${reason}; ${status}`).then((ok) => {
        if (!ok && !res.headersSent) sendError(req, res, ERRORS.badGateway, 'The upstream failed.');
      });
      return true;
    };
    x.ctx.forward({
      requestHeaders,
      onFailure: () => staleOnError('detail=origin-unreachable'),
      onHead: (status, upHeaders) => {
        const responseTimeMs = Date.now();
        const headers = toHeaderMap(stripHopByHop(upHeaders));
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
            return { kind: 'swallow', onEnd: () => fetchAndStore(x, reason, undefined) };
          }
          const response = freshenStored(entry.meta.response, headers, requestTimeMs, responseTimeMs);
          return {
            kind: 'swallow',
            onEnd: () => {
              void (async () => {
                const updated = await store.updateMeta(key, entry.id, { ...entry.meta, response });
                const served =
                  updated !== null &&
                  (await serveStored(x, updated, [], `fwd=${reason}; fwd-status=304`, response));
                if (!served && !res.headersSent) fetchAndStore(x, reason, undefined);
              })().catch((err) => {
                warn(err, 'cache update failed');
                if (!res.headersSent) sendError(req, res, ERRORS.badGateway, 'The cache failed.');
              });
            },
          };
        }
        if (ORIGIN_ERRORS.has(status) && entry !== undefined) {
          const d = decideServe({
            stored: entry.meta.response,
            requestHeaders: reqHeaders,
            nowMs: responseTimeMs,
            shared: true,
            freshness,
            originError: true,
          });
          if (d.kind === 'stale-ok') {
            return { kind: 'swallow', onEnd: () => void staleOnError(`fwd-status=${status}`) };
          }
        }
        const status_ = `fwd=${reason}; fwd-status=${status}`;
        if (method !== 'GET') return pass(status_);
        const storable = isStorable({
          method,
          requestHeaders: reqHeaders,
          status,
          responseHeaders: headers,
          shared: true,
        });
        if (!storable.ok) return pass(status_);
        const vary = getHeader(headers, 'vary');
        const vk = varyKey(vary, reqHeaders);
        if (vk === null) return pass(status_);
        // Set-Cookie is stored like any other field (RFC 9111 §3.1, §7.3 leaves it to the origin to
        // mark personal responses private or no-cache="set-cookie").
        const lengthText = getHeader(headers, 'content-length');
        const declared = lengthText === undefined ? undefined : Number(lengthText);
        if (declared !== undefined && declared > o.maxEntryBytes) return pass(status_);
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
        const meta: EntryMeta = {
          response: { status, headers: toStore, requestTimeMs, responseTimeMs },
          varyKey: vk,
          varyHeaders,
        };
        let chunks: Buffer[] | undefined = [];
        let bytes = 0;
        return {
          kind: 'pass',
          headers: { 'cache-status': `${NAME}; ${status_}; stored` },
          onData: (chunk) => {
            if (chunks === undefined) return;
            bytes += chunk.byteLength;
            if (bytes > o.maxEntryBytes) chunks = undefined;
            else chunks.push(chunk);
          },
          onEnd: () => {
            if (chunks === undefined || (declared !== undefined && declared !== bytes)) return;
            store
              .put(key, meta, Buffer.concat(chunks, bytes))
              .catch((err) => warn(err, 'cache store failed'));
          },
        };
      },
    });
  }

  /**
   * Answers from the store (§4): the stored status and headers, Age (§5.1), the body unless HEAD.
   * The client's own If-None-Match / If-Modified-Since are evaluated against the stored response.
   * False when the body is gone (evicted meanwhile): the caller forwards instead.
   */
  async function serveStored(
    x: Exchange,
    entry: StoredEntry,
    omit: readonly string[],
    status: string,
    response: StoredResponse = entry.meta.response,
  ): Promise<boolean> {
    const { req, res, reqHeaders } = x;
    const body = await x.store.openBody(entry);
    if (body === null) return false;
    if (res.destroyed || res.headersSent) {
      await body.close();
      return true;
    }
    const out = x.ctx.responseHeaders(toIncoming(response.headers, omit));
    out.age = String(Math.max(0, Math.floor(currentAgeSec(response, Date.now()))));
    out['cache-status'] = `${NAME}; ${status}`;
    const tag = parseEntityTag(getHeader(response.headers, 'etag') ?? '');
    const lastModifiedMs = parseHttpDate(getHeader(response.headers, 'last-modified'));
    const pre =
      response.status === 200
        ? evaluatePreconditions({
            method: x.method,
            header: (n) => getHeader(reqHeaders, n),
            etag: tag === null ? undefined : formatEntityTag(tag),
            lastModifiedMs: lastModifiedMs === null ? undefined : lastModifiedMs,
          })
        : { kind: 'proceed' as const };
    if (pre.kind === 'not-modified') {
      await body.close();
      for (const name of Object.keys(out)) {
        if (name.startsWith('content-') && name !== 'content-location') delete out[name];
      }
      res.writeHead(304, out);
      res.end();
      return true;
    }
    const noBody = response.status === 204 || response.status === 304;
    if (!noBody) out['content-length'] = String(body.bodyBytes);
    res.writeHead(response.status, out);
    if (req.method === 'HEAD' || noBody) {
      await body.close();
      res.end();
      return true;
    }
    try {
      for await (const chunk of body) {
        if (res.destroyed) break;
        if (!res.write(chunk)) {
          await new Promise<void>((resolve) => {
            const done = () => {
              res.off('drain', done);
              res.off('close', done);
              resolve();
            };
            res.once('drain', done);
            res.once('close', done);
          });
        }
      }
    } catch (err) {
      warn(err, 'cache read failed');
      res.destroy(err as Error);
      return true;
    }
    res.end();
    return true;
  }

  return {
    handle,
    async close() {
      if (storePromise !== undefined) {
        const store = await storePromise.catch(() => undefined);
        await store?.close();
      }
      if (tempDir !== undefined) await rm(tempDir, { recursive: true, force: true });
    },
  };
}

function onlyIfCached(reqHeaders: HeaderMap): boolean {
  return hasDirective(parseCacheControl(getHeader(reqHeaders, 'cache-control')), 'only-if-cached');
}

function pass(status: string): HeadAction {
  return { kind: 'pass', headers: { 'cache-status': `${NAME}; ${status}` } };
}
