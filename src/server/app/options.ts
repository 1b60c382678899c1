// Options the server layer runs on, gathered from the features that own them (each feature
// defines its own type). src/config/ validates user input into these shapes.

import type { HealthOptions } from '../ops/health.js';
import type { LogOptions } from '../ops/log.js';
import type { MetricsOptions } from '../ops/metrics.js';
import type { ProxyRouteOptions } from '../proxy/handler.js';
import type { RedisOptions } from '../redis/connection.js';
import type { StaticOptions } from '../static/files.js';
import type { CacheRule } from '../static/policy.js';
import type { AuthRule } from '../steps/auth.js';
import type { CorsOptions } from '../steps/cors.js';
import type { HeaderRule } from '../steps/headers.js';
import type { JsonpOptions } from '../steps/jsonp.js';
import type { LimitsOptions } from '../steps/limits.js';
import type { RedirectRule } from '../steps/redirects.js';
import type { TlsOptions } from '../tls/options.js';
import type { WebSocketEndpoint } from '../websocket/index.js';

export type { CacheRule, LimitsOptions, LogOptions, StaticOptions };

export interface ListenOptions {
  host: string;
  port: number;
  /** Answer every request on this listener with 308 to https:// (port in the Location, allowed hosts). */
  redirectToHttps?: { port?: number | undefined; hosts?: string[] | undefined } | undefined;
  /** With tls: a plain-HTTP listener beside the HTTPS one (ACME HTTP-01, then 308 to https). */
  httpPort?: number | undefined;
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
  /** HTTPS (and HTTP/2) on the main listener. */
  tls?: TlsOptions | undefined;
  /** The Redis server instances share (redis/connection.ts). */
  redis?: RedisOptions | undefined;
  /** /healthz and /readyz (ops/health.ts); off when absent. */
  health?: HealthOptions | undefined;
  /** /metrics (ops/metrics.ts); off when absent: no hook is installed. */
  metrics?: MetricsOptions | undefined;
}
