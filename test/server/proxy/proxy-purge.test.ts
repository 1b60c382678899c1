// Where PURGE is accepted: only under a proxied prefix whose cache is on. Outside it the 405 says where,
// and only to an address that may purge. A real origin on 127.0.0.1 counts what reaches it.
// The Express case mounts Gatehouse in an app of its own (Node under every run); the rest runs on the
// runtimes' own servers too.
// matrix: runtimes (on Bun.serve and Deno.serve too: upstream requests there go through each runtime's fetch path)
import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import express from 'express';
import { gatehouse } from '../../../src/adapters/express.js';
import { get, makeSite, removeSite, startServer, type TestServer } from '../../helpers/http.js';
import { type Origin, origin, text } from '../../helpers/origin.js';

describe('PURGE: where it is accepted', () => {
  let up: Origin;
  let site: string;
  let gh: TestServer;
  before(async () => {
    up = await origin({
      '/a': (_q, s, n) => text(s, 200, { 'cache-control': 'max-age=3600', 'cache-tag': 'red' }, `a ${n}`),
      '/b': (_q, s, n) => text(s, 200, { 'cache-control': 'max-age=3600', 'cache-tag': 'red' }, `b ${n}`),
    });
    site = makeSite({ 'index.html': '<!doctype html>' });
    gh = await startServer(site, {
      proxy: [
        { prefix: '/api', upstream: up.url, cacheControl: null, cache: { enabled: true } },
        { prefix: '/img', upstream: up.url, cacheControl: null, cache: { enabled: true } },
        { prefix: '/live', upstream: up.url },
      ],
    });
  });
  after(async () => {
    await gh.close();
    await up.close();
    removeSite(site);
  });

  it('PURGE / -> 405 with Allow, its detail naming the cached prefixes; nothing reaches the origin', async () => {
    const before = up.seen.length;
    const r = await get(gh.url, '/', { method: 'PURGE', headers: { 'cache-tag': 'red' } });
    assert.equal(r.status, 405);
    assert.equal(r.headers.allow, 'GET, HEAD, OPTIONS');
    const problem = JSON.parse(r.text) as { detail: string };
    assert.equal(problem.detail, 'PURGE is accepted under a cached proxy prefix: /api/, /img/');
    assert.equal(up.seen.length, before);
  });

  it('PURGE under the prefix, one URL and by Cache-Tag -> 200 with the count; the next GET reaches the origin', async () => {
    assert.equal((await get(gh.url, '/api/a')).text, 'a 1');
    assert.equal((await get(gh.url, '/api/a')).text, 'a 1', 'a hit');
    const one = await get(gh.url, '/api/a', { method: 'PURGE' });
    assert.equal(one.status, 200);
    assert.deepEqual(JSON.parse(one.text), { purged: 1 });
    assert.equal((await get(gh.url, '/api/a')).text, 'a 2');
    assert.equal((await get(gh.url, '/api/b')).text, 'b 1');
    const byTag = await get(gh.url, '/api/', { method: 'PURGE', headers: { 'cache-tag': 'red' } });
    assert.equal(byTag.status, 200);
    assert.deepEqual(JSON.parse(byTag.text), { purged: 2 });
    assert.equal((await get(gh.url, '/api/a')).text, 'a 3');
    assert.equal((await get(gh.url, '/api/b')).text, 'b 2');
    assert.equal(up.count('/a'), 3);
    assert.equal(up.count('/b'), 2);
  });

  it('an address purge.allow does not admit -> the 405 names no prefix', async () => {
    const strict = await startServer(site, {
      proxy: [
        {
          prefix: '/api',
          upstream: up.url,
          cacheControl: null,
          cache: { enabled: true, purge: { allow: ['10.0.0.0/8'] } },
        },
      ],
    });
    try {
      const r = await get(strict.url, '/', { method: 'PURGE' });
      assert.equal(r.status, 405);
      assert.equal(r.headers.allow, 'GET, HEAD, OPTIONS');
      assert.equal((JSON.parse(r.text) as { detail: string }).detail, 'PURGE is not allowed here.');
    } finally {
      await strict.close();
    }
  });

  it("mounted in an Express app: a PURGE outside the prefixes goes to the app's own route", async () => {
    const app = express();
    app.use(
      gatehouse({
        root: site,
        log: { format: 'off' },
        proxy: [{ prefix: '/api', upstream: up.url, cacheControl: null, cache: { enabled: true } }],
      }),
    );
    let appPurges = 0;
    app.purge('/', (_req, res) => {
      appPurges++;
      res.status(202).send('the app purged');
    });
    const server = createHttpServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const r = await get(base, '/', { method: 'PURGE' });
      assert.equal(r.status, 202);
      assert.equal(r.text, 'the app purged');
      assert.equal(appPurges, 1);
      assert.equal(
        (await get(base, '/api/a', { method: 'PURGE' })).status,
        200,
        'under the prefix: Gatehouse',
      );
      assert.equal(appPurges, 1);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
