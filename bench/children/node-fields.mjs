// Same-fields references (issue 27): bare node:http sending exactly the fields Gatehouse sends, so that the
// static table separates Node's per-field cost from Gatehouse's own. BENCH_FIELDS (JSON, written by
// servers/node-fields.mjs from a probe of this build's Gatehouse) holds { ok, html, notModified }: each a
// flat [name, value, ...] list as Gatehouse sent it (Date, Connection and Keep-Alive left to Node, as for
// Gatehouse). `node-fields-ceiling` (BENCH_MODE=ceiling) answers every request with the 1 KB buffer and the
// `ok` fields (those of GET /1k.txt); `node-fields-304` (BENCH_MODE=304) answers GET /index.html with
// the file and the `html` fields, or with a 304 and the `notModified` fields when If-None-Match is its ETag.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { fieldsObject, listen, root } from './runtime.mjs';

const fields = JSON.parse(process.env.BENCH_FIELDS);
const ok = fieldsObject(fields.ok);
const html = fieldsObject(fields.html);
const notModified = fieldsObject(fields.notModified);
const body = Buffer.alloc(1024, 'x');
const page = readFileSync(join(root, 'index.html'));

const ceiling = (_req, res) => {
  res.writeHead(200, ok);
  res.end(body);
};
const conditional = (req, res) => {
  if (req.headers['if-none-match'] === html.ETag) {
    res.writeHead(304, notModified);
    res.end();
    return;
  }
  res.writeHead(200, html);
  res.end(page);
};

listen(http.createServer(process.env.BENCH_MODE === '304' ? conditional : ceiling));
