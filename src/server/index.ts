// The server layer's public face, what src/index.ts (gatehouse-http), src/node.ts (gatehouse-http/node),
// the adapters, config and cli import; nothing outside src/server/ reaches past it. Where things are:
// core/ the kernel (the one entry, the request context, the plug-in shape, errors, response fields);
// ops/log, redis/, files/ the services; static/, proxy/, websocket/, routes/, steps/, ops/ the features;
// node/ the Node transport; tls/ HTTPS, HTTP/2 and ACME on it; app/ the composition root (the table of
// features, createHandler, createGatehouse). CONTRIBUTING.md has the floors and how to add a feature.

export { createFetchHandler, type FetchDeps, type FetchHandler, fetchFaceRefusals } from './app/fetch.js';
export { createGatehouse, type Gatehouse, type GatehouseDeps } from './app/gatehouse.js';
export { createHandler, type GatehouseHandler } from './app/handler.js';
export {
  createNativeServer,
  http3Refusal,
  type NativeRuntime,
  type NativeServer,
  nativeRefusals,
  nativeRuntime,
} from './app/native.js';
export type { CacheRule, ServerOptions } from './app/options.js';
export {
  createStaticHandler,
  type RequestListener,
  type StandaloneStaticHandler,
  serveSteps,
} from './app/standalone.js';
export type { Logger, MountFacts } from './core/context.js';
export { belowMount, normalMount } from './core/mount.js';
export type { ConnectionInfo, UpgradeWebSocket } from './fetch/entry.js';
export type { DirEntry, FileAccess, FileStats, OpenFile } from './files/access.js';
export { createBunFiles } from './files/bun.js';
export { createDenoFiles, type DenoFilesOptions } from './files/deno.js';
export { createNodeFiles, type NodeFilesOptions, nodeFiles } from './files/node.js';
export { createLogger, dropWriteErrors } from './ops/log.js';
export { primaryMetrics } from './ops/metrics-cluster.js';
export { type FileReply, type Reply, type ReplyHeaders, reply } from './routes/reply.js';
export type { Route } from './routes/routes.js';
export { AssetPathError, type AssetUrlServer, assetUrl, assetVersion } from './static/asset-url.js';
export { HASH_CHARS, hashFile } from './static/content-hashes.js';
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
export { authRulesIssues, DEFAULT_REALM, FAILURE_DEFAULTS } from './steps/auth-options.js';
export { headerRuleIssues, type RuleIssue } from './steps/headers-options.js';
export { DEFAULT_MAX_URL_BYTES, HTTP2_DEFAULTS, RATE_LIMIT_DEFAULTS } from './steps/limits-options.js';
export { hashPassword, parseScryptHash, SCRYPT_DEFAULTS } from './steps/password-hash.js';
export { blockedForHttp2, DEFAULT_CIPHERS, isTls13Suite, knownCipher } from './tls/ciphers.js';
export type { TlsListener, TlsServer } from './tls/listener.js';
export {
  type AcmeOptions,
  SECRET_MAX_BYTES,
  SECRET_MIN_BYTES,
  SESSION_TICKET_DEFAULTS,
  type SessionTicketOptions,
  type TlsOptions,
} from './tls/options.js';
export { TICKET_KEY_BYTES, TICKET_SECRET_ENV } from './tls/session-tickets.js';
export type { WebSocketEndpoint, WebSocketHandler } from './websocket/index.js';
export { createWebSocketEndpoints, WebSocketConfigError } from './websocket/index.js';
