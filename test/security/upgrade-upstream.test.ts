// Attack: exhausting the upstream through the WebSocket pass-through. A refused upgrade must not leave
// its upstream connection open, and the upgraded connections to one upstream are bounded.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { WebSocketServer } from 'ws';
import type { GatehouseConfigInput } from '../../src/config/schema.js';
import { makeSite, rawStatus, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { waitUntil } from '../helpers/wait.js';

const T = { timeout: 30_000 };
const KEY = 'dGhlIHNhbXBsZSBub25jZQ==';

/** A masked text frame "hi" (RFC 6455 §5.2), as a client sends it. */
const MASKED_HI = Buffer.from([0x81, 0x82, 1, 2, 3, 4, 0x68 ^ 1, 0x69 ^ 2]);

function handshakeHead(path: string): string {
  return `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${KEY}\r\nSec-WebSocket-Version: 13\r\n\r\n`;
}

/** Opens a handshake; resolves with the response head text and the still-open socket. */
function handshake(port: number, path: string): Promise<{ head: string; body: string; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      const end = got.indexOf('\r\n\r\n');
      resolve({ head: got.slice(0, end), body: got.slice(end + 4), socket });
    };
    socket.on('data', (c: Buffer) => {
      got += c.toString('latin1');
      if (got.includes('\r\n\r\n') && rawStatus(got) === 101) finish();
    });
    socket.on('error', reject);
    socket.on('close', finish);
    socket.write(handshakeHead(path));
  });
}

/** Waits until `cond` holds; the shared deadline (WAIT_DEADLINE_MS) only turns a hang into a failure. */
async function until(cond: () => boolean, what: string): Promise<void> {
  await waitUntil(what, cond);
}

interface CountingUpstream {
  url: string;
  open: () => number;
  close(): Promise<void>;
}

/** An upstream whose sockets are counted; `accept` decides whether a handshake gets 101. */
async function upstream(accept: boolean): Promise<CountingUpstream> {
  let open = 0;
  const wss = new WebSocketServer({ noServer: true });
  const server: Server = createServer((_req, res) => {
    // Keep-alive on purpose: the upstream would hold the connection for more requests.
    res.writeHead(403, { 'content-type': 'text/plain', 'x-upstream': 'yes' });
    res.end('go away');
  });
  server.on('connection', (s) => {
    open++;
    s.on('close', () => open--);
  });
  if (accept) {
    server.on('upgrade', (req, socket, h) => wss.handleUpgrade(req, socket, h, () => {}));
  }
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    open: () => open,
    close: async () => {
      for (const c of wss.clients) c.terminate();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/**
 * A Gatehouse server whose proxy routes (from `routes(upstreamUrl)`) point at a counting upstream,
 * started before the suite's tests and closed after them; read `up` and `s` inside the tests.
 */
function proxyFixture(
  accept: boolean,
  routes: (url: string) => NonNullable<GatehouseConfigInput['proxy']>,
): { up: CountingUpstream; s: TestServer } {
  const f = {} as { up: CountingUpstream; s: TestServer };
  let site = '';
  before(async () => {
    site = makeSite({});
    f.up = await upstream(accept);
    f.s = await startServer(site, { proxy: routes(f.up.url) });
  });
  after(async () => {
    await f.s.close();
    await f.up.close();
    removeSite(site);
  });
  return f;
}

describe('attack: upgrades the upstream refuses', () => {
  const f = proxyFixture(false, (url) => [{ prefix: '/ws', upstream: url }]);

  it('attack: the refusal is passed on to the client as is (status, fields, body)', T, async () => {
    const r = await handshake(f.s.port, '/ws/x');
    assert.equal(rawStatus(r.head), 403, r.head);
    assert.match(r.head, /^x-upstream: yes$/im);
    assert.match(r.head, /^connection: close$/im);
    assert.match(r.body, /go away/);
  });

  it('attack: 60 refused upgrades leave no upstream connection open', T, async () => {
    for (let i = 0; i < 60; i++) {
      const r = await handshake(f.s.port, '/ws/x');
      assert.equal(rawStatus(r.head), 403);
    }
    await until(() => f.up.open() === 0, 'every upstream socket to close');
    assert.equal(f.up.open(), 0);
  });
});

/**
 * An upstream that answers handshakes from its 'upgrade' listener, as a Node WebSocket server does:
 * `/ws/refuse` gets `403` with `Content-Length: 0` and `/ws/silent` nothing, and either way it keeps
 * the socket without reading it, so a FIN alone never reaches its code. Counts its open sockets and
 * the handshakes it received.
 */
async function holdingUpstream(): Promise<CountingUpstream & { handshakes: () => number }> {
  let open = 0;
  let handshakes = 0;
  const held = new Set<Socket>();
  const server = createServer();
  server.on('connection', (s) => {
    open++;
    s.on('close', () => open--);
  });
  server.on('upgrade', (req, socket: Socket) => {
    handshakes++;
    held.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => held.delete(socket));
    if (req.url!.endsWith('/refuse')) socket.write('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    open: () => open,
    handshakes: () => handshakes,
    close: async () => {
      for (const s of held) s.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('attack: refused handshakes whose upstream keeps the connection open', () => {
  const f = {} as { up: CountingUpstream & { handshakes: () => number }; s: TestServer };
  let site = '';
  before(async () => {
    site = makeSite({});
    f.up = await holdingUpstream();
    // A short handshake timeout for /slow (connect + headers): the 504 case.
    f.s = await startServer(site, {
      proxy: [
        { prefix: '/slow', upstream: `${f.up.url}/ws`, timeouts: { connectMs: 200, headersMs: 300 } },
        { prefix: '/ws', upstream: f.up.url },
      ],
    });
  });
  after(async () => {
    await f.s.close();
    await f.up.close();
    removeSite(site);
  });

  it(
    'attack: 20 handshakes refused with 403 and Content-Length: 0, clients gone -> the upstream holds no socket',
    T,
    async () => {
      const before = f.up.handshakes();
      for (let i = 0; i < 20; i++) {
        const r = await handshake(f.s.port, '/ws/refuse');
        assert.equal(rawStatus(r.head), 403, r.head);
        r.socket.destroy();
      }
      assert.equal(f.up.handshakes() - before, 20, 'every handshake reached the upstream');
      await until(() => f.up.open() === 0, 'every upstream socket to close');
    },
  );

  it(
    'attack: 20 clients leave before the upstream answers (half after sending a frame early) -> the upstream holds no socket',
    T,
    async () => {
      const before = f.up.handshakes();
      const clients: Socket[] = [];
      for (let i = 0; i < 20; i++) {
        const c = connect(f.s.port, '127.0.0.1');
        c.on('error', () => {});
        c.write(handshakeHead('/ws/silent'));
        clients.push(c);
      }
      await until(() => f.up.handshakes() - before === 20, 'every handshake to reach the upstream');
      // Bytes waiting unread on the server's side of a socket would hide its FIN from Node.
      for (const c of clients.slice(10)) c.write(MASKED_HI);
      for (const c of clients) c.end();
      await until(() => f.up.open() === 0, 'every upstream socket to close');
    },
  );

  it(
    'attack: handshakes the upstream never answers -> 504, and the upstream holds no socket',
    T,
    async () => {
      const before = f.up.handshakes();
      for (let i = 0; i < 5; i++) {
        const r = await handshake(f.s.port, '/slow/silent');
        assert.equal(rawStatus(r.head), 504, r.head);
        r.socket.destroy();
      }
      assert.equal(f.up.handshakes() - before, 5, 'every handshake reached the upstream');
      await until(() => f.up.open() === 0, 'every upstream socket to close');
    },
  );
});

describe('proxy: WebSocket pass-through, a frame the client sends before the answer', () => {
  it('reaches the upstream after the switch, in order', T, async () => {
    const wss = new WebSocketServer({ noServer: true });
    const up = createServer();
    let pending: (() => void) | undefined;
    up.on('upgrade', (req, socket: Socket, head) => {
      pending = () =>
        wss.handleUpgrade(req, socket, head, (ws) => ws.on('message', (m) => ws.send(`echo:${m}`)));
    });
    await new Promise<void>((r) => up.listen(0, '127.0.0.1', r));
    const site = makeSite({});
    const s = await startServer(site, {
      proxy: [{ prefix: '/ws', upstream: `http://127.0.0.1:${(up.address() as AddressInfo).port}` }],
    });
    const serverSide: Socket[] = [];
    s.app.server.on('connection', (c: Socket) => serverSide.push(c));
    const c = connect(s.port, '127.0.0.1');
    try {
      let got = Buffer.alloc(0);
      c.on('data', (d: Buffer) => {
        got = Buffer.concat([got, d]);
      });
      const head = handshakeHead('/ws/x');
      c.write(head);
      await waitUntil('the upstream to hold the handshake', () => pending);
      c.write(MASKED_HI);
      // The frame reached Gatehouse while the upstream had not answered yet.
      await waitUntil('the frame to reach the server', () => serverSide[0]!.bytesRead >= head.length + 8);
      pending!();
      await waitUntil('the echo', () => got.includes('echo:hi'));
      assert.equal(rawStatus(got.toString('latin1')), 101);
    } finally {
      c.destroy();
      await s.close();
      for (const ws of wss.clients) ws.terminate();
      up.closeAllConnections();
      up.close();
      removeSite(site);
    }
  });
});

describe('attack: more upgraded connections than an upstream should hold', () => {
  const f = proxyFixture(true, (url) => [{ prefix: '/ws', upstream: url, maxUpgrades: 2 }]);

  it('attack: handshakes beyond proxy[].maxUpgrades -> 503; a closed tunnel frees its place', T, async () => {
    const a = await handshake(f.s.port, '/ws/a');
    const b = await handshake(f.s.port, '/ws/b');
    assert.equal(rawStatus(a.head), 101);
    assert.equal(rawStatus(b.head), 101);
    const c = await handshake(f.s.port, '/ws/c');
    assert.equal(rawStatus(c.head), 503, c.head);
    assert.equal(f.up.open(), 2, 'the refused one never reached the upstream');
    a.socket.destroy();
    await until(() => f.up.open() === 1, 'the closed tunnel to reach the upstream');
    // The count drops when both sides of the closed tunnel are gone: retry until it has.
    const d = await waitUntil('a handshake past the freed place', async () => {
      const h = await handshake(f.s.port, '/ws/d');
      if (rawStatus(h.head) !== 503) return h;
      h.socket.destroy();
      return undefined;
    });
    assert.equal(rawStatus(d.head), 101);
    b.socket.destroy();
    d.socket.destroy();
  });
});

describe('attack: two routes to one upstream, to double its upgrade bound', () => {
  const f = proxyFixture(true, (url) => [
    { prefix: '/a', upstream: url, maxUpgrades: 2 },
    { prefix: '/b', upstream: `${url}/base`, maxUpgrades: 2 },
  ]);

  it(
    "attack: tunnels through a second route to the same origin count against the first route's maxUpgrades -> 503",
    T,
    async () => {
      const a = await handshake(f.s.port, '/a/1');
      const b = await handshake(f.s.port, '/b/1');
      assert.equal(rawStatus(a.head), 101, a.head);
      assert.equal(rawStatus(b.head), 101, b.head);
      const c = await handshake(f.s.port, '/a/2');
      const d = await handshake(f.s.port, '/b/2');
      assert.equal(rawStatus(c.head), 503, c.head);
      assert.equal(rawStatus(d.head), 503, d.head);
      assert.equal(f.up.open(), 2, 'the upstream holds two tunnels, not four');
      // A tunnel closed on one route frees a place for the other.
      b.socket.destroy();
      const e = await waitUntil('a handshake past the freed place', async () => {
        const h = await handshake(f.s.port, '/a/3');
        if (rawStatus(h.head) !== 503) return h;
        h.socket.destroy();
        return undefined;
      });
      assert.equal(rawStatus(e.head), 101);
      for (const x of [a, c, d, e]) x.socket.destroy();
    },
  );
});

describe('proxy[].maxUpgrades config', () => {
  it('defaults to 10000 and must be an integer >= 1', async () => {
    const { parseConfig } = await import('../../src/config/load.js');
    assert.equal(
      parseConfig({ proxy: [{ prefix: '/a', upstream: 'http://x' }] }).proxy[0]!.maxUpgrades,
      10_000,
    );
    assert.throws(
      () => parseConfig({ proxy: [{ prefix: '/a', upstream: 'http://x', maxUpgrades: 0 }] }),
      /proxy\[0\]\.maxUpgrades/,
    );
  });
});
