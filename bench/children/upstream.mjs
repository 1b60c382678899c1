// The proxy and cache scenarios' upstream: bare node:http answering GET /1k or /1k.txt (any query) with the
// same 1 KB buffer from memory, keep-alive, and GET /cached/1k with that buffer plus
// `Cache-Control: public, max-age=3600`, so shared caches store it and answer the timed requests themselves.
// Anything else gets 404, so a proxy that forwards the wrong path (prefix not stripped) fails the harness's
// check instead of being timed. keepAliveTimeout is raised to 65 s so an idle proxy's pooled connections are
// not closed under it between measurements (Node's default is 5 s).
import http from 'node:http';
import { listen } from './runtime.mjs';

const body = Buffer.alloc(1024, 'u');
const headers = { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': String(body.length) };
const cachedHeaders = { ...headers, 'Cache-Control': 'public, max-age=3600' };
const PATH = /^\/1k(?:\.txt)?(?:\?|$)/;
const CACHED_PATH = /^\/cached\/1k(?:\?|$)/;

const server = http.createServer((req, res) => {
  if (req.method === 'GET' || req.method === 'HEAD') {
    const head = PATH.test(req.url) ? headers : CACHED_PATH.test(req.url) ? cachedHeaders : undefined;
    if (head) {
      res.writeHead(200, head);
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
  }
  res.writeHead(404, { 'Content-Length': '0' });
  res.end();
});
server.keepAliveTimeout = 65_000;
listen(server);
