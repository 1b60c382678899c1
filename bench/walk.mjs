// The walk of one request through the code: which source files run code for a static GET and for the
// first hit of a proxied response in the shared cache, counted with V8's precise coverage (function call
// counts). Each scenario is warmed first (the cache filled, the file read), then counts are reset and one
// request is made; a file "entered" is one with a function called during that request. Start-up and the
// client's own code are left out: only files of the checkout's dist/ count.
//
//   node bench/walk.mjs [CHECKOUT] [--verbose]   (default: this checkout; needs `npm run build` there;
//                                                --verbose names the functions called)
//
// Prints, per scenario, the files entered and how many functions of the cache's stores ran (get, peek,
// findVariant...: the lookups a hit costs).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const checkout = resolve(positional[0] ?? fileURLToPath(new URL('..', import.meta.url)));
const dist = join(checkout, 'dist');
const { createServer } = await import(pathToFileURL(join(dist, 'index.js')).href);

const site = mkdtempSync(join(tmpdir(), 'gatehouse-walk-'));
writeFileSync(join(site, 'index.html'), `<!doctype html><title>walk</title>${'x'.repeat(1000)}`);
writeFileSync(join(site, '1k.txt'), 'z'.repeat(1024));
const body = 'y'.repeat(1024);
const upstream = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'public, max-age=3600' });
  res.end(body);
});
await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
const upstreamUrl = `http://127.0.0.1:${upstream.address().port}`;
// The static files alone (the default config), and a caching proxy route (nothing else).
const staticApp = createServer({ root: site, log: { format: 'off' }, listen: { port: 0 } });
const proxyApp = createServer({
  root: site,
  log: { format: 'off' },
  listen: { port: 0 },
  proxy: [{ prefix: '/api', upstream: upstreamUrl, cache: { enabled: true } }],
});
const urls = { static: (await staticApp.listen()).url, proxy: (await proxyApp.listen()).url };
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const verbose = process.argv.includes('--verbose');

/** One GET; resolves with the status and Cache-Status once the body is read. */
const get = (app, path) =>
  new Promise((done, fail) => {
    http
      .get(`${urls[app]}${path}`, { agent }, (res) => {
        res.resume();
        res.on('end', () => done({ status: res.statusCode, cache: res.headers['cache-status'] }));
      })
      .on('error', fail);
  });

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });

/** Files under dist/ with a function called since the last take, and the store functions called. */
async function take() {
  const { result } = await session.post('Profiler.takePreciseCoverage');
  const files = [];
  const storeCalls = [];
  for (const script of result) {
    if (!script.url.startsWith(pathToFileURL(dist).href)) continue;
    const file = relative(dist, fileURLToPath(script.url));
    const called = script.functions.filter((f) => f.ranges[0].count > 0 && f.functionName !== '');
    if (script.functions.some((f) => f.ranges[0].count > 0))
      files.push(verbose ? `${file} (${called.map((f) => f.functionName).join(', ')})` : file);
    if (file.startsWith('cache/store') || file.includes('/stores/'))
      for (const f of called) storeCalls.push(`${file}:${f.functionName} x${f.ranges[0].count}`);
  }
  return { files: files.sort(), storeCalls };
}

const scenarios = [
  { name: 'static GET /index.html', app: 'static', path: '/index.html', warm: 3 },
  { name: 'static GET /1k.txt', app: 'static', path: '/1k.txt', warm: 3 },
  // The first hit: the response was stored by the miss just before, and is now served from the cache.
  { name: 'first proxied cache hit', app: 'proxy', path: '/api/walk', warm: 1 },
];
try {
  for (const s of scenarios) {
    for (let i = 0; i < s.warm; i++) await get(s.app, s.path);
    await take();
    const answer = await get(s.app, s.path);
    const { files, storeCalls } = await take();
    console.log(
      `${s.name}: ${answer.status}${answer.cache ? ` (${answer.cache})` : ''}, ${files.length} files`,
    );
    for (const f of files) console.log(`  ${f}`);
    if (storeCalls.length > 0) console.log(`  store functions called: ${storeCalls.join(', ')}`);
  }
} finally {
  await session.post('Profiler.stopPreciseCoverage');
  session.disconnect();
  agent.destroy();
  await staticApp.close();
  await proxyApp.close();
  upstream.close();
  rmSync(site, { recursive: true, force: true });
}
