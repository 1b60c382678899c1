// Shared start-up for the peer servers the benchmark runs as child processes: listen on 127.0.0.1 (port from
// argv[3] or 0), print the same ready line as `gatehouse serve`, and exit when the harness goes away.
// Proxies get their upstream's base URL in BENCH_UPSTREAM.
export const root = process.argv[2];
export const requestedPort = Number(process.argv[3] ?? 0);

/** The upstream base URL a proxy forwards to (env BENCH_UPSTREAM, http://127.0.0.1:PORT). */
export function upstream() {
  const url = process.env.BENCH_UPSTREAM;
  if (!url) throw new Error('BENCH_UPSTREAM is not set');
  return url;
}

/** Prints the ready line the harness waits for. */
export function announce(port) {
  process.stdout.write(`listening on http://127.0.0.1:${port}\n`);
}

/** Exit on SIGTERM/SIGINT and when our stdin pipe closes (the harness died without cleaning up). */
export function exitWithParent() {
  const bye = () => process.exit(0);
  process.on('SIGTERM', bye);
  process.on('SIGINT', bye);
  process.stdin.on('end', bye);
  process.stdin.on('error', bye);
  process.stdin.resume();
}

/** Listens a node:http server and announces it. */
export function listen(server) {
  exitWithParent();
  server.listen(requestedPort, '127.0.0.1', () => announce(server.address().port));
}

/** A flat [name, value, ...] field list (BENCH_FIELDS) as the object a handler hands to writeHead. */
export function fieldsObject(flat) {
  const o = {};
  for (let i = 0; i < flat.length; i += 2) o[flat[i]] = flat[i + 1];
  return o;
}
