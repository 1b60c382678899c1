// gatehouse-http/fetch on the runtimes' own servers: createFetchHandler behind Bun.serve and Deno.serve,
// with the peer's address passed in, and gatehouse-http/hono (face 'fetch') in a Hono app on Bun.serve,
// Deno.serve and @hono/node-server. Real processes on 127.0.0.1, the build (dist/).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { get, makeSite, removeSite } from '../helpers/http.js';
import { FIXTURES, type Listening, type RuntimeName, runListening } from '../helpers/runtimes.js';

const BIG = Buffer.alloc(300_000, 'b');

for (const runtime of ['bun', 'deno'] as const) {
  describe(`createFetchHandler on ${runtime === 'bun' ? 'Bun.serve' : 'Deno.serve'}`, () => {
    let site: string;
    let s: Listening;
    before(async () => {
      site = makeSite({ 'a.txt': 'aaa', 'big.bin': BIG });
      const config = {
        limits: { rateLimit: { requestsPerSec: 1, burst: 3 } },
        metrics: { path: '/metrics', allow: ['loopback'] },
      };
      s = await runListening(runtime, join(FIXTURES, 'fetch-host.mjs'), [site], {
        CONFIG: JSON.stringify(config),
      });
    });
    after(async () => {
      await s.close();
      removeSite(site);
    });

    it('a streamed file arrives whole; two ranges -> multipart/byteranges', async () => {
      const r = await get(s.url, '/big.bin');
      assert.equal(r.status, 200);
      assert.ok(r.body.equals(BIG));
      const m = await get(s.url, '/big.bin', { headers: { range: 'bytes=0-1,10-11' } });
      assert.equal(m.status, 206);
      assert.match(m.headers['content-type'] ?? '', /^multipart\/byteranges/);
      assert.equal(m.body.length, Number(m.headers['content-length']));
    });

    it('/metrics counts the answers, read from loopback', async () => {
      const m = await get(s.url, '/metrics');
      assert.equal(m.status, 200);
      assert.match(m.body.toString(), /^gatehouse_requests_total\{class="2xx",kind="static"\} \d+$/m);
    });

    it("the rate limit counts the peer's address: the 4th request in a burst of 3 -> 429", async () => {
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await get(s.url, '/a.txt')).status);
      assert.ok(statuses.includes(429), `statuses ${statuses.join(',')}`);
    });
  });
}

for (const runtime of ['node', 'bun', 'deno'] as RuntimeName[]) {
  describe(`gatehouse-http/hono on the fetch face, ${runtime}`, () => {
    let site: string;
    let s: Listening;
    let mounted: Listening;
    before(async () => {
      site = makeSite({
        'notes.txt': 'hello from the folder',
        '.env': 'SECRET=1',
        'docs/index.html': 'docs',
      });
      const app = join(FIXTURES, 'hono-app.mjs');
      s = await runListening(runtime, app, [site]);
      mounted = await runListening(runtime, app, [site], { MOUNT: '/static' });
    });
    after(async () => {
      await s.close();
      await mounted.close();
      removeSite(site);
    });

    it('serves a file with its validators; 304 and 206', async () => {
      const r = await get(s.url, '/notes.txt');
      assert.equal(r.status, 200);
      assert.equal(r.body.toString(), 'hello from the folder');
      const c = await get(s.url, '/notes.txt', { headers: { 'if-none-match': r.headers.etag! } });
      assert.equal(c.status, 304);
      const p = await get(s.url, '/notes.txt', { headers: { range: 'bytes=0-4' } });
      assert.equal(p.status, 206);
      assert.equal(p.body.toString(), 'hello');
    });

    it("passes the app's routes on, the body unread", async () => {
      const h = await get(s.url, '/api/hello');
      assert.equal(h.status, 200);
      assert.equal(JSON.parse(h.body.toString()).hello, true);
      const p = await get(s.url, '/api/echo', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ n: 3 }),
      });
      assert.equal(p.status, 200);
      assert.deepEqual(JSON.parse(p.body.toString()), { got: { n: 3 } });
    });

    it("a path nothing claims gets the app's 404; a dotfile gets Gatehouse's", async () => {
      const r = await get(s.url, '/nothing');
      assert.equal(r.status, 404);
      assert.notEqual(r.headers['content-type'], 'application/problem+json');
      const d = await get(s.url, '/.env');
      assert.equal(d.status, 404);
      assert.equal(d.headers['content-type'], 'application/problem+json');
    });

    it('mountPath: files below it, the redirect of a folder keeps the mount, other paths go to the app', async () => {
      assert.equal((await get(mounted.url, '/static/notes.txt')).body.toString(), 'hello from the folder');
      const dir = await get(mounted.url, '/static/docs');
      assert.equal(dir.status, 301);
      assert.equal(dir.headers.location, '/static/docs/');
      assert.equal((await get(mounted.url, '/notes.txt')).status, 404, "outside the mount: the app's");
      assert.equal(JSON.parse((await get(mounted.url, '/api/hello')).body.toString()).hello, true);
    });
  });
}
