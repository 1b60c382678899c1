// A Gatehouse in a process of its own, for the pipelining memory test (test/security/
// pipelining-memory.test.ts): the RSS it reports is the server's alone. Prints `port N` when it
// listens; each `stats` line on stdin gets one JSON line back (after a full GC, so live memory is
// what counts): rss, requests parsed, connections that pipelined past `over`, bytes read.
// PIPELINING_FILE_BYTES: the size of /small.txt (5).
import type { Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { makeSite, startServer } from './http.js';

const over = Number(process.env.PIPELINING_OVER ?? 16);
const site = makeSite({ 'small.txt': Buffer.alloc(Number(process.env.PIPELINING_FILE_BYTES ?? 5), 97) });
const s = await startServer(site, {});
const parsed = new Map<Socket, number>();
const sockets = new Set<Socket>();
s.app.server.on('connection', (c: Socket) => sockets.add(c));
s.app.server.on('request', (req) => {
  const c = req.socket as Socket;
  parsed.set(c, (parsed.get(c) ?? 0) + 1);
});
process.stdout.write(`port ${s.port}\n`);
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line !== 'stats') return;
  (globalThis as { gc?: () => void }).gc?.();
  let requests = 0;
  let pipelined = 0;
  for (const n of parsed.values()) {
    requests += n;
    if (n > over) pipelined++;
  }
  let bytesRead = 0;
  for (const c of sockets) bytesRead += c.bytesRead;
  const stats = { rss: process.memoryUsage().rss, requests, pipelined, bytesRead };
  process.stdout.write(`${JSON.stringify(stats)}\n`);
});
process.stdin.on('end', () => process.exit(0));
