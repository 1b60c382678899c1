// A node:cluster of two Gatehouse workers on one port whose session ticket secrets differ on purpose
// (worker N: 48 bytes of N), for the test that Gatehouse's key stays on: node:cluster hands each
// worker the first worker's ticket key as it listens. GET /worker answers { slot }. Prints
// `listening PORT PORT` once both workers listen. Env: SITE, TLS_CERT, TLS_KEY.
import cluster from 'node:cluster';
import { parseConfig, toServerOptions } from '../../src/config/load.js';
import { createGatehouse } from '../../src/server/app/gatehouse.js';

if (cluster.isPrimary) {
  const ports: number[] = [];
  for (const slot of [1, 2]) cluster.fork({ TICKET_SLOT: String(slot) });
  cluster.on('message', (_w, m: { port?: number }) => {
    if (m.port !== undefined) ports.push(m.port);
    if (ports.length === 2) process.stdout.write(`listening ${ports.join(' ')}\n`);
  });
  process.on('SIGTERM', () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
    process.exit(0);
  });
} else {
  const slot = Number(process.env.TICKET_SLOT);
  const c = parseConfig({
    root: process.env.SITE,
    log: { format: 'off' },
    listen: { host: '127.0.0.1', port: 0 },
    tls: { cert: process.env.TLS_CERT, key: process.env.TLS_KEY },
  });
  const o = toServerOptions(c);
  const tls = o.tls!;
  o.tls = { ...tls, sessionTickets: { ...tls.sessionTickets!, secret: Buffer.alloc(48, slot) } };
  const app = createGatehouse(o, { routes: [{ path: '/worker', handler: () => ({ slot }) }] });
  const { port } = await app.listen();
  process.send!({ port });
}
