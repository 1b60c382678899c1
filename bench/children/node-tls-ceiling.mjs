// The Node ceilings over TLS: bare node:https (BENCH_TLS_MODE=https) or node:http2 createSecureServer
// (BENCH_TLS_MODE=h2) answering every request with the same 1 KB buffer from memory, with Node's
// defaults otherwise (session tickets, ciphers). Certificate and key paths in BENCH_TLS_CERT / _KEY.
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import { exitWithParent, requestedPort } from './runtime.mjs';

const body = Buffer.alloc(1024, 'x');
// BENCH_TLS_FIELDS=gatehouse: the fields Gatehouse sends for the fixture's 1k.txt (validators, caching,
// Vary, nosniff), so the row shows what those fields cost in Node apart from Gatehouse's own code.
const headers =
  process.env.BENCH_TLS_FIELDS === 'gatehouse'
    ? {
        'content-type': 'text/plain; charset=utf-8',
        'content-length': String(body.length),
        etag: '"SavWW79_fkDHBVCT7S4_118vYC8"',
        'cache-control': 'no-cache',
        'last-modified': 'Wed, 25 Nov 2026 01:49:35 GMT',
        vary: 'Accept-Encoding',
        'accept-ranges': 'bytes',
        'x-content-type-options': 'nosniff',
      }
    : { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(body.length) };
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
