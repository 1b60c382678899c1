// The Node proxy ceiling (issue 27): the naive proxy, node:http in and undici's Pool.request out, as the
// limit of what Node's HTTP stack allows. /api/... -> BENCH_UPSTREAM/... (prefix stripped), the request's
// hop-by-hop fields dropped (RFC 9110 §7.6.1: Connection and the fields it names, Keep-Alive, TE, Upgrade,
// ...) both ways, the bodies piped. Nothing else: no X-Forwarded-*, no Via, no timeouts, no limits.
import http from 'node:http';
import { pipeline } from 'node:stream';
import { Pool } from 'undici';
import { listen, upstream } from './runtime.mjs';

const HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);
const pool = new Pool(upstream(), { connections: 64 });

/** The fields minus the hop-by-hop ones and those Connection names. */
function endToEnd(raw) {
  const named = new Set();
  for (let i = 0; i < raw.length; i += 2)
    if (raw[i].toLowerCase() === 'connection')
      for (const t of raw[i + 1].split(',')) named.add(t.trim().toLowerCase());
  const out = [];
  for (let i = 0; i < raw.length; i += 2) {
    const k = raw[i].toLowerCase();
    if (!HOP.has(k) && !named.has(k)) out.push(raw[i], raw[i + 1]);
  }
  return out;
}

listen(
  http.createServer((req, res) => {
    const path = req.url.startsWith('/api/') ? req.url.slice(4) : req.url;
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    pool
      .request({ method: req.method, path, headers: endToEnd(req.rawHeaders), body: hasBody ? req : null })
      .then(
        (up) => {
          const headers = {};
          for (const [k, v] of Object.entries(up.headers)) if (!HOP.has(k)) headers[k] = v;
          res.writeHead(up.statusCode, headers);
          pipeline(up.body, res, () => {});
        },
        () => {
          res.writeHead(502).end();
        },
      );
  }),
);
