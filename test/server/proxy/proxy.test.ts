// The reverse proxy against real upstream servers on 127.0.0.1:0. WebSocket upgrades under a prefix are
// in proxy-websocket.test.ts (not on the runtimes' own servers yet).
// matrix: http1 h2 h1-tls adapters runtimes (the static, policy, proxy and cache suites run on every protocol, adapter and runtime)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  get,
  makeSite,
  raw,
  rawStatus,
  removeSite,
  request,
  scheme,
  startServer,
  type TestServer,
} from '../../helpers/http.js';
import {
  httpUpstream,
  proxyTo,
  rawClient,
  rawUpstream,
  statusLines,
  waitFor,
} from '../../helpers/proxy-attack.js';
import {
  HEAD_WAITS_FOR_BODY,
  NO_CONNECT_TIMEOUT,
  NO_INTERIM_RESPONSES,
  NO_TRAILERS,
} from '../../helpers/runtimes.js';
import { TEST_PROTOCOL } from '../../helpers/tls.js';
import { holdsFor, WAIT_DEADLINE_MS, waitUntil } from '../../helpers/wait.js';

interface Upstream {
  server: Server;
  url: string;
  port: number;
  seen: IncomingMessage[];
  close(): Promise<void>;
}

async function upstream(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Upstream> {
  const seen: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    seen.push(req);
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    port,
    seen,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const echo = (req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ url: req.url, headers: req.headers }));
};

async function freePort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

describe('proxy: routing and headers', () => {
  let up: Upstream;
  let site: string;
  let gh: TestServer;
  before(async () => {
    up = await upstream(echo);
    site = makeSite({ 'index.html': 'static', 'apiary.txt': 'bees' });
    gh = await startServer(site, {
      proxy: [
        { prefix: '/api', upstream: up.url },
        { prefix: '/keep', upstream: up.url, stripPrefix: false },
        {
          prefix: '/v',
          upstream: `${up.url}/base/`,
          rewrite: { from: '^/(\\d+)/(.*)$', to: '/version-$1/$2' },
        },
        { prefix: '/fwd', upstream: up.url, forwarded: true, changeOrigin: true },
      ],
    });
  });
  after(async () => {
    await gh.close();
    await up.close();
    removeSite(site);
  });

  it('strips the prefix and keeps the query', async () => {
    const r = await get(gh.url, '/api/users?id=1&x=%20');
    assert.equal(r.status, 200);
    assert.equal(JSON.parse(r.text).url, '/users?id=1&x=%20');
    assert.equal(JSON.parse((await get(gh.url, '/api')).text).url, '/');
  });
  it('keeps the prefix when stripPrefix is false', async () => {
    assert.equal(JSON.parse((await get(gh.url, '/keep/a')).text).url, '/keep/a');
  });
  it('rewrites the path and prepends the upstream base path', async () => {
    assert.equal(JSON.parse((await get(gh.url, '/v/2/items')).text).url, '/base/version-2/items');
  });
  it('a prefix never matches a longer segment: /apiary is static', async () => {
    assert.equal((await get(gh.url, '/apiary.txt')).text, 'bees');
  });
  it('any method, with a body', async () => {
    const r = await get(gh.url, '/api/x', {
      method: 'PUT',
      body: 'hello',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(r.status, 200);
    assert.equal(up.seen.at(-1)!.method, 'PUT');
  });

  it('hop-by-hop request headers are removed; TE: trailers passes; Host kept', async () => {
    const text = await raw(
      gh.port,
      'GET /api/h HTTP/1.1\r\nHost: public.example\r\nConnection: keep-alive, X-Secret\r\nX-Secret: 1\r\n' +
        'Keep-Alive: timeout=5\r\nProxy-Authorization: Basic eA==\r\nProxy-Connection: keep-alive\r\nTE: trailers, deflate\r\n' +
        'Upgrade: h2c\r\nX-Kept: yes\r\n\r\n',
      500,
    );
    const bodyText = text.slice(text.indexOf('\r\n\r\n') + 4);
    const body = JSON.parse(bodyText.slice(bodyText.indexOf('{'), bodyText.lastIndexOf('}') + 1));
    const h = body.headers;
    for (const n of ['x-secret', 'keep-alive', 'proxy-authorization', 'proxy-connection', 'upgrade']) {
      assert.equal(h[n], undefined, n);
    }
    assert.equal(h.te, 'trailers');
    assert.equal(h['x-kept'], 'yes');
    assert.equal(h.host, 'public.example');
    assert.equal(h.via, '1.1 gatehouse');
  });

  it('X-Forwarded-* from an untrusted client are replaced', async () => {
    const r = await get(gh.url, '/api/f', {
      headers: {
        'x-forwarded-for': '6.6.6.6',
        // the scheme this client did not use (the suite runs on http and https)
        'x-forwarded-proto': scheme(gh) === 'http' ? 'https' : 'http',
        'x-forwarded-host': 'evil',
        host: 'pub:1',
      },
    });
    const h = JSON.parse(r.text).headers;
    assert.equal(h['x-forwarded-for'], '127.0.0.1');
    assert.equal(h['x-forwarded-proto'], scheme(gh));
    // RFC 9110 §7.6.3: Via names the protocol the request came in on ("2" for HTTP/2).
    assert.equal(h.via, TEST_PROTOCOL === 'h2' ? '2 gatehouse' : '1.1 gatehouse');
    assert.equal(h['x-forwarded-host'], 'pub:1');
  });

  it('Forwarded (RFC 7239) and changeOrigin', async () => {
    const r = await get(gh.url, '/fwd/x', { headers: { forwarded: 'for=6.6.6.6', host: 'pub.example' } });
    const h = JSON.parse(r.text).headers;
    assert.equal(h.forwarded, `for=127.0.0.1;host=pub.example;proto=${scheme(gh)}`);
    assert.equal(h.host, `127.0.0.1:${up.port}`);
  });
});

describe('proxy: trusted proxies', () => {
  it('a trusted peer: X-Forwarded-For is appended to, its proto and host kept', async () => {
    const up = await upstream(echo);
    const site = makeSite({});
    const gh = await startServer(site, {
      trustProxy: ['127.0.0.1'],
      proxy: [{ prefix: '/api', upstream: up.url, forwarded: true }],
    });
    try {
      const r = await get(gh.url, '/api/x', {
        headers: {
          'x-forwarded-for': '203.0.113.7',
          'x-forwarded-proto': 'https',
          'x-forwarded-host': 'a.example',
          forwarded: 'for=203.0.113.7',
        },
      });
      const h = JSON.parse(r.text).headers;
      assert.equal(h['x-forwarded-for'], '203.0.113.7, 127.0.0.1');
      assert.equal(h['x-forwarded-proto'], 'https');
      assert.equal(h['x-forwarded-host'], 'a.example');
      assert.match(h.forwarded, /^for=203\.0\.113\.7, for=127\.0\.0\.1;/);
    } finally {
      await gh.close();
      await up.close();
      removeSite(site);
    }
  });
});

describe('proxy: responses', () => {
  it('hop-by-hop response headers are removed, Via added, trailers forwarded, no-store default', async () => {
    const up = await upstream((_req, res) => {
      res.writeHead(200, {
        Connection: 'X-Up-Secret',
        'X-Up-Secret': '1',
        'Keep-Alive': 'timeout=9',
        'Proxy-Authenticate': 'Basic',
        Trailer: 'X-Checksum',
        'X-Up': 'yes',
      });
      res.write('part');
      res.addTrailers({ 'X-Checksum': 'abc' });
      res.end();
    });
    const site = makeSite({});
    const gh = await startServer(site, { proxy: [{ prefix: '/api', upstream: up.url }] });
    try {
      const text = await raw(
        gh.port,
        'GET /api/x HTTP/1.1\r\nHost: x\r\nTE: trailers\r\nConnection: close\r\n\r\n',
      );
      const headEnd = text.indexOf('\r\n\r\n');
      const headText = text.slice(0, headEnd).toLowerCase();
      assert.equal(rawStatus(text), 200);
      assert.ok(!headText.includes('x-up-secret'));
      assert.ok(!headText.includes('keep-alive: timeout=9'));
      assert.ok(!headText.includes('proxy-authenticate'));
      assert.ok(headText.includes('x-up: yes'));
      assert.ok(headText.includes('via: 1.1 gatehouse'));
      assert.ok(headText.includes('cache-control: no-store'));
      // Bun.serve and Deno.serve send no trailer fields (NO_TRAILERS): the body still arrives whole.
      if (NO_TRAILERS) assert.match(text.slice(headEnd), /part/);
      else assert.match(text.slice(headEnd), /X-Checksum: abc/i);
    } finally {
      await gh.close();
      await up.close();
      removeSite(site);
    }
  });

  it("the upstream's Cache-Control wins unless a rule overrides; rules fill it in", async () => {
    const up = await upstream((req, res) => {
      const h: Record<string, string> = { 'content-type': 'application/json' };
      if (req.url!.includes('own')) h['cache-control'] = 'private, max-age=5';
      res.writeHead(200, h);
      res.end('{}');
    });
    const site = makeSite({});
    const gh = await startServer(site, {
      cachePolicy: [
        { glob: '/api/rule/**', cacheControl: 'private, max-age=60' },
        { glob: '/api/force/**', cacheControl: 'no-cache', override: true },
      ],
      proxy: [{ prefix: '/api', upstream: up.url }],
    });
    try {
      assert.equal((await get(gh.url, '/api/plain')).headers['cache-control'], 'no-store');
      assert.equal((await get(gh.url, '/api/own')).headers['cache-control'], 'private, max-age=5');
      assert.equal((await get(gh.url, '/api/rule/x')).headers['cache-control'], 'private, max-age=60');
      assert.equal((await get(gh.url, '/api/rule/own')).headers['cache-control'], 'private, max-age=5');
      assert.equal((await get(gh.url, '/api/force/own')).headers['cache-control'], 'no-cache');
      const raw = await startServer(site, {
        proxy: [{ prefix: '/api', upstream: up.url, cacheControl: null }],
      });
      try {
        assert.equal((await get(raw.url, '/api/plain')).headers['cache-control'], undefined);
      } finally {
        await raw.close();
      }
    } finally {
      await gh.close();
      await up.close();
      removeSite(site);
    }
  });

  it('Location and Set-Cookie rewriting (opt-in)', async () => {
    let upUrl = '';
    const up = await upstream((_req, res) => {
      res.writeHead(302, {
        location: `${upUrl}/login?next=1`,
        'set-cookie': ['a=1; Domain=127.0.0.1; Path=/', 'b=2; Path=/x'],
      });
      res.end();
    });
    upUrl = up.url;
    const site = makeSite({});
    const gh = await startServer(site, {
      proxy: [{ prefix: '/api', upstream: up.url, rewriteLocation: true, rewriteCookies: true }],
    });
    try {
      const r = await get(gh.url, '/api/x', { headers: { host: 'pub.example' } });
      assert.equal(r.status, 302);
      assert.equal(r.headers.location, `${scheme(gh)}://pub.example/api/login?next=1`);
      assert.deepEqual(r.headers['set-cookie'], ['a=1; Domain=pub.example; Path=/api', 'b=2; Path=/api/x']);
    } finally {
      await gh.close();
      await up.close();
      removeSite(site);
    }
  });
});

describe('proxy: failures', () => {
  it('connection refused -> 502 problem+json', async () => {
    const port = await freePort();
    const site = makeSite({});
    const gh = await startServer(site, { proxy: [{ prefix: '/api', upstream: `http://127.0.0.1:${port}` }] });
    try {
      const r = await get(gh.url, '/api/x', { headers: { accept: 'application/json' } });
      assert.equal(r.status, 502);
      assert.equal(r.headers['content-type'], 'application/problem+json');
      assert.equal(JSON.parse(r.text).status, 502);
    } finally {
      await gh.close();
      removeSite(site);
    }
  });

  it('connect timeout -> 504 (TLS upstream that never answers the handshake)', async () => {
    const silent = createNetServer((s) => s.on('error', () => {}));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as AddressInfo).port;
    const site = makeSite({});
    const gh = await startServer(site, {
      proxy: [
        {
          prefix: '/api',
          upstream: `https://127.0.0.1:${port}`,
          // Bun: no connect step to time (NO_CONNECT_TIMEOUT); headersMs bounds the stalled handshake.
          timeouts: { connectMs: 200, ...(NO_CONNECT_TIMEOUT && { headersMs: 300 }) },
          retry: false,
        },
      ],
    });
    try {
      const r = await get(gh.url, '/api/x', { headers: { accept: 'application/json' } });
      assert.equal(r.status, 504);
      assert.match(JSON.parse(r.text).detail, NO_CONNECT_TIMEOUT ? /response timeout/ : /connect/);
    } finally {
      await gh.close();
      silent.close();
      removeSite(site);
    }
  });

  it('response head timeout -> 504', async () => {
    const up = await upstream(() => {});
    const site = makeSite({});
    const gh = await startServer(site, {
      proxy: [{ prefix: '/api', upstream: up.url, timeouts: { headersMs: 200 } }],
    });
    try {
      const r = await get(gh.url, '/api/x', { headers: { accept: 'application/json' } });
      assert.equal(r.status, 504);
      assert.match(JSON.parse(r.text).detail, /response timeout/);
    } finally {
      await gh.close();
      await up.close();
      removeSite(site);
    }
  });

  it('idle timeout mid-body and an upstream dying mid-body end the client response as broken', async () => {
    for (const mode of ['stall', 'die']) {
      // 'die': the upstream's socket goes once the client holds the first bytes (so mid-body, for sure);
      // 'stall': nothing more comes and idleMs (the scenario's own timer) ends it.
      let die = () => {};
      const up = await upstream((_req, res) => {
        res.writeHead(200, { 'content-length': '100' });
        res.write('x'.repeat(10));
        die = () => res.socket?.destroy();
      });
      const site = makeSite({});
      const gh = await startServer(site, {
        proxy: [{ prefix: '/api', upstream: up.url, timeouts: { idleMs: 200 } }],
      });
      try {
        const err = await new Promise<Error | undefined>((resolve) => {
          const req = request(`${gh.url}/api/x`, (res) => {
            res.on('data', () => mode === 'die' && die());
            res.on('end', () => resolve(undefined));
            res.on('error', resolve);
            res.on('aborted', () => resolve(new Error('aborted')));
          });
          req.on('error', resolve);
          req.end();
        });
        assert.ok(err, `${mode}: the client must see a broken response`);
      } finally {
        await gh.close();
        await up.close();
        removeSite(site);
      }
    }
  });

  it('a client abort closes the upstream request at once', async () => {
    let upstreamClosed: () => void = () => {};
    const closed = new Promise<void>((r) => (upstreamClosed = r));
    const up = await upstream((req, res) => {
      res.writeHead(200);
      res.write('start');
      req.socket.on('close', () => upstreamClosed());
    });
    const site = makeSite({});
    const gh = await startServer(site, { proxy: [{ prefix: '/api', upstream: up.url }] });
    try {
      // The client goes once the upstream's first bytes reach it: the exchange is under way, mid-body.
      const client = rawClient(gh.port, 'GET /api/long HTTP/1.1\r\nHost: x\r\n\r\n');
      await waitUntil('the first body bytes reach the client', () => client.text().includes('start'));
      client.sock.destroy();
      // No other close happens: the upstream's answer never ends and idleMs (60 s) is far away.
      await Promise.race([
        closed,
        new Promise((_, rej) =>
          setTimeout(() => rej(new Error('upstream never saw the close')), WAIT_DEADLINE_MS),
        ),
      ]);
    } finally {
      await gh.close();
      await up.close();
      removeSite(site);
    }
  });

  it('idempotent requests are retried once after a reset; POST is not', async () => {
    let n = 0;
    const up = await upstream((req, res) => {
      n++;
      if (n % 2 === 1) {
        req.socket.destroy();
        return;
      }
      res.end('ok');
    });
    const site = makeSite({});
    const gh = await startServer(site, { proxy: [{ prefix: '/api', upstream: up.url }] });
    try {
      const r = await get(gh.url, '/api/x');
      assert.equal(r.status, 200);
      assert.equal(n, 2);
      const p = await get(gh.url, '/api/x', {
        method: 'POST',
        body: 'x',
        headers: { accept: 'application/json' },
      });
      assert.equal(p.status, 502);
      assert.equal(n, 3);
    } finally {
      await gh.close();
      await up.close();
      removeSite(site);
    }
  });
});

describe('proxy: several upstreams', () => {
  it('round-robin balancing, and failover away from a dead upstream', async () => {
    const a = await upstream((_q, r) => r.end('a'));
    const b = await upstream((_q, r) => r.end('b'));
    const deadPort = await freePort();
    const site = makeSite({});
    const gh = await startServer(site, {
      proxy: [
        { prefix: '/rr', upstream: [a.url, b.url] },
        {
          prefix: '/fo',
          upstream: [`http://127.0.0.1:${deadPort}`, a.url],
          health: { failures: 1, cooldownMs: 60_000 },
        },
      ],
    });
    try {
      const seen = [];
      for (let i = 0; i < 4; i++) seen.push((await get(gh.url, '/rr/x')).text);
      assert.deepEqual(seen.sort(), ['a', 'a', 'b', 'b']);
      const fo = [];
      for (let i = 0; i < 4; i++) fo.push((await get(gh.url, '/fo/x')).text);
      assert.deepEqual(fo, ['a', 'a', 'a', 'a'], 'the retry fails over, then the dead one is skipped');
    } finally {
      await gh.close();
      await a.close();
      await b.close();
      removeSite(site);
    }
  });
});

describe('proxy: streaming', () => {
  // Structural, not a memory or time bound: bytes in flight (what the writer has handed over minus
  // what the reader has taken) can only exceed the proxy's bufferBytes plus the kernel's socket
  // buffers (two loopback hops, each a send and a receive buffer at their maximum) if the proxy
  // holds the body. The writer checks it after every chunk; the reader stays paused first, so a
  // proxy that buffers lets the whole body in while nobody reads it.
  const BUFFER_BYTES = 64 * 1024;
  const kernelMax = (file: string, fallback: number) => {
    try {
      return Number(readFileSync(file, 'utf8').trim().split(/\s+/)[2]) || fallback;
    } catch {
      return fallback;
    }
  };
  const IN_FLIGHT_BOUND =
    BUFFER_BYTES +
    2 *
      (kernelMax('/proc/sys/net/ipv4/tcp_wmem', 16 << 20) +
        kernelMax('/proc/sys/net/ipv4/tcp_rmem', 16 << 20)) +
    (1 << 20); // Node's stream buffers on four sockets, a chunk each
  const CHUNK = Buffer.alloc(64 * 1024, 97);
  const SIZE = Math.max(200 << 20, Math.ceil((3 * IN_FLIGHT_BOUND) / CHUNK.length) * CHUNK.length);

  /** A writer that counts what it hands over and whether it waits for 'drain'. */
  class Meter {
    written = 0;
    read = 0;
    maxInFlight = 0;
    blocked = false;
    stalls = 0;
    pump(w: { write(c: Buffer): boolean; once(e: 'drain', f: () => void): unknown; end(): unknown }): void {
      const step = () => {
        this.blocked = false;
        while (this.written < SIZE) {
          this.written += CHUNK.length;
          this.maxInFlight = Math.max(this.maxInFlight, this.written - this.read);
          if (!w.write(CHUNK)) {
            this.blocked = true;
            this.stalls++;
            return void w.once('drain', step);
          }
        }
        w.end();
      };
      step();
    }
    /** Phase 1: the reader takes nothing; the writer must come to a stop within the bound. */
    async heldBack(): Promise<void> {
      await waitUntil('the writer waits for drain', () => this.blocked || this.written >= SIZE);
      await holdsFor(
        `bytes in flight stay <= ${IN_FLIGHT_BOUND} while the reader is paused`,
        () => this.written - this.read <= IN_FLIGHT_BOUND,
        500,
      );
    }
    check(what: string): void {
      assert.equal(this.read, SIZE, `${what}: the whole body arrives`);
      assert.ok(
        this.maxInFlight <= IN_FLIGHT_BOUND,
        `${what}: ${this.maxInFlight} bytes in flight, over ${IN_FLIGHT_BOUND}: the proxy holds the body`,
      );
      assert.ok(this.stalls > 0, `${what}: the writer was never held back`);
    }
  }

  it('a large download streams with backpressure: a paused client pauses the upstream', async () => {
    const m = new Meter();
    const up = await upstream((_req, res) => {
      res.writeHead(200, { 'content-length': String(SIZE) });
      m.pump(res);
    });
    const site = makeSite({});
    const gh = await startServer(site, {
      proxy: [{ prefix: '/api', upstream: up.url, bufferBytes: BUFFER_BYTES }],
    });
    try {
      const res = await new Promise<IncomingMessage>((resolve, reject) => {
        const req = request(`${gh.url}/api/down`, resolve);
        req.on('error', reject);
        req.end();
      });
      assert.equal(res.statusCode, 200);
      await m.heldBack();
      await new Promise<void>((resolve, reject) => {
        res.on('data', (c: Buffer) => (m.read += c.length));
        res.on('end', resolve);
        res.on('error', reject);
      });
      m.check('download');
    } finally {
      await gh.close();
      await up.close();
      removeSite(site);
    }
  });

  it('a large upload streams with backpressure: a paused upstream pauses the client', async () => {
    const m = new Meter();
    let upstreamReq: IncomingMessage | undefined;
    const up = await upstream((req, res) => {
      req.pause();
      upstreamReq = req;
      req.on('end', () => res.end(String(m.read)));
    });
    const site = makeSite({});
    const gh = await startServer(site, {
      proxy: [{ prefix: '/api', upstream: up.url, bufferBytes: BUFFER_BYTES }],
    });
    try {
      const answer = new Promise<string>((resolve, reject) => {
        const req = request(
          `${gh.url}/api/up`,
          { method: 'POST', headers: { 'content-length': String(SIZE) } },
          (res) => {
            let b = '';
            res.on('data', (d) => (b += d));
            res.on('end', () => resolve(b));
          },
        );
        req.on('error', reject);
        m.pump(req);
      });
      const upReq = await waitUntil('the upstream has the request', () => upstreamReq);
      await m.heldBack();
      upReq.on('data', (c: Buffer) => (m.read += c.length));
      upReq.resume();
      assert.equal(Number(await answer), SIZE);
      m.check('upload');
    } finally {
      await gh.close();
      await up.close();
      removeSite(site);
    }
  });
});

describe('proxy: upstream connections and response heads', () => {
  it('connections bounds idle keep-alive: requests beyond it in flight close their connection', async () => {
    const held: ServerResponse[] = [];
    const up = await httpUpstream((_req, res) => held.push(res));
    const px = await proxyTo(up.url, { connections: 1 });
    try {
      const answers = [1, 2, 3].map(() => get(px.server.url, '/api/x'));
      await waitFor(() => up.seen.length === 3, 'three concurrent requests at the upstream');
      for (const res of held) res.end('ok');
      for (const r of await Promise.all(answers)) assert.equal(r.status, 200);
      // The first one dispatched keeps its connection; they may reach the upstream in any order.
      const closing = up.seen.filter((r) => r.headers.connection === 'close').length;
      assert.equal(closing, 2);
    } finally {
      await px.close();
      await up.close();
    }
  });

  it('a head whose body starts later still reaches the client at once (a stream)', async () => {
    let sendBody: () => void = () => {};
    const up = await httpUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      sendBody = () => res.end('data: 1\n\n');
    });
    const px = await proxyTo(up.url);
    try {
      const c = rawClient(px.server.port, 'GET /api/events HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      // Bun.serve holds the head until the first body byte (HEAD_WAITS_FOR_BODY): both come together.
      if (HEAD_WAITS_FOR_BODY) await waitFor(() => up.seen.length === 1, 'the request at the upstream');
      else {
        await waitFor(
          () => c.text().startsWith('HTTP/1.1 200 ') && c.text().includes('\r\n\r\n'),
          'the head before any body byte',
        );
        assert.doesNotMatch(c.text(), /data: 1/);
      }
      sendBody();
      await c.closed;
      assert.match(c.text(), /data: 1/);
    } finally {
      await px.close();
      await up.close();
    }
  });

  it('interim responses pass by the shared cache: the 200 is stored, the 103 is not replayed', async () => {
    let n = 0;
    const up = await rawUpstream((sock) => {
      n++;
      sock.write(
        'HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n' +
          'HTTP/1.1 200 OK\r\nCache-Control: max-age=60\r\nContent-Length: 2\r\n\r\nok',
      );
    });
    const px = await proxyTo(up.url, { cache: { enabled: true } });
    try {
      const first = rawClient(px.server.port, 'GET /api/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      await first.closed;
      // Bun.serve and Deno.serve cannot send a 1xx before the Response (NO_INTERIM_RESPONSES).
      assert.deepEqual(statusLines(first.text()), NO_INTERIM_RESPONSES ? [200] : [103, 200]);
      const second = rawClient(px.server.port, 'GET /api/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      await second.closed;
      assert.deepEqual(statusLines(second.text()), [200]);
      assert.match(second.text(), /cache-status: gatehouse; hit/i);
      assert.match(second.text(), /\r\n\r\nok$/);
      assert.equal(n, 1);
    } finally {
      await px.close();
      await up.close();
    }
  });
});
