// Options the server layer runs on. src/config/ validates user input into these shapes.

export interface ListenOptions {
  host: string;
  port: number;
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
}

export interface CacheRule {
  glob?: string | string[] | undefined;
  regex?: string | undefined;
  contentType?: string | string[] | undefined;
  hashed?: boolean | undefined;
  cacheControl: string;
  expires?: boolean | undefined;
}

export interface LimitsOptions {
  maxUrlBytes: number;
  maxHeaderBytes: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  shutdownTimeoutMs: number;
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
}
