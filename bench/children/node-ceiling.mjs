// The Node ceiling: bare node:http answering every request with the same 1 KB buffer from memory.
import http from 'node:http';
import { listen } from './runtime.mjs';

const body = Buffer.alloc(1024, 'x');
const headers = { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': String(body.length) };

listen(
  http.createServer((_req, res) => {
    res.writeHead(200, headers);
    res.end(body);
  }),
);
