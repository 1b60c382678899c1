// Gatehouse's WebSocket echo endpoint (createWebSocketEndpoints from the build) on /echo, with the
// config defaults (1 MiB max payload, 30 s heartbeat, 1 MiB slow-consumer threshold, no compression).
//   node bench/ws/gatehouse-echo.mjs DIST_DIR
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { listenUpgrades } from './child.mjs';

const dist = resolve(process.argv[2] ?? 'dist');
// A build's module at its place since issue 28 §3, or at the place before (an older build given as DIST_DIR).
const load = (now, before) =>
  import(pathToFileURL(resolve(dist, existsSync(resolve(dist, now)) ? now : before)).href);
const { createWebSocketEndpoints } = await load('server/websocket/index.js', 'server/websocket.js');
const { websocketSchema } = await import(pathToFileURL(resolve(dist, 'config/websocket.js')).href);
// The entry's handoff (src/server/core/entry.ts): a response bound to the socket, and the tunnel taken on accept.
const { bindTunnel } = await load('server/core/entry.js', 'server/entry.js');

const quiet = { info() {}, warn() {}, error() {}, isLevelEnabled: () => false };
const endpoints = createWebSocketEndpoints(websocketSchema.parse([{ path: '/echo', mode: 'echo' }]), {
  originAllowed: () => false,
  logger: quiet,
});
listenUpgrades((req, socket, head) => {
  const { res, tunnel } = bindTunnel(req, socket, head);
  return endpoints.handleUpgrade(req, res, tunnel);
});
