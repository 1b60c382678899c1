// Attacks on the caching fetch: invalidation across origins, prototype keys from the network, and
// memory exhaustion through large bodies. Real origins on 127.0.0.1, port 0.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCachingFetch } from '../../src/client/index.js';
import { type Origin, origin } from '../helpers/origin.js';

let a: Origin;
let b: Origin;
const cs = (r: Response) => r.headers.get('cache-status');

before(async () => {
  b = await origin({
    '/victim': (_req, res) => {
      res.writeHead(200, { 'cache-control': 'max-age=600' });
      res.end('victim');
    },
  });
  a = await origin({
    '/post': (_req, res) => {
      // The attacker's origin names another origin's URL as Location and Content-Location.
      res.writeHead(201, { location: `${b.url}/victim`, 'content-location': `${b.url}/victim` });
      res.end();
    },
    '/proto': (_req, res) => {
      res.writeHead(200, { 'cache-control': 'max-age=600', vary: '__proto__, constructor, toString' });
      res.end('proto');
    },
    '/big': (_req, res) => {
      res.writeHead(200, { 'cache-control': 'max-age=600' }); // no Content-Length: chunked
      for (let i = 0; i < 64; i++) res.write(Buffer.alloc(16 * 1024, 120));
      res.end();
    },
  });
});
after(async () => {
  await a.close();
  await b.close();
});

describe('caching fetch attacks', () => {
  it('attack: POST answer with a cross-origin Location/Content-Location -> the other origin stays cached (§4.4)', async () => {
    const f = createCachingFetch();
    await (await f(`${b.url}/victim`)).text();
    await (await f(`${a.url}/post`, { method: 'POST', body: 'x' })).text();
    assert.equal(cs(await f(`${b.url}/victim`)), 'gatehouse-client; hit');
    assert.equal(b.count('/victim'), 1);
  });

  it('attack: Vary naming __proto__, constructor, toString -> no prototype read; absent fields match absent', async () => {
    const f = createCachingFetch();
    await (await f(`${a.url}/proto`)).text();
    assert.equal(cs(await f(`${a.url}/proto`)), 'gatehouse-client; hit');
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('attack: 1 MiB chunked body with maxEntryBytes 4 KiB -> passed through whole, nothing held in memory', async () => {
    const f = createCachingFetch({ maxEntryBytes: 4096 });
    const r = await f(`${a.url}/big`);
    assert.equal(cs(r), 'gatehouse-client; fwd=uri-miss; detail=too-large');
    assert.equal((await r.arrayBuffer()).byteLength, 1024 * 1024);
    const st = await f.stats();
    assert.equal(st.tiers[0]!.bytes, 0);
    assert.equal(st.stored, 0);
  });

  it('attack: bodies bigger than maxMemoryBytes -> never kept, memory stays within its bound', async () => {
    const f = createCachingFetch({ maxMemoryBytes: 64 * 1024, maxEntryBytes: 2 * 1024 * 1024 });
    await (await f(`${a.url}/big`)).arrayBuffer();
    const st = await f.stats();
    assert.equal(st.stored, 1); // written through; the memory tier refused it (over its bound)
    assert.equal(st.tiers[0]!.bytes, 0);
  });
});
