// gatehouse-http/fetch: the request pipeline as a Fetch-API handler, `fetch(request, info?)` resolving to
// a Response, for Bun.serve, Deno.serve and `export default { fetch }` hosts. The same config schema
// (and errors) as the CLI and createServer.
import { resolve } from 'node:path';
import { ConfigError, parseConfig, toServerOptions } from './config/load.js';
import type { GatehouseConfigInput } from './config/schema.js';
import {
  createFetchHandler as buildFetchHandler,
  type FetchDeps,
  type FetchHandler,
  fetchFaceRefusals,
} from './server/index.js';

export type { GatehouseConfigInput } from './config/schema.js';
export type {
  ConnectionInfo,
  FetchDeps,
  FetchHandler,
  GatehouseDeps,
  UpgradeWebSocket,
} from './server/index.js';

/**
 * WebSocket endpoints need a host that switches handshakes: `deps.upgrades` says it passes
 * `info.upgradeWebSocket` with each request (createNativeServer does, on Bun.serve and Deno.serve).
 * Validates `input` (ConfigError, as `gatehouse serve --config` reports it; also for a section this face
 * cannot serve yet) and builds the pipeline: `fetch(request, info?)`, `ready()`, `close()`.
 */
export function createFetchHandler(input: GatehouseConfigInput = {}, deps: FetchDeps = {}): FetchHandler {
  const config = parseConfig(input);
  const options = { ...toServerOptions(config), root: resolve(config.root) };
  const refused = fetchFaceRefusals(options, deps);
  if (refused.length > 0) throw new ConfigError(refused.join('\n'));
  return buildFetchHandler(options, deps);
}
