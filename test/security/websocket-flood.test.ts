// Attack: flooding a WebSocket endpoint with messages. websocket[].rateLimit bounds each connection
// (token bucket); the first message over it closes the connection with 1008 (RFC 6455 §7.4.1) and is
// delivered to nobody, not even a custom handler.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { websocketSchema } from '../../src/config/websocket.js';
import { bindTunnel } from '../../src/server/node/entry.js';
import type { Logger } from '../../src/server/ops/log.js';
import { createWebSocketEndpoints, type WebSocketHandler } from '../../src/server/websocket/index.js';
import { makeSite, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { waitUntil } from '../helpers/wait.js';

const T = { timeout: 20_000 };
const quiet: Logger = { info: () => {}, warn: () => {}, error: () => {}, isLevelEnabled: () => false };

interface Client {
  ws: WebSocket;
  got: string[];
  closed: Promise<{ code: number; reason: string }>;
}

function open(url: string): Promise<Client> {
  const ws = new WebSocket(url);
  const got: string[] = [];
  ws.on('message', (d) => got.push(String(d)));
  ws.on('error', () => {});
  const closed = new Promise<{ code: number; reason: string }>((r) =>
    ws.on('close', (code, reason) => r({ code, reason: String(reason) })),
  );
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, got, closed }));
    ws.once('unexpected-response', (_q, res) => reject(new Error(`handshake refused: ${res.statusCode}`)));
  });
}

/** Waits until `cond` holds; the shared deadline (WAIT_DEADLINE_MS) only turns a hang into a failure. */
async function until(cond: () => boolean, what: string): Promise<void> {
  await waitUntil(what, cond);
}

describe('attack: message flood on a WebSocket endpoint (the real server)', () => {
  let site: string;
  let s: TestServer;
  before(async () => {
    site = makeSite({});
    s = await startServer(site, {
      websocket: [
        // No refill within the test: exactly `burst` messages pass.
        { path: '/limited', mode: 'echo', rateLimit: { messagesPerSec: 0.001, burst: 3 } },
        { path: '/free', mode: 'echo' },
      ],
    });
  });
  after(async () => {
    await s.close();
    removeSite(site);
  });

  it(
    'attack: a client over websocket[].rateLimit is closed with 1008; the extra message is not echoed',
    T,
    async () => {
      const c = await open(`ws://127.0.0.1:${s.port}/limited`);
      for (let i = 1; i <= 10; i++) c.ws.send(`m${i}`);
      const { code } = await c.closed;
      assert.equal(code, 1008);
      assert.deepEqual(c.got, ['m1', 'm2', 'm3']);
    },
  );

  it('each connection has its own bucket', T, async () => {
    const c = await open(`ws://127.0.0.1:${s.port}/limited`);
    c.ws.send('again');
    await until(() => c.got.length === 1, 'the echo');
    assert.deepEqual(c.got, ['again']);
    c.ws.close();
    await c.closed;
  });

  it('off by default: an endpoint without rateLimit echoes a burst of 50', T, async () => {
    const c = await open(`ws://127.0.0.1:${s.port}/free`);
    for (let i = 0; i < 50; i++) c.ws.send(`m${i}`);
    await until(() => c.got.length === 50, '50 echoes');
    c.ws.close();
    await c.closed;
  });
});

describe('attack: message flood, token bucket with an injected clock', () => {
  let nowMs = 1_000_000;
  const seen: string[] = [];
  const handler: WebSocketHandler = (socket) => socket.on('message', (d) => seen.push(String(d)));
  const endpoints = createWebSocketEndpoints(
    websocketSchema.parse([
      { path: '/echo', mode: 'echo', rateLimit: { messagesPerSec: 2, burst: 2 } },
      { path: '/custom', mode: 'custom', rateLimit: { messagesPerSec: 1, burst: 1 } },
    ]),
    { originAllowed: () => false, handlers: { '/custom': handler }, logger: quiet, nowMs: () => nowMs },
  );
  const server = createServer((_q, res) => res.end());
  server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => socket.destroy());
    const { res, tunnel } = bindTunnel(req, socket, head);
    if (!endpoints.handleUpgrade(req, res, tunnel)) socket.destroy();
  });
  let base = '';
  before(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await endpoints.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('the bucket refills at messagesPerSec: after 1 s two more messages pass', T, async () => {
    const c = await open(`${base}/echo`);
    c.ws.send('a');
    c.ws.send('b');
    await until(() => c.got.length === 2, 'the burst');
    nowMs += 1000;
    c.ws.send('c');
    c.ws.send('d');
    await until(() => c.got.length === 4, 'two more after the refill');
    c.ws.send('e');
    assert.equal((await c.closed).code, 1008);
    assert.deepEqual(c.got, ['a', 'b', 'c', 'd']);
  });

  it('attack: a custom handler never sees the messages over the limit', T, async () => {
    const c = await open(`${base}/custom`);
    for (let i = 0; i < 5; i++) c.ws.send(`x${i}`);
    assert.equal((await c.closed).code, 1008);
    assert.deepEqual(seen, ['x0']);
  });

  it('a bad rateLimit is refused at load naming the key', () => {
    assert.throws(
      () => websocketSchema.parse([{ path: '/a', mode: 'echo', rateLimit: { messagesPerSec: 0, burst: 1 } }]),
      /messagesPerSec/,
    );
    assert.throws(
      () =>
        websocketSchema.parse([{ path: '/a', mode: 'echo', rateLimit: { messagesPerSec: 1, burst: 0.5 } }]),
      /burst/,
    );
  });
});
