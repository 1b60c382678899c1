// Gatehouse's WebSocket echo endpoint (createWebSocketEndpoints from the build) on /echo, with the
// config defaults (1 MiB max payload, 30 s heartbeat, 1 MiB slow-consumer threshold, no compression).
//   node bench/ws/gatehouse-echo.mjs DIST_DIR
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { listenUpgrades } from './child.mjs';

const dist = resolve(process.argv[2] ?? 'dist');
// A build's module at its place now, or at an earlier place (an older build given as DIST_DIR).
const load = (...places) =>
  import(pathToFileURL(resolve(dist, places.find((p) => existsSync(resolve(dist, p))) ?? places[0])).href);
const { createWebSocketEndpoints } = await load('server/websocket/index.js', 'server/websocket.js');
const { websocketSchema } = await import(pathToFileURL(resolve(dist, 'config/websocket.js')).href);
// The Node transport's handoff (src/server/node/entry.ts): a response bound to the socket, and the tunnel
// taken on accept.
const { bindTunnel } = await load('server/node/entry.js', 'server/core/entry.js', 'server/entry.js');

const quiet = { info() {}, warn() {}, error() {}, isLevelEnabled: () => false };
const endpoints = createWebSocketEndpoints(websocketSchema.parse([{ path: '/echo', mode: 'echo' }]), {
  originAllowed: () => false,
  logger: quiet,
});
listenUpgrades((req, socket, head) => {
  const { res, tunnel } = bindTunnel(req, socket, head);
  return endpoints.handleUpgrade(req, res, tunnel);
});
