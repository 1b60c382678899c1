// Redis store: entries, bodies and every index live in one Redis, so instances sharing it
// share the cache, its purges and its byte bound. The writes are Lua scripts (redis-scripts.ts), each
// atomic. Entries expire in Redis after their usable lifetime (PEXPIRE to `discardAfterMs`: freshness
// plus the stale-while-revalidate / stale-if-error allowances, RFC 5861 / RFC 9111 §4.2.4).
// A small memory tier in front keeps each key's variant list with bodies; every write publishes the
// keys it changed on a pub/sub channel, and the other instances drop them from their tier. While the
// subscription is down the tier is bypassed. Redis unreachable or slow: lookups are misses, puts are
// not stored (`unavailable`), invalidations are skipped; nothing is logged here (the connection logs
// an outage once each way).
import { createHash, randomUUID } from 'node:crypto';
import type { Redis as RedisClient } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { storedEntryProblem } from '../entry-check.js';
import { type EntryCache, openEntryCache } from './entry-cache.js';
import { approxMetaBytes } from './memory.js';
import {
  DELETE_SCRIPT,
  GET_SCRIPT,
  PRUNE_SCRIPT,
  PURGE_SCRIPT,
  PUT_SCRIPT,
  TOUCH_SCRIPT,
  UPDATE_SCRIPT,
} from './redis-scripts.js';
import { checkStoreOptions, isDiscarded, shedLeastRecent, varyOf, wholeBody } from './shared.js';
import type {
  CacheStore,
  EntryBody,
  EntryMeta,
  PurgeFilter,
  PutResult,
  Read,
  ReadResult,
  Removal,
  SecondaryKeyOf,
  Selected,
  StoredEntry,
  StoreOptions,
  Write,
} from './types.js';

/** What the store needs of a Redis connection (src/server/redis/connection.ts provides it). */
export interface RedisLink {
  readonly client: RedisClient;
  subscriber(): RedisClient;
  key(...parts: string[]): string;
  isUp(): boolean;
  onStateChange?(fn: (up: boolean) => void): () => void;
}

export interface RedisStoreOptions extends StoreOptions {
  readonly redis: RedisLink;
  /** Separates the stores sharing one Redis (the proxy uses the route prefix). */
  readonly namespace: string;
  /** Bytes of the in-process tier in front (variant lists with bodies); 0 turns it off. Default 16 MiB. */
  readonly memoryTierBytes?: number;
  /** A Redis call slower than this counts as Redis being unavailable. Default 1000. */
  readonly commandTimeoutMs?: number;
}

/** Fixed per-entry overhead counted on top of key, meta and body (the index records in Redis). */
const ENTRY_OVERHEAD_BYTES = 128;
/** A lookup reads the bodies of a key's variants with their meta when they total at most this (or there is one). */
const INLINE_BODY_BYTES = 1024 * 1024;
/** Uses served from the memory tier reach Redis's LRU order at the latest this long after. */
const TOUCH_FLUSH_MS = 1000;

/** A key's variants as the tier keeps them: newest first, with their bodies. */
interface Snapshot {
  readonly entries: readonly StoredEntry[];
  readonly sizeBytes: number;
}

/** An invalidation message (redis-scripts.ts `publish`). */
interface Message {
  o?: string;
  k?: string[] | Record<string, never>;
  i?: number;
  a?: number;
  tag?: string;
  prefix?: string;
}

const NO_MATCH: Selected = Object.freeze({ entry: undefined, any: undefined });
const GONE: PutResult = Object.freeze({ stored: false, reason: 'gone' });
const UNAVAILABLE: PutResult = Object.freeze({ stored: false, reason: 'unavailable' });

type ScriptFn = (...args: (string | number | Buffer | Uint8Array)[]) => Promise<unknown[]>;

class RedisUnavailable extends Error {}

const SCRIPTS = {
  ghCacheGet: GET_SCRIPT,
  ghCachePut: PUT_SCRIPT,
  ghCacheUpdate: UPDATE_SCRIPT,
  ghCacheDelete: DELETE_SCRIPT,
  ghCachePurge: PURGE_SCRIPT,
  ghCachePrune: PRUNE_SCRIPT,
  ghCacheTouch: TOUCH_SCRIPT,
} as const;
type ScriptName = keyof typeof SCRIPTS;

/** Opens a Redis store; succeeds while Redis is down (the store then misses until it returns). */
export async function openRedisStore(options: RedisStoreOptions): Promise<RedisStore> {
  checkStoreOptions(options);
  const store = new RedisStore(options);
  await store.start();
  return store;
}

/**
 * The Redis store behind the cache's operations (entry-cache.ts): a put fails while Redis is
 * unreachable (`putMayFail`), and other instances write to it (`shared`).
 */
export function openRedisCache(options: RedisStoreOptions): Promise<EntryCache<RedisStore>> {
  return openEntryCache({ ...options, name: 'redis', putMayFail: true, shared: true }, (o) =>
    openRedisStore({ ...options, ...o }),
  );
}

export class RedisStore implements CacheStore {
  readonly #o: RedisStoreOptions;
  readonly #nowMs: () => number;
  readonly #base: string;
  readonly #channel: string;
  readonly #origin = randomUUID();
  readonly #timeoutMs: number;
  readonly #maxVariants: number;
  readonly #tier: LRUCache<string, Snapshot> | undefined;
  /** Bodies of the entries read from Redis, so a body read after a lookup needs no second round trip. */
  readonly #bodies = new WeakMap<StoredEntry, Uint8Array>();
  /** Ids served from the tier whose use Redis has not seen yet (flushed with the next write or a timer). */
  readonly #touched = new Set<string>();
  #touchTimer: ReturnType<typeof setTimeout> | undefined;
  /** Bumped by every invalidation message: a lookup that started before one does not fill the tier. */
  #generation = 0;
  #subscribed = false;
  /** After a timed-out call, Redis counts as down until then (performance.now()): a hung Redis costs one wait, not one per request. */
  #hungUntil = 0;
  #hungTimer: ReturnType<typeof setTimeout> | undefined;
  /** What onReachable last said. */
  #reachable = true;
  #stopWatching: (() => void) | undefined;
  #closed = false;
  readonly #onMessage = (channel: string, message: string) => {
    if (channel === this.#channel) this.#apply(message);
  };
  readonly #onSubscriberDown = () => {
    this.#subscribed = false;
    this.#tier?.clear();
  };
  readonly #onSubscriberReady = () => {
    void this.#subscribe();
  };

  constructor(o: RedisStoreOptions) {
    this.#o = o;
    this.#nowMs = o.nowMs ?? Date.now;
    const ns = createHash('sha1').update(o.namespace).digest('hex').slice(0, 16);
    this.#base = o.redis.key('cache', ns);
    this.#channel = `${this.#base}:inval`;
    this.#timeoutMs = o.commandTimeoutMs ?? 1000;
    this.#maxVariants = o.maxVariantsPerKey ?? 1_000_000;
    const tierBytes = o.memoryTierBytes ?? 16 * 1024 * 1024;
    this.#tier =
      tierBytes > 0
        ? new LRUCache<string, Snapshot>({
            maxSize: tierBytes,
            sizeCalculation: (s) => Math.max(1, s.sizeBytes),
          })
        : undefined;
    const client = o.redis.client as unknown as Record<string, unknown>;
    for (const [name, lua] of Object.entries(SCRIPTS)) {
      if (typeof client[`${name}Buffer`] !== 'function')
        o.redis.client.defineCommand(name, { numberOfKeys: 0, lua });
    }
  }

  async start(): Promise<void> {
    await this.#connected();
    if (this.#tier !== undefined) {
      const sub = this.#o.redis.subscriber();
      // One store per cached route shares the subscriber: room for its three listeners.
      sub.setMaxListeners(sub.getMaxListeners() + 3);
      sub.on('message', this.#onMessage);
      sub.on('close', this.#onSubscriberDown);
      sub.on('ready', this.#onSubscriberReady);
      void this.#subscribe();
    }
    this.#stopWatching = this.#o.redis.onStateChange?.(() => this.#report());
    this.#report();
    // Down at start: the size is learnt from the first reply.
    try {
      const size = await this.#timed(this.#o.redis.client.get(`${this.#base}:size`));
      this.#o.onSizeBytes?.(Number(size ?? 0));
    } catch {
      // Not known yet.
    }
  }

  /** Tells onReachable whether a put would reach Redis now, when that changed. */
  #report(): void {
    const up = !this.#closed && this.#o.redis.isUp() && performance.now() >= this.#hungUntil;
    if (up === this.#reachable) return;
    this.#reachable = up;
    this.#o.onReachable?.(up);
  }

  /** At startup, waits (at most the command timeout) for a connection being made: the first requests hit it. */
  #connected(): Promise<void> {
    const { redis } = this.#o;
    if (redis.isUp() || redis.onStateChange === undefined) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        stop?.();
        resolve();
      };
      const timer = setTimeout(done, this.#timeoutMs);
      const stop = redis.onStateChange?.((up) => {
        if (up) done();
      });
    });
  }

  async #subscribe(): Promise<void> {
    try {
      await this.#o.redis.subscriber().subscribe(this.#channel);
      // Messages may have been missed while unsubscribed: start the tier empty.
      this.#tier?.clear();
      this.#generation++;
      this.#subscribed = !this.#closed;
    } catch {
      this.#subscribed = false;
    }
  }

  /** Memory pressure: the memory tier's least recently used snapshots go (Redis keeps the entries). */
  shed(fraction: number): number {
    return this.#tier === undefined ? 0 : shedLeastRecent(this.#tier, fraction);
  }

  /** The tier, while the invalidations can reach it. */
  #liveTier(): LRUCache<string, Snapshot> | undefined {
    return this.#subscribed && this.#o.redis.isUp() ? this.#tier : undefined;
  }

  #apply(text: string): void {
    let m: Message;
    try {
      m = JSON.parse(text) as Message;
    } catch {
      return;
    }
    // Anyone who can PUBLISH on the channel can send anything: only the shapes we publish count.
    if (typeof m !== 'object' || m === null || m.o === this.#origin) return;
    this.#generation++;
    const keys = Array.isArray(m.k) ? m.k.filter((k): k is string => typeof k === 'string') : [];
    if (typeof m.tag !== 'string') delete m.tag;
    if (typeof m.prefix !== 'string') delete m.prefix;
    if (m.a === 1) this.#tier?.clear();
    else for (const key of keys) this.#tier?.delete(key);
    if (m.i !== 1) return;
    // A purge elsewhere also cancels matching puts still streaming in here (§4.4).
    const removed = this.#o.onRemovedElsewhere;
    if (removed === undefined) return;
    if (m.a === 1) removed({ all: true });
    else if (m.tag !== undefined) removed({ tag: m.tag });
    else if (m.prefix !== undefined) removed({ keyPrefix: m.prefix });
    else for (const key of keys) removed({ key });
  }

  /** Runs a script; rejects RedisUnavailable when Redis is down or slower than the timeout. */
  async #run(name: ScriptName, ...args: (string | number | Uint8Array)[]): Promise<unknown[]> {
    if (!this.#o.redis.isUp() || performance.now() < this.#hungUntil) {
      this.#report();
      throw new RedisUnavailable('redis is down');
    }
    const fn = (this.#o.redis.client as unknown as Record<string, ScriptFn>)[`${name}Buffer`]!;
    const r = (await this.#timed(
      fn.call(this.#o.redis.client, this.#base, this.#origin, ...args),
    )) as unknown[];
    // Every script replies with the shared total first.
    this.#o.onSizeBytes?.(Number(r[0]));
    return r;
  }

  #timed<T>(p: Promise<T>): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.#hungUntil = performance.now() + this.#timeoutMs;
        this.#report();
        // Reachable again once the wait is over, unless Redis went down meanwhile.
        clearTimeout(this.#hungTimer);
        this.#hungTimer = setTimeout(() => this.#report(), this.#timeoutMs);
        this.#hungTimer.unref?.();
        reject(new RedisUnavailable('redis timed out'));
      }, this.#timeoutMs);
    });
    p.catch(() => {}); // a late rejection after the timeout
    return Promise.race([p, timeout]).then(
      (v) => {
        clearTimeout(timer);
        return v;
      },
      (err: unknown) => {
        clearTimeout(timer);
        // A reply error is a bug in a script or a misconfigured server: not an outage.
        if ((err as Error).name === 'ReplyError') throw err;
        throw err instanceof RedisUnavailable ? err : new RedisUnavailable((err as Error).message);
      },
    );
  }

  get<R extends Read>(key: string, read: R): Promise<ReadResult<R>> {
    const out =
      'select' in read
        ? this.#select(key, read.select)
        : 'all' in read
          ? this.#variants(key)
          : this.#body(read.body);
    return out as Promise<ReadResult<R>>;
  }

  put(key: string, write: Write): Promise<PutResult> {
    return 'id' in write ? this.#update(key, write.id, write.meta) : this.#put(key, write);
  }

  delete(which: Removal): Promise<number> {
    return 'key' in which
      ? this.#delete(which.key, which.id)
      : 'expired' in which
        ? this.#prune()
        : this.#purge(which);
  }

  /** The live entries of `key`, newest first, with their bodies when they came along (or are in the tier). */
  async #variants(key: string): Promise<readonly StoredEntry[]> {
    const tier = this.#liveTier();
    const snap = tier?.get(key);
    if (snap !== undefined) {
      const nowMs = this.#nowMs();
      if (!snap.entries.some((e) => isDiscarded(e.meta, nowMs))) {
        for (const e of snap.entries) this.#touched.add(e.id);
        this.#scheduleTouchFlush();
        return snap.entries;
      }
      tier!.delete(key);
    }
    const generation = this.#generation;
    let r: unknown[];
    try {
      r = await this.#run('ghCacheGet', key, this.#nowMs(), INLINE_BODY_BYTES);
    } catch (err) {
      if (err instanceof RedisUnavailable) return []; // a miss: the request goes upstream
      throw err;
    }
    const entries: StoredEntry[] = [];
    let sizeBytes = 0;
    let whole = true;
    for (let i = 1; i + 3 < r.length; i += 4) {
      const id = String(r[i]);
      const body = r[i + 2] as Buffer | null;
      const meta = this.#checked(key, id, r[i + 1], Number(r[i + 3]), body);
      if (meta === undefined) continue;
      const entry: StoredEntry = { key, id, meta, bodyBytes: Number(r[i + 3]) };
      if (body === null) whole = false;
      else this.#bodies.set(entry, body);
      entries.push(entry);
      sizeBytes += entry.bodyBytes + approxMetaBytes(key, meta);
    }
    // §4.1: the most recent response first.
    entries.sort((a, b) => b.meta.response.responseTimeMs - a.meta.response.responseTimeMs);
    if (whole && entries.length > 0 && !this.#closed && generation === this.#generation) {
      this.#liveTier()?.set(key, { entries, sizeBytes });
    }
    return entries;
  }

  /**
   * The meta of an entry read from Redis when it may be served (../entry-check.ts); else undefined,
   * reported and deleted (anyone who can write to Redis can write anything there).
   */
  #checked(
    key: string,
    id: string,
    metaText: unknown,
    bodyBytes: number,
    body: Buffer | null,
  ): EntryMeta | undefined {
    let meta: unknown;
    try {
      meta = JSON.parse(String(metaText));
    } catch {
      meta = undefined;
    }
    const problem =
      body !== null && body.byteLength !== bodyBytes
        ? `body of ${body.byteLength} bytes, ${bodyBytes} listed`
        : storedEntryProblem(meta, bodyBytes, this.#o.maxEntryBytes);
    if (problem === undefined) return meta as EntryMeta;
    this.#invalid(key, id, problem);
    return undefined;
  }

  #invalid(key: string, id: string, reason: string): void {
    this.#o.onInvalidEntry?.(key, reason);
    this.#tier?.delete(key);
    this.#run('ghCacheDelete', key, id).catch(() => {});
  }

  /** The entry a request selects (§4.1), with its body when it came along with the lookup. */
  async #select(key: string, secondaryKey: SecondaryKeyOf): Promise<Selected> {
    const entries = await this.#variants(key);
    if (entries.length === 0) return NO_MATCH;
    // §4.1: for each entry, the request's secondary key under that entry's Vary; newest match wins.
    for (const e of entries) {
      const vary = varyOf(e.meta);
      if (secondaryKey(vary === '' ? undefined : vary) === e.meta.varyKey) {
        const body = this.#bodies.get(e);
        return { entry: e, any: e, body: body === undefined ? undefined : wholeBody(body) };
      }
    }
    return { entry: undefined, any: entries[0] };
  }

  /** The body of an entry: the one that came with its lookup, else read from Redis (null: gone or down). */
  async #body(entry: StoredEntry): Promise<EntryBody | null> {
    const known = this.#bodies.get(entry);
    if (known !== undefined) return wholeBody(known);
    try {
      const [k, b] = await this.#timed(
        this.#o.redis.isUp() && performance.now() >= this.#hungUntil
          ? this.#o.redis.client.hmgetBuffer(`${this.#base}:e:${entry.id}`, 'k', 'b')
          : Promise.reject(new RedisUnavailable('redis is down')),
      );
      if (!k || !b || k.toString() !== entry.key) return null;
      if (b.byteLength !== entry.bodyBytes || b.byteLength > this.#o.maxEntryBytes) {
        this.#invalid(entry.key, entry.id, `body of ${b.byteLength} bytes, ${entry.bodyBytes} listed`);
        return null;
      }
      return wholeBody(b);
    } catch (err) {
      if (err instanceof RedisUnavailable) return null;
      throw err;
    }
  }

  async #put(
    key: string,
    {
      meta,
      body,
      wanted,
    }: { readonly meta: EntryMeta; readonly body: Uint8Array; readonly wanted?: () => boolean },
  ): Promise<PutResult> {
    if (this.#closed || wanted?.() === false) return { stored: false, reason: 'invalidated' };
    const bodyBytes = body.byteLength;
    const metaJson = JSON.stringify(meta);
    const sizeBytes = bodyBytes + Buffer.byteLength(metaJson) + Buffer.byteLength(key) + ENTRY_OVERHEAD_BYTES;
    if (sizeBytes > this.#o.maxSizeBytes) return { stored: false, reason: 'too-large' };
    const id = randomUUID();
    const touched = this.#drainTouched();
    this.#tier?.delete(key);
    try {
      const r = await this.#run(
        'ghCachePut',
        key,
        id,
        meta.varyKey,
        metaJson,
        sizeBytes,
        this.#ttlMs(meta),
        meta.discardAfterMs ?? '',
        this.#o.maxSizeBytes,
        this.#maxVariants,
        this.#ix(key, meta, sizeBytes),
        body,
        touched.length,
        ...touched,
      );
      if (Number(r[0]) < 0) return { stored: false, reason: 'too-large' };
    } catch (err) {
      if (err instanceof RedisUnavailable) return UNAVAILABLE;
      throw err;
    }
    this.#tier?.delete(key);
    return { stored: true, entry: { key, id, meta, bodyBytes } };
  }

  async #update(key: string, id: string, meta: EntryMeta): Promise<PutResult> {
    this.#tier?.delete(key);
    const metaJson = JSON.stringify(meta);
    const sizeBytes = Buffer.byteLength(metaJson) + Buffer.byteLength(key) + ENTRY_OVERHEAD_BYTES;
    try {
      const r = await this.#run(
        'ghCacheUpdate',
        key,
        id,
        metaJson,
        sizeBytes,
        this.#ttlMs(meta),
        meta.discardAfterMs ?? '',
        this.#o.maxSizeBytes,
        this.#ix(key, meta, sizeBytes),
      );
      this.#tier?.delete(key);
      return r.length > 1 ? { stored: true, entry: { key, id, meta, bodyBytes: Number(r[1]) } } : GONE;
    } catch (err) {
      if (err instanceof RedisUnavailable) return UNAVAILABLE;
      throw err;
    }
  }

  async #delete(key: string, id?: string): Promise<number> {
    this.#tier?.delete(key);
    try {
      return Number((await this.#run('ghCacheDelete', key, id ?? ''))[1]);
    } catch (err) {
      // Down: the entries stay until they expire (README: invalidation during an outage).
      if (!(err instanceof RedisUnavailable)) throw err;
      return 0;
    }
  }

  async #purge(filter: PurgeFilter): Promise<number> {
    if ('all' in filter) this.#tier?.clear();
    else if ('tag' in filter) {
      for (const [key, snap] of this.#tier?.entries() ?? []) {
        if (snap.entries.some((e) => e.meta.tags?.includes(filter.tag))) this.#tier?.delete(key);
      }
    } else
      for (const key of [...(this.#tier?.keys() ?? [])])
        if (key.startsWith(filter.keyPrefix)) this.#tier?.delete(key);
    const [kind, value] =
      'tag' in filter ? ['tag', filter.tag] : 'all' in filter ? ['all', ''] : ['prefix', filter.keyPrefix];
    // Down: the purge fails loudly (the PURGE answers 500), the caller must retry.
    const r = await this.#run('ghCachePurge', kind, value);
    return Number(r[1]);
  }

  async #prune(): Promise<number> {
    try {
      const touched = this.#drainTouched();
      if (touched.length > 0) await this.#run('ghCacheTouch', ...touched);
      return Number((await this.#run('ghCachePrune', this.#nowMs()))[1]);
    } catch (err) {
      if (err instanceof RedisUnavailable) return 0;
      throw err;
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#subscribed = false;
    clearTimeout(this.#touchTimer);
    clearTimeout(this.#hungTimer);
    this.#stopWatching?.();
    this.#tier?.clear();
    if (this.#tier !== undefined) {
      const sub = this.#o.redis.subscriber();
      sub.off('message', this.#onMessage);
      sub.off('close', this.#onSubscriberDown);
      sub.off('ready', this.#onSubscriberReady);
      sub.setMaxListeners(Math.max(10, sub.getMaxListeners() - 3));
      await this.#timed(sub.unsubscribe(this.#channel)).catch(() => {});
    }
  }

  /** PEXPIRE: the entry goes from Redis once nothing can use it; 0 for no expiry. */
  #ttlMs(meta: EntryMeta): number {
    if (meta.discardAfterMs === undefined) return 0;
    return Math.max(1, Math.ceil(meta.discardAfterMs - this.#nowMs()));
  }

  #ix(key: string, meta: EntryMeta, sizeBytes: number): string {
    return JSON.stringify({ k: key, v: meta.varyKey, t: [...new Set(meta.tags ?? [])], s: sizeBytes });
  }

  #drainTouched(): string[] {
    const ids = [...this.#touched];
    this.#touched.clear();
    return ids;
  }

  #scheduleTouchFlush(): void {
    if (this.#touchTimer !== undefined) return;
    this.#touchTimer = setTimeout(() => {
      this.#touchTimer = undefined;
      const ids = this.#drainTouched();
      if (ids.length > 0 && !this.#closed) this.#run('ghCacheTouch', ...ids).catch(() => {});
    }, TOUCH_FLUSH_MS);
    this.#touchTimer.unref?.();
  }
}
