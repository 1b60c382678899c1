// createCachingFetch against a real origin (node:http on 127.0.0.1, port 0) that counts requests.
// Time is an injected clock: the origin dates its responses with it, the cache ages them with it.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, beforeEach, describe, it } from 'node:test';
import { type CachedVariants, type CacheTier, createCachingFetch } from '../../src/client/index.js';
import { type Origin, origin } from '../helpers/origin.js';
import { WAIT_DEADLINE_MS } from '../helpers/wait.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
let clockMs = T0;
const now = () => clockMs;
const advance = (sec: number) => {
  clockMs += sec * 1000;
};
const httpDate = (ms: number) => new Date(ms).toUTCString();

/** A route answering `body` with the given fields, dated by the clock. */
function route(headers: Record<string, string>, body: (n: number) => string = (n) => `body ${n}`) {
  return (_req: IncomingMessage, res: ServerResponse, n: number) => {
    res.writeHead(200, { date: httpDate(clockMs), 'content-type': 'text/plain', ...headers });
    res.end(body(n));
  };
}

/** A route with ETag "v1": 304 to a matching If-None-Match (with `notModified` fields), else 200. */
function validated(headers: Record<string, string>, notModified: Record<string, string> = {}) {
  return (req: IncomingMessage, res: ServerResponse, n: number) => {
    if (req.headers['if-none-match'] === '"v1"') {
      res.writeHead(304, { date: httpDate(clockMs), etag: '"v1"', ...notModified });
      res.end();
      return;
    }
    res.writeHead(200, { date: httpDate(clockMs), etag: '"v1"', ...headers });
    res.end(`body ${n}`);
  };
}

let o: Origin;
let failNext = 0;
/** Ends the body of the last `/held` response; the origin holds it until the test says so. */
let releaseHeld: () => void = () => {};
const routes: Record<string, (req: IncomingMessage, res: ServerResponse, n: number) => void> = {
  '/fresh': route({ 'cache-control': 'max-age=60' }),
  '/vary': (req, res, n) => {
    res.writeHead(200, { date: httpDate(clockMs), 'cache-control': 'max-age=60', vary: 'Accept-Language' });
    res.end(`${req.headers['accept-language']} ${n}`);
  },
  '/lang': (_req, res, n) => {
    const h = { date: httpDate(clockMs), vary: 'Accept-Language', 'content-language': 'de' };
    res.writeHead(200, { ...h, 'cache-control': n === 1 ? 'max-age=60' : 'max-age=0' });
    res.end(`de ${n}`);
  },
  '/etag': validated(
    { 'cache-control': 'max-age=1', 'x-version': 'old' },
    { 'cache-control': 'max-age=100', 'x-version': 'new' },
  ),
  '/etag-fresh': validated({ 'cache-control': 'max-age=600' }),
  '/swr': route({ 'cache-control': 'max-age=1, stale-while-revalidate=60' }),
  '/sie': (_req, res, n) => {
    if (failNext > 0) {
      failNext--;
      res.writeHead(500, { date: httpDate(clockMs) });
      res.end('down');
      return;
    }
    res.writeHead(200, { date: httpDate(clockMs), 'cache-control': 'max-age=1, stale-if-error=60' });
    res.end(`body ${n}`);
  },
  '/nosie': (_req, res, n) => {
    res.writeHead(n === 1 ? 200 : 500, { date: httpDate(clockMs), 'cache-control': 'max-age=1' });
    res.end(`body ${n}`);
  },
  '/other': route({ 'cache-control': 'max-age=60' }),
  '/post': (req, res, n) => {
    if (req.method === 'POST') {
      res.writeHead(201, { location: '/other', 'content-location': 'http://elsewhere.example/x' });
      res.end('created');
      return;
    }
    route({ 'cache-control': 'max-age=60' })(req, res, n);
  },
  '/two-part': (_req, res, n) => {
    res.writeHead(200, { date: httpDate(clockMs), 'cache-control': 'max-age=60' });
    res.write(`body ${n} `);
    setTimeout(() => res.end('end'), 50);
  },
  '/held': (_req, res, n) => {
    res.writeHead(200, { date: httpDate(clockMs), 'cache-control': 'max-age=60' });
    res.write(`body ${n} `);
    releaseHeld = () => res.end('end');
  },
  '/slow': (_req, res, n) => {
    setImmediate(() => route({ 'cache-control': 'max-age=60' })(_req, res, n));
  },
  '/kb': route({ 'cache-control': 'max-age=60' }, (n) => `${n}`.padEnd(1000, '.')),
  '/kb2': route({ 'cache-control': 'max-age=60' }, (n) => `${n}`.padEnd(1000, '.')),
  '/kb3': route({ 'cache-control': 'max-age=60' }, (n) => `${n}`.padEnd(1000, '.')),
  '/kb4': route({ 'cache-control': 'max-age=60' }, (n) => `${n}`.padEnd(1000, '.')),
  '/private': route({ 'cache-control': 'private, max-age=60, s-maxage=0' }),
  '/auth': route({ 'cache-control': 'max-age=60' }),
  '/heuristic': route({ 'last-modified': httpDate(T0 - 10 * 86_400_000) }),
  '/immutable': route({ 'cache-control': 'max-age=600, immutable' }),
  '/redir': (_req, res) => {
    res.writeHead(301, { date: httpDate(clockMs), location: '/fresh', 'cache-control': 'max-age=60' });
    res.end();
  },
  '/nostore': route({ 'cache-control': 'no-store' }),
  '/conn': route({ 'cache-control': 'max-age=60', connection: 'x-hop', 'x-hop': '1', 'x-end': '2' }),
};

before(async () => {
  o = await origin(routes);
});
after(() => o.close());
beforeEach(() => {
  clockMs = T0;
  o.seen.length = 0;
  failNext = 0;
  releaseHeld = () => {};
});

const cs = (r: Response) => r.headers.get('cache-status');

/**
 * Reads `bytes` bytes (or to the end) and returns them as text, filling each chunk with '!' once
 * decoded: a reader may reuse the buffers it is handed.
 */
async function readOverwriting(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  bytes = Infinity,
): Promise<string> {
  const dec = new TextDecoder();
  let text = '';
  for (let n = 0; n < bytes; ) {
    const r = await reader.read();
    if (r.done) break;
    n += r.value.byteLength;
    text += dec.decode(r.value, { stream: true });
    r.value.fill(0x21);
  }
  return text;
}

describe('createCachingFetch: hits, misses, Cache-Status, Age, Date', () => {
  it('a fresh response: miss then hit; Age from the clock; Date not rewritten; one origin request', async () => {
    const f = createCachingFetch({ now });
    const a = await f(`${o.url}/fresh`);
    assert.equal(cs(a), 'gatehouse-client; fwd=uri-miss; stored');
    assert.equal(await a.text(), 'body 1');
    const date = a.headers.get('date');
    advance(10);
    const b = await f(`${o.url}/fresh`);
    assert.equal(cs(b), 'gatehouse-client; hit');
    assert.equal(b.headers.get('age'), '10');
    assert.equal(b.headers.get('date'), date);
    assert.equal(b.url, `${o.url}/fresh`);
    assert.equal(await b.text(), 'body 1');
    assert.equal(o.count('/fresh'), 1);
    const st = await f.stats();
    assert.equal(st.hits, 1);
    assert.equal(st.misses, 1);
    assert.equal(st.stored, 1);
  });

  it('each served Response has its own body (bodies are single-use)', async () => {
    const f = createCachingFetch({ now });
    await (await f(`${o.url}/fresh`)).text();
    const [x, y] = await Promise.all([f(`${o.url}/fresh`), f(`${o.url}/fresh`)]);
    const bytes = new Uint8Array(await (await f(`${o.url}/fresh`)).arrayBuffer());
    bytes.fill(0); // a caller scribbling on what it got does not reach the stored copy
    assert.equal(await x.text(), 'body 1');
    assert.equal(await y.text(), 'body 1');
  });

  it('a reader that overwrites each chunk it is handed, before the body ends -> a later hit still returns what the origin sent', async () => {
    const f = createCachingFetch({ now });
    const reader = (await f(`${o.url}/held`)).body!.getReader();
    // The origin holds the end back, so the stored copy is assembled after the chunk is overwritten.
    const seen = await readOverwriting(reader, 7);
    releaseHeld();
    assert.equal(seen + (await readOverwriting(reader)), 'body 1 end');
    const hit = await f(`${o.url}/held`);
    assert.equal(cs(hit), 'gatehouse-client; hit');
    assert.equal(await hit.text(), 'body 1 end');
    assert.equal(o.count('/held'), 1);
  });

  it('a collapsed reader that overwrites the copy so far it is handed -> neither the first reader nor a later hit sees it', async () => {
    const f = createCachingFetch({ now });
    const a = (await f(`${o.url}/held`)).body!.getReader();
    assert.equal(await readOverwriting(a, 7), 'body 1 ');
    const second = await f(`${o.url}/held`);
    assert.match(cs(second)!, /collapsed$/);
    const b = second.body!.getReader();
    assert.equal(await readOverwriting(b, 7), 'body 1 ');
    releaseHeld();
    assert.equal(await readOverwriting(b), 'end');
    assert.equal(await readOverwriting(a), 'end');
    const hit = await f(`${o.url}/held`);
    assert.equal(cs(hit), 'gatehouse-client; hit');
    assert.equal(await hit.text(), 'body 1 end');
    assert.equal(o.count('/held'), 1);
  });

  it('fragment ignored in the key: /fresh#a then /fresh#b -> one origin request', async () => {
    const f = createCachingFetch({ now });
    await (await f(`${o.url}/fresh#a`)).text();
    assert.equal(cs(await f(`${o.url}/fresh#b`)), 'gatehouse-client; hit');
    assert.equal(o.count('/fresh'), 1);
  });

  it('Vary: Accept-Language: en and de stored apart, each then a hit', async () => {
    const f = createCachingFetch({ now });
    const get = (lang: string) => f(`${o.url}/vary`, { headers: { 'accept-language': lang } });
    assert.equal(await (await get('en')).text(), 'en 1');
    const de = await get('de');
    assert.equal(cs(de), 'gatehouse-client; fwd=vary-miss; stored');
    assert.equal(await de.text(), 'de 2');
    assert.equal(await (await get('en')).text(), 'en 1');
    assert.equal(await (await get('de')).text(), 'de 2');
    assert.equal(o.count('/vary'), 2);
  });

  it('a fresh variant whose Content-Language is the most preferred language answers another Accept-Language', async () => {
    const f = createCachingFetch({ now });
    const get = (lang: string) => f(`${o.url}/lang`, { headers: { 'accept-language': lang } });
    assert.equal(await (await get('en, de')).text(), 'de 1');
    const de = await get('fr;q=0.5, de;q=1.0');
    assert.equal(cs(de), 'gatehouse-client; hit');
    assert.equal(await de.text(), 'de 1');
    assert.equal(o.count('/lang'), 1);
    // Another top language, or the variant stale: the network (the stale one is not revalidated).
    assert.equal(cs(await get('fr, de;q=0.5')), 'gatehouse-client; fwd=vary-miss; stored');
    advance(61);
    assert.match(cs(await get('de')) ?? '', /fwd=vary-miss/);
    assert.equal(o.count('/lang'), 3);
  });

  it('private response stored; s-maxage=0 ignored by a private cache', async () => {
    const f = createCachingFetch({ now });
    await (await f(`${o.url}/private`)).text();
    assert.equal(cs(await f(`${o.url}/private`)), 'gatehouse-client; hit');
    assert.equal(o.count('/private'), 1);
  });

  it('a request with Authorization is stored by a private cache', async () => {
    const f = createCachingFetch({ now });
    const init = { headers: { authorization: 'Bearer t' } };
    await (await f(`${o.url}/auth`, init)).text();
    assert.equal(cs(await f(`${o.url}/auth`, init)), 'gatehouse-client; hit');
  });

  it('heuristic freshness: Last-Modified 10 days old, 1 h later -> hit', async () => {
    const f = createCachingFetch({ now });
    await (await f(`${o.url}/heuristic`)).text();
    advance(3600);
    assert.equal(cs(await f(`${o.url}/heuristic`)), 'gatehouse-client; hit');
  });

  it('fields named by Connection are not stored (§3.1): absent from the hit, the rest kept', async () => {
    const f = createCachingFetch({ now });
    await (await f(`${o.url}/conn`)).text();
    const r = await f(`${o.url}/conn`);
    assert.equal(cs(r), 'gatehouse-client; hit');
    assert.equal(r.headers.get('x-hop'), null);
    assert.equal(r.headers.get('x-end'), '2');
  });

  it('redirects: a followed chain is not stored under the first URL; redirect manual stores the 301', async () => {
    const f = createCachingFetch({ now });
    const followed = await f(`${o.url}/redir`);
    assert.equal(followed.url, `${o.url}/fresh`);
    assert.equal(cs(followed), 'gatehouse-client; fwd=uri-miss');
    const manual = await f(`${o.url}/redir`, { redirect: 'manual' });
    assert.equal(manual.status, 301);
    assert.equal(cs(manual), 'gatehouse-client; fwd=uri-miss; stored');
    await manual.arrayBuffer(); // stored once its body has arrived
    const again = await f(`${o.url}/redir`, { redirect: 'manual' });
    assert.equal(cs(again), 'gatehouse-client; hit');
    assert.equal(again.headers.get('location'), '/fresh');
    assert.equal(o.count('/redir'), 2);
    // A following request is answered with the stored 301, followed through the cache.
    const hops = await f(`${o.url}/redir`);
    assert.equal(hops.status, 200);
    assert.equal(hops.url, `${o.url}/fresh`);
    assert.equal(hops.redirected, true);
    assert.equal(cs(hops), 'gatehouse-client; fwd=uri-miss; stored'); // /fresh itself is a new URL
    await hops.text();
    assert.equal(cs(await f(`${o.url}/redir`)), 'gatehouse-client; hit');
    assert.equal(o.count('/redir'), 2);
  });

  it('no-store response: not stored, next request goes to the origin', async () => {
    const f = createCachingFetch({ now });
    assert.equal(cs(await f(`${o.url}/nostore`)), 'gatehouse-client; fwd=uri-miss');
    await f(`${o.url}/nostore`);
    assert.equal(o.count('/nostore'), 2);
  });
});

describe('createCachingFetch: revalidation', () => {
  it('stale with ETag: conditional request, 304 merged (new fields, old body), then fresh again', async () => {
    const f = createCachingFetch({ now });
    await (await f(`${o.url}/etag`)).text();
    advance(2);
    const r = await f(`${o.url}/etag`);
    assert.equal(o.seen.at(-1)!.headers['if-none-match'], '"v1"');
    assert.equal(cs(r), 'gatehouse-client; fwd=stale; fwd-status=304');
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('x-version'), 'new');
    assert.equal(r.headers.get('cache-control'), 'max-age=100');
    assert.equal(await r.text(), 'body 1');
    advance(50);
    const again = await f(`${o.url}/etag`);
    assert.equal(cs(again), 'gatehouse-client; hit');
    assert.equal(again.headers.get('age'), '50');
    assert.equal(o.count('/etag'), 2);
  });

  it("init.reload 'normal': max-age=0 and the stored validator go upstream; the 304 serves the stored body", async () => {
    const f = createCachingFetch({ now });
    await (await f(`${o.url}/etag-fresh`)).text();
    const r = await f(`${o.url}/etag-fresh`, { reload: 'normal' });
    const seen = o.seen.at(-1)!.headers;
    assert.equal(seen['cache-control'], 'max-age=0');
    assert.equal(seen['if-none-match'], '"v1"');
    assert.equal(cs(r), 'gatehouse-client; fwd=request; fwd-status=304');
    assert.equal(await r.text(), 'body 1');
    assert.equal((await f.stats()).revalidations, 1);
  });

  it("init.reload 'normal' on a fresh immutable response: served without the network (RFC 8246); 'forced' still goes", async () => {
    const f = createCachingFetch({ now });
    await (await f(`${o.url}/immutable`)).text();
    const r = await f(`${o.url}/immutable`, { reload: 'normal' });
    assert.equal(cs(r), 'gatehouse-client; hit; detail=immutable');
    assert.equal(o.count('/immutable'), 1);
    await (await f(`${o.url}/immutable`, { reload: 'forced' })).text();
    assert.equal(o.count('/immutable'), 2);
  });

  it("init.reload 'forced': no-cache + Pragma, no validators; the new response is stored", async () => {
    const f = createCachingFetch({ now });
    await (await f(`${o.url}/etag-fresh`)).text();
    const r = await f(`${o.url}/etag-fresh`, { reload: 'forced' });
    const seen = o.seen.at(-1)!.headers;
    assert.equal(seen['cache-control'], 'no-cache');
    assert.equal(seen.pragma, 'no-cache');
    assert.equal(seen['if-none-match'], undefined);
    assert.equal(cs(r), 'gatehouse-client; fwd=request; stored');
    assert.equal(await r.text(), 'body 2');
    assert.equal(await (await f(`${o.url}/etag-fresh`)).text(), 'body 2');
    assert.equal(o.count('/etag-fresh'), 2);
  });

  it('stale-while-revalidate: stale served at once, refreshed in the background, next request sees the new body', async () => {
    const f = createCachingFetch({ now });
    await (await f(`${o.url}/swr`)).text();
    advance(5);
    const r = await f(`${o.url}/swr`);
    assert.equal(cs(r), 'gatehouse-client; hit; detail=stale-while-revalidate');
    assert.equal(await r.text(), 'body 1');
    await f.idle();
    assert.equal(o.count('/swr'), 2);
    const next = await f(`${o.url}/swr`);
    assert.equal(cs(next), 'gatehouse-client; hit');
    assert.equal(await next.text(), 'body 2');
  });

  it('stale-if-error: origin 500 -> the stale response is served', async () => {
    const f = createCachingFetch({ now });
    await (await f(`${o.url}/sie`)).text();
    advance(5);
    failNext = 1;
    const r = await f(`${o.url}/sie`);
    assert.equal(r.status, 200);
    assert.equal(cs(r), 'gatehouse-client; fwd=stale; fwd-status=500; detail=stale-if-error');
    assert.equal(await r.text(), 'body 1');
  });

  it('stale-if-error: origin unreachable -> the stale response is served', async () => {
    const down = await origin({ '/sie': routes['/sie']! });
    const url = `${down.url}/sie`;
    const f = createCachingFetch({ now });
    await (await f(url)).text();
    await down.close();
    advance(5);
    const r = await f(url);
    assert.equal(cs(r), 'gatehouse-client; fwd=stale; detail=stale-if-error');
    assert.equal(await r.text(), 'body 1');
  });

  it('origin unreachable, no stale-if-error: served stale within staleIfUnreachableSec (§4.2.4), else 504 (§5.2.2.2); nothing stored -> fetch rejects', async () => {
    const down = await origin({ '/x': route({ 'cache-control': 'max-age=1' }) });
    const url = `${down.url}/x`;
    const f = createCachingFetch({ now });
    const strict = createCachingFetch({ now, staleIfUnreachableSec: 0 });
    await (await f(url)).text();
    await (await strict(url)).text();
    await down.close();
    advance(5);
    const r = await f(url);
    assert.equal(cs(r), 'gatehouse-client; fwd=stale; detail=disconnected');
    assert.equal(await r.text(), 'body 1');
    const gone = await strict(url);
    assert.equal(gone.status, 504);
    assert.equal(cs(gone), 'gatehouse-client; fwd=stale; detail=unreachable');
    const nothingStored = createCachingFetch({ now });
    await assert.rejects(nothingStored(url), TypeError);
  });

  it('a 304 without validators to our conditional request freshens the response asked about', async () => {
    const bare = await origin({
      '/y': (req, res, n) => {
        if (req.headers['if-none-match'] !== undefined) {
          res.writeHead(304, { date: httpDate(clockMs), 'cache-control': 'max-age=100' });
          return res.end();
        }
        route({ 'cache-control': 'max-age=1', etag: '"e"' })(req, res, n);
      },
    });
    try {
      const f = createCachingFetch({ now });
      await (await f(`${bare.url}/y`)).text();
      advance(5);
      const r = await f(`${bare.url}/y`);
      assert.equal(cs(r), 'gatehouse-client; fwd=stale; fwd-status=304');
      assert.equal(await r.text(), 'body 1');
      assert.equal(bare.count('/y'), 2);
    } finally {
      await bare.close();
    }
  });

  it('without stale-if-error the origin 500 passes through', async () => {
    const f = createCachingFetch({ now });
    await (await f(`${o.url}/nosie`)).text();
    advance(5);
    const r = await f(`${o.url}/nosie`);
    assert.equal(r.status, 500);
    assert.equal(await r.text(), 'body 2');
  });
});

describe('createCachingFetch: init.cache modes', () => {
  it("'no-store': no lookup, nothing stored, Pragma/Cache-Control no-cache upstream", async () => {
    const f = createCachingFetch({ now });
    const r = await f(`${o.url}/fresh`, { cache: 'no-store' });
    assert.equal(cs(r), 'gatehouse-client; fwd=bypass');
    assert.equal(o.seen.at(-1)!.headers.pragma, 'no-cache');
    assert.equal(cs(await f(`${o.url}/fresh`)), 'gatehouse-client; fwd=uri-miss; stored');
    assert.equal(cs(await f(`${o.url}/fresh`, { cache: 'no-store' })), 'gatehouse-client; fwd=bypass');
    assert.equal(o.count('/fresh'), 3);
  });

  it("'reload': goes to the network though fresh, stores the response", async () => {
    const f = createCachingFetch({ now });
    await (await f(`${o.url}/fresh`)).text();
    const r = await f(`${o.url}/fresh`, { cache: 'reload' });
    assert.equal(cs(r), 'gatehouse-client; fwd=request; stored');
    await f.idle(); // its body stored, though nobody read it
    assert.equal(await (await f(`${o.url}/fresh`)).text(), 'body 2');
  });

  it("'reload' of one Vary variant keeps the other variant stored", async () => {
    const f = createCachingFetch({ now });
    const get = (lang: string, init: RequestInit = {}) =>
      f(`${o.url}/vary`, { ...init, headers: { 'accept-language': lang } });
    await (await get('en')).text();
    await (await get('de')).text();
    assert.equal(await (await get('en', { cache: 'reload' })).text(), 'en 3');
    assert.equal(cs(await get('de')), 'gatehouse-client; hit');
    assert.equal(await (await get('en')).text(), 'en 3');
    assert.equal(o.count('/vary'), 3);
  });

  it("'no-cache': conditional request even when fresh", async () => {
    const f = createCachingFetch({ now });
    await (await f(`${o.url}/etag-fresh`)).text();
    const r = await f(`${o.url}/etag-fresh`, { cache: 'no-cache' });
    assert.equal(o.seen.at(-1)!.headers['if-none-match'], '"v1"');
    assert.equal(cs(r), 'gatehouse-client; fwd=request; fwd-status=304');
  });

  it("'force-cache': a stale response is served without the network; a miss goes to it", async () => {
    const f = createCachingFetch({ now });
    await (await f(`${o.url}/etag`)).text();
    advance(3600);
    const r = await f(`${o.url}/etag`, { cache: 'force-cache' });
    assert.equal(cs(r), 'gatehouse-client; hit');
    assert.equal(o.count('/etag'), 1);
    assert.equal(
      cs(await f(`${o.url}/fresh`, { cache: 'force-cache' })),
      'gatehouse-client; fwd=uri-miss; stored',
    );
  });

  it("'only-if-cached': 504 on a miss without touching the network; a stale stored response is served", async () => {
    const f = createCachingFetch({ now });
    const miss = await f(`${o.url}/etag`, { cache: 'only-if-cached' });
    assert.equal(miss.status, 504);
    assert.equal(o.count('/etag'), 0);
    await (await f(`${o.url}/etag`)).text();
    advance(3600);
    const r = await f(`${o.url}/etag`, { cache: 'only-if-cached' });
    assert.equal(r.status, 200);
    assert.equal(o.count('/etag'), 1);
  });

  it('request Cache-Control: only-if-cached on a miss -> 504', async () => {
    const f = createCachingFetch({ now });
    const r = await f(`${o.url}/fresh`, { headers: { 'cache-control': 'only-if-cached' } });
    assert.equal(r.status, 504);
    assert.equal(o.count('/fresh'), 0);
  });

  it('own If-None-Match: passed through untouched and unstored (the 304 reaches the caller)', async () => {
    const f = createCachingFetch({ now });
    const r = await f(`${o.url}/etag-fresh`, { headers: { 'if-none-match': '"v1"' } });
    assert.equal(r.status, 304);
    assert.equal(o.seen.at(-1)!.headers['if-none-match'], '"v1"');
    await (await f(`${o.url}/etag-fresh`, { headers: { 'if-none-match': '"zz"' } })).text();
    assert.equal((await f.stats()).stored, 0);
    assert.equal(cs(await f(`${o.url}/etag-fresh`)), 'gatehouse-client; fwd=uri-miss; stored');
  });
});

describe('createCachingFetch: invalidation, coalescing, tiers, controls', () => {
  it('POST 201 invalidates the target URI and its same-origin Location (RFC 9111 §4.4)', async () => {
    const f = createCachingFetch({ now });
    await (await f(`${o.url}/post`)).text();
    await (await f(`${o.url}/other`)).text();
    const p = await f(`${o.url}/post`, { method: 'POST', body: 'x' });
    assert.equal(p.status, 201);
    assert.equal(cs(p), 'gatehouse-client; fwd=method');
    assert.equal(cs(await f(`${o.url}/post`)), 'gatehouse-client; fwd=uri-miss; stored');
    assert.equal(cs(await f(`${o.url}/other`)), 'gatehouse-client; fwd=uri-miss; stored');
  });

  it('8 concurrent identical misses -> 1 origin request, all get the body', async () => {
    const f = createCachingFetch({ now });
    const rs = await Promise.all(Array.from({ length: 8 }, () => f(`${o.url}/slow`)));
    assert.equal(o.count('/slow'), 1);
    for (const r of rs) assert.equal(await r.text(), 'body 1');
    assert.equal((await f.stats()).coalesced, 7);
    assert.equal(rs.filter((r) => cs(r)!.endsWith('collapsed')).length, 7);
  });

  it('concurrent misses, the first caller cancels its body at once -> the second still reads it whole, and it is stored', async () => {
    const f = createCachingFetch({ now });
    const [first, second] = await Promise.all([f(`${o.url}/two-part`), f(`${o.url}/two-part`)]);
    assert.match(cs(second!)!, /collapsed$/);
    await first!.body!.cancel();
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve('hung'), WAIT_DEADLINE_MS);
    });
    const text = await Promise.race([second!.text(), hung]).finally(() => clearTimeout(timer));
    assert.equal(text, 'body 1 end');
    assert.equal(cs(await f(`${o.url}/two-part`)), 'gatehouse-client; hit');
    assert.equal(o.count('/two-part'), 1);
  });

  it('memory LRU bounded in bytes: the least recently used URL is evicted', async () => {
    const f = createCachingFetch({ now, maxMemoryBytes: 6000 }); // three 1000 B bodies with their fields (about 1.7 KB each)
    for (const p of ['/kb', '/kb2', '/kb3']) await (await f(`${o.url}${p}`)).text();
    await (await f(`${o.url}/kb`)).text(); // /kb now most recent, /kb2 least
    await (await f(`${o.url}/kb4`)).text();
    assert.equal(cs(await f(`${o.url}/kb`)), 'gatehouse-client; hit');
    assert.equal(cs(await f(`${o.url}/kb2`)), 'gatehouse-client; fwd=uri-miss; stored');
    const mem = (await f.stats()).tiers[0]!;
    assert.ok(mem.bytes! <= 6000 && mem.bytes! > 4000, `memory bytes ${mem.bytes}`);
  });

  it('6 concurrent requests for one stale response -> 1 conditional request, all served the freshened copy', async () => {
    const f = createCachingFetch({ now });
    await (await f(`${o.url}/etag`)).text();
    advance(2);
    const rs = await Promise.all(Array.from({ length: 6 }, () => f(`${o.url}/etag`)));
    assert.equal(o.count('/etag'), 2);
    for (const r of rs) {
      assert.equal(await r.text(), 'body 1');
      assert.equal(r.headers.get('x-version'), 'new');
    }
    assert.equal(rs.filter((r) => cs(r) === 'gatehouse-client; fwd=stale; collapsed').length, 5);
    assert.equal((await f.stats()).revalidations, 1);
  });

  it('a body over maxEntryBytes is passed on whole and not stored', async () => {
    const f = createCachingFetch({ now, maxEntryBytes: 100 });
    const r = await f(`${o.url}/kb`);
    assert.equal((await r.text()).length, 1000);
    // Chunked: at the head nobody knows the length yet; the copy is dropped past the bound.
    assert.equal(cs(r), 'gatehouse-client; fwd=uri-miss; stored');
    await (await f(`${o.url}/kb`)).text();
    assert.equal(o.count('/kb'), 2);
    assert.equal((await f.stats()).stored, 0);
  });

  it('a second-tier hit is served and promoted to memory', async () => {
    const map = new Map<string, CachedVariants>();
    const tier: CacheTier = {
      name: 'map',
      get: (k) => map.get(k),
      put: (k, v) => void map.set(k, v),
      delete: (k) => void map.delete(k),
      keys: () => map.keys(),
      clear: () => map.clear(),
    };
    await (await createCachingFetch({ now, stores: [tier] })(`${o.url}/fresh`)).text();
    assert.equal(map.size, 1);
    const f = createCachingFetch({ now, stores: [tier] });
    assert.equal(await (await f(`${o.url}/fresh`)).text(), 'body 1');
    assert.equal(await (await f(`${o.url}/fresh`)).text(), 'body 1');
    const st = await f.stats();
    assert.deepEqual(
      st.tiers.map((t) => [t.name, t.hits]),
      [
        ['memory', 1],
        ['map', 1],
      ],
    );
    assert.equal(o.count('/fresh'), 1);
  });

  it('invalidate(url), invalidate(predicate), clear()', async () => {
    const f = createCachingFetch({ now });
    for (const p of ['/fresh', '/other', '/kb']) await (await f(`${o.url}${p}`)).text();
    assert.equal(await f.invalidate(`${o.url}/fresh#frag`), 1);
    assert.equal(await f.invalidate(`${o.url}/fresh`), 0);
    assert.equal(cs(await f(`${o.url}/fresh`)), 'gatehouse-client; fwd=uri-miss; stored');
    assert.equal(await f.invalidate((u) => u.endsWith('/other')), 1);
    assert.equal(cs(await f(`${o.url}/other`)), 'gatehouse-client; fwd=uri-miss; stored');
    assert.equal(cs(await f(`${o.url}/kb`)), 'gatehouse-client; hit');
    await f.clear();
    assert.equal((await f.stats()).tiers[0]!.bytes, 0);
    assert.equal(cs(await f(`${o.url}/kb`)), 'gatehouse-client; fwd=uri-miss; stored');
  });

  it('HEAD answered from a fresh stored GET (headers, no body); forwarded on a miss or when stale', async () => {
    const f = createCachingFetch({ now });
    const miss = await f(`${o.url}/fresh`, { method: 'HEAD' });
    assert.equal(cs(miss), 'gatehouse-client; fwd=method');
    await (await f(`${o.url}/fresh`)).text();
    const r = await f(`${o.url}/fresh`, { method: 'HEAD' });
    assert.equal(cs(r), 'gatehouse-client; hit');
    assert.equal(r.headers.get('content-type'), 'text/plain');
    assert.equal(await r.text(), '');
    assert.equal(o.count('/fresh'), 2);
    advance(120);
    assert.equal(cs(await f(`${o.url}/fresh`, { method: 'HEAD' })), 'gatehouse-client; fwd=method');
    assert.equal(o.count('/fresh'), 3);
  });
});

describe('diskTier (gatehouse-http, Node): the disk store as the second tier', () => {
  it('stored on disk, served by a new caching fetch from disk and promoted; predicate invalidation reaches it', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { diskTier } = await import('../../src/index.js');
    const dir = mkdtempSync(join(tmpdir(), 'gh-disk-tier-'));
    try {
      const disk1 = await diskTier(dir);
      const f1 = createCachingFetch({ now, stores: [disk1] });
      await (await f1(`${o.url}/vary`, { headers: { 'accept-language': 'en' } })).text();
      await (await f1(`${o.url}/vary`, { headers: { 'accept-language': 'de' } })).text();
      await disk1.close();
      const disk2 = await diskTier(dir);
      const f2 = createCachingFetch({ now, stores: [disk2] });
      advance(10);
      const de = await f2(`${o.url}/vary`, { headers: { 'accept-language': 'de' } });
      assert.equal(cs(de), 'gatehouse-client; hit');
      assert.equal(de.headers.get('age'), '10');
      assert.equal(await de.text(), 'de 2');
      assert.equal(
        await (await f2(`${o.url}/vary`, { headers: { 'accept-language': 'en' } })).text(),
        'en 1',
      );
      const st = await f2.stats();
      assert.deepEqual(
        st.tiers.map((t) => [t.name, t.hits]),
        [
          ['memory', 1],
          ['disk', 1],
        ],
      );
      assert.ok(st.tiers[1]!.bytes! > 0);
      assert.equal(o.count('/vary'), 2);
      assert.equal(await f2.invalidate((u) => u.endsWith('/vary')), 1);
      assert.deepEqual(await disk2.keys(), []);
      await disk2.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
