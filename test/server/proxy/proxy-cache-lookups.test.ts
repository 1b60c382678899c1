// How often one proxied request looks the cache up: once. The hit path without a promise (tryHit)
// hands what it found to the full path instead of the full path looking the variant up again, on a
// first hit, a miss and a Vary variant's first hit alike. The real memory store is wrapped: its reads
// of a key's variants (a select or all read, not a body read) are counted per request.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryStore } from '../../../src/cache/store/memory.js';
import type { Read } from '../../../src/cache/store/types.js';
import { get, makeSite, removeSite, startServer, type TestServer } from '../../helpers/http.js';
import { type Origin, origin, text } from '../../helpers/origin.js';
import { waitUntil } from '../../helpers/wait.js';

const proto = MemoryStore.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
const wrapped = ['get', 'peek', 'put'] as const;
const originals = new Map(wrapped.map((name) => [name, proto[name]!]));
let lookups = 0;
let puts = 0;

describe('proxy cache: one store lookup per request (memory store)', () => {
  let up: Origin;
  let site: string;
  let gh: TestServer;
  before(async () => {
    for (const name of ['get', 'peek'] as const) {
      const original = originals.get(name)!;
      proto[name] = function (this: unknown, key: unknown, read: unknown) {
        if (!('body' in (read as Read))) lookups++;
        return original.call(this, key, read);
      };
    }
    const put = originals.get('put')!;
    proto.put = async function (this: unknown, ...args: unknown[]) {
      try {
        return await put.apply(this, args);
      } finally {
        puts++;
      }
    };
    up = await origin({
      '/plain': (_q, s, n) => text(s, 200, { 'cache-control': 'max-age=3600' }, `plain ${n}`),
      '/varied': (q, s, n) =>
        text(
          s,
          200,
          { 'cache-control': 'max-age=3600', vary: 'Accept-Encoding' },
          `${q.headers['accept-encoding']} ${n}`,
        ),
    });
    site = makeSite({ 'index.html': 'static' });
    gh = await startServer(site, {
      proxy: [{ prefix: '/', upstream: up.url, cacheControl: null, cache: { enabled: true } }],
    });
  });
  after(async () => {
    await gh.close();
    await up.close();
    removeSite(site);
    for (const [name, original] of originals) proto[name] = original;
  });

  /** GET `path`; the Cache-Status and how many lookups it took. */
  async function counted(
    path: string,
    headers: Record<string, string> = {},
  ): Promise<{ status: string; lookups: number }> {
    lookups = 0;
    const r = await get(gh.url, path, { headers });
    return { status: String(r.headers['cache-status']), lookups };
  }

  /** A miss, then (the put landed, nothing else asked) the response's first hit and a repeated one. */
  async function missThenHits(path: string, headers: Record<string, string> = {}) {
    const before = puts;
    const miss = await counted(path, headers);
    await waitUntil(`the response to ${path} is put`, () => puts > before);
    return { miss, first: await counted(path, headers), repeated: await counted(path, headers) };
  }

  it('a miss, a first hit and a repeated hit each look the store up once', async () => {
    const { miss, first, repeated } = await missThenHits('/plain');
    assert.match(miss.status, /fwd=uri-miss/);
    assert.equal(miss.lookups, 1, 'a miss');
    assert.match(first.status, /^gatehouse; hit/);
    assert.equal(first.lookups, 1, 'the first hit of a response');
    assert.match(repeated.status, /^gatehouse; hit/);
    assert.equal(repeated.lookups, 1, 'a repeated hit');
  });

  it('a Vary variant: its miss, first hit and repeated hit each look the store up once', async () => {
    await missThenHits('/varied', { 'accept-encoding': 'gzip' });
    const { miss, first, repeated } = await missThenHits('/varied', { 'accept-encoding': 'br' });
    assert.match(miss.status, /fwd=vary-miss/);
    assert.equal(miss.lookups, 1, 'a Vary miss');
    assert.match(first.status, /^gatehouse; hit/);
    assert.equal(first.lookups, 1, 'the first hit of a Vary variant');
    assert.match(repeated.status, /^gatehouse; hit/);
    assert.equal(repeated.lookups, 1, 'a repeated Vary hit');
  });
});
