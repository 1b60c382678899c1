// zstd from build to browser (issue 26 §5): `gatehouse precompress --zstd` writes .zst siblings that the
// static server sends for `Accept-Encoding: zstd`. Where this Node's zlib has zstd (22.15+; CI runs
// test/server under Node 22 and 24 too) the whole path runs and the bytes decode to the file; on Node 20
// --zstd is refused with exit 2 naming the Node it needs.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as zlib from 'node:zlib';
import { precompressCommand } from '../../../src/cli/precompress.js';
import { ZSTD_AVAILABLE } from '../../../src/server/static/zstd.js';
import { get, makeSite, removeSite, startServer, type TestServer } from '../../helpers/http.js';

const JS = `export const zstd = true;\n${'console.log("precompressed with zstd");\n'.repeat(300)}`;
const decode = (zlib as unknown as { zstdDecompressSync?: (b: Buffer) => Buffer }).zstdDecompressSync;

async function precompress(args: string[]) {
  let out = '';
  let err = '';
  const code = await precompressCommand(args, {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
  });
  return { code, out, err };
}

describe(`precompress --zstd (${ZSTD_AVAILABLE ? 'zlib has zstd' : 'no zstd in this Node'})`, () => {
  let dir: string;
  let s: TestServer;
  before(async () => {
    dir = makeSite({ 'assets/app-1a2b3c4d.js': JS });
    s = await startServer(dir, { static: { compress: false } });
  });
  after(async () => {
    await s.close();
    removeSite(dir);
  });

  it('writes .zst beside the file, which the server sends for zstd and which decodes to the file', async () => {
    const r = await precompress([dir, '--zstd', '--quiet']);
    if (!ZSTD_AVAILABLE) {
      assert.equal(r.code, 2);
      assert.match(r.err, /--zstd needs Node 22\.15 or later/);
      assert.equal(existsSync(join(dir, 'assets/app-1a2b3c4d.js.zst')), false);
      return;
    }
    assert.equal(r.code, 0, r.err);
    assert.ok(existsSync(join(dir, 'assets/app-1a2b3c4d.js.zst')));
    const res = await get(s.url, '/assets/app-1a2b3c4d.js', { headers: { 'accept-encoding': 'zstd' } });
    assert.equal(res.headers['content-encoding'], 'zstd');
    assert.equal(decode!(res.body).toString(), JS);
    assert.ok(res.body.length < JS.length / 4, `compressed: ${res.body.length} of ${JS.length}`);
  });
});
