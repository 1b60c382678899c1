// Options the server layer runs on. src/config/ validates user input into these shapes.
import type { AuthRule } from './auth.js';
import type { CorsOptions } from './cors.js';
import type { HeaderRule } from './headers.js';
import type { JsonpOptions } from './jsonp.js';
import type { RateLimitOptions } from './limits.js';
import type { ProxyRouteOptions } from './proxy/handler.js';
import type { RedirectRule } from './redirects.js';
import type { WebSocketEndpoint } from './websocket.js';

export interface ListenOptions {
  host: string;
  port: number;
  /** Answer every request on this listener with 308 to https:// (port in the Location, allowed hosts). */
  redirectToHttps?: { port?: number | undefined; hosts?: string[] | undefined } | undefined;
}

export interface StaticOptions {
  spa: boolean;
  spaFallback: string;
  assetsDir: string;
  etag: 'strong' | 'weak';
  lastModified: boolean;
  index: string[];
  dotfiles: 'ignore' | 'allow';
  followSymlinks: boolean;
  precompressed: boolean;
  compress: boolean;
  compressMinBytes: number;
  notFoundPage: string;
  memoryCacheBytes: number;
  maxCachedFileBytes: number;
  revalidateMs: number;
  trailingSlash: 'add' | 'remove' | 'ignore';
  indexRedirect: boolean;
}

export interface CacheRule {
  glob?: string | string[] | undefined;
  regex?: string | undefined;
  contentType?: string | string[] | undefined;
  hashed?: boolean | undefined;
  cacheControl: string;
  expires?: boolean | undefined;
  override?: boolean | undefined;
}

export interface LimitsOptions {
  maxUrlBytes: number;
  maxHeaderBytes: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  shutdownTimeoutMs: number;
  /** Request bodies over this get 413 on endpoints that read bodies. */
  maxBodyBytes: number;
  /** Open connections at most (0: no limit); more are refused. */
  maxConnections: number;
  rateLimit?: RateLimitOptions | undefined;
}

export interface LogOptions {
  format: 'json' | 'pretty' | 'off';
  level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';
}

export interface ServerOptions {
  /** Absolute path of the folder to serve. */
  root: string;
  listen: ListenOptions;
  static: StaticOptions;
  cachePolicy: CacheRule[];
  limits: LimitsOptions;
  log: LogOptions;
  cors?: CorsOptions | undefined;
  jsonp?: JsonpOptions | undefined;
  redirects: RedirectRule[];
  auth: AuthRule[];
  headers: HeaderRule[];
  proxy: ProxyRouteOptions[];
  websocket: WebSocketEndpoint[];
  /** Addresses or CIDRs of proxies whose X-Forwarded-For / Forwarded is believed. */
  trustProxy: string[];
}
