// gatehouse-http/vite in a real Vite 7 project, built into a temp folder with Vite's own build() and
// served by its preview() on 127.0.0.1:0, with the plugin and (the reference, measured in the same
// run) without it. Chromium loads the pages; plain HTTP requests check the codings and validators.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { connect as http2Connect } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { build, createServer as createViteServer, type Logger, type PreviewServer, preview } from 'vite';
import { gatehouse } from '../../src/adapters/vite.js';
import { ConfigError } from '../../src/config/load.js';
import { describeBrowser, type LaunchedBrowser, launchBrowser } from '../helpers/browser.js';
import { get } from '../helpers/http.js';
import { testTls } from '../helpers/tls.js';
import { waitUntil } from '../helpers/wait.js';
import { echoOnce } from '../helpers/ws-peer.js';

const PLUGIN = fileURLToPath(new URL('../../src/adapters/vite.ts', import.meta.url));
const VITE_BIN = fileURLToPath(new URL('../../node_modules/vite/bin/vite.js', import.meta.url));

/** A Vite logger that keeps every line (Vite's `customLogger`). */
function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const warned = new Set<string>();
  return {
    lines,
    hasWarned: false,
    info: (msg) => void lines.push(msg),
    warn: (msg) => void lines.push(msg),
    warnOnce: (msg) => {
      if (!warned.has(msg)) lines.push(msg);
      warned.add(msg);
    },
    error: (msg) => void lines.push(msg),
    clearScreen: () => {},
    hasErrorLogged: () => false,
  };
}

// The lazy chunk is larger than precompress's and the on-the-fly compressor's 1 KB floor.
const FILLER = Array.from({ length: 120 }, (_, i) => `line ${i} of the route table`).join('|');
const PROJECT: Record<string, string> = {
  'index.html':
    '<!doctype html><html><head><meta charset="utf-8"><title>vite app</title></head>' +
    '<body><div id="app">loading</div><script type="module" src="/src/main.js"></script></body></html>',
  'src/main.js':
    "import('./route.js').then((m) => { document.getElementById('app').textContent = m.render(location.pathname); });\n",
  'src/route.js': `const TABLE = ${JSON.stringify(FILLER)};\nexport const render = (path) => 'route ' + path + ' (' + TABLE.length + ')';\n`,
};

const listen = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
const closeServer = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));
const urlOf = (server: PreviewServer) =>
  `http://127.0.0.1:${(server.httpServer.address() as AddressInfo).port}`;

describe('gatehouse-http/vite in a real Vite 7 project', () => {
  let dir: string;
  let dist: string;
  let chunk: string;
  let upstream: Server;
  let upstreamSeen: string[];
  let withPlugin: PreviewServer;
  let plain: PreviewServer;
  let base: string;
  let plainBase: string;
  const buildLog = recordingLogger();
  const previewLog = recordingLogger();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-vite-'));
    for (const [path, text] of Object.entries(PROJECT)) {
      await mkdir(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    await build({
      root: dir,
      configFile: false,
      customLogger: buildLog,
      plugins: [gatehouse({ precompress: true })],
    });
    dist = join(dir, 'dist');
    const route = readdirSync(join(dist, 'assets')).find((f) => /^route-.+\.js$/.test(f));
    assert.ok(route, 'vite build wrote the lazy chunk');
    chunk = `/assets/${route}`;
    upstreamSeen = [];
    upstream = createServer((req, res) => {
      upstreamSeen.push(req.url ?? '');
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end(`upstream ${req.url}`);
    });
    const upstreamUrl = await listen(upstream);
    withPlugin = await preview({
      root: dir,
      configFile: false,
      customLogger: previewLog,
      preview: {
        host: '127.0.0.1',
        port: 0,
        proxy: { '/vite-api': upstreamUrl },
        headers: { 'Cross-Origin-Opener-Policy': 'same-origin' },
      },
      plugins: [
        gatehouse({
          proxy: [{ prefix: '/api', upstream: upstreamUrl }],
          cors: { origins: ['https://app.example'] },
          check: true,
        }),
      ],
    });
    base = urlOf(withPlugin);
    plain = await preview({
      root: dir,
      configFile: false,
      logLevel: 'silent',
      preview: { host: '127.0.0.1', port: 0 },
    });
    plainBase = urlOf(plain);
  });
  after(async () => {
    await withPlugin?.close();
    await plain?.close();
    if (upstream) await closeServer(upstream);
    rmSync(dir, { recursive: true, force: true });
  });

  it('vite build with precompress: true writes .br and .gz beside the chunk, and says so', () => {
    const file = readFileSync(join(dist, chunk));
    assert.ok(file.length > 1024, `the chunk is ${file.length} bytes`);
    assert.deepEqual(brotliDecompressSync(readFileSync(join(dist, `${chunk}.br`))), file);
    assert.deepEqual(gunzipSync(readFileSync(join(dist, `${chunk}.gz`))), file);
    assert.ok(
      buildLog.lines.some((l) => /^gatehouse: precompressed \d+ files? /.test(l)),
      buildLog.lines.join('\n'),
    );
  });

  it('an SSR build is not precompressed (the client build only)', async () => {
    await build({
      root: dir,
      configFile: false,
      logLevel: 'silent',
      build: { ssr: 'src/route.js', outDir: 'dist-ssr' },
      plugins: [gatehouse({ precompress: true })],
    });
    const files = readdirSync(join(dir, 'dist-ssr'));
    assert.ok(files.includes('route.mjs'), files.join(', '));
    assert.ok(readFileSync(join(dir, 'dist-ssr/route.mjs')).length > 1024);
    assert.deepEqual(
      files.filter((f) => f.endsWith('.br') || f.endsWith('.gz')),
      [],
    );
  });

  it('a hashed chunk: a year and immutable, a strong ETag and 304; index.html no-cache', async () => {
    const r = await get(base, chunk);
    assert.equal(r.status, 200);
    assert.equal(r.headers['cache-control'], 'public, max-age=31536000, immutable');
    const etag = r.headers.etag!;
    assert.match(etag, /^"[^"]+"$/, 'strong');
    const again = await get(base, chunk, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    const page = await get(base, '/');
    assert.equal(page.status, 200);
    assert.match(page.headers['cache-control']!, /no-cache/);
    // The reference: Vite's own preview marks both no-cache, with a weak ETag.
    const ref = await get(plainBase, chunk);
    assert.equal(ref.headers['cache-control'], 'no-cache');
  });

  it('br, gzip or identity as Accept-Encoding asks, each its own ETag, Vary: Accept-Encoding', async () => {
    const file = readFileSync(join(dist, chunk));
    const br = await get(base, chunk, { headers: { 'accept-encoding': 'gzip, br' } });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.deepEqual(brotliDecompressSync(br.body), file);
    const gz = await get(base, chunk, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.deepEqual(gunzipSync(gz.body), file);
    const id = await get(base, chunk, { headers: { 'accept-encoding': 'identity' } });
    assert.equal(id.headers['content-encoding'], undefined);
    assert.deepEqual(id.body, file);
    for (const r of [br, gz, id]) assert.match(r.headers.vary!, /accept-encoding/i);
    assert.equal(new Set([br.headers.etag, gz.headers.etag, id.headers.etag]).size, 3);
  });

  it("the config's proxy and CORS are Gatehouse's; Vite's preview.proxy keeps its own paths", async () => {
    const before = upstreamSeen.length;
    const p = await get(base, '/api/x');
    assert.equal(p.status, 200);
    assert.equal(p.body.toString(), 'upstream /x');
    const v = await get(base, '/vite-api/y', { headers: { accept: 'text/html' } });
    assert.equal(v.status, 200);
    assert.equal(v.body.toString(), 'upstream /vite-api/y');
    assert.deepEqual(upstreamSeen.slice(before), ['/x', '/vite-api/y']);
    // Gatehouse's CORS answers the preflight (Vite's own cors middleware would answer 204 for any
    // origin on localhost, before any plugin's middleware).
    const pre = await get(base, chunk, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
    });
    assert.equal(pre.status, 200);
    assert.equal(pre.headers['access-control-allow-origin'], 'https://app.example');
    const other = await get(base, chunk, {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'GET' },
    });
    assert.equal(other.headers['access-control-allow-origin'], undefined);
    const simple = await get(base, chunk, { headers: { origin: 'https://app.example' } });
    assert.equal(simple.headers['access-control-allow-origin'], 'https://app.example');
    assert.match(simple.headers.vary!, /origin/i);
  });

  it('check: true prints the gatehouse check report for the preview URL', async () => {
    const report = await waitUntil('the check report is in the log', () =>
      previewLog.lines.find((l) => l.startsWith(`gatehouse check ${base}/`)),
    );
    assert.match(report, /\n\d+ errors?, \d+ warnings?, \d+ infos?$/);
    assert.match(report, /\[[a-z0-9-]+\.[a-z0-9.-]+\]/, 'findings with their ids');
  });

  it("Vite's preview.headers on what Gatehouse serves, its 404s included", async () => {
    for (const path of [chunk, '/', '/some/route', '/assets/nope-123abc.js']) {
      const r = await get(base, path, { headers: { accept: 'text/html' } });
      assert.equal(r.headers['cross-origin-opener-policy'], 'same-origin', path);
    }
  });

  it("served under Vite's base: /app/ is the build's root (files, fallback, redirects, WebSocket), the rest is Vite's", async () => {
    mkdirSync(join(dist, 'sub'), { recursive: true });
    writeFileSync(join(dist, 'sub/index.html'), '<p>sub</p>');
    const at = await preview({
      root: dir,
      configFile: false,
      logLevel: 'silent',
      base: '/app/',
      preview: { host: '127.0.0.1', port: 0 },
      plugins: [gatehouse({ websocket: [{ path: '/ws', mode: 'echo' }] })],
    });
    try {
      const u = urlOf(at);
      assert.equal(await echoOnce(`${u.replace('http', 'ws')}/app/ws`, 'ping'), 'ping');
      // A folder's slash redirect keeps the base.
      const folder = await get(u, '/app/sub');
      assert.equal(folder.status, 301);
      assert.equal(folder.headers.location, '/app/sub/');
      assert.equal((await get(u, '/app/sub/')).text, '<p>sub</p>');
      const c = await get(u, `/app${chunk}`);
      assert.equal(c.status, 200);
      assert.equal(c.headers['cache-control'], 'public, max-age=31536000, immutable');
      const deep = await get(u, '/app/some/route', { headers: { accept: 'text/html' } });
      assert.equal(deep.status, 200);
      assert.match(deep.text, /<title>vite app<\/title>/);
      const gone = await get(u, '/app/assets/nope-123abc.js', { headers: { accept: '*/*' } });
      assert.equal(gone.status, 404);
      // Vite's base middleware: the root redirects to the base.
      const root = await get(u, '/');
      assert.equal(root.status, 302);
      assert.equal(root.headers.location, '/app/');
    } finally {
      await at.close();
    }
  });

  it("preview.https: Vite's HTTP/2 listener, the same answers over h2", async () => {
    const tls = await testTls();
    const secure = await preview({
      root: dir,
      configFile: false,
      logLevel: 'silent',
      preview: {
        host: '127.0.0.1',
        port: 0,
        https: { cert: readFileSync(tls.cert), key: readFileSync(tls.key) },
      },
      plugins: [gatehouse()],
    });
    const port = (secure.httpServer.address() as AddressInfo).port;
    const session = http2Connect(`https://127.0.0.1:${port}`, { ca: tls.caPem, servername: 'localhost' });
    const ask = (path: string) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        const req = session.request({ ':path': path, accept: 'text/html', 'accept-encoding': 'br' });
        req.on('response', (h) => resolve(h));
        req.on('error', reject);
        req.resume();
        req.end();
      });
    try {
      const c = await ask(chunk);
      assert.equal(c[':status'], 200);
      assert.equal(c['cache-control'], 'public, max-age=31536000, immutable');
      assert.equal(c['content-encoding'], 'br');
      assert.equal((await ask('/assets/nope-123abc.js'))[':status'], 404);
      assert.equal((await ask('/some/route'))[':status'], 200);
    } finally {
      session.close();
      await secure.close();
    }
  });

  it('vite (the dev server) is left alone: its own transformed page and modules', async () => {
    const dev = await createViteServer({
      root: dir,
      configFile: false,
      logLevel: 'silent',
      server: { host: '127.0.0.1', port: 0, ws: false },
      plugins: [gatehouse()],
    });
    await dev.listen();
    try {
      const u = `http://127.0.0.1:${(dev.httpServer!.address() as AddressInfo).port}`;
      const page = await get(u, '/some/route', { headers: { accept: 'text/html' } });
      assert.equal(page.status, 200);
      assert.match(page.text, /\/@vite\/client/);
      const source = await get(u, '/src/main.js');
      assert.equal(source.status, 200);
      assert.match(source.text, /route\.js/);
    } finally {
      await dev.close();
    }
  });

  it('vite preview on a terminal: g + enter runs gatehouse check (listed by h + enter)', async () => {
    writeFileSync(
      join(dir, 'vite.config.mjs'),
      `import { gatehouse } from ${JSON.stringify(PLUGIN)};\nexport default { plugins: [gatehouse()] };\n`,
    );
    // `script` gives the real vite CLI a terminal (Vite binds its shortcuts only on a TTY, not under CI).
    const command = [process.execPath, '--import', import.meta.resolve('tsx'), VITE_BIN]
      .concat(['preview', '--configLoader', 'native', '--host', '127.0.0.1', '--port', '0'])
      .map((a) => JSON.stringify(a))
      .join(' ');
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd: dir,
      env: { ...process.env, CI: '', NO_COLOR: '1' },
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c.replace(/\x1b\[[0-9;]*m/g, '').replace(/\r/g, '');
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      const port = (
        await waitUntil('vite preview prints its URL', () =>
          /Local:\s+http:\/\/127\.0\.0\.1:(\d+)\//.exec(out),
        )
      )[1];
      child.stdin.write('h\n');
      await waitUntil('the shortcut is listed', () =>
        out.includes('press g + enter to run gatehouse check on the preview URL'),
      );
      assert.equal(out.includes(`gatehouse check http://127.0.0.1:${port}/`), false);
      child.stdin.write('g\n');
      await waitUntil('the report is printed', () =>
        new RegExp(
          `gatehouse check http://127\\.0\\.0\\.1:${port}/\\n[^]*\\n\\d+ errors?, \\d+ warnings?, \\d+ infos?\\n`,
        ).test(out),
      );
      child.stdin.write('q\n');
      assert.equal(await exited, 0);
    } finally {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
      rmSync(join(dir, 'vite.config.mjs'), { force: true });
    }
  });

  it("refuses a bad config with the CLI's ConfigError, when vite.config is read", () => {
    assert.throws(() => gatehouse({ static: { etag: 'medium' } } as never), ConfigError);
  });

  describeBrowser('in Chromium', () => {
    let browser: LaunchedBrowser;
    before(async () => {
      browser = await launchBrowser();
    });
    after(async () => {
      await browser?.close();
    });

    /** Loads `url`; the page's answer, and each /assets/ answer by path. */
    async function load(page: Page, url: string) {
      const assets = new Map<string, { status: number; headers: Record<string, string> }>();
      page.on('response', (r) => {
        const path = new URL(r.url()).pathname;
        if (path.startsWith('/assets/')) assets.set(path, { status: r.status(), headers: r.headers() });
      });
      const res = await page.goto(url);
      await page.waitForFunction(() => document.getElementById('app')?.textContent?.startsWith('route '));
      return { res: res!, assets, text: await page.textContent('#app') };
    }

    /**
     * A page from an older deploy asks for a chunk that is gone, with fetch() (a prefetch, a service
     * worker's precache: Sec-Fetch-Dest empty, Accept any type), and with import().
     */
    async function askMissing(page: Page) {
      const fetched = await page.evaluate(async () => {
        const r = await fetch('/assets/nope-123abc.js');
        return { status: r.status, type: r.headers.get('content-type') ?? '' };
      });
      const importAnswer = page.waitForResponse((r) => r.url().endsWith('/assets/nope-456def.js'));
      const imported = await page.evaluate(() =>
        import('/assets/nope-456def.js' as string).then(
          () => 'loaded',
          (e: Error) => e.message,
        ),
      );
      return { fetched, imported: { status: (await importAnswer).status(), outcome: imported } };
    }

    it('the page and its hashed chunk: no-cache for index.html, a year and immutable for the chunk, br', async () => {
      const page = await browser.context.newPage();
      try {
        const { res, assets, text } = await load(page, `${base}/`);
        assert.equal(res.status(), 200);
        assert.match(res.headers()['cache-control']!, /no-cache/);
        assert.equal(text, `route / (${FILLER.length})`);
        const c = assets.get(chunk);
        assert.ok(c, `Chromium fetched ${chunk}: ${[...assets.keys()].join(', ')}`);
        assert.equal(c.status, 200);
        assert.match(c.headers['cache-control']!, /max-age=31536000/);
        assert.match(c.headers['cache-control']!, /immutable/);
        assert.equal(c.headers['content-encoding'], 'br');
      } finally {
        await page.close();
      }
    });

    it('a missing chunk: 404 with Gatehouse, where plain vite preview answers 200 text/html', async () => {
      const page = await browser.context.newPage();
      try {
        await load(page, `${base}/`);
        const ours = await askMissing(page);
        assert.equal(ours.fetched.status, 404);
        assert.equal(ours.imported.status, 404);
        assert.notEqual(ours.imported.outcome, 'loaded');
        // The reference, the same fetch to plain vite preview: its SPA fallback answers index.html.
        // (Vite 7.3 answers a module script, Sec-Fetch-Dest: script, with 404 itself.)
        await load(page, `${plainBase}/`);
        const ref = await askMissing(page);
        assert.equal(ref.fetched.status, 200);
        assert.match(ref.fetched.type, /^text\/html/);
      } finally {
        await page.close();
      }
    });

    it('a deep link gets the page, which runs', async () => {
      const page = await browser.context.newPage();
      try {
        const { res, text } = await load(page, `${base}/some/route`);
        assert.equal(res.status(), 200);
        assert.match(res.headers()['content-type']!, /^text\/html/);
        assert.match(res.headers()['cache-control']!, /no-cache/);
        assert.equal(text, `route /some/route (${FILLER.length})`);
        // Gatehouse's fallback: the answer depends on Accept, and says so to caches (plain Vite does not).
        assert.match(res.headers().vary!, /(^|,\s*)accept(\s*,|$)/i);
      } finally {
        await page.close();
      }
    });
  });
});
