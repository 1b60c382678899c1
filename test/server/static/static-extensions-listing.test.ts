// What users of serve-static and serve expect: static.extensions (`/about` answers about.html) and an
// opt-in directory listing, against a real server on 127.0.0.1:0.
// matrix: http1 h2 h1-tls adapters runtimes
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { renderListing } from '../../../src/server/static/listing.js';
import { get, makeSite, removeSite, startServer, type TestServer } from '../../helpers/http.js';
import { waitUntil } from '../../helpers/wait.js';

const HOSTILE = '<img src=x onerror=alert(1)>"&.txt';

describe('static.extensions', () => {
  let site: string;
  let s: TestServer;
  let plain: TestServer;
  before(async () => {
    site = makeSite({
      'about.html': '<!doctype html><title>about</title>',
      'docs.html': '<!doctype html><title>docs page</title>',
      'docs/index.html': '<!doctype html><title>docs folder</title>',
      'report.json': '{"a":1}',
      'data.txt': 'plain',
    });
    s = await startServer(site, { static: { extensions: ['html', 'json'], dotfiles: 'allow' } });
    plain = await startServer(site, {});
  });
  after(async () => {
    await s.close();
    await plain.close();
    removeSite(site);
  });

  it('/about answers about.html: 200 text/html with its validators and cache policy', async () => {
    const r = await get(s.url, '/about');
    assert.equal(r.status, 200);
    assert.equal(r.text, '<!doctype html><title>about</title>');
    assert.match(String(r.headers['content-type']), /^text\/html/);
    assert.equal(r.headers['cache-control'], 'no-cache');
    const again = await get(s.url, '/about', { headers: { 'if-none-match': String(r.headers.etag) } });
    assert.equal(again.status, 304);
  });

  it('the same file under its own name too (no redirect), with the same ETag', async () => {
    const a = await get(s.url, '/about');
    const b = await get(s.url, '/about.html');
    assert.equal(b.status, 200);
    assert.equal(a.headers.etag, b.headers.etag);
  });

  it('extensions in order: /report answers report.json', async () => {
    const r = await get(s.url, '/report');
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^application\/json/);
  });

  it('a folder at the path wins over a file with the extension (serve-static)', async () => {
    const r = await get(s.url, '/docs/');
    assert.match(r.text, /docs folder/);
    assert.equal((await get(s.url, '/docs')).status, 301);
  });

  it('with a trailing slash and no folder there, /about/ answers about.html too', async () => {
    assert.match((await get(s.url, '/about/')).text, /about/);
  });

  it('an extension not listed is not tried; off by default', async () => {
    assert.equal((await get(s.url, '/data')).status, 404);
    assert.equal((await get(plain.url, '/about')).status, 404);
  });

  it("Gatehouse's own files stay hidden however they are reached (dotfiles allowed, ext json)", async () => {
    writeFileSync(join(site, '.gatehouse-hashes.json'), '{}');
    assert.equal((await get(s.url, '/.gatehouse-hashes')).status, 404);
  });

  it('a file created later at the bare path takes over', async () => {
    writeFileSync(join(site, 'late.html'), 'from html');
    assert.equal((await get(s.url, '/late')).text, 'from html');
    assert.equal((await get(s.url, '/late')).text, 'from html');
    writeFileSync(join(site, 'late'), 'bare file');
    await waitUntil('the bare file is served', async () => (await get(s.url, '/late')).text === 'bare file');
  });

  it('a bad extension is refused when the config loads, naming the key', async () => {
    await assert.rejects(startServer(site, { static: { extensions: ['.html'] } }), /static\.extensions/);
  });
});

describe('static.directoryListing', () => {
  let site: string;
  let outside: string;
  let s: TestServer;
  let off: TestServer;
  before(async () => {
    site = makeSite({
      'files/b.txt': 'b',
      'files/a.txt': 'a',
      'files/sub/c.txt': 'c',
      'files/.env': 'SECRET=1',
      'files/.hidden/x.txt': 'x',
      'with-index/index.html': 'index page',
    });
    writeFileSync(join(site, 'files', HOSTILE), 'x');
    writeFileSync(join(site, 'files', '.gatehouse-hashes.json'), '{}');
    outside = join(tmpdir(), `gatehouse-listing-outside-${process.pid}`);
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, 'secret.txt'), 'secret');
    symlinkSync(join(outside, 'secret.txt'), join(site, 'files', 'escape.txt'));
    s = await startServer(site, { static: { directoryListing: true } });
    off = await startServer(site, {});
  });
  after(async () => {
    await s.close();
    await off.close();
    removeSite(site);
    rmSync(outside, { recursive: true, force: true });
  });

  it('off by default: a folder without an index is 404', async () => {
    assert.equal((await get(off.url, '/files/')).status, 404);
  });

  it('a folder without an index lists folders first, then files, with relative links', async () => {
    const r = await get(s.url, '/files/');
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/html; charset=utf-8/);
    const links = [...r.text.matchAll(/<a href="([^"]*)">/g)].map((m) => m[1]);
    assert.deepEqual(links, ['../', './sub/', `./${encodeURIComponent(HOSTILE)}`, './a.txt', './b.txt']);
  });

  it('attack: a file name with markup is escaped, never markup', async () => {
    const r = await get(s.url, '/files/');
    assert.ok(!r.text.includes('<img'), 'no raw tag');
    assert.ok(r.text.includes('&lt;img src=x onerror=alert(1)&gt;&quot;&amp;.txt'));
  });

  it('attack: dotfiles, Gatehouse manifests and symlinks out of the root are not listed', async () => {
    const r = await get(s.url, '/files/');
    for (const name of ['.env', '.hidden', '.gatehouse-hashes.json', 'escape.txt']) {
      assert.ok(!r.text.includes(name), `${name} listed`);
    }
  });

  it('validators: ETag and Last-Modified, 304 on If-None-Match, HEAD without a body', async () => {
    const r = await get(s.url, '/files/');
    assert.ok(r.headers.etag);
    assert.ok(r.headers['last-modified']);
    assert.equal(r.headers['cache-control'], 'no-cache');
    const c = await get(s.url, '/files/', { headers: { 'if-none-match': String(r.headers.etag) } });
    assert.equal(c.status, 304);
    const h = await get(s.url, '/files/', { method: 'HEAD' });
    assert.equal(h.status, 200);
    assert.equal(h.body.length, 0);
    assert.equal(h.headers['content-length'], r.headers['content-length']);
  });

  it('a new file shows, with a new ETag', async () => {
    const before = await get(s.url, '/files/');
    writeFileSync(join(site, 'files', 'new.txt'), 'n');
    await waitUntil('the new file is listed', async () =>
      (await get(s.url, '/files/')).text.includes('new.txt'),
    );
    assert.notEqual((await get(s.url, '/files/')).headers.etag, before.headers.etag);
  });

  it('an index file still wins; a folder without its slash is redirected first', async () => {
    assert.equal((await get(s.url, '/with-index/')).text, 'index page');
    assert.equal((await get(s.url, '/files')).status, 301);
  });
});

describe('renderListing (pure)', () => {
  it('the root has no parent link; names escaped in text, encoded in links; the rest counted', () => {
    const html = renderListing('/', [{ name: 'a b&c', folder: false }], 3);
    assert.ok(!html.includes('href="../"'));
    assert.ok(html.includes('<a href="./a%20b%26c">a b&amp;c</a>'));
    assert.match(html, /3 more not listed/);
  });
});

describe("per-file headers as serve-static's setHeaders sets them: a header rule", () => {
  let site: string;
  let s: TestServer;
  before(async () => {
    site = makeSite({ 'downloads/a.pdf': '%PDF-1.4', 'downloads/a.txt': 'text' });
    s = await startServer(site, {
      headers: [{ glob: '/downloads/*.pdf', set: { 'Content-Disposition': 'attachment' } }],
    });
  });
  after(async () => {
    await s.close();
    removeSite(site);
  });

  it('the matching files get the header (as docs/static.md shows), the others do not', async () => {
    assert.equal((await get(s.url, '/downloads/a.pdf')).headers['content-disposition'], 'attachment');
    assert.equal((await get(s.url, '/downloads/a.txt')).headers['content-disposition'], undefined);
  });
});
