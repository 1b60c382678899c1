// Verified ?v= cache busting against a real server on 127.0.0.1:0: a `v` that is a prefix of the file's
// content hash pins it for a year; anything else keeps the file's normal policy.
// matrix: http1 h2 h1-tls adapters runtimes (the static, policy, proxy and cache suites run on every protocol, adapter and runtime)
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { brotliCompressSync, gunzipSync } from 'node:zlib';
import { createServer } from '../../../src/index.js';
import { AssetPathError, assetUrl } from '../../../src/server/static/asset-url.js';
import { get, makeSite, rawConnect, removeSite, startServer, type TestServer } from '../../helpers/http.js';
import { waitUntil, waitUntilEncoded } from '../../helpers/wait.js';

const IMMUTABLE = 'public, max-age=31536000, immutable';
const YEAR_MS = 31536000_000;
const JS = `export const answer = 42;\n${'console.log("gatehouse");\n'.repeat(200)}`;
const CSS = `body { color: #333; }\n${'.x { margin: 0 }\n'.repeat(200)}`;
const HTML = '<!doctype html><title>home</title>';
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const BIG = Buffer.alloc(2 * 1024 * 1024, 'abcdefghij');

/** base64url sha256 of the bytes, first 27 characters: what the strong ETag quotes. */
function hashOf(body: string | Buffer): string {
  return createHash('sha256').update(body).digest('base64url').slice(0, 27);
}

function siteFiles(): Record<string, string | Buffer> {
  return {
    'index.html': HTML,
    'app.js': JS,
    'style.css': CSS,
    'style.css.br': brotliCompressSync(CSS),
    'logo.png': PNG,
    'big.bin': BIG,
    'dir/a b.txt': 'spaced',
  };
}

function assertPinned(r: { headers: Record<string, unknown> }, what: string): void {
  assert.equal(r.headers['cache-control'], IMMUTABLE, what);
  const exp = Date.parse(r.headers.expires as string);
  const date = Date.parse(r.headers.date as string);
  assert.ok(
    Math.abs(exp - date - YEAR_MS) <= 2000,
    `${what}: Expires ${r.headers.expires} vs ${r.headers.date}`,
  );
}

describe('?v= on static files (static.versionParam v)', () => {
  let dir: string;
  let s: TestServer;
  const v = hashOf(JS).slice(0, 10);
  before(async () => {
    dir = makeSite(siteFiles());
    s = await startServer(dir, { static: { maxCachedFileBytes: 1024 * 1024 } });
  });
  after(async () => {
    await s.close();
    removeSite(dir);
  });

  it('without v: the normal policy (no-cache), and the ETag quotes the hash v is compared with', async () => {
    const r = await get(s.url, '/app.js');
    assert.equal(r.headers['cache-control'], 'no-cache');
    assert.equal(r.headers.expires, undefined);
    assert.equal(r.headers.etag, `"${hashOf(JS)}"`);
  });

  const cases: [string, () => string, boolean][] = [
    ['right v (10 characters)', () => `/app.js?v=${v}`, true],
    ['exactly 8 characters', () => `/app.js?v=${v.slice(0, 8)}`, true],
    ['the full 27 characters', () => `/app.js?v=${hashOf(JS)}`, true],
    ['too short (7 characters)', () => `/app.js?v=${v.slice(0, 7)}`, false],
    ['wrong v', () => '/app.js?v=AAAAAAAAAA', false],
    ['longer than the hash', () => `/app.js?v=${hashOf(JS)}x`, false],
    ['empty v', () => '/app.js?v=', false],
    ['v repeated, both right (ambiguous)', () => `/app.js?v=${v}&v=${v}`, false],
    [
      'v in another case',
      () => `/app.js?v=${v.toUpperCase() === v ? v.toLowerCase() : v.toUpperCase()}`,
      false,
    ],
    ['right v after another parameter', () => `/app.js?lang=en&v=${v}`, true],
    ['right v before another parameter', () => `/app.js?v=${v}&lang=en`, true],
    ['right value under another name (V)', () => `/app.js?V=${v}`, false],
  ];
  for (const [name, url, pinned] of cases) {
    it(`${name} -> ${pinned ? 'immutable for a year' : 'normal policy'}`, async () => {
      const r = await get(s.url, url());
      assert.equal(r.status, 200);
      assert.equal(r.text, JS);
      if (pinned) assertPinned(r, url());
      else {
        assert.equal(r.headers['cache-control'], 'no-cache', url());
        assert.equal(r.headers.expires, undefined, url());
      }
    });
  }

  it('HTML stays no-cache with its own right v', async () => {
    for (const path of ['/index.html', '/']) {
      const r = await get(s.url, `${path}?v=${hashOf(HTML).slice(0, 10)}`);
      assert.equal(r.status, 200);
      assert.equal(r.headers['cache-control'], 'no-cache', path);
      assert.equal(r.headers.expires, undefined, path);
    }
  });

  it('an image with its right v: a year immutable instead of 30 days', async () => {
    assert.equal((await get(s.url, '/logo.png')).headers['cache-control'], 'public, max-age=2592000');
    assertPinned(await get(s.url, `/logo.png?v=${hashOf(PNG).slice(0, 10)}`), 'logo.png');
  });

  it('304 with the right v carries the immutable Cache-Control and Expires (RFC 9110 §15.4.5)', async () => {
    const etag = `"${hashOf(JS)}"`;
    const r = await get(s.url, `/app.js?v=${v}`, { headers: { 'if-none-match': etag } });
    assert.equal(r.status, 304);
    assert.equal(r.body.length, 0);
    assertPinned(r, '304');
    const wrong = await get(s.url, '/app.js?v=AAAAAAAAAA', { headers: { 'if-none-match': etag } });
    assert.equal(wrong.status, 304);
    assert.equal(wrong.headers['cache-control'], 'no-cache');
    assert.equal(wrong.headers.expires, undefined);
  });

  it('HEAD and a Range request with the right v are pinned too', async () => {
    assertPinned(await get(s.url, `/app.js?v=${v}`, { method: 'HEAD' }), 'HEAD');
    const r = await get(s.url, `/app.js?v=${v}`, { headers: { range: 'bytes=0-5' } });
    assert.equal(r.status, 206);
    assert.equal(r.text, JS.slice(0, 6));
    assertPinned(r, '206');
  });

  it('content codings: v is the identity hash whatever is served; a variant ETag is not a version', async () => {
    const cssV = hashOf(CSS).slice(0, 10);
    const br = await get(s.url, `/style.css?v=${cssV}`, { headers: { 'accept-encoding': 'br' } });
    assert.equal(br.headers['content-encoding'], 'br');
    assertPinned(br, 'br sibling');
    assert.equal(br.headers.vary, 'Accept-Encoding');
    const brTag = (br.headers.etag as string).slice(1, 11);
    assert.notEqual(brTag, cssV);
    const byBrTag = await get(s.url, `/style.css?v=${brTag}`, { headers: { 'accept-encoding': 'br' } });
    assert.equal(byBrTag.headers['cache-control'], 'no-cache');

    // app.js has no siblings: gzip is compressed on the fly, and v is still the identity hash.
    // (made in the background from the second request on: identity until then)
    const gz = await waitUntilEncoded(s.url, `/app.js?v=${v}`, 'gzip', { files: s.app.static.files });
    assert.equal(gunzipSync(gz.body).toString(), JS);
    assertPinned(gz, 'gzip on the fly');
    const gz304 = await get(s.url, `/app.js?v=${v}`, {
      headers: { 'accept-encoding': 'gzip', 'if-none-match': gz.headers.etag as string },
    });
    assert.equal(gz304.status, 304);
    assertPinned(gz304, 'gzip 304');
  });

  it('a big file streamed from disk is hashed too (strong ETags): its right v pins it', async () => {
    const r = await get(s.url, `/big.bin?v=${hashOf(BIG).slice(0, 10)}`);
    assert.equal(r.body.length, BIG.length);
    assertPinned(r, 'big.bin');
  });

  it('a right v on a missing path: 404, not cached for long', async () => {
    const r = await get(s.url, `/nope.js?v=${v}`, { headers: { accept: 'application/json' } });
    assert.equal(r.status, 404);
    assert.equal(r.headers['cache-control'], 'no-cache');
  });
});

describe('static.versionParam', () => {
  it('renamed to ver: ?ver= is verified, ?v= is an ordinary parameter', async () => {
    const dir = makeSite({ 'app.js': JS });
    const s = await startServer(dir, { static: { versionParam: 'ver' } });
    try {
      const v = hashOf(JS).slice(0, 10);
      assertPinned(await get(s.url, `/app.js?ver=${v}`), 'ver');
      assert.equal((await get(s.url, `/app.js?v=${v}`)).headers['cache-control'], 'no-cache');
      // assetUrl with the server uses its parameter.
      assert.equal(await assetUrl(s.app, '/app.js'), `/app.js?ver=${v}`);
    } finally {
      await s.close();
      removeSite(dir);
    }
  });

  it('a bad name is refused at load, naming the key', () => {
    assert.throws(() => createServer({ static: { versionParam: 'a&b' } }), /static\.versionParam/);
    assert.throws(() => createServer({ static: { versionParam: '' } }), /static\.versionParam/);
  });

  it('your cache rules come first: a rule matching the file beats a verified v', async () => {
    const dir = makeSite({ 'app.js': JS, 'lib.js': `${JS}//lib` });
    const s = await startServer(dir, {
      cachePolicy: [
        { glob: '/app.js', cacheControl: 'no-store' },
        { hashed: true, cacheControl: 'public, max-age=600' },
      ],
    });
    try {
      const r = await get(s.url, `/app.js?v=${hashOf(JS).slice(0, 10)}`);
      assert.equal(r.headers['cache-control'], 'no-store');
      // A verified v counts as a hashed name for `hashed` rules.
      const lib = await get(s.url, `/lib.js?v=${hashOf(`${JS}//lib`).slice(0, 10)}`);
      assert.equal(lib.headers['cache-control'], 'public, max-age=600');
      assert.equal((await get(s.url, '/lib.js')).headers['cache-control'], 'no-cache');
    } finally {
      await s.close();
      removeSite(dir);
    }
  });

  it('weak ETags: files in memory are still verified; a file streamed from disk is not (normal policy)', async () => {
    const dir = makeSite({ 'app.js': JS, 'big.js': BIG });
    const s = await startServer(dir, { static: { etag: 'weak' } });
    try {
      const r = await get(s.url, `/app.js?v=${hashOf(JS).slice(0, 10)}`);
      assert.match(r.headers.etag as string, /^W\//);
      assertPinned(r, 'weak, in memory');
      const big = await get(s.url, `/big.js?v=${hashOf(BIG).slice(0, 10)}`);
      assert.equal(big.headers['cache-control'], 'no-cache');
    } finally {
      await s.close();
      removeSite(dir);
    }
  });
});

describe('assetUrl', () => {
  let dir: string;
  let outside: string;
  let s: TestServer;
  before(async () => {
    dir = makeSite({ ...siteFiles(), '.env': 'SECRET=1', 'p%41.txt': 'percent' });
    outside = makeSite({ 'secret.txt': 'top secret' });
    symlinkSync(join(outside, 'secret.txt'), join(dir, 'link-out.txt'));
    mkdirSync(join(dir, 'empty'));
    s = await startServer(dir);
  });
  after(async () => {
    await s.close();
    removeSite(dir);
    removeSite(outside);
  });

  it('returns /path?v=<first 10 base64url characters of the sha256>, with or without a leading /', async () => {
    const want = `/app.js?v=${hashOf(JS).slice(0, 10)}`;
    assert.equal(await assetUrl(dir, '/app.js'), want);
    assert.equal(await assetUrl(dir, 'app.js'), want);
    assert.equal(await assetUrl(s.app, 'app.js'), want);
    assert.equal(await assetUrl(dir, 'dir/../app.js'), want);
  });

  it('end to end: the URL it returns is pinned by the server, for a root and for a server', async () => {
    for (const url of [await assetUrl(dir, '/app.js'), await assetUrl(s.app, '/logo.png')]) {
      const r = await get(s.url, url);
      assert.equal(r.status, 200, url);
      assertPinned(r, url);
    }
  });

  it('percent-encodes the path like a URL; % in a name is a literal character', async () => {
    const spaced = await assetUrl(dir, 'dir/a b.txt');
    assert.equal(spaced, `/dir/a%20b.txt?v=${hashOf('spaced').slice(0, 10)}`);
    const r = await get(s.url, spaced);
    assert.equal(r.text, 'spaced');
    assertPinned(r, spaced);
    const pct = await assetUrl(dir, 'p%41.txt');
    assert.equal(pct, `/p%2541.txt?v=${hashOf('percent').slice(0, 10)}`);
    assert.equal((await get(s.url, pct)).text, 'percent');
  });

  const refused: [string, string, AssetPathError['code']][] = [
    ['.. above the root', '../secret.txt', 'bad_path'],
    ['.. above the root after a folder', 'dir/../../x', 'bad_path'],
    ['a query', '/app.js?v=1', 'bad_path'],
    ['a fragment', '/app.js#x', 'bad_path'],
    ['a backslash', 'dir\\a b.txt', 'bad_path'],
    ['NUL', 'app.js\0', 'bad_path'],
    ['empty', '', 'bad_path'],
    ['a dotfile', '.env', 'hidden'],
    ['a missing file', 'missing.js', 'not_found'],
    ['a folder', 'empty', 'not_a_file'],
    ['the root', '/', 'not_a_file'],
    ['a symlink leaving the root', 'link-out.txt', 'outside_root'],
  ];
  for (const [name, path, code] of refused) {
    it(`refuses ${name} (${code})`, async () => {
      await assert.rejects(assetUrl(dir, path), (err: unknown) => {
        assert.ok(err instanceof AssetPathError);
        assert.equal(err.code, code);
        assert.ok(!err.message.includes('\n'));
        return true;
      });
    });
  }

  it('a changed file gets a new URL', async () => {
    const d = makeSite({ 'x.js': 'one' });
    try {
      const first = await assetUrl(d, 'x.js');
      writeFileSync(join(d, 'x.js'), 'two');
      assert.notEqual(await assetUrl(d, 'x.js'), first);
      assert.equal(await assetUrl(d, 'x.js'), `/x.js?v=${hashOf('two').slice(0, 10)}`);
    } finally {
      removeSite(d);
    }
  });
});

describe('pinned streamed files', () => {
  const fds = () => readdirSync('/proc/self/fd').length;
  it('no descriptor leaks on pinned full, range, multi-range, 416 and aborted downloads', async () => {
    const body = Buffer.alloc(8 * 1024 * 1024, 7);
    const dir = makeSite({ 'big.bin': body });
    const s = await startServer(dir, { static: { maxCachedFileBytes: 1024 } });
    const path = `/big.bin?v=${hashOf(body).slice(0, 10)}`;
    try {
      // 8 MiB is above static.hashInlineMaxBytes: pinned once the background hash is known.
      await waitUntil('the background hash pins ?v=', async () => {
        return (await get(s.url, path)).headers['cache-control'] === IMMUTABLE;
      });
      assertPinned(await get(s.url, path), 'warm-up');
      const before = fds();
      for (let i = 0; i < 10; i++) {
        const full = await get(s.url, path);
        assert.equal(full.body.length, body.length);
        assertPinned(full, 'full');
        assertPinned(await get(s.url, path, { headers: { range: 'bytes=0-99' } }), 'range');
        assertPinned(await get(s.url, path, { headers: { range: 'bytes=0-9,20-29' } }), 'multi-range');
        const unsat = await get(s.url, path, { headers: { range: `bytes=${body.length}-` } });
        assert.equal(unsat.status, 416);
        await new Promise<void>((resolve) => {
          const sock = rawConnect(s.port);
          sock.on('error', () => {});
          sock.once('data', () => sock.destroy());
          sock.on('close', () => resolve());
          sock.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
        });
      }
      await waitUntil(`descriptors back to ${before} + 2 (now ${fds()})`, () => fds() <= before + 2);
    } finally {
      await s.close();
      removeSite(dir);
    }
  });
});
