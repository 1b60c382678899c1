// gatehouse: the server library.

import { resolve } from 'node:path';
import { parseConfig, toServerOptions } from './config/load.js';
import type { GatehouseConfigInput } from './config/schema.js';
import { createGatehouse, type Gatehouse, type GatehouseDeps } from './server/index.js';

export type { InspectResult } from './certs/inspect.js';
export type { IssuedPem, IssueOptions } from './certs/x509.js';
export { type DiskTier, type DiskTierOptions, diskTier } from './client/node/disk-tier.js';
export { ConfigError, loadConfig, parseConfig } from './config/load.js';
export type { GatehouseConfig, GatehouseConfigInput } from './config/schema.js';
export { configSchema } from './config/schema.js';
export type { CheckOptions, Finding, Report } from './inspect/index.js';
export {
  type AcmeOptions,
  AssetPathError,
  type AssetUrlServer,
  assetUrl,
  type CacheRule,
  createBunFiles,
  createDenoFiles,
  createLogger,
  createNodeFiles,
  createStaticHandler,
  createWebSocketEndpoints,
  type DenoFilesOptions,
  type DirEntry,
  type FileAccess,
  type FileStats,
  type Gatehouse,
  type GatehouseDeps,
  type NodeFilesOptions,
  nodeFiles,
  type OpenFile,
  type Reply,
  type ReplyHeaders,
  type Route,
  reply,
  type ServerOptions,
  type TlsListener,
  type TlsOptions,
  type TlsServer,
  WebSocketConfigError,
  type WebSocketEndpoint,
  type WebSocketHandler,
} from './server/index.js';

/** Creates a Gatehouse server from config input (validated; defaults filled in). Call listen(). */
export function createServer(input: GatehouseConfigInput = {}, deps: GatehouseDeps = {}): Gatehouse {
  const config = parseConfig(input);
  return createGatehouse({ ...toServerOptions(config), root: resolve(config.root) }, deps);
}

// The certificate tools load @peculiar/x509 when first called, not with the server (~16 MB, ~0.1 s).
type Dev = typeof import('./certs/dev-ca.js');
type Inspect = typeof import('./certs/inspect.js');
type Check = typeof import('./inspect/index.js');
type X509 = typeof import('./certs/x509.js');

/** A certificate (ECDSA P-256 by default), self-signed or from `issuer` (certs/x509.ts). */
export async function issueCertificate(
  ...a: Parameters<X509['issueCertificate']>
): ReturnType<X509['issueCertificate']> {
  return (await import('./certs/x509.js')).issueCertificate(...a);
}
/** The local development CA and its localhost leaf, made once (certs/dev-ca.ts). */
export async function ensureDevCertificate(
  ...a: Parameters<Dev['ensureDevCertificate']>
): ReturnType<Dev['ensureDevCertificate']> {
  return (await import('./certs/dev-ca.js')).ensureDevCertificate(...a);
}
/** How to trust the development CA, per system (the lines `serve --https` prints). */
export async function devTrustInstructions(...a: Parameters<Dev['devTrustInstructions']>): Promise<string> {
  return (await import('./certs/dev-ca.js')).devTrustInstructions(...a);
}
/** What `gatehouse cert FILE` checks. */
export async function inspectFile(
  ...a: Parameters<Inspect['inspectFile']>
): ReturnType<Inspect['inspectFile']> {
  return (await import('./certs/inspect.js')).inspectFile(...a);
}
/** What `gatehouse cert HOST[:PORT]` checks, live. */
export async function inspectLive(
  ...a: Parameters<Inspect['inspectLive']>
): ReturnType<Inspect['inspectLive']> {
  return (await import('./certs/inspect.js')).inspectLive(...a);
}
/** `gatehouse check URL` as a library: requests the site and returns the report (src/inspect). */
export async function checkUrl(...a: Parameters<Check['checkUrl']>): ReturnType<Check['checkUrl']> {
  return (await import('./inspect/index.js')).checkUrl(...a);
}
