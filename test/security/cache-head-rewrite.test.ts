// Attack: a client sends HEAD for a cached URL while the origin answers HEAD with other fields (a
// different Content-Length, ETag or Last-Modified); before, the stored GET response's headers were
// rewritten for everyone. RFC 9111 §4.3.5: freshen only when they agree, else mark stale.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { headAgrees } from '../../src/server/proxy/cache/revalidate.js';
import { get, makeSite, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { type Origin, origin } from '../helpers/origin.js';

describe('HEAD freshening (RFC 9111 §4.3.5)', () => {
  const stored = { etag: '"a"', 'last-modified': 'Tue, 01 Jan 2030 00:00:00 GMT' };
  const cases: [string, Record<string, string>, boolean][] = [
    ['same validators, same length -> agrees', { ...stored, 'content-length': '5' }, true],
    ['same validators, no length -> agrees', { ...stored }, true],
    ['other Content-Length -> disagrees', { ...stored, 'content-length': '6' }, false],
    ['other ETag -> disagrees', { ...stored, etag: '"b"', 'content-length': '5' }, false],
    ['ETag missing -> disagrees', { 'last-modified': stored['last-modified'] }, false],
    [
      'other Last-Modified -> disagrees',
      { ...stored, 'last-modified': 'Wed, 02 Jan 2030 00:00:00 GMT' },
      false,
    ],
  ];
  for (const [name, head, want] of cases) {
    it(name, () => assert.equal(headAgrees(stored, head, 5), want));
  }
});

describe('HEAD answers through the proxy cache', () => {
  let up: Origin;
  let site: string;
  let gh: TestServer;
  before(async () => {
    up = await origin({
      '/page': (q, s) => {
        // GET: the real page. HEAD: a hostile or broken origin path that differs.
        const head = q.method === 'HEAD';
        s.writeHead(200, {
          'cache-control': 'max-age=3600',
          etag: '"v1"',
          'content-type': 'text/plain',
          'content-length': head ? '999' : '5',
          'x-evil': head ? 'yes' : 'no',
        });
        s.end(head ? undefined : 'hello');
      },
    });
    site = makeSite({});
    gh = await startServer(site, {
      proxy: [{ prefix: '/', upstream: up.url, cacheControl: null, cache: { enabled: true } }],
    });
  });
  after(async () => {
    await gh.close();
    await up.close();
    removeSite(site);
  });

  it('attack: HEAD answer with another Content-Length -> stored GET not rewritten, marked stale', async () => {
    const first = await get(gh.url, '/page');
    assert.equal(first.text, 'hello');
    // Wait until the GET is stored: a HEAD with no-cache then revalidates it (§5.2.1.4).
    const deadline = Date.now() + 5000;
    for (;;) {
      const h = await get(gh.url, '/page', { method: 'HEAD', headers: { 'cache-control': 'no-cache' } });
      if (
        h.headers['x-evil'] === 'yes' &&
        up.seen.some((r) => r.method === 'HEAD' && r.headers['if-none-match'])
      )
        break;
      assert.ok(Date.now() < deadline, 'the HEAD never revalidated a stored response');
      await new Promise((r) => setImmediate(r));
    }
    const gets = up.seen.filter((r) => r.method === 'GET').length;
    const after = await get(gh.url, '/page');
    assert.equal(after.text, 'hello');
    assert.equal(after.headers['x-evil'], 'no', 'the HEAD fields did not reach the stored GET');
    assert.equal(after.headers['content-length'], '5');
    assert.ok(up.seen.filter((r) => r.method === 'GET').length > gets, 'the marked entry was revalidated');
  });
});
