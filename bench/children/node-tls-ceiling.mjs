// The Node ceilings over TLS: bare node:https (BENCH_TLS_MODE=https) or node:http2 createSecureServer
// (BENCH_TLS_MODE=h2) answering every request with the same 1 KB buffer from memory, with Node's
// defaults otherwise (session tickets, ciphers). Certificate and key paths in BENCH_TLS_CERT / _KEY.
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import { exitWithParent, requestedPort } from './runtime.mjs';

const body = Buffer.alloc(1024, 'x');
const headers = { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(body.length) };
const tls = {
  cert: readFileSync(process.env.BENCH_TLS_CERT),
  key: readFileSync(process.env.BENCH_TLS_KEY),
};
const handler = (_req, res) => {
  res.writeHead(200, headers);
  res.end(body);
};
const mode = process.env.BENCH_TLS_MODE;
if (mode !== 'https' && mode !== 'h2') throw new Error(`BENCH_TLS_MODE must be https or h2, got ${mode}`);
const server = mode === 'h2' ? http2.createSecureServer(tls, handler) : https.createServer(tls, handler);
exitWithParent();
server.listen(requestedPort, '127.0.0.1', () =>
  process.stdout.write(`listening on https://127.0.0.1:${server.address().port}\n`),
);
