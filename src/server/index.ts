// The server layer's public face, what src/index.ts (gatehouse-http) and src/node.ts (gatehouse-http/node)
// export from it. Where things are: core/ is the pipeline createHandler builds (the one entry, the steps'
// contract, errors, response fields); steps/ the policy steps, one file each, and their order; static/,
// proxy/, websocket/ and routes/ the handlers; tls/ the TLS listener, HTTP/2, ACME and session tickets
// (the certificate tooling is src/certs/); ops/ logs, metrics and health; app/ the listener
// createGatehouse puts around the core; redis/ the shared connections.
export { createGatehouse, type Gatehouse, type GatehouseDeps } from './app/gatehouse.js';
export { createHandler, type GatehouseHandler } from './app/handler.js';
export type { CacheRule, ServerOptions } from './app/options.js';
export { createStaticHandler, type RequestListener, serveSteps } from './app/standalone.js';
export type { Logger, MountFacts } from './core/context.js';
export { belowMount, normalMount } from './core/mount.js';
export { createLogger } from './ops/log.js';
export { type FileReply, type Reply, type ReplyHeaders, reply } from './routes/reply.js';
export type { Route } from './routes/routes.js';
export { AssetPathError, type AssetUrlServer, assetUrl } from './static/asset-url.js';
export { MANIFEST_NAME } from './static/hash-manifest.js';
export {
  CODINGS,
  type Coding,
  DEFAULT_MIN_BYTES,
  formatKB,
  formatSummary,
  type PrecompressEvents,
  type PrecompressOptions,
  type PrecompressReport,
  precompressDir,
  type SiblingAction,
} from './static/precompress.js';
export { ZSTD_AVAILABLE } from './static/zstd.js';
export type { TlsListener, TlsServer } from './tls/listener.js';
export type { AcmeOptions, TlsOptions } from './tls/options.js';
export type { WebSocketEndpoint, WebSocketHandler } from './websocket/index.js';
export { createWebSocketEndpoints, WebSocketConfigError } from './websocket/index.js';
