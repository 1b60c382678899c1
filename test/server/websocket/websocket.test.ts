// WebSocket endpoints: config, the pure handshake and message decisions, and real servers on 127.0.0.1:0
// talked to with the `ws` client.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { after, before, describe, it, mock } from 'node:test';
import { WebSocket } from 'ws';
import { z } from 'zod';
import { formatIssues } from '../../../src/config/load.js';
import { type WebSocketConfigInput, websocketSchema } from '../../../src/config/websocket.js';
import { createEntry, offersWebSocket } from '../../../src/server/core/entry.js';
import { ERRORS } from '../../../src/server/core/errors.js';
import { bindTunnel, headWithoutUpgrade, nodeEntry } from '../../../src/server/node/entry.js';
import type { Logger } from '../../../src/server/ops/log.js';
import {
  checkHandshake,
  chooseSubprotocol,
  createWebSocketEndpoints,
  type HandshakeDecision,
  isAppPing,
  isSameOrigin,
  parseEnvelope,
  WebSocketConfigError,
  type WebSocketDeps,
  type WebSocketEndpoint,
  type WebSocketEndpoints,
} from '../../../src/server/websocket/index.js';
import { makeSite, raw, rawStatus, removeSite, startServer, type TestServer } from '../../helpers/http.js';
import { waitUntil } from '../../helpers/wait.js';
import {
  ALLOWED_ORIGIN,
  handshake,
  KEY,
  open,
  type Peer,
  T,
  UPGRADE,
  VALID,
  within,
} from '../../helpers/ws-client.js';

// ---------- helpers ----------

interface LogRecord {
  level: string;
  obj: object | string;
  msg: string | undefined;
}

interface Harness {
  port: number;
  endpoints: WebSocketEndpoints;
  logs: LogRecord[];
  url(path: string): string;
  close(): Promise<void>;
}

async function start(
  config: WebSocketConfigInput,
  o: Partial<Pick<WebSocketDeps, 'handlers' | 'closeGraceMs' | 'originAllowed'>> = {},
): Promise<Harness> {
  const logs: LogRecord[] = [];
  const rec = (level: string) => (obj: object | string, msg?: string) => logs.push({ level, obj, msg });
  const logger: Logger = {
    info: rec('info'),
    warn: rec('warn'),
    error: rec('error'),
    isLevelEnabled: () => true,
  };
  // The resolved config is exactly what the server runs on.
  const resolved: WebSocketEndpoint[] = websocketSchema.parse(config);
  const endpoints = createWebSocketEndpoints(resolved, {
    originAllowed: o.originAllowed ?? ((origin) => origin === ALLOWED_ORIGIN),
    handlers: o.handlers,
    logger,
    closeGraceMs: o.closeGraceMs,
  });
  const server = createServer((_req, res) => {
    res.statusCode = 404;
    res.end();
  });
  server.on('upgrade', (req, s, h) => {
    s.on('error', () => s.destroy());
    const { res, tunnel } = bindTunnel(req, s, h);
    if (!endpoints.handleUpgrade(req, res, tunnel)) s.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    endpoints,
    logs,
    url: (path) => `ws://127.0.0.1:${port}${path}`,
    close: async () => {
      await endpoints.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** `n` turns of the event loop (I/O included), for what a mocked clock keeps from setTimeout. */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

/** Turns the event loop until `cond` holds (no setTimeout: usable while the clock is mocked). */
async function turnsUntil(cond: () => boolean): Promise<void> {
  while (!cond()) await turns(1);
}

function eventually(cond: () => boolean, what: string): Promise<unknown> {
  return waitUntil(what, cond);
}

// ---------- config ----------

describe('websocket config', () => {
  it('fills in the defaults; the result is the server shape', () => {
    const [e]: WebSocketEndpoint[] = websocketSchema.parse([{ path: '/ws', mode: 'echo' }]);
    assert.deepEqual(e, {
      path: '/ws',
      mode: 'echo',
      maxPayloadBytes: 1024 * 1024,
      heartbeatIntervalMs: 30_000,
      requireOrigin: false,
      maxBufferedBytes: 1024 * 1024,
      perMessageDeflate: false,
      subprotocols: [],
      fanout: 'local',
    });
  });

  const root = z.strictObject({ websocket: websocketSchema });
  const bad: [string, unknown, RegExp][] = [
    [
      'duplicate path',
      [
        { path: '/a', mode: 'echo' },
        { path: '/b', mode: 'echo' },
        { path: '/a', mode: 'broadcast' },
      ],
      /websocket\[2\]\.path: duplicate path \/a \(already used by websocket\[0\]\.path\)/,
    ],
    ['path without /', [{ path: 'ws', mode: 'echo' }], /websocket\[0\]\.path/],
    ['path with a query', [{ path: '/ws?x', mode: 'echo' }], /websocket\[0\]\.path/],
    ['unknown mode', [{ path: '/ws', mode: 'chat' }], /websocket\[0\]\.mode/],
    ['subprotocol not a token', [{ path: '/ws', mode: 'echo', subprotocols: ['a b'] }], /subprotocols\[0\]/],
    ['heartbeat too short', [{ path: '/ws', mode: 'echo', heartbeatIntervalMs: 50 }], /heartbeatIntervalMs/],
    ['zero payload', [{ path: '/ws', mode: 'echo', maxPayloadBytes: 0 }], /maxPayloadBytes/],
    ['unknown key', [{ path: '/ws', mode: 'echo', rooms: true }], /unknown key websocket\[0\]\.rooms/],
  ];
  for (const [name, input, msg] of bad) {
    it(`${name} -> an issue naming the key`, () => {
      const r = root.safeParse({ websocket: input });
      assert.equal(r.success, false);
      assert.match(formatIssues(r.error!.issues, 'config'), msg);
    });
  }

  it('heartbeat 0 turns it off', () => {
    assert.equal(
      websocketSchema.parse([{ path: '/ws', mode: 'echo', heartbeatIntervalMs: 0 }])[0]!.heartbeatIntervalMs,
      0,
    );
  });
});

// ---------- pure decisions ----------

describe('checkHandshake (RFC 6455 §4.2.1)', () => {
  const good: Record<string, string> = {
    upgrade: 'websocket',
    'sec-websocket-key': KEY,
    'sec-websocket-version': '13',
  };
  const cases: [
    string,
    { method?: string; headers?: Record<string, string | undefined>; requireOrigin?: boolean },
    number | 'accept',
  ][] = [
    ['valid, no Origin', {}, 'accept'],
    ['Upgrade in another case', { headers: { upgrade: 'WebSocket' } }, 'accept'],
    ['allowed Origin', { headers: { origin: ALLOWED_ORIGIN } }, 'accept'],
    ['allowed Origin, requireOrigin', { headers: { origin: ALLOWED_ORIGIN }, requireOrigin: true }, 'accept'],
    ['POST -> 400', { method: 'POST' }, 400],
    ['Upgrade: h2c -> 400', { headers: { upgrade: 'h2c' } }, 400],
    ['no Sec-WebSocket-Key -> 400', { headers: { 'sec-websocket-key': undefined } }, 400],
    ['key of 15 bytes -> 400', { headers: { 'sec-websocket-key': 'AAAAAAAAAAAAAAAAAAAA' } }, 400],
    ['two keys -> 400', { headers: { 'sec-websocket-key': `${KEY}, ${KEY}` } }, 400],
    ['no Sec-WebSocket-Version -> 400', { headers: { 'sec-websocket-version': undefined } }, 400],
    ['version "x" -> 400', { headers: { 'sec-websocket-version': 'x' } }, 400],
    ['version 8 -> 426', { headers: { 'sec-websocket-version': '8' } }, 426],
    ['disallowed Origin -> 403', { headers: { origin: 'https://evil.example' } }, 403],
    ['no Origin, requireOrigin -> 403', { requireOrigin: true }, 403],
  ];
  for (const [name, c, expected] of cases) {
    it(name, () => {
      const headers = { ...good, ...c.headers };
      const d: HandshakeDecision = checkHandshake({
        method: c.method ?? 'GET',
        header: (n) => headers[n],
        requireOrigin: c.requireOrigin ?? false,
        originAllowed: (o) => o === ALLOWED_ORIGIN,
      });
      if (expected === 'accept') assert.deepEqual(d, { kind: 'accept' });
      else {
        assert.equal(d.kind, 'refuse');
        if (d.kind === 'refuse') assert.equal(d.entry.status, expected);
      }
    });
  }

  it('426 names the version we speak and offers the upgrade (RFC 9110 §15.5.22)', () => {
    const d = checkHandshake({
      method: 'GET',
      header: (n) => ({ ...good, 'sec-websocket-version': '8' })[n],
      requireOrigin: false,
      originAllowed: () => false,
    });
    assert.equal(d.kind, 'refuse');
    if (d.kind === 'refuse') {
      assert.equal(d.headers?.['Sec-WebSocket-Version'], '13');
      assert.equal(d.headers?.Upgrade, 'websocket');
    }
  });
});

describe("chooseSubprotocol (RFC 6455 §4.2.2, as the runtimes' own servers choose)", () => {
  const ours = ['chat.v2', 'chat.v1'];
  const cases: [string, string | undefined, string | undefined | 'refuse'][] = [
    ['none offered -> none', undefined, undefined],
    ["ours first, in our order, not the client's", 'chat.v1, chat.v2', 'chat.v2'],
    ['no spaces in the list', 'chat.v1,chat.v2', 'chat.v2'],
    ['only ones we do not speak -> none', 'other', undefined],
    ['an element that is not a token -> 400', 'a b', 'refuse'],
    ['the same one twice -> 400', 'chat.v1, chat.v1', 'refuse'],
    ['an empty list -> 400', ' , ', 'refuse'],
  ];
  for (const [name, field, want] of cases) {
    it(name, () => {
      const c = chooseSubprotocol(field, ours);
      if (want === 'refuse') {
        assert.equal(c.kind, 'refuse');
        if (c.kind === 'refuse') assert.equal(c.entry.status, 400);
      } else assert.deepEqual(c, { kind: 'chosen', protocol: want });
    });
  }
});

describe('isSameOrigin', () => {
  const cases: [string, string | undefined, boolean][] = [
    ['http://a.example', 'a.example', true],
    ['http://a.example', 'a.example:80', true],
    ['https://a.example', 'a.example:443', true],
    ['https://a.example:8443', 'a.example:8443', true],
    ['http://A.Example', 'a.example', true],
    ['http://127.0.0.1:9000', '127.0.0.1:9000', true],
    ['http://[::1]:9000', '[::1]:9000', true],
    ['http://a.example', 'a.example:8080', false],
    ['http://a.example:8080', 'a.example', false],
    ['http://evil.example', 'a.example', false],
    ['http://a.example.evil.example', 'a.example', false],
    ['null', 'a.example', false],
    ['file:///etc', 'a.example', false],
    ['not a url', 'a.example', false],
    ['http://a.example', undefined, false],
  ];
  for (const [origin, host, expected] of cases) {
    it(`Origin ${origin}, Host ${host} -> ${expected}`, () =>
      assert.equal(isSameOrigin(origin, host), expected));
  }
});

describe('parseEnvelope / isAppPing', () => {
  const cases: [string, string, string | undefined, boolean][] = [
    ['app ping', '{"type":"ping"}', 'ping', true],
    ['app ping with extra fields', ' {"type":"ping","id":7,"content":null}', 'ping', true],
    ['escaped ping', '{"type":"\\u0070ing"}', 'ping', true],
    ['chat message', '{"type":"chat","content":"ping"}', 'chat', false],
    ['no type', '{"content":"ping"}', undefined, false],
    ['type not a string', '{"type":1}', undefined, false],
    ['array', '[{"type":"ping"}]', undefined, false],
    ['plain text', 'ping', undefined, false],
    ['broken JSON', '{"type":"ping"', undefined, false],
  ];
  for (const [name, text, type, ping] of cases) {
    it(`${name} -> type ${type}, ping ${ping}`, () => {
      const b = Buffer.from(text);
      assert.equal(parseEnvelope(b)?.type, type);
      assert.equal(isAppPing(b), ping);
    });
  }
});

// ---------- real server ----------

describe('websocket endpoints', () => {
  let h: Harness;
  before(async () => {
    h = await start(
      [
        { path: '/echo', mode: 'echo', maxPayloadBytes: 1024 },
        { path: '/broadcast', mode: 'broadcast' },
        { path: '/custom', mode: 'custom' },
        { path: '/strict', mode: 'echo', requireOrigin: true },
        { path: '/proto', mode: 'echo', subprotocols: ['chat.v2', 'chat.v1'] },
        { path: '/deflate', mode: 'echo', perMessageDeflate: true },
      ],
      {
        handlers: {
          '/custom': (socket, req) => {
            socket.send(`hello ${req.url}`);
            socket.on('message', (data, isBinary) => {
              if (!isBinary && !isAppPing(data as Buffer)) socket.send(String(data).toUpperCase());
            });
          },
        },
      },
    );
  });
  after(() => h.close());

  describe('echo', () => {
    it('a message over maxPayloadBytes closes the connection with 1009', T, async () => {
      const p = await open(h.url('/echo'));
      await p.send('x'.repeat(2048));
      const { code } = await within(p.closed, 'close');
      assert.equal(code, 1009);
      await eventually(() => h.logs.some((l) => l.msg === 'websocket connection error'), 'log');
    });

    it('clients(path) counts open connections', T, async () => {
      // The server side of an earlier test's connection may still be closing (seen under Node 24).
      await eventually(() => h.endpoints.clients('/echo') === 0, 'earlier connections to close');
      const before = h.endpoints.clients('/echo');
      const p = await open(h.url('/echo'));
      assert.equal(h.endpoints.clients('/echo'), before + 1);
      assert.equal(h.endpoints.clients('/nope'), 0);
      p.ws.close();
      await p.closed;
      await eventually(() => h.endpoints.clients('/echo') === before, 'the count to drop');
    });
  });

  describe('handshake guards', () => {
    it('a path that is not ours is left to the server (here: destroyed, no response)', T, async () => {
      const text = await raw(h.port, handshake('/other', VALID));
      assert.equal(text, '');
    });
  });

  describe('custom', () => {
    it('calls the handler registered for the path with the socket and request', T, async () => {
      const p = await open(h.url('/custom?x=1'));
      assert.equal((await p.next()).text, 'hello /custom?x=1');
      await p.send('shout');
      assert.equal((await p.next()).text, 'SHOUT');
      await p.send('{"type":"ping"}');
      assert.deepEqual(await p.nextJson(), { type: 'pong' });
      p.ws.close();
    });

    const quiet = { info() {}, warn() {}, error() {}, isLevelEnabled: () => false };
    it('a custom endpoint without a handler is refused when created', () => {
      assert.throws(
        () =>
          createWebSocketEndpoints(websocketSchema.parse([{ path: '/c', mode: 'custom' }]), {
            originAllowed: () => false,
            logger: quiet,
          }),
        (err: unknown) =>
          err instanceof WebSocketConfigError &&
          err.code === 'bad_config' &&
          /websocket\[0\]: mode "custom" on \/c needs deps\.handlers/.test(err.message),
      );
    });

    it('a duplicate path is refused when created (library callers skip the schema)', () => {
      const [e] = websocketSchema.parse([{ path: '/d', mode: 'echo' }]);
      assert.throws(
        () => createWebSocketEndpoints([e!, e!], { originAllowed: () => false, logger: quiet }),
        /websocket\[1\]\.path: duplicate path \/d/,
      );
    });
  });
});

describe('websocket heartbeat', () => {
  it('pings every interval; a client that never pongs is terminated, one that does stays', T, async () => {
    // The interval runs on a mocked clock (setInterval only; setTimeout, sockets stay real): each tick
    // is one heartbeat, so a loaded machine cannot make a pong miss its interval.
    mock.timers.enable({ apis: ['setInterval'] });
    let h: Harness | undefined;
    try {
      h = await start([{ path: '/hb', mode: 'echo', heartbeatIntervalMs: 100 }]);
      const good = await open(h.url('/hb'));
      const silent = await open(h.url('/hb'), { autoPong: false });
      // An echo on the good client: its pong, sent before on the same stream, has reached the server.
      const roundTrip = async (n: number) => {
        await good.send(`rt${n}`);
        assert.equal((await good.next()).text, `rt${n}`);
      };
      mock.timers.tick(100);
      await eventually(() => good.pings.length === 1 && silent.pings.length === 1, 'the first pings');
      await roundTrip(1);
      mock.timers.tick(100); // the silent one never answered: terminated; the good one pinged again
      const { code } = await within(silent.closed, 'the silent client to be dropped');
      assert.equal(code, 1006); // terminated: no close frame
      await eventually(() => good.pings.length === 2, 'the second ping');
      await roundTrip(2);
      mock.timers.tick(100);
      await eventually(() => good.pings.length === 3, 'the third ping');
      assert.equal(good.ws.readyState, WebSocket.OPEN);
      const hh = h;
      await eventually(() => hh.endpoints.clients('/hb') === 1, 'the count to drop to the good client');
      good.ws.close();
      await within(good.closed, 'the good client to close');
    } finally {
      mock.timers.reset();
      await h?.close();
    }
  });
});

describe('websocket slow consumer', () => {
  let h: Harness;
  before(async () => {
    h = await start([
      {
        path: '/bc',
        mode: 'broadcast',
        maxBufferedBytes: 64 * 1024,
        maxPayloadBytes: 1024 * 1024,
        heartbeatIntervalMs: 0,
      },
    ]);
  });
  after(() => h.close());

  it('a client that stops reading is closed with 1013 instead of buffering more', T, async () => {
    const slow = await open(h.url('/bc'));
    const sender = await open(h.url('/bc'));
    slow.rawSocket.pause();
    const chunk = Buffer.alloc(512 * 1024, 'a').toString();
    const isSlow = () => h.logs.some((l) => l.msg === 'websocket slow consumer closed (1013)');
    for (let i = 0; i < 200 && !isSlow(); i++) {
      await sender.send(chunk);
      await sender.next();
    }
    assert.ok(isSlow(), 'the server noticed the slow consumer');
    slow.rawSocket.resume();
    const { code, reason } = await within(slow.closed, 'the slow client to see the close');
    assert.equal(code, 1013);
    assert.equal(reason, 'slow consumer');
    // Everyone else carries on.
    await sender.send('still here');
    assert.equal((await sender.next()).text, 'still here');
    sender.ws.close();
  });
});

describe('websocket close()', () => {
  it(
    'closes every client with 1001, terminates stragglers after the grace, refuses new ones',
    T,
    async () => {
      const h = await start(
        [
          { path: '/a', mode: 'echo' },
          { path: '/b', mode: 'broadcast' },
        ],
        { closeGraceMs: 300 },
      );
      const clients: Peer[] = [];
      try {
        const peers = await Promise.all([open(h.url('/a')), open(h.url('/a')), open(h.url('/b'))]);
        const stuck = await open(h.url('/a'));
        clients.push(...peers, stuck);
        stuck.rawSocket.pause(); // cannot answer the close handshake
        // The grace runs on a mocked clock (setTimeout only: sockets and setImmediate stay real), so
        // "after the grace, not before, and not later" is checked by ticking it, whatever the machine.
        mock.timers.enable({ apis: ['setTimeout'] });
        let settled = false;
        let closing: Promise<void> | undefined;
        try {
          closing = h.endpoints.close().then(() => {
            settled = true;
          });
          for (const p of peers) assert.equal((await p.closed).code, 1001);
          await turnsUntil(() => h.endpoints.clients('/b') === 0 && h.endpoints.clients('/a') === 1);
          await turns(20);
          assert.equal(settled, false, 'close() waits for the straggler until the grace ends');
          mock.timers.tick(299);
          await turns(20);
          assert.equal(settled, false, 'the straggler is not terminated before the grace ends');
          mock.timers.tick(1);
        } finally {
          mock.timers.reset();
        }
        await within(closing!, 'close() once the grace has ended');
        assert.equal(settled, true);
        stuck.rawSocket.resume();
        assert.equal((await within(stuck.closed, 'close')).code, 1001);
        assert.equal(h.endpoints.clients('/a'), 0);
        assert.equal(h.endpoints.clients('/b'), 0);
        const text = await raw(h.port, handshake('/a', VALID));
        assert.equal(rawStatus(text), 503);
        await h.close(); // idempotent
      } finally {
        for (const c of clients) c.ws.terminate();
        await h.close();
      }
    },
  );
});

// ---------- the one way in (src/server/core/entry.ts) ----------

describe('offersWebSocket (RFC 9110 §7.8: Upgrade is a list)', () => {
  const cases: [string, string | undefined, boolean][] = [
    ['no Upgrade', undefined, false],
    ['websocket', 'websocket', true],
    ['another case', 'WebSocket', true],
    ['second in the list', 'h2c, websocket', true],
    ['h2c only', 'h2c', false],
    ['a versioned token is another protocol', 'websocket/13', false],
    ['empty', '', false],
  ];
  for (const [name, upgrade, want] of cases) it(name, () => assert.equal(offersWebSocket(upgrade), want));
});

describe('headWithoutUpgrade: the head re-parsed when an Upgrade is ignored', () => {
  const base = { method: 'POST', url: '/a?b', httpVersion: '1.1' };
  const cases: [string, string[], string][] = [
    [
      'Upgrade dropped, other fields kept in order',
      ['Host', 'x', 'Upgrade', 'h2c', 'X-A', '1'],
      'Host: x\r\nX-A: 1\r\n',
    ],
    [
      'the upgrade option dropped from Connection',
      ['Connection', 'Upgrade, HTTP2-Settings'],
      'Connection: HTTP2-Settings\r\n',
    ],
    ['a Connection of only upgrade dropped', ['Connection', 'upgrade', 'Host', 'x'], 'Host: x\r\n'],
    ['repeated fields kept', ['Host', 'x', 'Host', 'y'], 'Host: x\r\nHost: y\r\n'],
  ];
  for (const [name, rawHeaders, want] of cases) {
    it(name, () =>
      assert.equal(headWithoutUpgrade({ ...base, rawHeaders }), `POST /a?b HTTP/1.1\r\n${want}\r\n`),
    );
  }
});

describe('the entry with the real server', () => {
  let site: string;
  let s: TestServer;
  before(async () => {
    site = makeSite({ 'a.txt': 'a' });
    s = await startServer(site, { websocket: [{ path: '/ws', mode: 'echo' }] });
  });
  after(async () => {
    await s.close();
    removeSite(site);
  });

  it('a handshake pipelined behind a request is answered after it', T, async () => {
    const out = await new Promise<string>((resolve) => {
      const sock = connect(s.port, '127.0.0.1');
      let got = '';
      sock.on('data', (c: Buffer) => {
        got += c.toString('latin1');
        if (got.includes('101 Switching Protocols') && got.endsWith('\r\n\r\n')) {
          sock.destroy();
          resolve(got);
        }
      });
      sock.write(`GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n${handshake('/ws', VALID)}`);
    });
    assert.equal(rawStatus(out), 200);
    assert.match(out, /\r\n\r\naHTTP\/1\.1 101 /);
  });

  it('an h2c request pipelined behind a request: both answered in order', T, async () => {
    const h2c = ['Upgrade: h2c', 'Connection: Upgrade, close'];
    const out = await raw(s.port, `GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n${handshake('/nothing', h2c)}`);
    assert.deepEqual(
      [...out.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]),
      ['200', '404'],
    );
  });

  it(
    '30 ignored Upgrades in a row on one connection: all answered, listeners do not pile up',
    T,
    async () => {
      let serverSide: Socket | undefined;
      const onConnection = (c: Socket) => {
        serverSide ??= c;
      };
      s.app.server.on('connection', onConnection);
      const n = 30;
      const one = handshake('/a.txt', ['Upgrade: h2c', 'Connection: Upgrade']);
      const sock = connect(s.port, '127.0.0.1');
      let got = '';
      sock.on('data', (c: Buffer) => {
        got += c.toString('latin1');
      });
      sock.write(one.repeat(n));
      await eventually(() => (got.match(/HTTP\/1\.1 200 /g) ?? []).length === n, `${n} answers`);
      s.app.server.off('connection', onConnection);
      assert.ok(
        serverSide!.listenerCount('error') <= 2,
        `${serverSide!.listenerCount('error')} error listeners`,
      );
      assert.ok(serverSide!.listenerCount('data') <= 1);
      sock.destroy();
    },
  );

  it('a refused handshake closes its connection (the parser is gone)', T, async () => {
    const out = await raw(s.port, handshake('/ws', UPGRADE));
    assert.equal(rawStatus(out), 400);
    assert.match(out, /^connection: close$/im);
  });
});

describe('limits.maxConnections counts handshakes', () => {
  it('an open WebSocket holds its place: the next connection past the limit is dropped', T, async () => {
    const site = makeSite({});
    const s = await startServer(site, {
      limits: { maxConnections: 1 },
      websocket: [{ path: '/ws', mode: 'echo' }],
    });
    try {
      const p = await open(`ws://127.0.0.1:${s.port}/ws`);
      const GET = 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';
      // Dropped: closed without a byte (raw's deadline is far beyond; an answer would show here).
      assert.equal(await raw(s.port, GET), '');
      p.ws.close();
      await p.closed;
      // The place frees once the server side has seen the close: until then a try is still dropped.
      const again = await waitUntil('a connection gets in again', async () => {
        const text = await raw(s.port, GET);
        return text === '' ? undefined : text;
      });
      assert.equal(rawStatus(again), 404);
    } finally {
      await s.close();
      removeSite(site);
    }
  });
});

describe('createEntry: the request-target check runs first, for handshakes too', () => {
  const quiet: Logger = { info: () => {}, warn: () => {}, error: () => {}, isLevelEnabled: () => false };
  let port = 0;
  const server = createServer();
  const endpoints = createWebSocketEndpoints(websocketSchema.parse([{ path: '/ws', mode: 'echo' }]), {
    originAllowed: () => false,
    logger: quiet,
  });
  const entry = nodeEntry(
    createEntry({
      maxUrlBytes: 8192,
      gate: [],
      handlers: [],
      final: (_req, res) => res.end('served'),
      tunnels: [{ owns: endpoints.owns, handle: endpoints.handleUpgrade }],
      onError: () => {},
      logAccess: undefined,
      // A stand-in for the Host / target validation: refuses /bad, rewrites /ws/elsewhere.
      checkTarget: (req) => {
        if (req.url === '/bad') return { entry: ERRORS.badRequest, detail: 'bad target' };
        if (req.url === '/ws?moved') req.url = '/elsewhere';
        return undefined;
      },
    }),
    server,
  );
  server.on('request', entry.onRequest);
  server.on('upgrade', entry.onUpgrade);
  before(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    await endpoints.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('a refused target gets 400 for a plain request and for a handshake', T, async () => {
    assert.equal(rawStatus(await raw(port, handshake('/bad', ['Connection: close']))), 400);
    assert.equal(
      rawStatus(await raw(port, handshake('/bad', ['Upgrade: h2c', 'Connection: Upgrade, close']))),
      400,
    );
  });

  it('a handshake whose canonical target has no tunnel is served like any request', T, async () => {
    const out = await raw(port, handshake('/ws?moved', VALID), 5000);
    assert.equal(rawStatus(out), 200, out);
    assert.match(out, /served$/);
  });

  it('a handshake to the tunnel switches', T, async () => {
    const p = await open(`ws://127.0.0.1:${port}/ws`);
    p.ws.close();
    await p.closed;
  });
});
