// Proxy route table: options compiled once (upstream pools, rewrite, cache), looked up by prefix.
import type { Logger } from '../ops/log.js';
import type { RedisPool } from '../redis/pool.js';
import { createRouteCache, type ProxyCacheOptions, type RouteCache } from './cache/index.js';
import { UpstreamSet } from './upstreams.js';

export interface ProxyRouteOptions {
  prefix: string;
  upstream: string | string[];
  stripPrefix: boolean;
  rewrite?: { from: string; to: string } | undefined;
  changeOrigin: boolean;
  xForwarded: boolean;
  forwarded: boolean;
  via: boolean;
  rewriteLocation: boolean;
  rewriteCookies: boolean;
  websocket: boolean;
  /** Upgraded (tunnelled) connections open to one upstream at most; more handshakes get 503. */
  maxUpgrades: number;
  balance: 'round-robin' | 'least-busy';
  timeouts: { connectMs: number; headersMs: number; idleMs: number; queueMs: number };
  retry: boolean;
  health: { failures: number; cooldownMs: number; path?: string | undefined; intervalMs: number };
  /** For responses without Cache-Control; null leaves them as the upstream sent them. */
  cacheControl: string | null;
  /** Idle keep-alive connections kept per upstream (not a concurrency limit). */
  connections: number;
  /** Concurrent connections per upstream at most; requests beyond wait up to queueMs, then 503. */
  maxConnections?: number | undefined;
  /** Response bytes buffered for a slow client before the upstream is paused. */
  bufferBytes: number;
  /** Request bodies over this get 413; undefined: no limit. */
  maxBodyBytes?: number | undefined;
  /** Forward TRACE (otherwise 405). */
  allowTrace: boolean;
  /** Shared cache (RFC 9111) of upstream responses; off unless `enabled`. */
  cache?: ProxyCacheOptions | undefined;
}

export interface Route {
  readonly o: ProxyRouteOptions;
  /** Prefix without a trailing slash ('' for the root). */
  readonly prefix: string;
  readonly upstreams: UpstreamSet;
  readonly rewrite: { re: RegExp; to: string } | undefined;
  /** The shared cache, when `cache.enabled`. */
  readonly cache: RouteCache | undefined;
}

/** Compiles the route options, longest prefix first. */
export function compileRoutes(
  routes: readonly ProxyRouteOptions[],
  logger: Logger,
  redis?: RedisPool,
): Route[] {
  return routes
    .map((o) => ({
      o,
      prefix: o.prefix.replace(/\/+$/, ''),
      upstreams: new UpstreamSet({
        urls: Array.isArray(o.upstream) ? o.upstream : [o.upstream],
        balance: o.balance,
        connectTimeoutMs: o.timeouts.connectMs,
        connections: o.connections,
        maxConnections: o.maxConnections,
        queueMs: o.timeouts.queueMs,
        failures: o.health.failures,
        cooldownMs: o.health.cooldownMs,
        healthPath: o.health.path,
        healthIntervalMs: o.health.intervalMs,
      }),
      rewrite: o.rewrite ? { re: new RegExp(o.rewrite.from), to: o.rewrite.to } : undefined,
      cache: o.cache?.enabled
        ? createRouteCache(
            o.cache,
            logger,
            // The route prefix keeps each route's entries apart in a shared Redis.
            redis === undefined ? undefined : { link: () => redis.get(o.cache?.redis), namespace: o.prefix },
          )
        : undefined,
    }))
    .sort((a, b) => b.prefix.length - a.prefix.length);
}

function matches(prefix: string, path: string): boolean {
  // /api matches /api, /api/..., /api?x — never /apiary.
  if (prefix === '') return true;
  if (!path.startsWith(prefix)) return false;
  const c = path.charCodeAt(prefix.length);
  return Number.isNaN(c) || c === 47 /* / */ || c === 63 /* ? */;
}

/** The route (longest prefix first) a request target belongs to. */
export function findRoute(routes: readonly Route[], url: string): Route | undefined {
  for (const r of routes) if (matches(r.prefix, url)) return r;
  return undefined;
}

/** Upstream request target for a public one (raw, still percent-encoded). */
export function upstreamTarget(
  url: string,
  prefix: string,
  o: { stripPrefix: boolean; basePath: string; rewrite?: { re: RegExp; to: string } | undefined },
): string {
  const q = url.indexOf('?');
  let path = q === -1 ? url : url.slice(0, q);
  const query = q === -1 ? '' : url.slice(q);
  if (o.stripPrefix && prefix) path = path.slice(prefix.length);
  if (!path.startsWith('/')) path = `/${path}`;
  if (o.rewrite) path = path.replace(o.rewrite.re, o.rewrite.to);
  return o.basePath + path + query;
}
