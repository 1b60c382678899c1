// Shared start-up of the WebSocket echo servers that bench/ws-echo.mjs runs as child processes: a node:http
// server on 127.0.0.1 (a free port), the same ready line as `gatehouse serve`, and exit when the harness
// goes away (SIGTERM/SIGINT, or our stdin pipe closing because the harness died).
import { createServer } from 'node:http';

/** Listens an HTTP server whose 'upgrade' events go to `onUpgrade` (false: not ours, destroyed). */
export function listenUpgrades(onUpgrade) {
  const bye = () => process.exit(0);
  process.on('SIGTERM', bye);
  process.on('SIGINT', bye);
  process.stdin.on('end', bye);
  process.stdin.on('error', bye);
  process.stdin.resume();
  const server = createServer((_req, res) => {
    res.statusCode = 404;
    res.end();
  });
  server.on('upgrade', (req, socket, head) => {
    if (!onUpgrade(req, socket, head)) socket.destroy();
  });
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`);
  });
}
