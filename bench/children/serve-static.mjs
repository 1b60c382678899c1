// Peer: serve-static@2 (Express's static middleware) on bare node:http; the middleware is created once.
import http from 'node:http';
import serveStatic from 'serve-static';
import { listen, root } from './runtime.mjs';

const serve = serveStatic(root);
listen(
  http.createServer((req, res) =>
    serve(req, res, () => {
      res.statusCode = 404;
      res.end();
    }),
  ),
);
