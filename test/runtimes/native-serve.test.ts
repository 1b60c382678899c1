// `gatehouse serve` run by Bun and by Deno serves on the runtime's own server (Bun.serve, Deno.serve),
// says so, and answers as on Node: validators, 304, 206, HEAD, 404 and 400 as problem+json; SIGTERM
// drains and exits 0 (what a runtime's server cannot do: native-tls.test.ts). Real processes on
// 127.0.0.1, the build (dist/).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { get, makeSite, removeSite } from '../helpers/http.js';
import { type Listening, serveOn } from '../helpers/runtimes.js';

const SERVERS = {
  bun: /^on Bun 1\.4\.\d+ \(Bun\.serve\)$/m,
  deno: /^on Deno 2\.9\.\d+ \(Deno\.serve\)$/m,
} as const;

for (const [runtime, line] of Object.entries(SERVERS) as [keyof typeof SERVERS, RegExp][]) {
  describe(`gatehouse serve on ${runtime}`, () => {
    let site: string;
    let s: Listening;

    before(async () => {
      site = makeSite({ 'index.html': '<h1>home</h1>', 'notes.txt': 'hello from the folder' });
      s = await serveOn(runtime, site);
    });
    after(async () => {
      await s.close();
      removeSite(site);
    });

    it(`names the runtime's own server before the listening line`, () => {
      assert.match(s.stdout, line);
    });

    it('GET with validators and Date; If-None-Match -> 304; Range -> 206; HEAD -> no content', async () => {
      const r = await get(s.url, '/notes.txt');
      assert.equal(r.status, 200);
      assert.equal(r.body.toString(), 'hello from the folder');
      assert.ok(r.headers.etag);
      assert.ok(r.headers.date);
      assert.equal(
        (await get(s.url, '/notes.txt', { headers: { 'if-none-match': r.headers.etag! } })).status,
        304,
      );
      const p = await get(s.url, '/notes.txt', { headers: { range: 'bytes=0-4' } });
      assert.equal(p.status, 206);
      assert.equal(p.body.toString(), 'hello');
      const h = await get(s.url, '/notes.txt', { method: 'HEAD' });
      assert.equal(h.status, 200);
      assert.equal(h.headers['content-length'], String('hello from the folder'.length));
      assert.equal(h.body.length, 0);
    });

    it('a missing file -> 404 problem+json; an undecodable target -> 400; then it keeps serving', async () => {
      const m = await get(s.url, '/nope.txt');
      assert.equal(m.status, 404);
      assert.equal(m.headers['content-type'], 'application/problem+json');
      assert.equal((await get(s.url, '/%zz')).status, 400);
      assert.equal((await get(s.url, '/')).status, 200);
    });

    it('SIGTERM drains and exits 0', async () => {
      const other = await serveOn(runtime, site);
      assert.equal((await get(other.url, '/notes.txt')).status, 200);
      assert.equal(await other.close(), 0);
    });
  });
}
