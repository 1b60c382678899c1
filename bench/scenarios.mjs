// Benchmark scenarios. Each: { name, group, title, path, pathFor?, expect: { status, bodyLength (undefined:
// any) }, expectHeaders?, headers?(ctx), expectCacheHit? } where headers() may ask the server under test for something first (e.g.
// the ETag it gives /index.html) and throws to mark the scenario as not runnable for that server. A scenario
// runs only on the servers whose `groups` include its group, all at `path` except those named in `pathFor`
// ({ server name: path }, for a baseline that serves the same answer from elsewhere). `expectCacheHit`: one
// request first fills the cache, then the checked answer must carry the server's `hitHeaders`
// (servers/index.mjs). Reference servers (the node ceiling) are sent `referenceHeaders` instead and always
// expected to answer 200 with their constant 1 KB. `latency`: wrk also reports percentiles (--latency).
// `flood`: a WebSocket flood (lib/flood.mjs) on the server's `wsPath` runs through the warm-up and the
// timed run.
import { FIXTURE } from './lib/fixture.mjs';
import { FLOOD } from './lib/flood.mjs';
import { ORIGIN } from './servers/gatehouse-cors.mjs';

export const REFERENCE_EXPECT = { status: 200, bodyLength: 1024 };

/**
 * Scenario groups: each is reported as its own table, with ratios of `subject` to every other server of the
 * group. Targets (targets.mjs) name their subject themselves.
 */
export const groups = [
  { name: 'static', title: 'Static files', subject: 'gatehouse' },
  { name: 'policy', title: 'CORS + security headers (policy layer cost)', subject: 'gatehouse-cors' },
  { name: 'proxy', title: 'Reverse proxy (upstream: bare node:http, 1 KB)', subject: 'gatehouse-proxy' },
  {
    name: 'cache',
    title: 'Shared HTTP cache: hit (1 KB, upstream max-age=3600) vs the static handler',
    subject: 'gatehouse-cache',
  },
  // Issue 28: Gatehouse through each framework adapter vs the framework's static module; the ratios to
  // the subject (standalone gatehouse) are each adapter's cost.
  {
    name: 'adapters',
    title: 'Static 1 KB through the framework adapters vs their own static modules',
    subject: 'gatehouse',
  },
  // The on-the-fly compressed variant once made (kept in memory): a brotli hit, against the baseline build.
  {
    name: 'coding',
    title: 'On-the-fly compression: the kept br variant of a 150 KB script',
    subject: 'gatehouse',
  },
  // Issue 39: Gatehouse served natively by Bun and Deno against each runtime's same-fields server and nginx.
  {
    name: 'runtimes',
    title: "Bun.serve and Deno.serve: Gatehouse against the runtime's own server with Gatehouse's fields",
    subject: 'gatehouse-bun',
  },
  {
    name: 'ws-flood',
    title: `Static 1 KB latency, quiet vs a flood of WebSocket messages (${FLOOD.clients} clients) on /ws`,
    // Reported as each server's flooded / quiet ratios (report.mjs), not as ratios between servers.
    flood: { quiet: 'ws-quiet', flooded: 'ws-flooded' },
  },
];

export const scenarios = [
  {
    name: '1k',
    group: 'static',
    title: `GET ${FIXTURE.small.path} -> 200, 1 KB`,
    path: FIXTURE.small.path,
    expect: { status: 200, bodyLength: FIXTURE.small.size },
  },
  {
    name: '304',
    group: 'static',
    title: `GET ${FIXTURE.html.path} + If-None-Match -> 304`,
    path: FIXTURE.html.path,
    expect: { status: 304, bodyLength: 0 },
    referenceHeaders: { 'If-None-Match': '"reference"' },
    async headers({ probe }) {
      const res = await probe({ path: FIXTURE.html.path });
      if (res.status !== 200) throw new Error(`GET ${FIXTURE.html.path} gave ${res.status}, not 200`);
      const etag = res.headers.etag;
      if (!etag) throw new Error(`GET ${FIXTURE.html.path} had no ETag`);
      return { 'If-None-Match': etag };
    },
  },
  {
    name: 'rt-1k',
    group: 'runtimes',
    title: `GET ${FIXTURE.small.path} -> 200, 1 KB (Bun.serve, Deno.serve)`,
    path: FIXTURE.small.path,
    expect: { status: 200, bodyLength: FIXTURE.small.size },
  },
  {
    name: 'rt-304',
    group: 'runtimes',
    title: `GET ${FIXTURE.html.path} + If-None-Match -> 304 (Bun.serve, Deno.serve)`,
    path: FIXTURE.html.path,
    expect: { status: 304, bodyLength: 0 },
    referenceHeaders: { 'If-None-Match': '"reference"' },
    headers: (ctx) => scenarios[1].headers(ctx),
  },
  {
    name: '150k',
    group: 'static',
    title: `GET ${FIXTURE.large.path} -> 200, 150 KB identity`,
    path: FIXTURE.large.path,
    expect: { status: 200, bodyLength: FIXTURE.large.size },
  },
  {
    name: 'br-150k',
    group: 'coding',
    title: `GET ${FIXTURE.large.path} + Accept-Encoding: br -> 200, the kept brotli variant`,
    path: FIXTURE.large.path,
    // Any length: the variant's size is the compressor's; the answer must be br-coded.
    expect: { status: 200, bodyLength: undefined },
    expectHeaders: { 'content-encoding': 'br' },
    async headers({ probe }) {
      const h = { 'Accept-Encoding': 'br' };
      // The variant is made once the file is kept (from its second request) and may be made in the
      // background: ask until the answer is br-coded, so every timed request is a hit on it.
      for (let i = 0; i < 200; i++) {
        const res = await probe({ path: FIXTURE.large.path, headers: h });
        if (res.headers['content-encoding'] === 'br') return h;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`GET ${FIXTURE.large.path} never answered br-coded`);
    },
  },
  {
    name: 'adapters-1k',
    group: 'adapters',
    title: `GET ${FIXTURE.small.path} -> 200, 1 KB, in a framework's app`,
    path: FIXTURE.small.path,
    expect: { status: 200, bodyLength: FIXTURE.small.size },
  },
  {
    name: 'cors-1k',
    group: 'policy',
    title: `GET ${FIXTURE.small.path} + Origin: ${ORIGIN} -> 200, 1 KB`,
    path: FIXTURE.small.path,
    expect: { status: 200, bodyLength: FIXTURE.small.size },
    headers: () => ({ Origin: ORIGIN }),
  },
  {
    name: 'proxy-1k',
    group: 'proxy',
    title: 'GET /api/1k through the proxy -> upstream /1k -> 200, 1 KB',
    path: '/api/1k',
    expect: { status: 200, bodyLength: 1024 },
  },
  {
    name: 'cache-hit-1k',
    group: 'cache',
    title:
      "GET /api/cached/1k, a hit in the proxy's cache (upstream /cached/1k, max-age=3600) -> 200, 1 KB; " +
      `gatehouse: GET ${FIXTURE.small.path}`,
    path: '/api/cached/1k',
    pathFor: { gatehouse: FIXTURE.small.path },
    expect: { status: 200, bodyLength: 1024 },
    expectCacheHit: true,
  },
  {
    name: 'ws-quiet',
    group: 'ws-flood',
    title: `GET ${FIXTURE.small.path} -> 200, 1 KB, p50/p99 latency, no WebSocket traffic`,
    path: FIXTURE.small.path,
    expect: { status: 200, bodyLength: FIXTURE.small.size },
    latency: true,
  },
  {
    name: 'ws-flooded',
    group: 'ws-flood',
    title:
      `the same while ${FLOOD.clients} WebSocket clients (ws, one process on the wrk CPU at nice 10) send ` +
      `${FLOOD.sizeBytes}-byte messages to the echo endpoint as fast as they can`,
    path: FIXTURE.small.path,
    expect: { status: 200, bodyLength: FIXTURE.small.size },
    latency: true,
    flood: true,
  },
];
