// gatehouse-http/sw without a browser: the pure decisions table by table, then versionedCache's
// handlers on a fake service-worker global (a Cache API over Maps, a fetch counting requests).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type ExtendableEventLike,
  type FetchEventLike,
  type FetchFunction,
  type ServiceWorkerGlobalLike,
  type VersionedCacheOptions,
  versionedCache,
} from '../../src/client/sw.js';
import {
  cachesToDelete,
  chooseStrategy,
  invalidationTargets,
  normalisePrecache,
  type PrecacheItem,
  planPrecache,
  type RequestFacts,
  type ResponseFacts,
  recordedRevision,
  type Strategy,
  swStorable,
} from '../../src/client/sw-strategy.js';
import { type FakeCache, FakeCaches } from '../helpers/fake-caches.js';

const ORIGIN = 'http://127.0.0.1:8080';

describe('chooseStrategy', () => {
  const base: RequestFacts = {
    method: 'GET',
    url: `${ORIGIN}/app.js`,
    mode: 'cors',
    destination: 'script',
    cacheMode: 'default',
    accept: '*/*',
    range: null,
    origin: ORIGIN,
  };
  const cases: [string, Partial<RequestFacts>, Strategy][] = [
    [
      'hashed name (-hex) -> cache-first',
      { url: `${ORIGIN}/assets/app-3f2a9c1b.js` },
      { kind: 'cache-first' },
    ],
    ['hashed name (.hash) -> cache-first', { url: `${ORIGIN}/main.9b8c7d6e.css` }, { kind: 'cache-first' }],
    ['plain name -> through options.fetch', {}, { kind: 'fetch', reason: 'other' }],
    [
      'CamelCase tail is no hash -> fetch',
      { url: `${ORIGIN}/app-LoginPage.js` },
      { kind: 'fetch', reason: 'other' },
    ],
    [
      'navigation -> network-first',
      { url: `${ORIGIN}/about`, mode: 'navigate', destination: 'document', accept: 'text/html,*/*' },
      { kind: 'network-first' },
    ],
    ['iframe -> network-first', { url: `${ORIGIN}/frame`, destination: 'iframe' }, { kind: 'network-first' }],
    [
      'fetch of .html -> network-first',
      { url: `${ORIGIN}/part.html`, destination: '' },
      { kind: 'network-first' },
    ],
    [
      'Accept text/html first -> network-first',
      { url: `${ORIGIN}/x`, accept: 'text/html' },
      { kind: 'network-first' },
    ],
    [
      'hashed HTML name -> network-first (HTML wins)',
      { url: `${ORIGIN}/page-3f2a9c1b.html`, destination: '' },
      { kind: 'network-first' },
    ],
    [
      'another origin -> pass-through',
      { url: 'https://cdn.example/app-3f2a9c1b.js' },
      { kind: 'pass-through', reason: 'cross-origin' },
    ],
    [
      'same host, other port -> pass-through',
      { url: 'http://127.0.0.1:9/app.js' },
      { kind: 'pass-through', reason: 'cross-origin' },
    ],
    [
      'data: URL -> pass-through',
      { url: 'data:text/plain,hi' },
      { kind: 'pass-through', reason: 'not-http' },
    ],
    ['POST -> unsafe (network, then invalidate)', { method: 'POST' }, { kind: 'unsafe' }],
    ['DELETE -> unsafe', { method: 'DELETE' }, { kind: 'unsafe' }],
    ['HEAD -> fetch, never stored', { method: 'HEAD' }, { kind: 'fetch', reason: 'other' }],
    [
      "cache: 'no-store' on a hashed name -> fetch unstored",
      { url: `${ORIGIN}/app-3f2a9c1b.js`, cacheMode: 'no-store' },
      { kind: 'fetch', reason: 'no-store-mode' },
    ],
    [
      'Range on a hashed name -> fetch unstored',
      { url: `${ORIGIN}/video-3f2a9c1b.mp4`, range: 'bytes=0-99' },
      { kind: 'fetch', reason: 'range' },
    ],
  ];
  for (const [name, over, expected] of cases)
    it(name, () => assert.deepEqual(chooseStrategy({ ...base, ...over }), expected));
});

describe('swStorable', () => {
  const base: ResponseFacts = {
    requestMethod: 'GET',
    requestCacheControl: null,
    status: 200,
    type: 'basic',
    redirected: false,
    cacheControl: 'public, max-age=31536000, immutable',
    vary: null,
  };
  const cases: [string, Partial<ResponseFacts>, string][] = [
    ['200 to GET, cacheable -> store', {}, 'store'],
    ['no Cache-Control -> store', { cacheControl: null }, 'store'],
    ['no-cache (revalidate each use) -> store', { cacheControl: 'no-cache' }, 'store'],
    ['Vary: Accept-Encoding -> store (match honours Vary)', { vary: 'Accept-Encoding' }, 'store'],
    ['no-store -> skip', { cacheControl: 'no-store' }, 'no-store'],
    ['No-Store in a list, any case -> skip', { cacheControl: 'max-age=60, No-Store' }, 'no-store'],
    ['private -> skip', { cacheControl: 'private, max-age=60' }, 'private'],
    ['private="set-cookie" (qualified) -> skip', { cacheControl: 'private="set-cookie"' }, 'private'],
    ['request Cache-Control: no-store -> skip', { requestCacheControl: 'no-store' }, 'request-no-store'],
    ['Vary: * -> skip', { vary: 'Accept, *' }, 'vary-star'],
    ['POST -> skip', { requestMethod: 'POST' }, 'not-get'],
    ['206 -> skip', { status: 206 }, 'status'],
    ['404 -> skip', { status: 404 }, 'status'],
    ['opaque (no-cors) -> skip', { type: 'opaque', status: 0 }, 'opaque'],
    ['redirected -> skip', { redirected: true }, 'redirected'],
  ];
  for (const [name, over, expected] of cases)
    it(name, () => {
      const v = swStorable({ ...base, ...over });
      assert.equal(v.kind === 'store' ? 'store' : v.reason, expected);
    });
});

describe('cachesToDelete', () => {
  const cases: [string, string[], string[]][] = [
    ['older versions of the name -> deleted', ['app-v1', 'app-v2', 'app-v3'], ['app-v1', 'app-v2']],
    ['the current one alone -> nothing', ['app-v3'], []],
    ['other names -> kept', ['images', 'other-v1', 'application-v1', 'app-v3'], []],
    ['the bare name (no dash) -> kept', ['app', 'app-v3'], []],
    ['a version with dashes -> deleted', ['app-2024-01-01', 'app-v3'], ['app-2024-01-01']],
  ];
  for (const [name, all, expected] of cases)
    it(name, () => assert.deepEqual(cachesToDelete(all, 'app', 'app-v3'), expected));
});

describe('planPrecache', () => {
  const u = (p: string) => `${ORIGIN}${p}`;
  const item = (p: string, revision: string | null = null): PrecacheItem => ({ url: u(p), revision });
  const cases: [string, PrecacheItem, Map<string, string | null>, Map<string, string | null>, string][] = [
    [
      'same revision in the current cache -> keep',
      item('/a.js', '"r1"'),
      new Map([[u('/a.js'), '"r1"']]),
      new Map(),
      'keep',
    ],
    [
      'changed revision, nowhere else -> download',
      item('/a.js', '"r2"'),
      new Map([[u('/a.js'), '"r1"']]),
      new Map(),
      'download',
    ],
    [
      'same revision in the old version -> copy',
      item('/a.js', '"r1"'),
      new Map(),
      new Map([[u('/a.js'), '"r1"']]),
      'copy',
    ],
    [
      'changed revision in the old version -> download',
      item('/a.js', '"r2"'),
      new Map(),
      new Map([[u('/a.js'), '"r1"']]),
      'download',
    ],
    [
      'hashed name, no revision, in the old version -> copy',
      item('/a-3f2a9c1b.js'),
      new Map(),
      new Map([[u('/a-3f2a9c1b.js'), null]]),
      'copy',
    ],
    [
      'hashed name, no revision, current -> keep',
      item('/a-3f2a9c1b.js'),
      new Map([[u('/a-3f2a9c1b.js'), null]]),
      new Map(),
      'keep',
    ],
    [
      'plain name, no revision, stored -> download (nothing says unchanged)',
      item('/a.js'),
      new Map([[u('/a.js'), null]]),
      new Map(),
      'download',
    ],
    [
      'stored with a null record (ETag disagreed) -> download',
      item('/a.js', '"r1"'),
      new Map([[u('/a.js'), null]]),
      new Map(),
      'download',
    ],
    ['nowhere -> download', item('/a.js', '"r1"'), new Map(), new Map(), 'download'],
  ];
  for (const [name, it0, current, old, expected] of cases)
    it(name, () => {
      const [step] = planPrecache([it0], current, [{ cacheName: 'app-v1', revisions: old }]);
      assert.equal(step!.kind, expected);
      if (step!.kind === 'copy') assert.equal(step!.from, 'app-v1');
    });
});

describe('recordedRevision', () => {
  const cases: [string, string | null, string | null, string | null, string | null][] = [
    ['ETag equals the revision -> revision', '"abc"', '"abc"', null, '"abc"'],
    ['br-coded response, its own ETag -> revision (not comparable)', '"abc"', '"br-tag"', 'br', '"abc"'],
    ['Content-Encoding: identity, ETag differs -> null', '"abc"', '"xyz"', 'identity', null],
    ['ETag differs (file changed since the manifest) -> null', '"abc"', '"xyz"', null, null],
    ['no ETag -> revision', '"abc"', null, null, '"abc"'],
    ['weak ETag (not comparable) -> revision', '"abc"', 'W/"1-2"', null, '"abc"'],
    ['no revision -> null', null, '"abc"', null, null],
  ];
  for (const [name, wanted, etag, coding, expected] of cases)
    it(name, () => assert.equal(recordedRevision(wanted, etag, coding), expected));
});

describe('invalidationTargets', () => {
  const url = `${ORIGIN}/api/items`;
  const cases: [string, number, string | null, string | null, string[]][] = [
    ['201 -> the target URI', 201, null, null, [url]],
    ['303 with same-origin Location -> both', 303, '/api/items/7', null, [url, `${ORIGIN}/api/items/7`]],
    ['200 with Content-Location -> both', 200, null, `${ORIGIN}/api/items/8`, [url, `${ORIGIN}/api/items/8`]],
    ['Location of another origin -> target only', 201, 'https://evil.example/x', null, [url]],
    ['500 -> nothing', 500, '/api/items/7', null, []],
    ['404 -> nothing', 404, null, null, []],
  ];
  for (const [name, status, loc, cloc, expected] of cases)
    it(name, () => assert.deepEqual(invalidationTargets(status, url, loc, cloc, ORIGIN), expected));
});

describe('normalisePrecache', () => {
  const base = `${ORIGIN}/sw.js`;
  it('strings and entries -> absolute URLs, revision null when absent, fragments dropped, duplicates once', () => {
    assert.deepEqual(normalisePrecache(['/', 'a.js#x', { url: '/b.css', revision: '"r"' }, '/a.js'], base), [
      { url: `${ORIGIN}/`, revision: null },
      { url: `${ORIGIN}/a.js`, revision: null },
      { url: `${ORIGIN}/b.css`, revision: '"r"' },
    ]);
  });
  const bad: [string, unknown[], RegExp][] = [
    ['another origin -> TypeError', ['https://cdn.example/a.js'], /another origin/],
    ['empty URL -> TypeError', [''], /precache\[0\]/],
    ['revision not a string -> TypeError', [{ url: '/a', revision: 5 }], /revision/],
  ];
  for (const [name, list, re] of bad)
    it(name, () => assert.throws(() => normalisePrecache(list as never, base), re));
});

// ---------------------------------------------------------------------------------------------------------
// versionedCache on a fake global

/** A fake origin: path -> [status, headers, body]; `offline` makes every fetch a network error. */
class FakeNetwork {
  readonly seen: string[] = [];
  offline = false;
  constructor(public files: Record<string, [number, Record<string, string>, string]>) {}
  fetch: FetchFunction = async (input) => {
    const r = input instanceof Request ? input : new Request(input);
    this.seen.push(`${r.method} ${new URL(r.url).pathname}`);
    if (this.offline) throw new TypeError('Failed to fetch');
    const f = this.files[new URL(r.url).pathname];
    if (!f) return new Response('nope', { status: 404 });
    return new Response(r.method === 'HEAD' ? null : f[2], { status: f[0], headers: f[1] });
  };
}

class FakeGlobal {
  readonly caches = new FakeCaches();
  readonly listeners = new Map<string, (e: never) => void>();
  claims = 0;
  skips = 0;
  readonly location = { href: `${ORIGIN}/sw.js`, origin: ORIGIN };
  readonly clients = { claim: async () => void this.claims++ };
  skipWaiting = async () => void this.skips++;
  addEventListener(type: string, l: (e: never) => void): void {
    this.listeners.set(type, l);
  }
  /** Dispatches install or activate and waits for its waitUntil promise. */
  async lifecycle(type: 'install' | 'activate'): Promise<void> {
    let p: Promise<unknown> = Promise.resolve();
    const e: ExtendableEventLike = { waitUntil: (x) => void (p = x) };
    (this.listeners.get(type) as (e: ExtendableEventLike) => void)(e);
    await p;
  }
  /** Dispatches a fetch event: the response given to respondWith, or 'not handled'. */
  async dispatchFetch(request: Request): Promise<Response | 'not handled'> {
    let p: Promise<Response> | undefined;
    const e: FetchEventLike = { request, waitUntil: () => {}, respondWith: (x) => void (p = x) };
    (this.listeners.get('fetch') as (e: FetchEventLike) => void)(e);
    return p ?? 'not handled';
  }
}

function setup(over: Partial<VersionedCacheOptions> = {}, g = new FakeGlobal(), net = defaultNet()) {
  const vc = versionedCache({
    name: 'app',
    version: 'v1',
    precache: ['/', { url: '/app.js', revision: '"r1"' }, '/assets/app-3f2a9c1b.js'],
    fetch: net.fetch,
    global: g as unknown as ServiceWorkerGlobalLike,
    ...over,
  });
  return { g, net, vc };
}

function defaultNet(): FakeNetwork {
  return new FakeNetwork({
    '/': [200, { 'content-type': 'text/html', 'cache-control': 'no-cache', etag: '"home"' }, '<h1>home</h1>'],
    '/app.js': [200, { 'cache-control': 'no-cache', etag: '"r1"' }, 'app()'],
    '/assets/app-3f2a9c1b.js': [200, { 'cache-control': 'public, max-age=31536000, immutable' }, 'hashed()'],
    '/api/me': [200, { 'cache-control': 'no-store' }, '{"me":1}'],
    '/api/private': [200, { 'cache-control': 'private, max-age=60' }, '{"p":1}'],
    '/assets/late-3f2a9c1c.js': [200, { 'cache-control': 'public, max-age=31536000, immutable' }, 'late()'],
    '/about': [200, { 'content-type': 'text/html', 'cache-control': 'no-cache' }, '<h1>about</h1>'],
  });
}

const paths = (c: FakeCache) => [...c.entries.keys()].map((u) => new URL(u).pathname).sort();
const nav = (path: string) => new Request(`${ORIGIN}${path}`, { headers: { accept: 'text/html' } });

describe('versionedCache on a fake service-worker global', () => {
  it('options: empty name or version -> TypeError naming it', () => {
    assert.throws(() => setup({ name: '' }), /name/);
    assert.throws(() => setup({ version: '' }), /version/);
  });

  it('no fetch option: the rest goes through a caching fetch over the global fetch (worker cache, memory, network)', async () => {
    const g = new FakeGlobal();
    const net = defaultNet();
    net.files['/data.json'] = [
      200,
      { 'cache-control': 'max-age=60', 'content-type': 'application/json' },
      '{"d":1}',
    ];
    Object.assign(g, { fetch: net.fetch });
    versionedCache({ name: 'app', version: 'v1', global: g as unknown as ServiceWorkerGlobalLike });
    const first = (await g.dispatchFetch(new Request(`${ORIGIN}/data.json`))) as Response;
    const second = (await g.dispatchFetch(new Request(`${ORIGIN}/data.json`))) as Response;
    assert.equal(await first.text(), '{"d":1}');
    assert.equal(await second.text(), '{"d":1}');
    assert.match(String(second.headers.get('cache-status')), /^gatehouse-client; hit/);
    assert.deepEqual(net.seen, ['GET /data.json']);
    // A no-store answer is fetched each time, through the same caching fetch.
    await g.dispatchFetch(new Request(`${ORIGIN}/api/me`));
    await g.dispatchFetch(new Request(`${ORIGIN}/api/me`));
    assert.deepEqual(net.seen, ['GET /data.json', 'GET /api/me', 'GET /api/me']);
  });

  it('install: the precache list and the revision record in app-v1 (name-version); no skipWaiting by default', async () => {
    const { g, vc } = setup();
    assert.equal(vc.cacheName, 'app-v1');
    await g.lifecycle('install');
    const cache = g.caches.byName.get('app-v1')!;
    assert.deepEqual(paths(cache), ['/', '/.gatehouse-sw-precache', '/app.js', '/assets/app-3f2a9c1b.js']);
    assert.equal(await (await cache.match(`${ORIGIN}/app.js`))!.text(), 'app()');
    assert.equal(g.skips, 0);
  });

  it('install with skipWaiting: true -> skipWaiting called once', async () => {
    const { g } = setup({ skipWaiting: true });
    await g.lifecycle('install');
    assert.equal(g.skips, 1);
  });

  it("message { type: 'SKIP_WAITING' } -> skipWaiting; any other message -> nothing", () => {
    const { g } = setup();
    const onMessage = g.listeners.get('message') as (e: { data: unknown }) => void;
    for (const data of ['SKIP_WAITING', null, { type: 'other' }]) onMessage({ data });
    assert.equal(g.skips, 0);
    onMessage({ data: { type: 'SKIP_WAITING' } });
    assert.equal(g.skips, 1);
  });

  it('install failing on a precache 404 -> the install rejects naming the URL', async () => {
    const { g } = setup({ precache: ['/missing.js'] });
    await assert.rejects(g.lifecycle('install'), /missing\.js: HTTP 404/);
  });

  it('install of v2: an unchanged revision and a hashed name are copied, a changed revision downloaded', async () => {
    const { g, net } = setup();
    await g.lifecycle('install');
    await g.lifecycle('activate');
    net.files['/app.js'] = [200, { etag: '"r2"' }, 'app2()'];
    net.seen.length = 0;
    setup(
      { version: 'v2', precache: ['/', { url: '/app.js', revision: '"r2"' }, '/assets/app-3f2a9c1b.js'] },
      g,
      net,
    );
    await g.lifecycle('install');
    // `/` has no revision and no hash: nothing says it is unchanged, so it is downloaded again.
    assert.deepEqual(net.seen.sort(), ['GET /', 'GET /app.js']);
    const v2 = g.caches.byName.get('app-v2')!;
    assert.equal(await (await v2.match(`${ORIGIN}/app.js`))!.text(), 'app2()');
    assert.equal(await (await v2.match(`${ORIGIN}/assets/app-3f2a9c1b.js`))!.text(), 'hashed()');
  });

  it('a precached no-store file -> not stored, not recorded', async () => {
    const { g } = setup({ precache: ['/api/me'] });
    await g.lifecycle('install');
    assert.deepEqual(paths(g.caches.byName.get('app-v1')!), ['/.gatehouse-sw-precache']);
  });

  it('activate: other `app-*` caches deleted, other names kept, clients claimed', async () => {
    const { g } = setup();
    for (const n of ['app-v0', 'app-old-build', 'images-v1', 'app']) await g.caches.open(n);
    await g.lifecycle('install');
    await g.lifecycle('activate');
    assert.deepEqual((await g.caches.keys()).sort(), ['app', 'app-v1', 'images-v1']);
    assert.equal(g.claims, 1);
  });

  it('hashed name stored -> answered from the cache, the network not asked', async () => {
    const { g, net } = setup();
    await g.lifecycle('install');
    net.seen.length = 0;
    const r = await g.dispatchFetch(new Request(`${ORIGIN}/assets/app-3f2a9c1b.js`));
    assert.ok(r instanceof Response);
    assert.equal(await r.text(), 'hashed()');
    assert.deepEqual(net.seen, []);
  });

  it('hashed name not stored -> fetched once, then from the cache', async () => {
    const { g, net } = setup();
    await g.lifecycle('install');
    net.seen.length = 0;
    for (let i = 0; i < 2; i++) {
      const r = await g.dispatchFetch(new Request(`${ORIGIN}/assets/late-3f2a9c1c.js`));
      assert.equal(await (r as Response).text(), 'late()');
    }
    assert.deepEqual(net.seen, ['GET /assets/late-3f2a9c1c.js']);
  });

  it('a put failing (quota) on a cache-first miss -> the answer still comes back', async () => {
    const { g } = setup({ precache: [] });
    const cache = await g.caches.open('app-v1');
    cache.put = async () => {
      throw new DOMException('quota', 'QuotaExceededError');
    };
    const r = await g.dispatchFetch(new Request(`${ORIGIN}/assets/late-3f2a9c1c.js`));
    assert.equal(await (r as Response).text(), 'late()');
  });

  it('the worker never passes ignoreVary to match (Vary respected)', async () => {
    const { g } = setup();
    await g.lifecycle('install');
    await g.dispatchFetch(new Request(`${ORIGIN}/assets/app-3f2a9c1b.js`));
    await g.dispatchFetch(nav('/'));
    const cache = g.caches.byName.get('app-v1')!;
    assert.ok(cache.matchOptions.length > 0);
    for (const o of cache.matchOptions) assert.notEqual(o?.ignoreVary, true);
  });

  it('navigation online -> the network answer, stored for offline', async () => {
    const { g, net } = setup({ precache: [] });
    const r = await g.dispatchFetch(nav('/about'));
    assert.equal(await (r as Response).text(), '<h1>about</h1>');
    net.offline = true;
    const off = await g.dispatchFetch(nav('/about'));
    assert.equal(await (off as Response).text(), '<h1>about</h1>');
  });

  it('navigation offline, not stored, navigationFallback -> the fallback page', async () => {
    const { g, net } = setup({ navigationFallback: '/' });
    await g.lifecycle('install');
    net.offline = true;
    const r = await g.dispatchFetch(nav('/nowhere'));
    assert.equal(await (r as Response).text(), '<h1>home</h1>');
  });

  it('navigation offline, not stored, no fallback -> the network error', async () => {
    const { g, net } = setup({ precache: [] });
    net.offline = true;
    await assert.rejects(g.dispatchFetch(nav('/nowhere')) as Promise<Response>, /Failed to fetch/);
  });

  it('no-store and private API responses -> through options.fetch, never stored', async () => {
    const { g, net } = setup({ precache: [] });
    for (const p of ['/api/me', '/api/private']) {
      const r = await g.dispatchFetch(new Request(`${ORIGIN}${p}`));
      assert.equal((r as Response).status, 200);
    }
    assert.deepEqual(net.seen, ['GET /api/me', 'GET /api/private']);
    assert.deepEqual(paths(await g.caches.open('app-v1')), []);
  });

  it('plain file offline -> the precached copy (the caching fetch failed)', async () => {
    const { g, net } = setup();
    await g.lifecycle('install');
    net.offline = true;
    const r = await g.dispatchFetch(new Request(`${ORIGIN}/app.js`));
    assert.equal(await (r as Response).text(), 'app()');
  });

  it('plain file online -> options.fetch answers (the precached copy is not used)', async () => {
    const { g, net } = setup();
    await g.lifecycle('install');
    net.files['/app.js'] = [200, {}, 'newer()'];
    const r = await g.dispatchFetch(new Request(`${ORIGIN}/app.js`));
    assert.equal(await (r as Response).text(), 'newer()');
  });

  it('cross-origin request -> not handled (no respondWith)', async () => {
    const { g, net } = setup({ precache: [] });
    assert.equal(await g.dispatchFetch(new Request('https://cdn.example/app-3f2a9c1b.js')), 'not handled');
    assert.deepEqual(net.seen, []);
  });

  it('POST answered 201 -> the stored copy of its URL is invalidated (RFC 9111 §4.4)', async () => {
    const { g, net } = setup({ precache: [] });
    net.files['/assets/app-3f2a9c1b.js'] = [201, {}, ''];
    const cache = await g.caches.open('app-v1');
    await cache.put(`${ORIGIN}/assets/app-3f2a9c1b.js`, new Response('old'));
    await g.dispatchFetch(new Request(`${ORIGIN}/assets/app-3f2a9c1b.js`, { method: 'POST', body: 'x' }));
    assert.deepEqual(paths(cache), []);
  });

  it('the precache record is never an answer', async () => {
    const { g, net } = setup();
    await g.lifecycle('install');
    net.offline = true;
    await assert.rejects(
      g.dispatchFetch(new Request(`${ORIGIN}/.gatehouse-sw-precache`)) as Promise<Response>,
      /Failed to fetch/,
    );
  });
});
