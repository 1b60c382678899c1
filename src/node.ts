// gatehouse-http/node: the request pipeline as a Node (req, res, next) handler, for apps that
// own their server. The same config schema (and errors) as the CLI and createServer.
import { resolve } from 'node:path';
import { parseConfig, toServerOptions } from './config/load.js';
import type { GatehouseConfigInput } from './config/schema.js';
import { createHandler as buildHandler, type GatehouseDeps, type GatehouseHandler } from './server/index.js';

export type { GatehouseConfigInput } from './config/schema.js';
export type { GatehouseDeps, GatehouseHandler } from './server/index.js';

/**
 * Validates `input` (ConfigError, as `gatehouse serve --config` reports it) and builds the pipeline:
 * `handle(req, res, next?)` for requests, `upgrade(req, socket, head)` for the server's 'upgrade' event,
 * `close()` when the app shuts down.
 */
export function createHandler(input: GatehouseConfigInput = {}, deps: GatehouseDeps = {}): GatehouseHandler {
  const config = parseConfig(input);
  return buildHandler({ ...toServerOptions(config), root: resolve(config.root) }, deps);
}
