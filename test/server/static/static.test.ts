// The static handler against a real server on 127.0.0.1:0.
// matrix: http1 h2 h1-tls adapters runtimes (the static, policy, proxy and cache suites run on every protocol, adapter and runtime)
// On Bun, a raw target with dot segments or `\` reaches Gatehouse already normalized (RAW_TARGET_NORMALIZED,
// test/helpers/runtimes.ts): those cases expect the normalized path's answer there, still never a byte
// from outside the root. zstd on the fly is the serving runtime's (askRuntime: Bun's and Deno's zlib have it).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as zlib from 'node:zlib';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { parseConfig } from '../../../src/config/load.js';
import { ZSTD_ON_THE_FLY } from '../../../src/server/static/files.js';
import {
  get,
  makeSite,
  raw,
  rawConnect,
  rawStatus,
  removeSite,
  startServer,
  type TestServer,
} from '../../helpers/http.js';
import { askRuntime } from '../../helpers/runtime-server.js';
import { onRuntime, RAW_TARGET_NORMALIZED } from '../../helpers/runtimes.js';
import { waitUntil, waitUntilElapsed, waitUntilEncoded } from '../../helpers/wait.js';

const JS = `export const answer = 42;\n${'console.log("gatehouse");\n'.repeat(200)}`;
const CSS = `body { color: #333; }\n${'.x { margin: 0 }\n'.repeat(200)}`;
const BIG = Buffer.alloc(3 * 1024 * 1024, 'abcdefghij');
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

/**
 * A zstd frame (RFC 8878 §3.1.1) of raw blocks: valid zstd that any decoder reads, made without a zstd
 * compressor (Node 20's zlib has none). Single segment, 4-byte content size, no checksum.
 */
function zstdRawFrame(data: Buffer): Buffer {
  const head = Buffer.alloc(9);
  head.writeUInt32LE(0xfd2fb528, 0); // Magic_Number
  head[4] = 0xa0; // Frame_Content_Size_flag 2 (4 bytes), Single_Segment_flag 1
  head.writeUInt32LE(data.length, 5);
  const parts: Buffer[] = [head];
  const MAX = 128 * 1024; // Block_Maximum_Size
  for (let off = 0; off < data.length || off === 0; off += MAX) {
    const chunk = data.subarray(off, off + MAX);
    const last = off + MAX >= data.length ? 1 : 0;
    const bh = Buffer.alloc(3);
    bh.writeUIntLE(last | (0 << 1) | (chunk.length << 3), 0, 3); // Block_Type 0: Raw_Block
    parts.push(bh, chunk);
    if (last) break;
  }
  return Buffer.concat(parts);
}
const zstdDecompress = (zlib as unknown as { zstdDecompressSync?: (b: Buffer) => Buffer }).zstdDecompressSync;

function siteFiles(): Record<string, string | Buffer> {
  return {
    'index.html': '<!doctype html><title>home</title>',
    'about/index.html': '<!doctype html><title>about</title>',
    'empty-dir/.keep': '',
    'notes.txt': 'hello, world\n',
    'data.json': JSON.stringify({ a: 1, pad: 'x'.repeat(2000) }),
    'assets/app-3f2a9c1b.js': JS,
    'assets/app-3f2a9c1b.js.br': brotliCompressSync(JS),
    'assets/app-3f2a9c1b.js.gz': gzipSync(JS),
    'assets/vendor-9a8b7c6d.js': JS,
    'assets/vendor-9a8b7c6d.js.zst': zstdRawFrame(Buffer.from(JS)),
    'assets/vendor-9a8b7c6d.js.br': brotliCompressSync(JS),
    'assets/style.css': CSS,
    'assets/lazy.css': CSS,
    'assets/lazy(ranges).css': CSS,
    'assets/lazy-3f2a9c1b.js': JS,
    'logo.png': PNG,
    'font.woff2': Buffer.alloc(2000, 1),
    'big.bin': BIG,
    '.env': 'SECRET=1',
    '.git/config': '[core]',
    '.well-known/security.txt': 'Contact: mailto:security@example.com\n',
    '404.html': '<!doctype html><title>not here</title>',
  };
}

describe('static server', () => {
  let dir: string;
  let outside: string;
  let s: TestServer;
  before(async () => {
    dir = makeSite(siteFiles());
    // A sibling folder whose name starts with the root's name: never reachable.
    outside = makeSite({ 'secret.txt': 'top secret' });
    symlinkSync(join(outside, 'secret.txt'), join(dir, 'link-out.txt'));
    symlinkSync(join(dir, 'notes.txt'), join(dir, 'link-in.txt'));
    s = await startServer(dir, { static: { maxCachedFileBytes: 1024 * 1024 } });
  });
  after(async () => {
    await s.close();
    removeSite(dir);
    removeSite(outside);
  });

  describe('representation metadata', () => {
    it('GET a file: 200 with type, length, strong content-hash ETag, Last-Modified, policy', async () => {
      const r = await get(s.url, '/notes.txt');
      assert.equal(r.status, 200);
      assert.equal(r.text, 'hello, world\n');
      assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(r.headers['content-length'], '13');
      const hash = createHash('sha256').update('hello, world\n').digest('base64url').slice(0, 27);
      assert.equal(r.headers.etag, `"${hash}"`);
      assert.match(r.headers['last-modified']!, /^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
      assert.equal(r.headers['cache-control'], 'no-cache');
      assert.equal(r.headers['accept-ranges'], 'bytes');
      assert.equal(r.headers.expires, undefined);
      assert.ok(r.headers.date);
    });

    it('HEAD: same headers as GET, no body', async () => {
      const g = await get(s.url, '/data.json');
      const h = await get(s.url, '/data.json', { method: 'HEAD' });
      assert.equal(h.status, 200);
      assert.equal(h.body.length, 0);
      for (const k of ['content-type', 'content-length', 'etag', 'last-modified', 'cache-control']) {
        assert.equal(h.headers[k], g.headers[k], k);
      }
    });

    it('hashed asset: public, max-age=31536000, immutable, with Expires a year ahead', async () => {
      const r = await get(s.url, '/assets/app-3f2a9c1b.js');
      assert.equal(r.headers['cache-control'], 'public, max-age=31536000, immutable');
      const exp = Date.parse(r.headers.expires!);
      const date = Date.parse(r.headers.date!);
      assert.ok(Math.abs(exp - date - 31536000_000) <= 2000, `${r.headers.expires} vs ${r.headers.date}`);
    });

    it('HTML no-cache, images 30 days, fonts a year, other files no-cache', async () => {
      assert.equal((await get(s.url, '/')).headers['cache-control'], 'no-cache');
      assert.equal((await get(s.url, '/logo.png')).headers['cache-control'], 'public, max-age=2592000');
      assert.equal((await get(s.url, '/font.woff2')).headers['cache-control'], 'public, max-age=31536000');
      assert.equal((await get(s.url, '/assets/style.css')).headers['cache-control'], 'no-cache');
    });
  });

  describe('conditional requests (RFC 9110 §13.2.2)', () => {
    it('If-None-Match with the ETag -> 304 with the ETag, Cache-Control, Expires, Vary, Date, no body', async () => {
      const r = await get(s.url, '/assets/app-3f2a9c1b.js', { headers: { 'accept-encoding': 'br' } });
      const c = await get(s.url, '/assets/app-3f2a9c1b.js', {
        headers: { 'accept-encoding': 'br', 'if-none-match': r.headers.etag! },
      });
      assert.equal(c.status, 304);
      assert.equal(c.body.length, 0);
      assert.equal(c.headers.etag, r.headers.etag);
      // RFC 9110 §15.4.5: no other representation metadata; Last-Modified only helps without an ETag.
      assert.ok(r.headers['last-modified']);
      assert.equal(c.headers['last-modified'], undefined);
      assert.equal(c.headers['content-type'], undefined);
      assert.equal(c.headers['cache-control'], r.headers['cache-control']);
      assert.equal(c.headers.vary, 'Accept-Encoding');
      assert.ok(c.headers.expires);
      assert.ok(c.headers.date);
      assert.equal(c.headers['content-length'], undefined);
    });

    it('If-None-Match: a weak form of the tag in a list still matches (weak comparison)', async () => {
      const { etag } = (await get(s.url, '/notes.txt')).headers;
      const c = await get(s.url, '/notes.txt', { headers: { 'if-none-match': `"nope", W/${etag}` } });
      assert.equal(c.status, 304);
    });

    it('If-None-Match: * -> 304 for an existing file', async () => {
      assert.equal((await get(s.url, '/notes.txt', { headers: { 'if-none-match': '*' } })).status, 304);
    });

    it('If-None-Match present and not matching: If-Modified-Since is ignored -> 200', async () => {
      const r = await get(s.url, '/notes.txt', {
        headers: { 'if-none-match': '"other"', 'if-modified-since': 'Fri, 01 Jan 2100 00:00:00 GMT' },
      });
      assert.equal(r.status, 200);
    });

    it('If-Modified-Since at or after Last-Modified -> 304; before -> 200', async () => {
      const { 'last-modified': lm } = (await get(s.url, '/notes.txt')).headers;
      assert.equal((await get(s.url, '/notes.txt', { headers: { 'if-modified-since': lm! } })).status, 304);
      const r = await get(s.url, '/notes.txt', {
        headers: { 'if-modified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' },
      });
      assert.equal(r.status, 200);
    });

    it('If-Match with another tag -> 412; with the strong tag -> 200', async () => {
      const { etag } = (await get(s.url, '/notes.txt')).headers;
      assert.equal((await get(s.url, '/notes.txt', { headers: { 'if-match': '"other"' } })).status, 412);
      assert.equal((await get(s.url, '/notes.txt', { headers: { 'if-match': etag! } })).status, 200);
      assert.equal((await get(s.url, '/notes.txt', { headers: { 'if-match': `W/${etag}` } })).status, 412);
    });

    it('If-Unmodified-Since before Last-Modified -> 412', async () => {
      const r = await get(s.url, '/notes.txt', {
        headers: { 'if-unmodified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' },
      });
      assert.equal(r.status, 412);
    });
  });

  describe('ranges (RFC 9110 §14)', () => {
    it('single range -> 206 with Content-Range', async () => {
      const r = await get(s.url, '/notes.txt', { headers: { range: 'bytes=0-4' } });
      assert.equal(r.status, 206);
      assert.equal(r.text, 'hello');
      assert.equal(r.headers['content-range'], 'bytes 0-4/13');
      assert.equal(r.headers['content-length'], '5');
    });

    it('suffix range bytes=-6 is the last six bytes', async () => {
      const r = await get(s.url, '/notes.txt', { headers: { range: 'bytes=-6' } });
      assert.equal(r.status, 206);
      assert.equal(r.text, 'world\n');
      assert.equal(r.headers['content-range'], 'bytes 7-12/13');
    });

    it('range on a streamed (uncached) file', async () => {
      const r = await get(s.url, '/big.bin', { headers: { range: 'bytes=1000000-1000009' } });
      assert.equal(r.status, 206);
      assert.deepEqual(r.body, BIG.subarray(1000000, 1000010));
    });

    it('several ranges -> multipart/byteranges with a part each', async () => {
      const r = await get(s.url, '/notes.txt', { headers: { range: 'bytes=0-1,7-8' } });
      assert.equal(r.status, 206);
      const m = /^multipart\/byteranges; boundary=(.+)$/.exec(r.headers['content-type']!);
      assert.ok(m);
      assert.equal(Number(r.headers['content-length']), r.body.length);
      assert.match(r.text, /Content-Range: bytes 0-1\/13\r\n\r\nhe\r\n/);
      assert.match(r.text, /Content-Range: bytes 7-8\/13\r\n\r\nwo\r\n/);
      assert.ok(r.text.endsWith(`--${m[1]}--\r\n`));
    });

    it('unsatisfiable -> 416 with Content-Range: bytes */size', async () => {
      const r = await get(s.url, '/notes.txt', { headers: { range: 'bytes=100-200' } });
      assert.equal(r.status, 416);
      assert.equal(r.headers['content-range'], 'bytes */13');
    });

    it('invalid range or another unit is ignored -> 200', async () => {
      assert.equal((await get(s.url, '/notes.txt', { headers: { range: 'bytes=5-1' } })).status, 200);
      assert.equal((await get(s.url, '/notes.txt', { headers: { range: 'items=0-1' } })).status, 200);
    });

    it('If-Range with the strong ETag -> 206; another tag or a weak tag -> 200 full', async () => {
      const { etag, 'last-modified': lm } = (await get(s.url, '/notes.txt')).headers;
      const ok = await get(s.url, '/notes.txt', { headers: { range: 'bytes=0-4', 'if-range': etag! } });
      assert.equal(ok.status, 206);
      const other = await get(s.url, '/notes.txt', { headers: { range: 'bytes=0-4', 'if-range': '"x"' } });
      assert.equal(other.status, 200);
      assert.equal(other.text, 'hello, world\n');
      const weak = await get(s.url, '/notes.txt', {
        headers: { range: 'bytes=0-4', 'if-range': `W/${etag}` },
      });
      assert.equal(weak.status, 200);
      const date = await get(s.url, '/notes.txt', { headers: { range: 'bytes=0-4', 'if-range': lm! } });
      assert.equal(date.status, 206);
    });
  });

  describe('methods', () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      it(`${method} -> 405 with Allow: GET, HEAD, OPTIONS`, async () => {
        const r = await get(s.url, '/notes.txt', { method, headers: { accept: 'application/json' } });
        assert.equal(r.status, 405);
        assert.equal(r.headers.allow, 'GET, HEAD, OPTIONS');
        assert.equal(r.headers['content-type'], 'application/problem+json');
        assert.equal(JSON.parse(r.text).status, 405);
      });
    }
    it('OPTIONS -> 204 with Allow', async () => {
      const r = await get(s.url, '/notes.txt', { method: 'OPTIONS' });
      assert.equal(r.status, 204);
      assert.equal(r.headers.allow, 'GET, HEAD, OPTIONS');
    });
    // The path is resolved before the method is looked at: what GET may not see, no method may.
    const refused: [string, string, number][] = [
      ['dotfile', '/.env', 404],
      ['encoded dotfile', '/%2eenv', 404],
      ['symlink leaving the root', '/link-out.txt', 404],
      ['encoded slash', '/a%2fb.txt', 400],
    ];
    for (const [name, path, status] of refused)
      for (const method of ['POST', 'OPTIONS', 'PROPFIND']) {
        it(`${method} to a refused path (${name}) -> ${status}, not 405`, async () => {
          const r = await get(s.url, path, { method, headers: { accept: 'application/json' } });
          assert.equal(r.status, status);
          assert.equal(r.headers.allow, undefined);
          assert.doesNotMatch(r.text, /SECRET/);
        });
      }
  });

  describe('paths', () => {
    it('URL over limits.maxUrlBytes -> 414', async () => {
      const r = await get(s.url, `/${'a'.repeat(9000)}`);
      assert.equal(r.status, 414);
    });

    // Bun resolves raw dot segments before Gatehouse sees them (RAW_TARGET_NORMALIZED): /secret.txt,
    // which is not in the root, so 404 there.
    const dotDot = RAW_TARGET_NORMALIZED ? 404 : 400;
    const hostile: [string, string, number][] = [
      ['dot-dot above the root', '/../secret.txt', dotDot],
      ['encoded dot-dot', '/%2e%2e/secret.txt', dotDot],
      ['encoded slash dot-dot', '/..%2fsecret.txt', 400],
      ['dot-dot after a segment climbs above', '/assets/../../secret.txt', dotDot],
      ['double-encoded dot-dot stays literal', '/%252e%252e/secret.txt', 404],
      ['encoded backslash', '/..%5csecret.txt', 400],
      ['encoded NUL', '/notes.txt%00.png', 400],
      ['malformed percent-encoding', '/%zz', 400],
      ['dotfile', '/.env', 404],
      ['dot folder', '/.git/config', 404],
      ['encoded dotfile', '/%2eenv', 404],
      ['symlink leaving the root', '/link-out.txt', 404],
    ];
    for (const [name, path, status] of hostile) {
      it(`${name}: ${path} -> ${status}`, async () => {
        const text = await raw(
          s.port,
          `GET ${path} HTTP/1.1\r\nHost: x\r\nAccept: */*\r\nConnection: close\r\n\r\n`,
        );
        assert.equal(rawStatus(text), status, text.slice(0, 200));
        assert.ok(!text.includes('top secret') && !text.includes('SECRET'));
      });
    }

    it('a sibling folder sharing the root name prefix is unreachable', async () => {
      const sibling = `${dir}2`;
      writeFileSync(`${sibling}.txt`, 'nope');
      const name = sibling.slice(sibling.lastIndexOf('/') + 1);
      const text = await raw(s.port, `GET /../${name}.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      assert.ok([400, 404].includes(rawStatus(text)));
      assert.ok(!text.includes('nope'));
    });

    it('backslash in the raw target -> 400', async () => {
      const text = await raw(
        s.port,
        'GET /..\\..\\etc\\passwd HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      );
      // Bun reads `\` as `/` and resolves the dot segments (RAW_TARGET_NORMALIZED): /etc/passwd in the root.
      assert.equal(rawStatus(text), RAW_TARGET_NORMALIZED ? 404 : 400);
      assert.ok(!text.includes('root:'), text.slice(0, 200));
    });

    it('dot segments inside the root are normalised', async () => {
      const r = await get(s.url, '/assets/../notes.txt');
      assert.equal(r.status, 200);
      assert.equal(r.text, 'hello, world\n');
    });

    it('/.well-known/ is served', async () => {
      const r = await get(s.url, '/.well-known/security.txt');
      assert.equal(r.status, 200);
      assert.match(r.text, /Contact:/);
    });

    it('a symlink inside the root is served', async () => {
      assert.equal((await get(s.url, '/link-in.txt')).text, 'hello, world\n');
    });

    it('absolute-form target is served by its path', async () => {
      const text = await raw(
        s.port,
        'GET http://x/notes.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      );
      assert.equal(rawStatus(text), 200);
    });

    it('directory without slash -> 301 to the slash form, query kept', async () => {
      const r = await get(s.url, '/about?x=1');
      assert.equal(r.status, 301);
      assert.equal(r.headers.location, '/about/?x=1');
    });

    it('directory redirect never points off-site (//host, encoded names)', async () => {
      const r = await get(s.url, '//about');
      assert.equal(r.status, 301);
      assert.equal(r.headers.location, '/about/');
      const e = await get(s.url, '/%61bout');
      assert.equal(e.headers.location, '/about/');
    });

    it('directory with slash -> its index.html', async () => {
      const r = await get(s.url, '/about/');
      assert.equal(r.status, 200);
      assert.match(r.text, /about/);
      assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
    });

    it('directory without an index -> 404', async () => {
      assert.equal(
        (await get(s.url, '/empty-dir/', { headers: { accept: 'application/json' } })).status,
        404,
      );
    });

    it('a file with a trailing slash -> 404', async () => {
      assert.equal(
        (await get(s.url, '/notes.txt/', { headers: { accept: 'application/json' } })).status,
        404,
      );
    });
  });

  describe('not found', () => {
    it('browsers get the custom 404.html with status 404, not cached for long', async () => {
      const r = await get(s.url, '/nope', { headers: { accept: 'text/html,*/*;q=0.8' } });
      assert.equal(r.status, 404);
      assert.match(r.text, /not here/);
      assert.equal(r.headers['cache-control'], 'no-cache');
    });
    it('API clients get application/problem+json (RFC 9457)', async () => {
      const r = await get(s.url, '/nope', { headers: { accept: 'application/json' } });
      assert.equal(r.status, 404);
      assert.equal(r.headers['content-type'], 'application/problem+json');
      const p = JSON.parse(r.text);
      assert.equal(p.status, 404);
      assert.equal(p.title, 'Not Found');
      assert.equal(r.headers['cache-control'], 'no-cache');
    });
  });

  describe('content coding', () => {
    it('precompressed br sibling for Accept-Encoding: br; gzip sibling for gzip; identity otherwise', async () => {
      const br = await get(s.url, '/assets/app-3f2a9c1b.js', {
        headers: { 'accept-encoding': 'gzip, deflate, br' },
      });
      assert.equal(br.headers['content-encoding'], 'br');
      assert.equal(brotliDecompressSync(br.body).toString(), JS);
      const gz = await get(s.url, '/assets/app-3f2a9c1b.js', { headers: { 'accept-encoding': 'gzip' } });
      assert.equal(gz.headers['content-encoding'], 'gzip');
      assert.equal(gunzipSync(gz.body).toString(), JS);
      const id = await get(s.url, '/assets/app-3f2a9c1b.js');
      assert.equal(id.headers['content-encoding'], undefined);
      assert.equal(id.text, JS);
      const tags = new Set([br.headers.etag, gz.headers.etag, id.headers.etag]);
      assert.equal(tags.size, 3, 'each variant has its own ETag');
      for (const r of [br, gz, id]) assert.equal(r.headers.vary, 'Accept-Encoding');
    });

    it('Vary: Accept-Encoding on 206 too, and the range is of the selected variant', async () => {
      const r = await get(s.url, '/assets/app-3f2a9c1b.js', {
        headers: { 'accept-encoding': 'br', range: 'bytes=0-9' },
      });
      assert.equal(r.status, 206);
      assert.equal(r.headers.vary, 'Accept-Encoding');
      assert.equal(r.headers['content-encoding'], 'br');
      assert.deepEqual(r.body, brotliCompressSync(JS).subarray(0, 10));
    });

    it('q=0 refuses a coding', async () => {
      const r = await get(s.url, '/assets/app-3f2a9c1b.js', {
        headers: { 'accept-encoding': 'br;q=0, gzip' },
      });
      assert.equal(r.headers['content-encoding'], 'gzip');
    });

    it('compressible file without siblings: identity (private) until kept and compressed off the request path, then compressed once per level, with its own ETag', async () => {
      const files = s.app.static.files;
      const br = { 'accept-encoding': 'br' };
      const made = async () => {
        const c = await files.compressionStats();
        return c.done.fast + c.done.best + c.queued.fast + c.running.fast + c.dropped;
      };
      const before = await files.compressionStats();
      // The first request: not kept (admission on second use), so nothing is compressed.
      const first = await get(s.url, '/assets/lazy.css', { headers: br });
      assert.equal(first.headers['content-encoding'], undefined);
      assert.equal(first.text, CSS);
      assert.equal(first.headers.vary, 'Accept-Encoding');
      // Only the client keeps the identity it got instead of br (RFC 9111 §5.2.2.7), without Expires.
      assert.equal(first.headers['cache-control'], 'private, no-cache');
      assert.equal(
        await made(),
        before.done.fast + before.done.best + before.dropped,
        'no compression started',
      );
      // The second: kept; its variant is made in the background, and this answer does not wait for it.
      const second = await get(s.url, '/assets/lazy.css', { headers: br });
      assert.equal(second.headers['content-encoding'], undefined);
      assert.equal(second.headers.etag, first.headers.etag);
      const a = await waitUntilEncoded(s.url, '/assets/lazy.css', 'br');
      assert.equal(brotliDecompressSync(a.body).toString(), CSS);
      assert.equal(a.headers.vary, 'Accept-Encoding');
      assert.equal(a.headers['cache-control'], 'no-cache');
      // Then once more at the highest level, in the background; nothing after that.
      await waitUntil('the highest level is made', async () => {
        const c = await files.compressionStats();
        return c.done.best === before.done.best + 1 && c.queued.best + c.running.best === 0;
      });
      const b = await get(s.url, '/assets/lazy.css', { headers: br });
      assert.equal(brotliDecompressSync(b.body).toString(), CSS);
      assert.ok(b.body.length <= a.body.length, `${b.body.length} <= ${a.body.length}`);
      const again = await get(s.url, '/assets/lazy.css', { headers: br });
      assert.equal(again.headers.etag, b.headers.etag);
      const after = await files.compressionStats();
      assert.equal(after.done.fast, before.done.fast + 1, 'one fast compression');
      assert.equal(after.done.best, before.done.best + 1, 'one at the highest level');
      const id = await get(s.url, '/assets/lazy.css');
      assert.notEqual(id.headers.etag, b.headers.etag);
      assert.equal(id.headers['cache-control'], 'no-cache', 'no coding asked for: the normal policy');
      const c = await get(s.url, '/assets/lazy.css', {
        headers: { ...br, 'if-none-match': b.headers.etag! },
      });
      assert.equal(c.status, 304);
      assert.equal(c.headers.vary, 'Accept-Encoding');
    });

    it('the identity answer sent while br is not made: 304 and 206 right, HEAD as GET, all private', async () => {
      const br = { 'accept-encoding': 'br' };
      // Each request spells the path its own way (a sub-delimiter is not decoded in the canonical
      // target, RFC 3986 §6.2.2.2): the first request of each, so none is kept and nothing is
      // compressed between them (the view keys entries by the raw path).
      const spellings = ['lazy(ranges)', 'lazy%28ranges)', 'lazy(ranges%29', 'lazy%28ranges%29'].map(
        (name) => `/assets/${name}.css`,
      );
      const files = s.app.static.files;
      const before = await files.compressionStats();
      const g = await get(s.url, spellings[0]!, { headers: br });
      assert.equal(g.status, 200);
      assert.equal(g.headers['content-encoding'], undefined);
      assert.equal(g.headers['cache-control'], 'private, no-cache');
      assert.equal(g.headers.expires, undefined);
      const etag = g.headers.etag!;
      const h = await get(s.url, spellings[1]!, { method: 'HEAD', headers: br });
      assert.equal(h.status, 200);
      for (const k of ['content-type', 'content-length', 'etag', 'cache-control', 'vary', 'content-encoding'])
        assert.equal(h.headers[k], g.headers[k], `HEAD ${k}`);
      const n = await get(s.url, spellings[2]!, { headers: { ...br, 'if-none-match': etag } });
      assert.equal(n.status, 304);
      assert.equal(n.headers.etag, etag);
      assert.equal(n.headers['cache-control'], 'private, no-cache', 'a 304 does not widen who may keep it');
      assert.equal(n.headers.vary, 'Accept-Encoding');
      const r = await get(s.url, spellings[3]!, { headers: { ...br, range: 'bytes=0-9', 'if-range': etag } });
      assert.equal(r.status, 206);
      assert.equal(r.headers['content-encoding'], undefined);
      assert.equal(r.text, CSS.slice(0, 10));
      assert.equal(r.headers['content-range'], `bytes 0-9/${CSS.length}`);
      assert.equal(r.headers['cache-control'], 'private, no-cache');
      const after = await files.compressionStats();
      const started = (c: typeof before) => c.queued.fast + c.running.fast + c.done.fast + c.dropped;
      assert.equal(started(after), started(before), 'nothing compressed for files not kept');
    });

    it('a hashed asset sent identity while br is made keeps its lifetime for the client only', async () => {
      const r = await get(s.url, '/assets/lazy-3f2a9c1b.js', { headers: { 'accept-encoding': 'br' } });
      assert.equal(r.headers['content-encoding'], undefined);
      assert.equal(r.headers['cache-control'], 'private, max-age=31536000, immutable');
      assert.equal(r.headers.expires, undefined);
      const plain = await get(s.url, '/assets/lazy-3f2a9c1b.js');
      assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.ok(plain.headers.expires);
    });

    it("a .zst sibling (RFC 8878) is served for zstd, by the client's q-values, on every Node", async () => {
      const sibling = zstdRawFrame(Buffer.from(JS));
      if (zstdDecompress)
        assert.equal(zstdDecompress(sibling).toString(), JS, 'the test frame is valid zstd');
      const only = await get(s.url, '/assets/vendor-9a8b7c6d.js', { headers: { 'accept-encoding': 'zstd' } });
      assert.equal(only.headers['content-encoding'], 'zstd');
      assert.deepEqual(only.body, sibling);
      assert.equal(only.headers.vary, 'Accept-Encoding');
      // Chromium's list: every coding at q=1, so the server's order decides (br first).
      const chrome = await get(s.url, '/assets/vendor-9a8b7c6d.js', {
        headers: { 'accept-encoding': 'gzip, deflate, br, zstd' },
      });
      assert.equal(chrome.headers['content-encoding'], 'br');
      const preferred = await get(s.url, '/assets/vendor-9a8b7c6d.js', {
        headers: { 'accept-encoding': 'br;q=0.5, zstd' },
      });
      assert.equal(preferred.headers['content-encoding'], 'zstd');
      const refused = await get(s.url, '/assets/vendor-9a8b7c6d.js', {
        headers: { 'accept-encoding': 'zstd;q=0, gzip' },
      });
      assert.equal(refused.headers['content-encoding'], undefined, 'no .gz sibling: identity');
      assert.equal(refused.text, JS);
      const tags = new Set([only.headers.etag, chrome.headers.etag, refused.headers.etag]);
      assert.equal(tags.size, 3, 'each variant has its own ETag');
      const range = await get(s.url, '/assets/vendor-9a8b7c6d.js', {
        headers: { 'accept-encoding': 'zstd', range: 'bytes=0-3' },
      });
      assert.equal(range.status, 206);
      assert.deepEqual(range.body, sibling.subarray(0, 4));
    });

    it('zstd on the fly whenever the serving zlib has zstd, else br/gzip/identity only', async () => {
      // The serving process's zlib: this Node's, or (the runtime matrix) the runtime child's, which also
      // decodes the body when this Node has no zstd (Node 20).
      const { onTheFly, zlibHasZstd } = onRuntime()
        ? await askRuntime<{ onTheFly: boolean; zlibHasZstd: boolean }>(s.app, 'zstd')
        : { onTheFly: ZSTD_ON_THE_FLY, zlibHasZstd: zstdDecompress !== undefined };
      const coding = onTheFly ? 'zstd' : 'gzip';
      const r = await waitUntilEncoded(s.url, '/assets/style.css', coding, {
        acceptEncoding: 'zstd, gzip;q=0.5',
      });
      if (onTheFly) {
        assert.equal(r.headers['content-encoding'], 'zstd');
        const decoded =
          zstdDecompress?.(r.body) ??
          Buffer.from(await askRuntime<string>(s.app, 'zstdDecompress', r.body.toString('base64')), 'base64');
        assert.equal(decoded.toString(), CSS);
      } else {
        assert.equal(r.headers['content-encoding'], 'gzip');
        assert.equal(gunzipSync(r.body).toString(), CSS);
      }
      assert.equal(onTheFly, zlibHasZstd, 'on whenever the serving zlib has zstd');
    });

    it('small bodies, images and woff2 are not compressed and have no Vary', async () => {
      for (const p of ['/notes.txt', '/logo.png', '/font.woff2']) {
        const r = await get(s.url, p, { headers: { 'accept-encoding': 'gzip, br' } });
        assert.equal(r.headers['content-encoding'], undefined, p);
        assert.equal(r.headers.vary, undefined, p);
      }
    });
  });
});

describe('validators that scale out', () => {
  it('two replicas of the same bytes give the same strong ETag; weak mode gives W/"size-mtime"', async () => {
    const a = makeSite({ 'x.txt': 'same bytes' });
    const b = makeSite({ 'x.txt': 'same bytes' });
    utimesSync(join(b, 'x.txt'), new Date(1e12), new Date(1e12));
    const sa = await startServer(a);
    const sb = await startServer(b);
    const sw = await startServer(b, { static: { etag: 'weak' } });
    try {
      const ea = (await get(sa.url, '/x.txt')).headers.etag;
      const eb = (await get(sb.url, '/x.txt')).headers.etag;
      assert.equal(ea, eb);
      assert.match(ea!, /^"[A-Za-z0-9_-]+"$/);
      assert.equal((await get(sw.url, '/x.txt')).headers.etag, `W/"a-${(1e12).toString(16)}"`);
    } finally {
      await Promise.all([sa.close(), sb.close(), sw.close()]);
      removeSite(a);
      removeSite(b);
    }
  });
});

describe('SPA fallback', () => {
  let dir: string;
  let s: TestServer;
  before(async () => {
    dir = makeSite({ 'index.html': '<!doctype html><title>app</title>', 'assets/app-3f2a9c1b.js': 'x' });
    s = await startServer(dir, { static: { spa: true } });
  });
  after(async () => {
    await s.close();
    removeSite(dir);
  });
  const html = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
  it('a navigation to an unknown route gets index.html, no-cache, Vary: Accept', async () => {
    const r = await get(s.url, '/users/42', { headers: html });
    assert.equal(r.status, 200);
    assert.match(r.text, /app/);
    assert.equal(r.headers['cache-control'], 'no-cache');
    assert.match(r.headers.vary!, /Accept/);
  });
  it('HEAD navigation too', async () => {
    const r = await get(s.url, '/users/42', { method: 'HEAD', headers: html });
    assert.equal(r.status, 200);
  });
  it('not for non-HTML requests, asset-looking paths or the assets folder', async () => {
    assert.equal((await get(s.url, '/users/42', { headers: { accept: 'application/json' } })).status, 404);
    assert.equal((await get(s.url, '/missing.js', { headers: html })).status, 404);
    assert.equal((await get(s.url, '/assets/chunk', { headers: html })).status, 404);
    assert.equal((await get(s.url, '/users/42', { method: 'POST', headers: html })).status, 405);
  });
  it('the fallback answers conditional requests', async () => {
    const { etag } = (await get(s.url, '/a', { headers: html })).headers;
    assert.equal((await get(s.url, '/b', { headers: { ...html, 'if-none-match': etag! } })).status, 304);
  });
  it('a deep link whose last segment has a dot is 404 without spaRoutes', async () => {
    assert.equal((await get(s.url, '/users/john.doe', { headers: html })).status, 404);
  });
});

describe('SPA fallback: static.spaRoutes', () => {
  let dir: string;
  let s: TestServer;
  const html = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
  before(async () => {
    dir = makeSite({
      'index.html': '<!doctype html><title>app</title>',
      'users/export.csv': 'id,name',
      'assets/app-3f2a9c1b.js': 'x',
    });
    s = await startServer(dir, { static: { spa: true, spaRoutes: ['/users/**', '/assets/**'] } });
  });
  after(async () => {
    await s.close();
    removeSite(dir);
  });
  it('a navigation under a listed glob falls back even with a dot in the last segment', async () => {
    const r = await get(s.url, '/users/john.doe', { headers: html });
    assert.equal(r.status, 200);
    assert.match(r.text, /<title>app<\/title>/);
    assert.equal(r.headers['cache-control'], 'no-cache');
    assert.match(r.headers.vary!, /Accept/);
    assert.equal((await get(s.url, '/users/a/b.c.d', { headers: html })).status, 200);
  });
  it('a file that exists under the glob is still the file', async () => {
    const r = await get(s.url, '/users/export.csv', { headers: html });
    assert.equal(r.status, 200);
    assert.equal(r.text, 'id,name');
  });
  it('not for requests that do not want HTML, paths outside the globs, or the assets folder', async () => {
    assert.equal(
      (await get(s.url, '/users/john.doe', { headers: { accept: 'application/json' } })).status,
      404,
    );
    assert.equal((await get(s.url, '/other/john.doe', { headers: html })).status, 404);
    // Listed or not, a missing chunk is 404: a stale tab must never get index.html as JavaScript.
    assert.equal((await get(s.url, '/assets/app-0000.js', { headers: html })).status, 404);
  });
  it('a glob that does not start with / is a config error naming the key', () => {
    assert.throws(() => parseConfig({ static: { spa: true, spaRoutes: ['users/**'] } }), /static\.spaRoutes/);
  });
});

describe('cache policy rules', () => {
  it('user rules come first: glob, regex and content type', async () => {
    const dir = makeSite({ 'a.txt': 'a', 'docs/b.md': 'b', 'c.json': '{}', 'index.html': 'x' });
    const s = await startServer(dir, {
      cachePolicy: [
        { glob: 'docs/**', cacheControl: 'public, max-age=60' },
        { regex: '^/a\\.txt$', cacheControl: 'private, max-age=5', expires: false },
        { contentType: 'application/json', cacheControl: 'no-store' },
      ],
    });
    try {
      const b = await get(s.url, '/docs/b.md');
      assert.equal(b.headers['cache-control'], 'public, max-age=60');
      assert.ok(b.headers.expires);
      const a = await get(s.url, '/a.txt');
      assert.equal(a.headers['cache-control'], 'private, max-age=5');
      assert.equal(a.headers.expires, undefined);
      assert.equal((await get(s.url, '/c.json')).headers['cache-control'], 'no-store');
      assert.equal((await get(s.url, '/index.html')).headers['cache-control'], 'no-cache');
    } finally {
      await s.close();
      removeSite(dir);
    }
  });
});

describe('freshness of the file view', () => {
  it('a replaced, added or deleted file is served correctly within 1 s', async () => {
    const dir = makeSite({ 'f.txt': 'one' });
    const s = await startServer(dir);
    try {
      assert.equal((await get(s.url, '/f.txt')).text, 'one');
      assert.equal((await get(s.url, '/g.txt', { headers: { accept: 'application/json' } })).status, 404);
      writeFileSync(join(dir, 'f.txt'), 'two!');
      writeFileSync(join(dir, 'g.txt'), 'new');
      // Time is the event: a file view is trusted for static.revalidateMs (500) at most.
      await waitUntilElapsed(Date.now(), 1000);
      assert.equal((await get(s.url, '/f.txt')).text, 'two!');
      assert.equal((await get(s.url, '/g.txt')).text, 'new');
      removeSite(join(dir, 'f.txt'));
      await waitUntilElapsed(Date.now(), 1000);
      assert.equal((await get(s.url, '/f.txt', { headers: { accept: 'application/json' } })).status, 404);
    } finally {
      await s.close();
      removeSite(dir);
    }
  });
});

describe('descriptors', () => {
  it('no descriptor leaks on 304, HEAD, range, or an aborted download', async () => {
    const dir = makeSite({ 'big.bin': Buffer.alloc(8 * 1024 * 1024, 7) });
    const s = await startServer(dir, { static: { maxCachedFileBytes: 1024 } });
    // The serving process's descriptors: this one's, or (the runtime matrix) the runtime child's.
    const fds = async () =>
      onRuntime() ? askRuntime<number>(s.app, 'descriptors') : readdirSync('/proc/self/fd').length;
    try {
      const { etag } = (await get(s.url, '/big.bin', { method: 'HEAD' })).headers;
      await get(s.url, '/big.bin');
      const before = await fds();
      for (let i = 0; i < 20; i++) {
        await get(s.url, '/big.bin', { headers: { 'if-none-match': etag! } });
        await get(s.url, '/big.bin', { method: 'HEAD' });
        await get(s.url, '/big.bin', { headers: { range: 'bytes=0-99' } });
        // Abort mid-body: the socket goes at the first bytes of the answer (8 MiB do not fit in one read).
        await new Promise<void>((resolve) => {
          const sock = rawConnect(s.port);
          sock.on('error', () => {});
          sock.once('data', () => sock.destroy());
          sock.on('close', () => resolve());
          sock.write('GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n');
        });
      }
      // Aborted downloads release their descriptors when their streams close: wait for that.
      let now = before;
      await waitUntil(`descriptors back to ${before} + 2`, async () => {
        now = await fds();
        return now <= before + 2;
      }).catch((err: Error) => {
        throw new Error(`${err.message} (now ${now})`);
      });
    } finally {
      await s.close();
      removeSite(dir);
    }
  });
});
