// The proxy scenarios' upstream: bare node:http answering GET /1k or /1k.txt (any query) with the same 1 KB
// buffer from memory, keep-alive. Anything else gets 404, so a proxy that forwards the wrong path (prefix
// not stripped) fails the harness's check instead of being timed. keepAliveTimeout is raised to 65 s so an
// idle proxy's pooled connections are not closed under it between measurements (Node's default is 5 s).
import http from 'node:http';
import { listen } from './runtime.mjs';

const body = Buffer.alloc(1024, 'u');
const headers = { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': String(body.length) };
const PATH = /^\/1k(?:\.txt)?(?:\?|$)/;

const server = http.createServer((req, res) => {
  if ((req.method === 'GET' || req.method === 'HEAD') && PATH.test(req.url)) {
    res.writeHead(200, headers);
    res.end(req.method === 'HEAD' ? undefined : body);
    return;
  }
  res.writeHead(404, { 'Content-Length': '0' });
  res.end();
});
server.keepAliveTimeout = 65_000;
listen(server);
