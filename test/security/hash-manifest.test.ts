// Attacks through a hash manifest (.gatehouse-hashes.json, src/server/static/hash-manifest.ts): whoever
// can drop a file into a served folder (an upload folder, a shared volume, a tampered build) must not
// get a header injected, the server stalled or crashed, or a made-up hash served as the strong ETag.
// Each manifest below names the served file's real inode, size, mtime and ctime, so only the guard
// under test keeps it out. Every test counts the requests that reached the server and the warnings
// it logged about the manifest, and checks the server keeps serving.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { weakFileEtag } from '../../src/http/file-validators.js';
import { MANIFEST_NAME, MAX_MANIFEST_BYTES } from '../../src/server/static/hash-manifest.js';
import { get, makeSite, removeSite } from '../helpers/http.js';
import { memoryLogger, startLoggedApp } from '../helpers/log.js';

const BOUNDS = { maxCachedFileBytes: 16 * 1024, hashInlineMaxBytes: 64 * 1024 };
const BODY = randomBytes(1024 * 1024);
/** Well-formed, but not the hash of BODY: served, it would be a made-up strong validator. */
const FAKE = 'AAAAAAAAAAAAAAAAAAAAAAAAAAA';

function entryOf(path: string, hash: unknown) {
  const st = statSync(path);
  return { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, hash };
}

const manifest = (files: unknown) => JSON.stringify({ format: 'gatehouse-hashes', version: 1, files });

/**
 * A server over a folder holding big.bin and the manifest `write(dir)` makes; returns the first
 * response for /big.bin, the weak tag it should carry, the warnings, and the requests seen.
 */
async function attack(write: (dir: string) => void) {
  const dir = makeSite({ 'big.bin': BODY, 'ok.txt': 'still here' });
  const logger = memoryLogger();
  try {
    write(dir);
    const weak = (() => {
      const st = statSync(join(dir, 'big.bin'));
      return weakFileEtag(st.size, st.mtimeMs);
    })();
    const { app, url } = await startLoggedApp({ root: dir, static: BOUNDS }, logger);
    let requests = 0;
    app.server.on('request', () => requests++);
    try {
      const r = await get(url, '/big.bin', { headers: { range: 'bytes=0-99' } });
      const after = await get(url, '/ok.txt');
      assert.equal(after.text, 'still here', 'the server keeps serving');
      return { r, weak, warnings: logger.text('warn'), requests };
    } finally {
      await app.close();
    }
  } finally {
    removeSite(dir);
  }
}

describe('hash manifest attacks', () => {
  it('attack: a manifest hash carrying a quote and CR LF (ETag header injection) -> ignored, weak ETag', async () => {
    const { r, weak, warnings, requests } = await attack((dir) => {
      const hash = 'abc"\r\nSet-Cookie: owned=1\r\nX: "';
      writeFileSync(join(dir, MANIFEST_NAME), manifest({ 'big.bin': entryOf(join(dir, 'big.bin'), hash) }));
    });
    assert.equal(requests, 2, 'both requests reached the server');
    assert.equal(r.status, 206);
    assert.equal(r.headers.etag, weak);
    assert.equal(r.headers['set-cookie'], undefined);
    assert.match(warnings, /1 malformed entries ignored/);
  });

  it('attack: an oversized manifest (beyond MAX_MANIFEST_BYTES) -> ignored unparsed, weak ETag', async () => {
    const { r, weak, warnings, requests } = await attack((dir) => {
      const text = manifest({ 'big.bin': entryOf(join(dir, 'big.bin'), FAKE) });
      // Valid JSON with a matching entry, padded past the bound: only the size check refuses it.
      writeFileSync(join(dir, MANIFEST_NAME), text + ' '.repeat(MAX_MANIFEST_BYTES + 1 - text.length));
    });
    assert.equal(requests, 2);
    assert.equal(r.status, 206);
    assert.equal(r.headers.etag, weak);
    assert.notEqual(r.headers.etag, `"${FAKE}"`);
    assert.match(warnings, /larger than \d+ bytes/);
  });

  it('attack: a manifest that is not JSON -> ignored with one warning, weak ETag, no crash', async () => {
    const { r, weak, warnings, requests } = await attack((dir) => {
      writeFileSync(
        join(dir, MANIFEST_NAME),
        `{"format":"gatehouse-hashes","version":1,"files":{"big.bin":{`,
      );
    });
    assert.equal(requests, 2);
    assert.equal(r.status, 206);
    assert.equal(r.headers.etag, weak);
    assert.match(warnings, /ignored: not JSON/);
    assert.equal(warnings.split('\n').length, 1, warnings);
  });

  it('attack: entries with wrong types -> each dropped and counted, weak ETag', async () => {
    const { r, weak, warnings, requests } = await attack((dir) => {
      const e = entryOf(join(dir, 'big.bin'), FAKE);
      writeFileSync(
        join(dir, MANIFEST_NAME),
        manifest({ 'big.bin': { ...e, size: String(e.size), hash: [FAKE] }, 'ok.txt': 'nope' }),
      );
    });
    assert.equal(requests, 2);
    assert.equal(r.headers.etag, weak);
    assert.match(warnings, /2 malformed entries ignored/);
  });

  it('attack: a path-traversal name in a sub-folder manifest never names a file outside it', async () => {
    const dir = makeSite({ 'big.bin': BODY, 'sub/x.bin': BODY });
    const logger = memoryLogger();
    try {
      const e = entryOf(join(dir, 'big.bin'), FAKE);
      writeFileSync(join(dir, 'sub', MANIFEST_NAME), manifest({ '../big.bin': e, '..': e }));
      const { app, url } = await startLoggedApp({ root: dir, static: BOUNDS }, logger);
      let requests = 0;
      app.server.on('request', () => requests++);
      try {
        // The sub-folder's manifest is read (the request for sub/x.bin) before /big.bin is asked for.
        assert.equal((await get(url, '/sub/x.bin')).status, 200);
        const r = await get(url, '/big.bin');
        assert.equal(requests, 2);
        assert.notEqual(r.headers.etag, `"${FAKE}"`);
        assert.match(logger.text('warn'), /2 malformed entries ignored/);
      } finally {
        await app.close();
      }
    } finally {
      removeSite(dir);
    }
  });

  it('attack: a FIFO named like the manifest (a read that never ends) -> ignored, the file served', async () => {
    const { r, weak, warnings, requests } = await attack((dir) => {
      execFileSync('mkfifo', [join(dir, MANIFEST_NAME)]);
    });
    assert.equal(requests, 2);
    assert.equal(r.status, 206);
    assert.equal(r.headers.etag, weak);
    assert.match(warnings, /not a regular file/);
  });
});
