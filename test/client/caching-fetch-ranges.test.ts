// createCachingFetch answers Range requests from a stored complete 200 (RFC 9111 §3.4, RFC 9110 §14):
// 206 for one range, multipart/byteranges for several, 416 past the end, If-Range compared strongly.
// A real origin on 127.0.0.1 counts what reaches it; time is an injected clock.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createCachingFetch } from '../../src/client/index.js';
import { type Origin, origin } from '../helpers/origin.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
let clockMs = T0;
const now = () => clockMs;
const httpDate = (ms: number) => new Date(ms).toUTCString();
const BODY = '0123456789-abcdefghij';
const LAST_MODIFIED = httpDate(T0 - 3_600_000);

/** 200 with ETag `etag` and `cacheControl`; 304 to a matching If-None-Match. Range is never honoured. */
function doc(etag: string, cacheControl: string) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const h = {
      date: httpDate(clockMs),
      'cache-control': cacheControl,
      etag,
      'last-modified': LAST_MODIFIED,
    };
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, h);
      res.end();
      return;
    }
    res.writeHead(200, { ...h, 'content-type': 'text/plain' });
    res.end(BODY);
  };
}

let o: Origin;
before(async () => {
  o = await origin({
    '/doc': doc('"d1"', 'max-age=60'),
    '/weak': doc('W/"w1"', 'max-age=60'),
    '/stale': doc('"s1"', 'max-age=1'),
  });
});
after(() => o.close());
beforeEach(() => {
  clockMs = T0;
  o.seen.length = 0;
});

const cs = (r: Response) => r.headers.get('cache-status');

describe('createCachingFetch: Range from a stored 200', () => {
  it('one range: 206 from the store with Content-Range and Content-Length; the origin asked once', async () => {
    const f = createCachingFetch({ now });
    assert.equal(await (await f(`${o.url}/doc`)).text(), BODY);
    const r = await f(`${o.url}/doc`, { headers: { range: 'bytes=2-4' } });
    assert.equal(r.status, 206);
    assert.equal(await r.text(), '234');
    assert.equal(r.headers.get('content-range'), 'bytes 2-4/21');
    assert.equal(r.headers.get('content-length'), '3');
    assert.equal(cs(r), 'gatehouse-client; hit');
    const suffix = await f(`${o.url}/doc`, { headers: { range: 'bytes=-3' } });
    assert.equal(await suffix.text(), 'hij');
    const plain = await f(`${o.url}/doc`);
    assert.equal(plain.status, 200);
    assert.equal(await plain.text(), BODY, 'the stored body is whole after ranged reads');
    assert.equal(o.count('/doc'), 1);
  });

  it('several ranges: multipart/byteranges; past the end: 416 bytes */21', async () => {
    const f = createCachingFetch({ now });
    await (await f(`${o.url}/doc`)).text();
    const multi = await f(`${o.url}/doc`, { headers: { range: 'bytes=0-1,11-12' } });
    assert.equal(multi.status, 206);
    const m = /^multipart\/byteranges; boundary=(.+)$/.exec(multi.headers.get('content-type') ?? '');
    assert.ok(m);
    const b = m[1];
    assert.equal(
      await multi.text(),
      `--${b}\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-1/21\r\n\r\n01` +
        `\r\n--${b}\r\nContent-Type: text/plain\r\nContent-Range: bytes 11-12/21\r\n\r\nab\r\n--${b}--\r\n`,
    );
    const none = await f(`${o.url}/doc`, { headers: { range: 'bytes=21-' } });
    assert.equal(none.status, 416);
    assert.equal(none.headers.get('content-range'), 'bytes */21');
    assert.equal(o.count('/doc'), 1);
  });

  it('If-Range: bypasses the cache in default mode (Fetch); with force-cache compared strongly', async () => {
    const f = createCachingFetch({ now });
    await (await f(`${o.url}/doc`)).text();
    // Fetch, HTTP-network-or-cache fetch: If-Range makes a default-mode request no-store.
    const bypass = await f(`${o.url}/doc`, { headers: { range: 'bytes=0-1', 'if-range': '"d1"' } });
    await bypass.text();
    assert.equal(o.count('/doc'), 2);
    const strong = await f(`${o.url}/doc`, {
      cache: 'force-cache',
      headers: { range: 'bytes=0-1', 'if-range': '"d1"' },
    });
    assert.equal(strong.status, 206);
    assert.equal(await strong.text(), '01');
    const date = await f(`${o.url}/doc`, {
      cache: 'force-cache',
      headers: { range: 'bytes=0-1', 'if-range': LAST_MODIFIED },
    });
    assert.equal(date.status, 206);
    for (const ifRange of ['W/"d1"', '"d2"']) {
      const r = await f(`${o.url}/doc`, {
        cache: 'force-cache',
        headers: { range: 'bytes=0-1', 'if-range': ifRange },
      });
      assert.equal(r.status, 200, ifRange);
      assert.equal(await r.text(), BODY);
    }
    await (await f(`${o.url}/weak`)).text();
    const weak = await f(`${o.url}/weak`, {
      cache: 'force-cache',
      headers: { range: 'bytes=0-1', 'if-range': 'W/"w1"' },
    });
    assert.equal(weak.status, 200);
    assert.equal(o.count('/doc'), 2);
    assert.equal(o.count('/weak'), 1);
  });

  it('a stale response revalidated by a Range request: the 304 lets the store answer 206', async () => {
    const f = createCachingFetch({ now });
    await (await f(`${o.url}/stale`)).text();
    clockMs += 5000;
    const r = await f(`${o.url}/stale`, { headers: { range: 'bytes=11-' } });
    assert.equal(r.status, 206);
    assert.equal(await r.text(), 'abcdefghij');
    assert.match(cs(r) ?? '', /fwd=stale; fwd-status=304/);
    assert.equal(o.count('/stale'), 2);
  });

  it('HEAD with Range: the stored 200 fields, no body', async () => {
    const f = createCachingFetch({ now });
    await (await f(`${o.url}/doc`)).text();
    const h = await f(`${o.url}/doc`, { method: 'HEAD', headers: { range: 'bytes=0-1' } });
    assert.equal(h.status, 200);
    assert.equal(h.headers.get('content-range'), null);
    assert.equal(o.count('/doc'), 1);
  });
});
