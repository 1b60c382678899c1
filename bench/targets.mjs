// Targets for Gatehouse, always as ratios against peers measured in the same run (never absolute numbers),
// plus a memory ceiling. Checked and printed by run.mjs; a miss prints MISSED but does not fail the run.
// `subject` / `peer` on `scenario` must be >= `min`; a target is checked only when both ran that scenario.
export const throughputTargets = [
  // Issue 27: against node:http sending exactly Gatehouse's fields (node-fields-*), so the ratio is what
  // Gatehouse itself costs; node-ceiling (bare fields) stays in the table without a target.
  { scenario: '1k', subject: 'gatehouse', peer: 'node-fields-ceiling', min: 0.95 },
  { scenario: '1k', subject: 'gatehouse', peer: 'sirv', min: 3 },
  { scenario: '304', subject: 'gatehouse', peer: 'node-fields-304', min: 1.0 },
  { scenario: '304', subject: 'gatehouse', peer: 'sirv', min: 1.0 },
  { scenario: '150k', subject: 'gatehouse', peer: 'sirv', min: 2 },
  // The CORS + security-header policy layer costs less than 10 %.
  { scenario: 'cors-1k', subject: 'gatehouse-cors', peer: 'gatehouse', min: 0.9 },
  { scenario: 'proxy-1k', subject: 'gatehouse-proxy', peer: 'http-proxy-middleware', min: 1.3 },
  // Issue 27: the naive node:http + undici proxy is the Node limit.
  { scenario: 'proxy-1k', subject: 'gatehouse-proxy', peer: 'node-proxy-ceiling', min: 1.3 },
  { scenario: 'proxy-1k', subject: 'gatehouse-proxy', peer: '@fastify/http-proxy', min: 1.5 },
  // Issue 28: each adapter against its framework's own static module, in the same framework.
  { scenario: 'adapters-1k', subject: 'gatehouse-express', peer: 'express-static', min: 3 },
  { scenario: 'adapters-1k', subject: 'gatehouse-fastify', peer: '@fastify/static', min: 2 },
  { scenario: 'adapters-1k', subject: 'gatehouse-koa', peer: 'koa-static', min: 2 },
  { scenario: 'adapters-1k', subject: 'gatehouse-hono', peer: 'hono-serve-static', min: 2 },
  // A cache hit costs at most a quarter more than serving the same 1 KB file.
  { scenario: 'cache-hit-1k', subject: 'gatehouse-cache', peer: 'gatehouse', min: 0.8 },
  // Issue 17: Prometheus metrics on cost at most 5 % of the 1 KB static path.
  { scenario: '1k', subject: 'gatehouse-metrics', peer: 'gatehouse', min: 0.95 },
  // Issue 39: Gatehouse on Bun.serve and Deno.serve against each runtime's own server with the same fields,
  // and nginx; the proxy on Bun against the proxy on Node.
  { scenario: 'rt-1k', subject: 'gatehouse-bun', peer: 'bun-fields-ceiling', min: 0.8 },
  { scenario: 'rt-1k', subject: 'gatehouse-bun', peer: 'nginx', min: 0.8 },
  { scenario: 'rt-304', subject: 'gatehouse-bun', peer: 'bun-fields-304', min: 0.8 },
  { scenario: 'rt-1k', subject: 'gatehouse-deno', peer: 'deno-fields-ceiling', min: 0.8 },
  { scenario: 'proxy-1k', subject: 'gatehouse-proxy-bun', peer: 'gatehouse-proxy', min: 1.5 },
  // --workers 2 (both CPUs, wrk on the second) against one process (CPU 0): read the per CPU-s ratio;
  // a floor only, as wrk takes part of the second CPU.
  { scenario: '1k', subject: 'gatehouse-workers2', peer: 'gatehouse', min: 0.9 },
];

/** Peak RSS ceiling for the plain static Gatehouse (checked when it ran). */
export const rssTargets = [{ server: 'gatehouse', maxMb: 120 }];

/**
 * No regression (with BENCH_BASELINE only): this build against the baseline build, same harness, same run:
 * the static, proxy and cache paths at most 5 % slower.
 */
export const baselineTargets = [
  ...['1k', '304', '150k'].map((scenario) => ({ scenario, subject: 'gatehouse', min: 0.95 })),
  { scenario: 'proxy-1k', subject: 'gatehouse-proxy', min: 0.95 },
  { scenario: 'cache-hit-1k', subject: 'gatehouse-cache', min: 0.95 },
].map((t) => ({ ...t, peer: `${t.subject}-baseline` }));

/**
 * The HTTPS rows (bench/https.mjs, issue 15 §7): Gatehouse at least 0.9x the Node ceiling over TLS on each
 * row (node:https for the HTTP/1.1 ones, node:http2 for HTTP/2). nginx is reported, without a target.
 */
export const httpsTargets = [
  { scenario: 'tls-handshake', subject: 'gatehouse', peer: 'node-https', min: 0.9 },
  { scenario: 'h1-tls-1k', subject: 'gatehouse', peer: 'node-https', min: 0.9 },
  { scenario: 'h2-1k', subject: 'gatehouse', peer: 'node-http2', min: 0.9 },
];
