// Attacks on the caching fetch: invalidation across origins, prototype keys from the network, and
// memory exhaustion through large bodies. Real origins on 127.0.0.1, port 0.
import assert from 'node:assert/strict';
import { createServer as createHttpServer, type IncomingMessage, type RequestListener } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { Agent } from 'undici';
import { type CachedVariants, type CacheTier, createCachingFetch } from '../../src/client/index.js';
import { testPki } from '../helpers/certs.js';
import { type Origin, origin } from '../helpers/origin.js';
import { WAIT_DEADLINE_MS } from '../helpers/wait.js';

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
    // The hit came from storage. Stored field names and Vary members such as __proto__ are tested
    // with the prototype checked in test/security/client-prototype-keys.test.ts.
    assert.equal(a.count('/proto'), 1);
  });

  it('attack: 1 MiB chunked body with maxEntryBytes 4 KiB -> passed through whole, nothing held in memory', async () => {
    const f = createCachingFetch({ maxEntryBytes: 4096 });
    const r = await f(`${a.url}/big`);
    // Chunked: the length is unknown at the head; the copy is dropped once past 4 KiB.
    assert.equal(cs(r), 'gatehouse-client; fwd=uri-miss; stored');
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

describe('caching fetch attacks: stored redirects (Fetch §4.4 HTTP-redirect fetch)', () => {
  let home: Origin;
  let other: Origin;
  const secrets = {
    authorization: 'Bearer s3cret',
    cookie: 'sid=s3cret',
    'proxy-authorization': 'Basic eDp5',
  };
  const credentialFields = (req: { headers: Record<string, unknown> }) =>
    Object.keys(secrets).filter((k) => req.headers[k] !== undefined);

  before(async () => {
    other = await origin({
      '/landing': (req, res) => {
        res.writeHead(200, { 'cache-control': 'no-store' });
        res.end(`${req.method} ${req.headers['content-type'] ?? '-'}`);
      },
    });
    home = await origin({
      '/away': (_req, res) => {
        res.writeHead(301, { location: `${other.url}/landing`, 'cache-control': 'max-age=600' });
        res.end();
      },
      '/near': (_req, res) => {
        res.writeHead(301, { location: '/landing', 'cache-control': 'max-age=600' });
        res.end();
      },
      '/landing': (req, res) => {
        res.writeHead(200, { 'cache-control': 'no-store' });
        res.end(`${req.method} ${req.headers['content-type'] ?? '-'}`);
      },
      '/see-other': (_req, res) => {
        res.writeHead(303, { location: `${other.url}/landing` });
        res.end();
      },
      '/moved': (_req, res) => {
        res.writeHead(301, { location: '/landing' });
        res.end();
      },
      '/chain': (req, res) => {
        const n = Number(new URL(req.url!, home.url).searchParams.get('n'));
        if (n === 0) {
          res.writeHead(200, { 'cache-control': 'no-store' });
          res.end('end');
          return;
        }
        res.writeHead(301, { location: `/chain?n=${n - 1}`, 'cache-control': 'max-age=600' });
        res.end();
      },
    });
  });
  after(async () => {
    await home.close();
    await other.close();
  });

  /** Stores `path`'s 301 with a `redirect: 'manual'` request. */
  async function storeRedirect(f: ReturnType<typeof createCachingFetch>, path: string): Promise<void> {
    const r = await f(`${home.url}${path}`, { redirect: 'manual' });
    assert.equal(r.status, 301);
    await r.arrayBuffer();
  }

  it('attack: stored 301 to another origin followed with Authorization, Cookie, Proxy-Authorization -> none reach it', async () => {
    const f = createCachingFetch();
    await storeRedirect(f, '/away');
    const r = await f(`${home.url}/away`, { headers: secrets });
    assert.equal(await r.text(), 'GET -');
    assert.equal(r.redirected, true);
    assert.equal(cs(r), 'gatehouse-client; fwd=uri-miss');
    assert.equal(home.count('/away'), 1, 'the 301 came from storage');
    const got = other.seen.filter((q) => q.url === '/landing');
    assert.equal(got.length, 1, 'the other origin was reached');
    assert.deepEqual(credentialFields(got[0]!), []);
  });

  it('stored 301 to the same origin -> the credentials are kept (only a cross-origin hop drops them)', async () => {
    const f = createCachingFetch();
    await storeRedirect(f, '/near');
    const before = home.seen.length;
    assert.equal(await (await f(`${home.url}/near`, { headers: secrets })).text(), 'GET -');
    const got = home.seen.slice(before).filter((q) => q.url === '/landing');
    assert.equal(got.length, 1);
    assert.deepEqual(credentialFields(got[0]!), Object.keys(secrets));
  });

  it("a Request input's header fields go to the next hop too (not only init.headers)", async () => {
    const f = createCachingFetch();
    await storeRedirect(f, '/near');
    const before = home.seen.length;
    await (await f(new Request(`${home.url}/near`, { headers: { 'x-trace': '7' } }))).text();
    const got = home.seen.slice(before).find((q) => q.url === '/landing');
    assert.equal(got?.headers['x-trace'], '7');
  });

  it("stored 301 with redirect: 'error' -> a TypeError, as fetch's network error", async () => {
    const f = createCachingFetch();
    await storeRedirect(f, '/near');
    const landed = home.count('/landing');
    await assert.rejects(f(`${home.url}/near`, { redirect: 'error' }), TypeError);
    assert.equal(home.count('/landing'), landed);
  });

  it('a fetch that does not follow: POST -> 303 becomes GET without the body fields; 301 POST -> GET', async () => {
    // options.fetch that hands every 3xx back (a custom transport): the caching fetch follows it.
    const manualFetch = (input: RequestInfo | URL, init?: RequestInit) =>
      fetch(input, { ...init, redirect: 'manual' });
    const f = createCachingFetch({ fetch: manualFetch });
    const post = {
      method: 'POST',
      body: '{"a":1}',
      headers: { 'content-type': 'application/json', ...secrets },
    };
    const r = await f(`${home.url}/see-other`, post);
    assert.equal(await r.text(), 'GET -');
    const got = other.seen.find((q) => q.url === '/landing');
    assert.deepEqual(credentialFields(got!), []);
    assert.equal(got!.headers['content-length'], undefined);
    assert.equal(await (await f(`${home.url}/moved`, post)).text(), 'GET -');
  });

  it('20 stored redirects are followed; the 21st is a TypeError', async () => {
    const f = createCachingFetch();
    for (let n = 21; n > 0; n--) await storeRedirect(f, `/chain?n=${n}`);
    assert.equal(await (await f(`${home.url}/chain?n=20`)).text(), 'end');
    await assert.rejects(f(`${home.url}/chain?n=21`), /more than 20 redirects/);
  });
});

// Two origins on one host and port: the first byte of a connection picks TLS (a handshake record,
// content type 22, RFC 8446 §5.1) or plain HTTP. https://127.0.0.1:P and http://127.0.0.1:P have the
// same host ("127.0.0.1:P") and differ only in scheme, which makes them two origins (RFC 6454 §4).
describe('caching fetch attacks: a stored redirect that changes only the scheme', () => {
  const secrets = {
    authorization: 'Bearer s3cret',
    cookie: 'sid=s3cret',
    'proxy-authorization': 'Basic eDp5',
  };
  /** Requests that reached the server, with the scheme they came over. */
  const seen: { scheme: 'http' | 'https'; url: string; headers: IncomingMessage['headers'] }[] = [];
  let port = 0;
  let front: ReturnType<typeof createNetServer>;
  let dispatcher: Agent;
  const sockets = new Set<Socket>();

  before(async () => {
    const routes = (scheme: 'http' | 'https'): RequestListener => {
      return (req, res) => {
        seen.push({ scheme, url: req.url!, headers: req.headers });
        const other = scheme === 'https' ? 'http' : 'https';
        if (req.url === '/switch' || req.url === '/stay') {
          const to = req.url === '/switch' ? other : scheme;
          res.writeHead(301, {
            location: `${to}://127.0.0.1:${port}/landing`,
            'cache-control': 'max-age=600',
          });
          res.end();
          return;
        }
        res.writeHead(200, { 'cache-control': 'no-store' });
        res.end(`${scheme} ${req.url}`);
      };
    };
    const pki = await testPki();
    const plain = createHttpServer(routes('http'));
    const secure = createHttpsServer({ cert: pki.chain, key: pki.leaf.keyPem }, routes('https'));
    front = createNetServer((socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      socket.once('data', (first) => {
        socket.pause();
        // A stream in front of the socket: the servers read the first bytes from it again (a TLS
        // server would otherwise read the socket's handle directly, past them).
        const stream = new Duplex({
          read: () => void socket.resume(),
          write: (chunk, _enc, done) => void socket.write(chunk, done),
          final: (done) => void socket.end(done),
          destroy: (err, done) => {
            socket.destroy();
            done(err);
          },
        });
        stream.push(first);
        socket.on('data', (c) => {
          if (!stream.push(c)) socket.pause();
        });
        socket.on('end', () => stream.push(null));
        socket.on('close', () => stream.destroy());
        socket.on('error', (err) => stream.destroy(err));
        (first[0] === 22 ? secure : plain).emit('connection', stream);
      });
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    port = (front.address() as AddressInfo).port;
    dispatcher = new Agent({ connect: { ca: pki.root.certPem } });
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((r) => front.close(r));
    await dispatcher.close();
  });

  /** The caching fetch over a transport that trusts the test CA. */
  const cachingFetch = () =>
    createCachingFetch({
      fetch: (input: RequestInfo | URL, init?: RequestInit) =>
        fetch(input, { ...init, dispatcher } as RequestInit),
    });

  for (const [from, to] of [
    ['https', 'http'],
    ['http', 'https'],
  ] as const) {
    it(`attack: stored 301 from ${from}://127.0.0.1:P to ${to}://127.0.0.1:P (same host and port) followed with Authorization, Cookie, Proxy-Authorization -> none reach it`, async () => {
      const f = cachingFetch();
      const url = `${from}://127.0.0.1:${port}/switch`;
      const stored = await f(url, { redirect: 'manual' });
      assert.equal(stored.status, 301);
      await stored.arrayBuffer();
      const before = seen.length;
      const r = await f(url, { headers: secrets });
      assert.equal(await r.text(), `${to} /landing`);
      assert.equal(r.redirected, true);
      const got = seen.slice(before);
      // The 301 came from storage; the next hop reached the server over the other scheme, bare.
      assert.deepEqual(
        got.map((q) => `${q.scheme} ${q.url}`),
        [`${to} /landing`],
      );
      assert.deepEqual(
        Object.keys(secrets).filter((k) => got[0]!.headers[k] !== undefined),
        [],
      );
    });
  }

  it('stored 301 from https://127.0.0.1:P to https://127.0.0.1:P (same origin) -> the credentials are kept: the transport carries them', async () => {
    const f = cachingFetch();
    const url = `https://127.0.0.1:${port}/stay`;
    await (await f(url, { redirect: 'manual' })).arrayBuffer();
    const before = seen.length;
    assert.equal(await (await f(url, { headers: secrets })).text(), 'https /landing');
    const got = seen.slice(before);
    assert.deepEqual(
      got.map((q) => `${q.scheme} ${q.url}`),
      ['https /landing'],
    );
    assert.deepEqual(
      Object.keys(secrets).filter((k) => got[0]!.headers[k] !== undefined),
      Object.keys(secrets),
    );
  });
});

describe('caching fetch attacks: streamed bodies', () => {
  let o: Origin;
  /** Chunks the endless route has written so far. */
  let written = 0;
  const timers = new Set<NodeJS.Timeout>();

  before(async () => {
    o = await origin({
      '/endless': (req, res) => {
        // 10 B every 100 ms, never ending; cacheable by its fields.
        res.writeHead(200, { 'cache-control': 'max-age=600', 'content-type': 'text/plain' });
        const t = setInterval(() => {
          written++;
          res.write('0123456789');
        }, 100);
        timers.add(t);
        req.socket.on('close', () => {
          clearInterval(t);
          timers.delete(t);
        });
      },
      '/events': (_req, res) => {
        res.writeHead(200, {
          'cache-control': 'max-age=600',
          'content-type': 'text/event-stream; charset=utf-8',
        });
        res.end('data: one\n\ndata: two\n\n');
      },
      '/broken': (_req, res) => {
        res.writeHead(200, { 'cache-control': 'max-age=600', 'content-type': 'text/plain' });
        res.write('half a body');
        setTimeout(() => res.destroy(), 20);
      },
    });
  });
  after(async () => {
    for (const t of timers) clearInterval(t);
    await o.close();
  });

  it('attack: endless slow stream -> resolves on the head, streams, nothing stored past maxEntryBytes', async () => {
    written = 0;
    const f = createCachingFetch({ maxEntryBytes: 100 });
    // Fails (not hangs) if the caching fetch waits for the body: reported once 5 chunks were sent
    // (waiting for the body, it would resolve after 11 at the earliest, past maxEntryBytes).
    let poll: NodeJS.Timeout | undefined;
    const fiveChunks = new Promise<'late'>((resolve) => {
      poll = setInterval(() => written >= 5 && resolve('late'), 5);
    });
    const r = await Promise.race([f(`${o.url}/endless`), fiveChunks]).finally(() => clearInterval(poll));
    assert.notEqual(r, 'late', 'resolved only after 5 chunks of the stream: it waited for the body');
    assert.ok(r instanceof Response);
    const reader = r.body!.getReader();
    let bytes = 0;
    while (bytes <= 150) bytes += (await reader.read()).value!.byteLength;
    const st = await f.stats();
    assert.equal(st.stored, 0);
    assert.equal(st.tiers[0]!.bytes, 0);
    await reader.cancel();
    await f.idle();
    assert.equal((await f.stats()).stored, 0);
    assert.equal(o.count('/endless'), 1);
    o.seen.length = 0;
  });

  it('attack: endless slow stream asked for twice at once -> both resolve on the head, one origin request, same bytes', async () => {
    written = 0;
    const f = createCachingFetch({ maxEntryBytes: 100 });
    let poll: NodeJS.Timeout | undefined;
    const fiveChunks = new Promise<'late'>((resolve) => {
      poll = setInterval(() => written >= 5 && resolve('late'), 5);
    });
    const url = `${o.url}/endless?twice`;
    const both = await Promise.race([Promise.all([f(url), f(url)]), fiveChunks]).finally(() =>
      clearInterval(poll),
    );
    assert.notEqual(both, 'late', "the second request waited for the first one's body");
    const [a, b] = both as Response[];
    assert.match(cs(b!)!, /collapsed$/);
    const readers = [a!.body!.getReader(), b!.body!.getReader()];
    const got = ['', ''];
    const dec = new TextDecoder();
    // Past maxEntryBytes (the copy dropped), both still read the one stream.
    while (got.some((t) => t.length <= 150)) {
      await Promise.all(
        readers.map(async (r, i) => {
          if (got[i]!.length <= 150) got[i] += dec.decode((await r.read()).value);
        }),
      );
    }
    assert.ok(got.every((t) => /^(0123456789)+$/.test(t)));
    assert.equal(o.count('/endless'), 1, 'one request reached the origin');
    await Promise.all(readers.map((r) => r.cancel()));
    await f.idle();
    assert.equal((await f.stats()).stored, 0);
  });

  it('attack: cacheable text/event-stream -> passed on, never stored', async () => {
    const f = createCachingFetch();
    assert.equal(await (await f(`${o.url}/events`)).text(), 'data: one\n\ndata: two\n\n');
    await f.idle();
    assert.equal(await (await f(`${o.url}/events`)).text(), 'data: one\n\ndata: two\n\n');
    assert.equal(o.count('/events'), 2);
    assert.equal((await f.stats()).stored, 0);
  });

  it('attack: body cut off mid-way -> the caller sees the error, nothing stored, next request goes out', async () => {
    const f = createCachingFetch();
    const r = await f(`${o.url}/broken`);
    await assert.rejects(r.text());
    await f.idle();
    assert.equal((await f.stats()).stored, 0);
    await assert.rejects(async () => (await f(`${o.url}/broken`)).text());
    assert.equal(o.count('/broken'), 2);
  });
});

describe('caching fetch attacks: failing and stuck tiers', () => {
  let o: Origin;
  before(async () => {
    o = await origin({
      '/page': (_req, res) => {
        res.writeHead(200, { 'cache-control': 'max-age=600' });
        res.end('page');
      },
    });
  });
  after(() => o.close());

  /** A second tier (a Map, as a disk tier would keep them). */
  function mapTier(): CacheTier & { map: Map<string, CachedVariants> } {
    const map = new Map<string, CachedVariants>();
    return {
      name: 'map',
      map,
      get: async (k) => map.get(k),
      put: async (k, v) => void map.set(k, v),
      delete: async (k) => void map.delete(k),
      keys: async () => [...map.keys()],
      clear: async () => map.clear(),
    };
  }
  /** A tier that stores, then fails every delete and clear (a full disk, a lost Redis). */
  function brokenTier(): CacheTier {
    const t = mapTier();
    const fail = async () => {
      throw new Error('tier down');
    };
    return { ...t, name: 'broken', delete: fail, clear: fail };
  }

  it('attack: a failing tier in front of another -> invalidate() and clear() still reach every tier, then report it', async () => {
    const later = mapTier();
    const f = createCachingFetch({ stores: [brokenTier(), later] });
    const url = `${o.url}/page`;
    await (await f(url)).text();
    assert.equal(later.map.size, 1, 'written through to the last tier');
    await assert.rejects(f.invalidate(url), (err: unknown) => {
      assert.ok(err instanceof AggregateError);
      assert.match(err.message, /tier broken failed/);
      assert.equal(err.errors.length, 1);
      return true;
    });
    assert.equal(later.map.size, 0, 'the tier after the failing one was invalidated too (RFC 9111 §4.4)');
    await (await f(`${url}?2`)).text();
    assert.equal(later.map.size, 1);
    await assert.rejects(f.clear(), AggregateError);
    assert.equal(later.map.size, 0, 'the tier after the failing one was cleared too');
    assert.equal(o.count('/page'), 2);
  });

  it('attack: a tier whose get never settles -> skipped after tierTimeoutMs, the request is answered', async () => {
    let gets = 0;
    const stuck: CacheTier = {
      ...mapTier(),
      name: 'stuck',
      get: () => {
        gets++;
        return new Promise(() => {});
      },
    };
    const f = createCachingFetch({ stores: [stuck], tierTimeoutMs: 50, maxMemoryBytes: 0 });
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<'hung'>((resolve) => {
      timer = setTimeout(() => resolve('hung'), WAIT_DEADLINE_MS);
    });
    const r = await Promise.race([f(`${o.url}/page`), hung]).finally(() => clearTimeout(timer));
    assert.notEqual(r, 'hung', 'the request hung on the stuck tier');
    assert.equal(await (r as Response).text(), 'page');
    assert.equal(gets, 1, 'the stuck tier was asked');
    assert.throws(() => createCachingFetch({ tierTimeoutMs: 0 }), RangeError);
  });
});
