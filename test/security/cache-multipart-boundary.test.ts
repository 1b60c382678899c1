// A stored body that carries the multipart boundary a cache would pick for a multi-range answer
// (RFC 9110 §14.6) forges parts in it: a client splitting on the boundary reads a Content-Range and
// bytes the origin never sent in that place. Both caches pick a boundary found in no part (RFC 2046
// §5.1.1: it "MUST NOT appear inside any of the encapsulated parts"). Each test counts the origin's
// requests (the ranged answers come from the store) and the parts a client sees.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCachingFetch } from '../../src/client/index.js';
import { get, makeSite, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { type Origin, origin } from '../helpers/origin.js';
import { waitUntilStored } from '../helpers/wait.js';

const SIZE = 256;
/** The boundary both caches tried first for two ranges of SIZE bytes. */
const PREDICTABLE = `gatehouse-cache-2-${SIZE}`;
const FORGED = `\r\n--${PREDICTABLE}\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-3/${SIZE}\r\n\r\nEVIL`;
const BODY = `safe:${FORGED}`.padEnd(SIZE, '.');
const RANGE = 'bytes=0-3, 5-200';

/** The Content-Range of every part a client splitting on the announced boundary sees. */
function partRanges(contentType: string, body: string): string[] {
  const boundary = /boundary=(.+)$/.exec(contentType)?.[1];
  assert.ok(boundary, contentType);
  return body
    .split(`--${boundary}`)
    .slice(1, -1)
    .map((part) => /Content-Range: ([^\r]*)/.exec(part)?.[1] ?? '(none)');
}

describe('cache multipart/byteranges boundary', () => {
  let up: Origin;
  let site: string;
  let gh: TestServer;
  before(async () => {
    assert.equal(BODY.length, SIZE);
    up = await origin({
      '/upload': (_q, s) => {
        s.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'max-age=3600' });
        s.end(BODY);
      },
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
  });

  it('attack: a stored body carrying the proxy cache multipart boundary forges a part', async () => {
    await get(gh.url, '/upload');
    await waitUntilStored(gh.url, '/upload');
    const r = await get(gh.url, '/upload', { headers: { range: RANGE } });
    assert.equal(r.status, 206);
    assert.match(String(r.headers['cache-status']), /^gatehouse; hit/);
    assert.equal(up.count('/upload'), 1, 'the ranged answer came from the store');
    assert.deepEqual(partRanges(String(r.headers['content-type']), r.text), [
      `bytes 0-3/${SIZE}`,
      `bytes 5-200/${SIZE}`,
    ]);
  });

  it('attack: a body stored by createCachingFetch carrying its multipart boundary forges a part', async () => {
    const f = createCachingFetch();
    const before = up.count('/upload');
    await (await f(`${up.url}/upload`)).text();
    const r = await f(`${up.url}/upload`, { headers: { range: RANGE } });
    assert.equal(r.status, 206);
    assert.equal(up.count('/upload'), before + 1, 'the ranged answer came from the store');
    assert.deepEqual(partRanges(r.headers.get('content-type') ?? '', await r.text()), [
      `bytes 0-3/${SIZE}`,
      `bytes 5-200/${SIZE}`,
    ]);
  });
});
