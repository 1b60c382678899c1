#!/usr/bin/env node
// Builds examples/site/ deterministically: a small Vite-like build output that `npm start` serves.
// Hashed assets (first 8 hex chars of the content's sha256), .br (brotli q11) and .gz (gzip -9) siblings
// for compressible text, a generated PNG favicon, an SVG logo and the Open Sans Regular woff2 (Apache-2.0).
// The page's live WebSocket panel imports the client library with no bundler from /client/index.js: the
// built dist/client/*.js copied as they are, with the dist/cache and dist/http files they import (so run
// `npm run build` first; test/browser/example-site.test.ts fails when the committed copy differs from dist/client).
//
// Usage: npm run build && node scripts/make-example-site.mjs [--font PATH] [--no-font] [--out DIR]
// The font is looked up (and its sha256 verified) in: --font, the existing output folder, rustup's docs.
// Running it twice gives byte-identical output.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, brotliDecompressSync, constants, deflateSync, gzipSync } from 'node:zlib';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const argValue = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const outDir = resolve(argValue('--out') ?? join(repoRoot, 'examples/site'));
const noFont = args.includes('--no-font');

// Open Sans Regular v17 (all charsets) as shipped with rustdoc; Apache License 2.0.
const FONT_SHA256 = '2e3b1d34ac67763ab50652da19305d4b3694c6b6e6bf35f4b98411ce4af646d2';
const FONT_FILE = 'open-sans-v17-all-charsets-regular-2e3b1d34.woff2';
// security.txt (RFC 9116) needs an Expires field; a fixed date keeps the build deterministic. Bump yearly.
const SECURITY_TXT_EXPIRES = '2027-11-01T00:00:00.000Z';

const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');
const hashed = (base, ext, content) => `${base}-${sha256(content).slice(0, 8)}.${ext}`;

// ---------- font ----------

function readUIntBase128(buf, pos) {
  let value = 0;
  for (let i = 0; i < 5; i++) {
    const b = buf[pos.at++];
    if (i === 0 && b === 0x80) throw new Error('woff2: UIntBase128 with leading zero');
    if (value & 0xfe000000) throw new Error('woff2: UIntBase128 overflow');
    value = (value << 7) | (b & 0x7f);
    if ((b & 0x80) === 0) return value >>> 0;
  }
  throw new Error('woff2: UIntBase128 too long');
}

/** Validates a WOFF2 file structurally: header, table directory and the brotli-compressed table data. */
function validateWoff2(buf) {
  if (buf.toString('latin1', 0, 4) !== 'wOF2') throw new Error('woff2: bad signature');
  if (buf.readUInt32BE(8) !== buf.length) throw new Error('woff2: length field does not match file size');
  const numTables = buf.readUInt16BE(12);
  const totalCompressedSize = buf.readUInt32BE(20);
  const pos = { at: 48 };
  let expected = 0;
  for (let i = 0; i < numTables; i++) {
    const flags = buf[pos.at++];
    const tagIndex = flags & 0x3f;
    if (tagIndex === 63) pos.at += 4;
    const transformVersion = (flags >> 6) & 3;
    const origLength = readUIntBase128(buf, pos);
    const glyfOrLoca = tagIndex === 10 || tagIndex === 11;
    const transformed = glyfOrLoca ? transformVersion === 0 : transformVersion !== 0;
    expected += transformed ? readUIntBase128(buf, pos) : origLength;
  }
  const data = brotliDecompressSync(buf.subarray(pos.at, pos.at + totalCompressedSize));
  if (data.length !== expected) throw new Error('woff2: decompressed table data has the wrong size');
  return { numTables, tableBytes: data.length };
}

function findFont() {
  const candidates = [];
  if (argValue('--font')) candidates.push(resolve(argValue('--font')));
  const existingAssets = join(outDir, 'assets');
  if (existsSync(existingAssets)) {
    for (const f of readdirSync(existingAssets).sort()) {
      if (/^open-sans-regular-[0-9a-f]+\.woff2$/.test(f)) candidates.push(join(existingAssets, f));
    }
  }
  for (const home of new Set([process.env.RUSTUP_HOME, join(homedir(), '.rustup')])) {
    if (!home) continue;
    const toolchains = join(home, 'toolchains');
    if (!existsSync(toolchains)) continue;
    for (const tc of readdirSync(toolchains).sort()) {
      candidates.push(join(toolchains, tc, 'share/doc/rust/html/rustdoc/fonts', FONT_FILE));
    }
  }
  for (const path of candidates) {
    if (!existsSync(path)) continue;
    const bytes = readFileSync(path);
    if (sha256(bytes) !== FONT_SHA256) {
      console.warn(`skipping ${path}: sha256 differs from the pinned Open Sans Regular`);
      continue;
    }
    validateWoff2(bytes);
    return bytes;
  }
  return undefined;
}

// Apache-2.0 requires shipping the licence text with the font. Read it before the output folder is wiped.
function findFontLicense() {
  const candidates = [join(outDir, 'licenses/open-sans-apache-2.0.txt')];
  const font = argValue('--font');
  if (font) candidates.push(join(dirname(resolve(font)), 'OPEN-SANS-LICENSE.txt'));
  const toolchains = join(process.env.RUSTUP_HOME ?? join(homedir(), '.rustup'), 'toolchains');
  if (existsSync(toolchains)) {
    for (const tc of readdirSync(toolchains).sort()) {
      candidates.push(join(toolchains, tc, 'share/doc/rust/html/rustdoc/fonts/OPEN-SANS-LICENSE.txt'));
    }
  }
  for (const path of candidates) {
    if (!existsSync(path)) continue;
    const text = readFileSync(path, 'utf8');
    if (text.includes('Apache License') && text.includes('Version 2.0')) return text;
  }
  return undefined;
}

// ---------- PNG ----------

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function pngChunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A 32x32 RGBA favicon: a rounded indigo tile with a white gatehouse (two towers and an arched gate). */
function makeFaviconPng() {
  const size = 32;
  const raw = Buffer.alloc((size * 4 + 1) * size);
  const inRoundedRect = (x, y, r) => {
    const cx = Math.min(Math.max(x, r), size - 1 - r);
    const cy = Math.min(Math.max(y, r), size - 1 - r);
    return (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
  };
  const isGatehouse = (x, y) => {
    const towers = (x >= 7 && x <= 12 && y >= 8 && y <= 25) || (x >= 19 && x <= 24 && y >= 8 && y <= 25);
    const battlements =
      y >= 6 && y < 8 && (x === 7 || x === 9 || x === 11 || x === 20 || x === 22 || x === 24);
    const wall = x > 12 && x < 19 && y >= 12 && y <= 25;
    const gate = x >= 14 && x <= 17 && y >= 19 && y <= 25 && (y >= 20 || (x >= 15 && x <= 16));
    return (towers || battlements || wall) && !gate;
  };
  for (let y = 0; y < size; y++) {
    const row = y * (size * 4 + 1);
    raw[row] = 0; // filter: none
    for (let x = 0; x < size; x++) {
      const p = row + 1 + x * 4;
      if (!inRoundedRect(x, y, 6)) continue; // transparent corner
      if (isGatehouse(x, y)) {
        raw.set([255, 255, 255, 255], p);
      } else {
        const t = (x + y) / (2 * (size - 1)); // diagonal gradient #4f46e5 -> #0ea5e9
        raw.set(
          [
            Math.round(79 + (14 - 79) * t),
            Math.round(70 + (165 - 70) * t),
            Math.round(229 + (233 - 229) * t),
            255,
          ],
          p,
        );
      }
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // colour type RGBA
  ihdr[10] = 0; // compression
  ihdr[11] = 0; // filter
  ihdr[12] = 0; // no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(raw, { level: 9 })),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

// ---------- text assets ----------

const LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 128 128" width="128" height="128" role="img" aria-labelledby="t">
  <title id="t">Gatehouse</title>
  <defs>
    <linearGradient id="g" x1="0" y1="0" x2="1" y2="1">
      <stop offset="0" stop-color="#4f46e5"/>
      <stop offset="1" stop-color="#0ea5e9"/>
    </linearGradient>
  </defs>
  <rect width="128" height="128" rx="28" fill="url(#g)"/>
  <path fill="#fff" d="M24 22h6v6h3v-6h6v6h3v-6h6v78H24zM80 22h6v6h3v-6h6v6h3v-6h6v78H80z"/>
  <path fill="#fff" d="M48 48h32v52h-8V82a8 8 0 0 0-16 0v18h-8z"/>
  <rect x="33" y="44" width="6" height="10" rx="3" fill="#4f46e5"/>
  <rect x="89" y="44" width="6" height="10" rx="3" fill="#0ea5e9"/>
</svg>
`;

const css = (fontUrl) => `${
  fontUrl
    ? `@font-face {
  font-family: 'Open Sans';
  font-style: normal;
  font-weight: 400;
  font-display: swap;
  src: url('${fontUrl}') format('woff2');
}
`
    : ''
}:root {
  color-scheme: light dark;
  --bg: #f6f7fb;
  --card: #ffffff;
  --text: #1f2330;
  --muted: #5b6275;
  --accent: #4f46e5;
  --border: #e3e6ef;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #11131a;
    --card: #1a1d27;
    --text: #e8eaf2;
    --muted: #a0a6b8;
    --accent: #8b85ff;
    --border: #2a2f3d;
  }
}
* { box-sizing: border-box; }
html, body { margin: 0; }
body {
  font-family: 'Open Sans', system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif;
  background: var(--bg);
  color: var(--text);
  line-height: 1.6;
  min-height: 100vh;
  display: grid;
  place-items: center;
  padding: 2rem 1rem;
}
main {
  width: min(44rem, 100%);
  background: var(--card);
  border: 1px solid var(--border);
  border-radius: 1.25rem;
  padding: 2.5rem;
  box-shadow: 0 10px 40px rgb(20 20 60 / 0.08);
}
header { display: flex; align-items: center; gap: 1.25rem; margin-bottom: 1.5rem; }
header img { width: 72px; height: 72px; }
h1 { font-size: 2rem; line-height: 1.2; margin: 0; letter-spacing: -0.01em; }
.tagline { margin: 0.25rem 0 0; color: var(--muted); }
h2 { font-size: 1.1rem; margin: 2rem 0 0.5rem; }
ul.features { padding-left: 1.2rem; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.9em; }
button {
  font: inherit;
  background: var(--accent);
  color: #fff;
  border: 0;
  border-radius: 0.6rem;
  padding: 0.55rem 1.1rem;
  cursor: pointer;
}
button:disabled { opacity: 0.6; cursor: progress; }
.table-wrap { overflow-x: auto; margin-top: 1rem; }
table { width: 100%; border-collapse: collapse; font-size: 0.85rem; }
th, td { text-align: left; padding: 0.4rem 0.5rem; border-bottom: 1px solid var(--border); white-space: nowrap; }
th { color: var(--muted); font-weight: 400; }
footer { margin-top: 2rem; color: var(--muted); font-size: 0.8rem; }
a { color: var(--accent); }
.live { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 1rem; margin: 0.5rem 0 0; }
.live dt { color: var(--muted); }
.live dd { margin: 0; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
`;

const APP_JS = `// Gatehouse example app: asks the server how it serves this page's own assets.
const button = document.getElementById('inspect');
const output = document.getElementById('headers');
const year = document.getElementById('year');
if (year) year.textContent = String(new Date().getFullYear());

function assetUrls() {
  const urls = new Set([location.pathname]);
  for (const el of document.querySelectorAll('link[href], script[src], img[src]')) {
    const url = new URL(el.getAttribute('href') ?? el.getAttribute('src'), location.href);
    if (url.origin === location.origin) urls.add(url.pathname);
  }
  return [...urls];
}

function cell(row, text) {
  const td = document.createElement('td');
  td.textContent = text ?? '-';
  row.append(td);
}

async function inspect() {
  button.disabled = true;
  output.replaceChildren();
  try {
    for (const path of assetUrls()) {
      const res = await fetch(path, { method: 'HEAD', cache: 'no-store' });
      const row = document.createElement('tr');
      cell(row, path);
      cell(row, String(res.status));
      cell(row, res.headers.get('content-type'));
      cell(row, res.headers.get('content-encoding') ?? 'identity');
      cell(row, res.headers.get('cache-control'));
      cell(row, res.headers.get('etag'));
      output.append(row);
    }
  } catch (err) {
    const row = document.createElement('tr');
    cell(row, 'request failed: ' + (err instanceof Error ? err.message : String(err)));
    output.append(row);
  } finally {
    button.disabled = false;
  }
}

button?.addEventListener('click', inspect);
`;

const LIVE_JS = `// Gatehouse example app: a live panel on the WebSocket endpoint (/ws, echo mode in
// examples/gatehouse.config.json), using the client library with no bundler.
import { ReconnectingWebSocket } from '/client/index.js';

const stateEl = document.getElementById('ws-state');
const reconnectsEl = document.getElementById('ws-reconnects');
const pongEl = document.getElementById('ws-pong');
const STATES = ['connecting', 'open', 'closing', 'closed'];
let opens = 0;

const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
const ws = new ReconnectingWebSocket(scheme + '//' + location.host + '/ws', undefined, {
  heartbeatInterval: 10000,
  reconnectInterval: 2000,
});

function showState() {
  stateEl.textContent = STATES[ws.readyState] ?? String(ws.readyState);
}

ws.addEventListener('open', () => {
  opens += 1;
  reconnectsEl.textContent = String(opens - 1);
  showState();
});
ws.addEventListener('close', showState);
ws.addEventListener('message', (event) => {
  if (event.data === '{"type":"pong"}') {
    const now = new Date();
    pongEl.textContent = now.toLocaleTimeString();
    pongEl.dateTime = now.toISOString();
  }
});
// Queued until the socket opens, so the first pong shows at once; the heartbeat pings every 10 s after.
ws.send({ type: 'ping' });
showState();
// A reconnect attempt has no event of its own: refresh the state now and then.
setInterval(showState, 1000);
`;

const head = ({ title, cssUrl, fontUrl }) => `<meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>${title}</title>
    <link rel="icon" type="image/png" href="/favicon.png">
${fontUrl ? `    <link rel="preload" href="${fontUrl}" as="font" type="font/woff2" crossorigin>\n` : ''}    <link rel="stylesheet" href="${cssUrl}">`;

const indexHtml = ({ cssUrl, jsUrl, liveUrl, logoUrl, fontUrl }) => `<!doctype html>
<html lang="en">
  <head>
    ${head({ title: 'Gatehouse example site', cssUrl, fontUrl })}
    <meta name="description" content="The example site bundled with Gatehouse.">
    <script type="module" src="${jsUrl}"></script>
    <script type="module" src="${liveUrl}"></script>
  </head>
  <body>
    <main>
      <header>
        <img src="${logoUrl}" alt="" width="72" height="72">
        <div>
          <h1>It works: Gatehouse is serving this site</h1>
          <p class="tagline">A static and proxy server that gets HTTP right.</p>
        </div>
      </header>
      <p>
        This page is a small Vite-style build: its stylesheet, script and logo have content hashes in
        their names, so they can be cached for a year as <code>immutable</code>, while this HTML page is
        revalidated with its <code>ETag</code>. The script and stylesheet also ship with precompressed
        <code>.br</code> and <code>.gz</code> siblings.
      </p>
      <h2>What to look at</h2>
      <ul class="features">
        <li>Conditional requests: reload and watch for <code>304 Not Modified</code>.</li>
        <li>Content negotiation: <code>Accept-Encoding: br</code> gets the brotli file without compressing on the fly.</li>
        <li>A custom <a href="/missing-page">404 page</a>, <a href="/robots.txt">robots.txt</a> and
          <a href="/.well-known/security.txt">security.txt</a>.</li>
      </ul>
      <h2>Live: the WebSocket endpoint</h2>
      <p>
        <code>/ws</code> echoes, through <code>ReconnectingWebSocket</code> from the client library, loaded
        as <code>/client/index.js</code> with no bundler. Stop the server and start it again: the panel
        reconnects.
      </p>
      <dl class="live">
        <dt>state</dt><dd id="ws-state">-</dd>
        <dt>reconnects</dt><dd id="ws-reconnects">0</dd>
        <dt>last pong</dt><dd><time id="ws-pong">-</time></dd>
      </dl>
      <h2>How this page was served</h2>
      <button id="inspect" type="button">Inspect response headers</button>
      <div class="table-wrap">
        <table>
          <thead>
            <tr><th>path</th><th>status</th><th>type</th><th>encoding</th><th>cache-control</th><th>etag</th></tr>
          </thead>
          <tbody id="headers"></tbody>
        </table>
      </div>
      <footer>
        &copy; <span id="year">2026</span> Gatehouse contributors.${
          fontUrl
            ? ' Set in Open Sans (<a href="/licenses/open-sans-apache-2.0.txt">Apache License 2.0</a>).'
            : ''
        }
      </footer>
    </main>
  </body>
</html>
`;

const notFoundHtml = ({ cssUrl, logoUrl, fontUrl }) => `<!doctype html>
<html lang="en">
  <head>
    ${head({ title: 'Not found - Gatehouse example site', cssUrl, fontUrl })}
    <meta name="robots" content="noindex">
  </head>
  <body>
    <main>
      <header>
        <img src="${logoUrl}" alt="" width="72" height="72">
        <div>
          <h1>404: nothing here</h1>
          <p class="tagline">The page you asked for does not exist.</p>
        </div>
      </header>
      <p><a href="/">Back to the home page</a></p>
    </main>
  </body>
</html>
`;

const ROBOTS_TXT = `User-agent: *
Allow: /
`;

const SECURITY_TXT = `# Example security.txt (RFC 9116) for the Gatehouse example site.
Contact: mailto:security@example.com
Expires: ${SECURITY_TXT_EXPIRES}
Preferred-Languages: en
Canonical: https://example.com/.well-known/security.txt
`;

// ---------- build ----------

const font = noFont ? undefined : findFont();
const fontLicense = font ? findFontLicense() : undefined;
if (!noFont && !font) {
  console.error(
    `make-example-site: Open Sans Regular (${FONT_FILE}, sha256 ${FONT_SHA256.slice(0, 12)}...) not found.\n` +
      'Pass --font PATH to the woff2 file, or --no-font to build without a web font.',
  );
  process.exit(2);
}
if (font && !fontLicense) {
  console.error('make-example-site: the Open Sans licence text (Apache-2.0) was not found next to the font.');
  process.exit(2);
}

/** @type {Map<string, Buffer>} relative path -> bytes */
const files = new Map();
const add = (path, content) =>
  files.set(path, Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8'));

let fontUrl;
if (font) {
  fontUrl = `/assets/${hashed('open-sans-regular', 'woff2', font)}`;
  add(fontUrl.slice(1), font);
  add('licenses/open-sans-apache-2.0.txt', fontLicense);
}
const logoUrl = `/assets/${hashed('logo', 'svg', LOGO_SVG)}`;
add(logoUrl.slice(1), LOGO_SVG);
const cssText = css(fontUrl);
const cssUrl = `/assets/${hashed('style', 'css', cssText)}`;
add(cssUrl.slice(1), cssText);
const jsUrl = `/assets/${hashed('app', 'js', APP_JS)}`;
add(jsUrl.slice(1), APP_JS);
const liveUrl = `/assets/${hashed('live', 'js', LIVE_JS)}`;
add(liveUrl.slice(1), LIVE_JS);
add('index.html', indexHtml({ cssUrl, jsUrl, liveUrl, logoUrl, fontUrl }));
add('404.html', notFoundHtml({ cssUrl, logoUrl, fontUrl }));
add('favicon.png', makeFaviconPng());
add('robots.txt', ROBOTS_TXT);
add('.well-known/security.txt', SECURITY_TXT);

// Precompressed siblings for the compressible text files, as vite-plugin-compression would write them.
// The client library as built, served as /client/*.js (relative imports inside it; not hashed, so `no-cache`
// with validators). Type declarations are not needed by the page.
const clientDir = join(repoRoot, 'dist/client');
if (!existsSync(join(clientDir, 'index.js'))) {
  console.error(`make-example-site: ${clientDir}/index.js is missing; run npm run build first.`);
  process.exit(2);
}
for (const f of readdirSync(clientDir).sort()) {
  if (f.endsWith('.js')) add(`client/${f}`, readFileSync(join(clientDir, f)));
}
// The client imports the pure cache engine (dist/cache, dist/http) relatively: serve the files it reaches
// at /cache/ and /http/, beside /client/ (test/client/browser-loadable.test.ts keeps that graph clean).
{
  const distDir = join(repoRoot, 'dist');
  const queue = readdirSync(clientDir)
    .filter((f) => f.endsWith('.js'))
    .map((f) => join(clientDir, f));
  const seen = new Set(queue);
  while (queue.length > 0) {
    const file = queue.pop();
    for (const m of readFileSync(file, 'utf8').matchAll(
      /(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g,
    )) {
      const target = resolve(dirname(file), m[1]);
      if (seen.has(target)) continue;
      seen.add(target);
      queue.push(target);
      if (!target.startsWith(clientDir)) add(target.slice(distDir.length + 1), readFileSync(target));
    }
  }
}

for (const path of [jsUrl.slice(1), liveUrl.slice(1), cssUrl.slice(1), logoUrl.slice(1), 'index.html']) {
  const content = files.get(path);
  add(
    `${path}.br`,
    brotliCompressSync(content, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 11,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: content.length,
      },
    }),
  );
  add(`${path}.gz`, gzipSync(content, { level: 9 })); // Node writes mtime 0, so the bytes are stable
}

rmSync(outDir, { recursive: true, force: true });
let total = 0;
for (const [path, bytes] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
  const dest = join(outDir, path);
  mkdirSync(dirname(dest), { recursive: true });
  writeFileSync(dest, bytes);
  total += bytes.length;
  console.log(`${String(bytes.length).padStart(8)}  ${path}`);
}
console.log(`${String(total).padStart(8)}  total in ${outDir}`);
