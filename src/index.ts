// gatehouse: the server library.

import { resolve } from 'node:path';
import { parseConfig, toServerOptions } from './config/load.js';
import type { GatehouseConfigInput } from './config/schema.js';
import { createGatehouse, type Gatehouse, type GatehouseDeps } from './server/app.js';

export { ConfigError, loadConfig, parseConfig } from './config/load.js';
export type { GatehouseConfig, GatehouseConfigInput } from './config/schema.js';
export { configSchema } from './config/schema.js';
export type { Gatehouse, GatehouseDeps } from './server/app.js';
export { type DiskTier, type DiskTierOptions, diskTier } from './server/disk-tier.js';
export { createLogger } from './server/log.js';
export type { CacheRule, ServerOptions } from './server/options.js';
export { type Reply, type ReplyHeaders, reply } from './server/reply.js';
export type { Route } from './server/routes.js';
export { AssetPathError, type AssetUrlServer, assetUrl } from './server/static/asset-url.js';
export { createStaticHandler } from './server/static/handler.js';

/** Creates a Gatehouse server from config input (validated; defaults filled in). Call listen(). */
export function createServer(input: GatehouseConfigInput = {}, deps: GatehouseDeps = {}): Gatehouse {
  const config = parseConfig(input);
  return createGatehouse({ ...toServerOptions(config), root: resolve(config.root) }, deps);
}
export type { WebSocketEndpoint, WebSocketHandler } from './server/websocket.js';
export { createWebSocketEndpoints, WebSocketConfigError } from './server/websocket.js';
