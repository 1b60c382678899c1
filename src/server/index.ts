// The server layer's public face, what src/index.ts (gatehouse-http) and src/node.ts (gatehouse-http/node)
// export from it. Where things are: core/ is the pipeline createHandler builds (the one entry, the steps'
// contract, errors, response fields); steps/ the policy steps, one file each, and their order; static/,
// proxy/, websocket/ and routes/ the handlers; tls/ the TLS listener, HTTP/2, ACME and session tickets
// (the certificate tooling is src/certs/); ops/ logs, metrics and health; app/ the listener
// createGatehouse puts around the core; redis/ the shared connections.
// files/ the file access the static handler reads through (node:fs by default).
export { createGatehouse, type Gatehouse, type GatehouseDeps } from './app/gatehouse.js';
export { createHandler, type GatehouseHandler } from './app/handler.js';
export type { CacheRule, ServerOptions } from './app/options.js';
export {
  createStaticHandler,
  type RequestListener,
  type StandaloneStaticHandler,
  serveSteps,
} from './app/standalone.js';
export type { Logger, MountFacts } from './core/context.js';
export { belowMount, normalMount } from './core/mount.js';
export type { DirEntry, FileAccess, FileStats, OpenFile } from './files/access.js';
export { createNodeFiles, type NodeFilesOptions, nodeFiles } from './files/node.js';
export { createLogger } from './ops/log.js';
export { type FileReply, type Reply, type ReplyHeaders, reply } from './routes/reply.js';
export type { Route } from './routes/routes.js';
export { AssetPathError, type AssetUrlServer, assetUrl, assetVersion } from './static/asset-url.js';
export { hashFile } from './static/content-hashes.js';
export {
  entryFor,
  entryMatches,
  isManifestName,
  MANIFEST_MIN_FILE_BYTES,
  MANIFEST_NAME,
  type ManifestEntry,
  readManifest,
  updateManifest,
} from './static/hash-manifest.js';
export { mediaInfo } from './static/media.js';
export { createZstdCompress, ZSTD_AVAILABLE, zstdCompress } from './static/zstd.js';
export type { TlsListener, TlsServer } from './tls/listener.js';
export type { AcmeOptions, TlsOptions } from './tls/options.js';
export type { WebSocketEndpoint, WebSocketHandler } from './websocket/index.js';
export { createWebSocketEndpoints, WebSocketConfigError } from './websocket/index.js';
