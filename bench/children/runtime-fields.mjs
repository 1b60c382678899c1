// Same-fields references on Bun and Deno (issue 39): the runtime's own server (Bun.serve, Deno.serve)
// answering from memory with exactly the fields this build's Gatehouse sends, as children/node-fields.mjs
// does on node:http. BENCH_FIELDS and BENCH_MODE as there: `ceiling` answers every request with the 1 KB
// body and the `ok` fields; `304` answers GET /index.html with the page or, when If-None-Match is its
// ETag, a 304 with the `notModified` fields. Run by `bun` or `deno run -A`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { announce, exitWithParent, fieldsObject, requestedPort, root } from './runtime.mjs';

const fields = JSON.parse(process.env.BENCH_FIELDS);
const ok = fieldsObject(fields.ok);
const html = fieldsObject(fields.html);
const notModified = fieldsObject(fields.notModified);
const body = new Uint8Array(1024).fill(0x78);
const page = readFileSync(join(root, 'index.html'));
const etag = html.ETag;

const ceiling = () => new Response(body, { headers: ok });
const conditional = (req) =>
  req.headers.get('if-none-match') === etag
    ? new Response(null, { status: 304, headers: notModified })
    : new Response(page, { headers: html });
const handler = process.env.BENCH_MODE === '304' ? conditional : ceiling;

exitWithParent();
if (typeof globalThis.Bun !== 'undefined') {
  const server = Bun.serve({ port: requestedPort, hostname: '127.0.0.1', fetch: handler });
  announce(server.port);
} else {
  Deno.serve({ port: requestedPort, hostname: '127.0.0.1', onListen: ({ port }) => announce(port) }, handler);
}
