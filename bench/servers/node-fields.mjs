// Servers: the same-fields references `node-fields-ceiling` (scenario 1k) and `node-fields-304` (scenario
// 304), bare node:http sending exactly the fields this build's Gatehouse sends (children/node-fields.mjs).
// The fields are read at start from a Gatehouse started on the same folder for the purpose and stopped
// again: GET /1k.txt, GET /index.html, and GET /index.html with its ETag in If-None-Match.
import { probe } from '../lib/http-probe.mjs';
import { currentBuild, startGatehouse } from './gatehouse.mjs';
import { startNodeChild } from './node-child.mjs';

/** Fields Node writes itself (for Gatehouse too), left out of the lists. */
const NODE_OWN = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

/** The raw fields of one answer, as a flat [name, value, ...] list without Node's own. */
function fieldsOf(res, status) {
  if (res.status !== status) throw new Error(`Gatehouse gave ${res.status}, not ${status}`);
  const out = [];
  for (let i = 0; i < res.rawHeaders.length; i += 2)
    if (!NODE_OWN.has(res.rawHeaders[i].toLowerCase())) out.push(res.rawHeaders[i], res.rawHeaders[i + 1]);
  return out;
}

let cached;
/** Gatehouse's fields for the 1 KB file, index.html and its 304 (one probe run, shared by both servers). */
export function gatehouseFields(dir) {
  cached ??= (async () => {
    const g = await startGatehouse({ build: currentBuild, root: dir });
    try {
      const ok = fieldsOf(await probe({ port: g.port, path: '/1k.txt' }), 200);
      const page = await probe({ port: g.port, path: '/index.html' });
      const html = fieldsOf(page, 200);
      const notModified = fieldsOf(
        await probe({ port: g.port, path: '/index.html', headers: { 'If-None-Match': page.headers.etag } }),
        304,
      );
      return { ok, html, notModified };
    } finally {
      await g.stop();
    }
  })();
  return cached;
}

const define = (name, mode, scenario, extra = {}) => ({
  name,
  groups: ['static'],
  scenarios: [scenario],
  ...extra,
  async start(dir) {
    const fields = await gatehouseFields(dir);
    return startNodeChild('node-fields.mjs', dir, { BENCH_FIELDS: JSON.stringify(fields), BENCH_MODE: mode });
  },
});

export const nodeFieldsCeiling = define('node-fields-ceiling', 'ceiling', '1k', { reference: true });
export const nodeFields304 = define('node-fields-304', '304', '304');
