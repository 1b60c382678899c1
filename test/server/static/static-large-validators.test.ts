// Validators of large files (docs/static.md, "Validators of large files") against a real server on
// 127.0.0.1:0: a streamed file above static.hashInlineMaxBytes with no known hash is answered at once
// with W/"size-mtime", its strong ETag follows from a background hash, and a hash manifest written by
// `gatehouse hash` / `gatehouse precompress` (or the server) gives the strong ETag from the first response.
// matrix: http1 h2 h1-tls adapters (the static, policy, proxy and cache suites run on every protocol and adapter)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { precompressDir } from '../../../src/build/precompress.js';
import { weakFileEtag } from '../../../src/http/file-validators.js';
import { immutable } from '../../helpers/chattr.js';
import { get, makeSite, removeSite, startServer, type TestServer } from '../../helpers/http.js';
import { memoryLogger, startLoggedApp } from '../../helpers/log.js';
import { waitUntil } from '../../helpers/wait.js';

const BIN = join(import.meta.dirname, '../../../bin/gatehouse.js');
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** A 1 MiB file is "large" under these settings: streamed, and above the inline-hash bound. */
const SMALL_BOUNDS = { maxCachedFileBytes: 16 * 1024, hashInlineMaxBytes: 64 * 1024 };
const BODY = randomBytes(1024 * 1024);

function hashOf(b: Buffer): string {
  return createHash('sha256').update(b).digest('base64url').slice(0, 27);
}

function weakOf(path: string, coding = ''): string {
  const st = statSync(path);
  return weakFileEtag(st.size, st.mtimeMs, coding);
}

async function withServer(
  files: Record<string, string | Buffer>,
  config: Record<string, unknown>,
  fn: (s: TestServer, dir: string) => Promise<void>,
  prepare?: (dir: string) => void | Promise<void>,
): Promise<void> {
  const dir = makeSite(files);
  try {
    await prepare?.(dir);
    const s = await startServer(dir, { static: { ...SMALL_BOUNDS, ...config } });
    try {
      await fn(s, dir);
    } finally {
      await s.close();
    }
  } finally {
    removeSite(dir);
  }
}

const strongKnown = (s: TestServer, path: string, etag: string) =>
  waitUntil(`the strong ETag of ${path}`, async () => (await get(s.url, path)).headers.etag === etag);

describe('large files: weak at once, strong once hashed', () => {
  it('the first request (Range: bytes=0-99) is answered at once with W/"size-mtime", then the strong ETag', async () => {
    await withServer({ 'big.bin': BODY }, {}, async (s, dir) => {
      const weak = weakOf(join(dir, 'big.bin'));
      const first = await get(s.url, '/big.bin', { headers: { range: 'bytes=0-99' } });
      assert.equal(first.status, 206);
      assert.deepEqual(first.body, BODY.subarray(0, 100));
      // Built before any hash of the file existed: the response did not wait for one.
      assert.equal(first.headers.etag, weak);
      await strongKnown(s, '/big.bin', `"${hashOf(BODY)}"`);
      const full = await get(s.url, '/big.bin');
      assert.equal(full.status, 200);
      assert.deepEqual(full.body, BODY);
    });
  });

  it('If-Range with the weak tag -> the whole 200, before and after the switch (RFC 9110 §13.1.5)', async () => {
    await withServer({ 'big.bin': BODY }, {}, async (s, dir) => {
      const weak = weakOf(join(dir, 'big.bin'));
      const ask = () => get(s.url, '/big.bin', { headers: { range: 'bytes=0-99', 'if-range': weak } });
      const before = await ask();
      assert.equal(before.headers.etag, weak, 'answered before the hash');
      assert.equal(before.status, 200);
      assert.equal(before.body.length, BODY.length);
      await strongKnown(s, '/big.bin', `"${hashOf(BODY)}"`);
      const after = await ask();
      assert.equal(after.status, 200);
      assert.equal(after.body.length, BODY.length);
      // The strong tag, once known, does select the range.
      const strong = await get(s.url, '/big.bin', {
        headers: { range: 'bytes=0-99', 'if-range': `"${hashOf(BODY)}"` },
      });
      assert.equal(strong.status, 206);
    });
  });

  it('If-None-Match with the weak tag -> 304 before and after the switch while unchanged', async () => {
    await withServer({ 'big.bin': BODY }, {}, async (s, dir) => {
      const weak = weakOf(join(dir, 'big.bin'));
      const strong = `"${hashOf(BODY)}"`;
      const before = await get(s.url, '/big.bin', { headers: { 'if-none-match': weak } });
      assert.equal(before.status, 304);
      assert.equal(before.headers.etag, weak);
      await strongKnown(s, '/big.bin', strong);
      const after = await get(s.url, '/big.bin', { headers: { 'if-none-match': weak } });
      assert.equal(after.status, 304, 'the weak tag still names this version');
      // RFC 9111 §4.3.4: the 304 names the validator the client's stored response has.
      assert.equal(after.headers.etag, weak);
      const byStrong = await get(s.url, '/big.bin', { headers: { 'if-none-match': strong } });
      assert.equal(byStrong.status, 304);
      assert.equal(byStrong.headers.etag, strong);
      const other = await get(s.url, '/big.bin', { headers: { 'if-none-match': 'W/"1-2"' } });
      assert.equal(other.status, 200);
      assert.equal(other.headers.etag, strong);
    });
  });

  it('If-Match with the weak tag -> 412 before and after the switch (strong comparison, §13.1.1)', async () => {
    await withServer({ 'big.bin': BODY }, {}, async (s, dir) => {
      const weak = weakOf(join(dir, 'big.bin'));
      assert.equal((await get(s.url, '/big.bin', { headers: { 'if-match': weak } })).status, 412);
      await strongKnown(s, '/big.bin', `"${hashOf(BODY)}"`);
      assert.equal((await get(s.url, '/big.bin', { headers: { 'if-match': weak } })).status, 412);
      const ok = await get(s.url, '/big.bin', { headers: { 'if-match': `"${hashOf(BODY)}"` } });
      assert.equal(ok.status, 200);
    });
  });

  it('?v= is pinned only once the hash is known (a not-yet-verified v keeps the normal policy)', async () => {
    await withServer({ 'big.js': BODY }, {}, async (s) => {
      const path = `/big.js?v=${hashOf(BODY).slice(0, 10)}`;
      const first = await get(s.url, path);
      assert.match(String(first.headers.etag), /^W\//);
      assert.equal(first.headers['cache-control'], 'no-cache');
      await waitUntil(
        '?v= pinned',
        async () => (await get(s.url, path)).headers['cache-control'] === IMMUTABLE,
      );
      assert.equal((await get(s.url, '/big.js?v=AAAAAAAAAA')).headers['cache-control'], 'no-cache');
    });
  });

  it('a modified file (size, or only mtime) gets a new validator, and the old weak tag no 304', async () => {
    await withServer({ 'big.bin': BODY }, {}, async (s, dir) => {
      const file = join(dir, 'big.bin');
      const weak1 = weakOf(file);
      await strongKnown(s, '/big.bin', `"${hashOf(BODY)}"`);
      // Same bytes, new mtime: a new version for the weak tag (its hash is the same again).
      const t = new Date(Date.now() - 1800_000);
      utimesSync(file, t, t);
      const weak2 = weakOf(file);
      assert.notEqual(weak2, weak1);
      const r = await waitUntil('the mtime change is seen', async () => {
        const x = await get(s.url, '/big.bin', { headers: { 'if-none-match': weak1 } });
        return x.status === 200 ? x : undefined;
      });
      assert.ok(r.headers.etag === weak2 || r.headers.etag === `"${hashOf(BODY)}"`, String(r.headers.etag));
      // Other bytes, other size.
      const body2 = randomBytes(1024 * 1024 + 1);
      writeFileSync(file, body2);
      utimesSync(file, t, t);
      const weak3 = weakOf(file);
      const seen = await waitUntil('the new size is seen', async () => {
        const x = await get(s.url, '/big.bin', { headers: { range: 'bytes=0-9' } });
        return x.headers['content-range'] === `bytes 0-9/${body2.length}` ? x : undefined;
      });
      assert.ok(seen.headers.etag === weak3 || seen.headers.etag === `"${hashOf(body2)}"`);
      await strongKnown(s, '/big.bin', `"${hashOf(body2)}"`);
      assert.equal((await get(s.url, '/big.bin', { headers: { 'if-none-match': weak2 } })).status, 200);
    });
  });

  it('a large precompressed sibling: W/"size-mtime-gzip" at once, then its own strong ETag', async () => {
    const gz = randomBytes(512 * 1024);
    await withServer({ 'app.js': BODY, 'app.js.gz': gz }, {}, async (s, dir) => {
      const ask = () => get(s.url, '/app.js', { headers: { 'accept-encoding': 'gzip' } });
      const first = await ask();
      assert.equal(first.headers['content-encoding'], 'gzip');
      assert.equal(first.headers.etag, weakOf(join(dir, 'app.js.gz'), 'gzip'));
      await waitUntil('the sibling hash', async () => (await ask()).headers.etag === `"${hashOf(gz)}"`);
      await strongKnown(s, '/app.js', `"${hashOf(BODY)}"`);
    });
  });

  it('files up to static.hashInlineMaxBytes keep a strong ETag from the first response', async () => {
    const mid = randomBytes(48 * 1024);
    await withServer({ 'mid.bin': mid }, {}, async (s) => {
      assert.equal((await get(s.url, '/mid.bin')).headers.etag, `"${hashOf(mid)}"`);
    });
  });
});

describe('hash manifests', () => {
  function gatehouseHash(dir: string, ...files: string[]) {
    const r = spawnSync(process.execPath, [BIN, 'hash', '--root', dir, ...files], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return r;
  }

  it('written by gatehouse hash: a fresh server sends the strong ETag from the first response', async () => {
    await withServer(
      { 'media/big.bin': BODY },
      {},
      async (s) => {
        const r = await get(s.url, '/media/big.bin', { headers: { range: 'bytes=0-99' } });
        assert.equal(r.status, 206);
        assert.equal(r.headers.etag, `"${hashOf(BODY)}"`);
        const pinned = await get(s.url, `/media/big.bin?v=${hashOf(BODY).slice(0, 10)}`);
        assert.equal(pinned.headers['cache-control'], IMMUTABLE, 'a verified ?v= from the first request');
      },
      (dir) => {
        gatehouseHash(dir, join(dir, 'media/big.bin'));
        assert.ok(existsSync(join(dir, 'media/.gatehouse-hashes.json')));
      },
    );
  });

  it('written by gatehouse precompress: strong ETags of the file and of its .gz sibling at once', async () => {
    const text = Buffer.from(`${'let x = 1;\n'.repeat(100_000)}${randomBytes(200_000).toString('base64')}`);
    await withServer(
      { 'app.js': text },
      {},
      async (s, dir) => {
        const gz = readFileSync(join(dir, 'app.js.gz'));
        assert.ok(gz.length > SMALL_BOUNDS.hashInlineMaxBytes, 'the sibling is large too');
        const id = await get(s.url, '/app.js');
        assert.equal(id.headers.etag, `"${hashOf(text)}"`);
        const enc = await get(s.url, '/app.js', { headers: { 'accept-encoding': 'gzip' } });
        assert.equal(enc.headers['content-encoding'], 'gzip');
        assert.equal(enc.headers.etag, `"${hashOf(gz)}"`);
      },
      async (dir) => {
        const report = await precompressDir({
          dir,
          minBytes: 1024,
          force: false,
          codings: ['gzip'],
          dryRun: false,
        });
        assert.equal(report.failed, 0);
      },
    );
  });

  it('a stale entry (the file replaced since: other inode, same size and mtime) is ignored', async () => {
    await withServer(
      { 'big.bin': BODY },
      {},
      async (s, dir) => {
        const r = await get(s.url, '/big.bin');
        assert.equal(r.headers.etag, weakOf(join(dir, 'big.bin')), 'not the hash of the old bytes');
        await strongKnown(s, '/big.bin', `"${hashOf(r.body)}"`);
      },
      (dir) => {
        const file = join(dir, 'big.bin');
        gatehouseHash(dir, file);
        const st = statSync(file);
        // Other bytes of the same size, given the old mtime: only the inode (and ctime) tell.
        writeFileSync(`${file}.new`, randomBytes(BODY.length));
        utimesSync(`${file}.new`, st.atime, st.mtime);
        renameSync(`${file}.new`, file);
      },
    );
  });

  it('static.hashManifest "off" ignores the manifest', async () => {
    await withServer(
      { 'big.bin': BODY },
      { hashManifest: 'off' },
      async (s, dir) => {
        assert.equal((await get(s.url, '/big.bin')).headers.etag, weakOf(join(dir, 'big.bin')));
      },
      (dir) => void gatehouseHash(dir, join(dir, 'big.bin')),
    );
  });

  it('static.hashManifest "write": the server records what it hashed; the next server starts strong', async () => {
    const dir = makeSite({ 'big.bin': BODY });
    try {
      const cfg = { static: { ...SMALL_BOUNDS, hashManifest: 'write' as const } };
      const a = await startServer(dir, cfg);
      try {
        assert.match(String((await get(a.url, '/big.bin')).headers.etag), /^W\//);
        await waitUntil('the manifest is written', () => existsSync(join(dir, '.gatehouse-hashes.json')));
        assert.equal((await get(a.url, '/.gatehouse-hashes.json')).status, 404, 'never served');
      } finally {
        await a.close();
      }
      const b = await startServer(dir, { static: { ...cfg.static, dotfiles: 'allow' } });
      try {
        assert.equal((await get(b.url, '/big.bin')).headers.etag, `"${hashOf(BODY)}"`);
        assert.equal((await get(b.url, '/.gatehouse-hashes.json')).status, 404, 'not even with dotfiles');
      } finally {
        await b.close();
      }
    } finally {
      removeSite(dir);
    }
  });

  it('static.hashManifest "write" on a read-only folder: served all the same, one warning', async (t: TestContext) => {
    const dir = makeSite({ 'a.bin': BODY, 'b.bin': Buffer.concat([BODY, BODY]) });
    if (!immutable(t, [dir], true)) return;
    const logger = memoryLogger();
    try {
      const { app, url } = await startLoggedApp(
        { root: dir, static: { ...SMALL_BOUNDS, hashManifest: 'write' } },
        logger,
      );
      try {
        for (const [p, b] of [
          ['/a.bin', BODY],
          ['/b.bin', Buffer.concat([BODY, BODY])],
        ] as const) {
          assert.equal((await get(url, p)).status, 200);
          await strongKnown({ url } as TestServer, p, `"${hashOf(b)}"`);
        }
        await waitUntil('the warning', () => logger.text('warn').includes('not written'));
        assert.equal(logger.lines.filter((l) => l.msg.includes('not written')).length, 1, logger.text());
        assert.equal(existsSync(join(dir, '.gatehouse-hashes.json')), false);
      } finally {
        await app.close();
      }
    } finally {
      immutable(t, [dir], false);
      removeSite(dir);
    }
  });
});
