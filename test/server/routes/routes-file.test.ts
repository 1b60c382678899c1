// A route answering with a file of the static root: reply.file(path, headers?) gets every file semantic
// of the static handler (validators, 304, ranges, content codings, HEAD, the cache policy), against a
// real server on 127.0.0.1:0.
// matrix: runtimes (the routes, test/fixtures/runtimes/file-routes.mjs, served by Bun and Deno too)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { brotliCompressSync, brotliDecompressSync } from 'node:zlib';
import { FileReply, reply } from '../../../src/server/routes/reply.js';
import { get, makeSite, removeSite } from '../../helpers/http.js';
import { type RoutesServer, startRoutes } from '../../helpers/routes-server.js';

const REPORT = 'year,total\n'.repeat(200);

describe('reply.file(): a route answers with a file', () => {
  let dir: string;
  let s: RoutesServer;
  let url: string;
  before(async () => {
    dir = makeSite({
      'files/report.csv': REPORT,
      'files/report.csv.br': brotliCompressSync(REPORT),
      'files/.env': 'SECRET=1',
      'private.txt': 'outside files/',
    });
    s = await startRoutes('file-routes.mjs', dir);
    ({ url } = s);
  });
  after(async () => {
    await s.app.close();
    removeSite(dir);
  });

  it("the file, with its validators and policy; the route's header added, the file's own kept", async () => {
    const r = await get(url, '/download/report.csv');
    assert.equal(r.status, 200);
    assert.equal(r.text, REPORT);
    assert.match(String(r.headers.etag), /^"[\w-]{27}"$/);
    assert.ok(r.headers['last-modified']);
    assert.equal(r.headers['cache-control'], 'no-cache');
    assert.equal(r.headers['content-disposition'], 'attachment');
    assert.match(String(r.headers['content-type']), /^text\/csv/);
  });

  it('304 on If-None-Match, 206 on Range, br from the sibling, HEAD without a body', async () => {
    const first = await get(url, '/download/report.csv');
    const etag = String(first.headers.etag);
    assert.equal(
      (await get(url, '/download/report.csv', { headers: { 'if-none-match': etag } })).status,
      304,
    );
    const part = await get(url, '/download/report.csv', { headers: { range: 'bytes=0-3' } });
    assert.equal(part.status, 206);
    assert.equal(part.text, 'year');
    const br = await get(url, '/download/report.csv', { headers: { 'accept-encoding': 'br' } });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(brotliDecompressSync(br.body).toString(), REPORT);
    const head = await get(url, '/download/report.csv', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
  });

  it('attack: a route parameter with ../ or a dotfile never reaches a file it should not (404)', async () => {
    const before = (await s.counts()).download ?? 0;
    for (const name of [
      '..%2Fprivate.txt',
      '%2E%2E%2F%2E%2E%2Fetc%2Fpasswd',
      '.env',
      '%2Eenv',
      'missing.csv',
    ]) {
      const r = await get(url, `/download/${name}`);
      assert.equal(r.status, 404, name);
      assert.ok(!r.text.includes('SECRET') && !r.text.includes('outside'), name);
    }
    assert.equal(((await s.counts()).download ?? 0) - before, 5, 'every request reached the route');
  });

  it('reply.file on a POST route is a route bug: 500, logged', async () => {
    const r = await get(url, '/post-file', { method: 'POST' });
    assert.equal(r.status, 500);
    assert.ok(((await s.counts())['log:error'] ?? 0) > 0);
  });

  it('the path is taken under the root whether it starts with / or not', () => {
    assert.equal(reply.file('a b/c.txt').path, '/a b/c.txt');
    assert.equal(reply.file('/a b/c.txt').rawPath(), '/a%20b/c.txt');
    assert.ok(reply.file('/x') instanceof FileReply);
    assert.throws(() => reply.file(''), TypeError);
    assert.equal(reply.file('/files/../private.txt').rawPath(), null);
    assert.equal(reply.file('/files/./a').rawPath(), null);
  });
});
