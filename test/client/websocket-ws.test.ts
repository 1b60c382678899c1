// ReconnectingWebSocket against real servers on 127.0.0.1: a bare `ws` server (restarted on the same
// port, frozen to fake a half-open link) and Gatehouse's own WebSocket endpoint. `ws`'s WebSocket is
// passed in, as a Node 20 user would. Waits are on events and conditions, never fixed sleeps.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { WebSocket, WebSocketServer } from 'ws';
import {
  DEAD_LINK_CODE,
  ReconnectingWebSocket,
  type ReconnectingWebSocketOptions,
  type WsCloseEvent,
} from '../../src/client/websocket.js';
import { parseConfig, toServerOptions } from '../../src/config/load.js';
import { createGatehouse, type Gatehouse } from '../../src/server/app/gatehouse.js';
import { makeSite, removeSite } from '../helpers/http.js';
import { mulberry32, SEED_OFFSET } from '../helpers/random.js';
import { waitUntil } from '../helpers/wait.js';

const PING = '{"type":"ping"}';
const PONG = '{"type":"pong"}';

/** A `ws` server that records what each connection sent and can be stopped and restarted on its port. */
class Server {
  wss!: WebSocketServer;
  port = 0;
  /** Messages per connection, in arrival order. */
  readonly connections: string[][] = [];
  answerPings = true;
  /** New connections get no answers at all and their bytes are not read: a half-open link. */
  freeze = false;
  /** New connections are accepted and closed at once (1000), as a server refusing after the handshake. */
  closeAtOnce = false;

  async start(port = this.port): Promise<void> {
    this.wss = new WebSocketServer({ host: '127.0.0.1', port });
    await new Promise<void>((resolve, reject) => {
      this.wss.once('listening', resolve);
      this.wss.once('error', reject);
    });
    this.port = (this.wss.address() as AddressInfo).port;
    this.wss.on('connection', (ws, req) => {
      const got: string[] = [];
      this.connections.push(got);
      ws.on('error', () => {});
      if (this.freeze) {
        req.socket.pause();
        return;
      }
      if (this.closeAtOnce) {
        ws.close(1000, 'bye');
        return;
      }
      ws.on('message', (data) => {
        const text = String(data);
        got.push(text);
        if (text === PING && this.answerPings) ws.send(PONG);
      });
    });
  }

  /** Stops listening and drops every connection (as a crashed or redeployed server would). */
  async stop(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  get url(): string {
    return `ws://127.0.0.1:${this.port}/`;
  }
}

/** A client with `ws`, closed after the test; records events. */
function client(url: string, o: ReconnectingWebSocketOptions = {}) {
  const rws = new ReconnectingWebSocket(url, undefined, { WebSocket, ...o });
  const log = { opens: 0, messages: [] as unknown[], closes: [] as WsCloseEvent[], errors: 0 };
  rws.addEventListener('open', () => log.opens++);
  rws.addEventListener('message', (e) => log.messages.push(e.data));
  rws.addEventListener('close', (e) => log.closes.push(e));
  rws.addEventListener('error', () => log.errors++);
  cleanups.push(() => rws.close());
  return { rws, log };
}

const cleanups: (() => unknown)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

describe('ReconnectingWebSocket with a real ws server', () => {
  it('sends before open -> the server receives them first, in order', async () => {
    const server = new Server();
    await server.start();
    cleanups.push(() => server.stop());
    const { rws, log } = client(server.url, { heartbeat: false });
    rws.send('one');
    rws.send({ two: 2 });
    rws.send('three');
    rws.addEventListener('open', () => rws.send('from open'));
    await waitUntil('4 messages at the server', () => server.connections[0]?.length === 4);
    assert.deepEqual(server.connections[0], ['one', '{"two":2}', 'three', 'from open']);
    assert.equal(log.opens, 1);
  });

  it('heartbeat on -> the server sees {"type":"ping"}, and the pong keeps the link open', async () => {
    const server = new Server();
    await server.start();
    cleanups.push(() => server.stop());
    const { log } = client(server.url, { heartbeatInterval: 50 });
    await waitUntil(
      '5 pings at the server',
      () => server.connections[0]?.filter((m) => m === PING).length === 5,
    );
    assert.ok(log.messages.includes(PONG));
    assert.equal(server.connections.length, 1, 'answered pings: never treated as dead');
    assert.equal(log.closes.length, 0);
  });

  it('server restarted on the same port -> the client reconnects and keeps working', async () => {
    const server = new Server();
    await server.start();
    cleanups.push(() => server.stop());
    const { rws, log } = client(server.url, { heartbeat: false, reconnectInterval: 50 });
    await waitUntil('open', () => log.opens === 1);
    rws.send('before');
    await waitUntil('"before" at the server', () => server.connections[0]?.includes('before'));
    await server.stop();
    await waitUntil('the client saw the close', () => log.closes.length === 1);
    assert.equal(rws.send('while down'), true);
    await server.start(); // same port
    await waitUntil('a second open', () => log.opens === 2);
    rws.send('after');
    await waitUntil('2 messages on the new connection', () => server.connections.at(-1)?.length === 2);
    assert.deepEqual(server.connections.at(-1), ['while down', 'after']);
  });

  it('server freezes (half-open link) -> dead link detected, closed with 4000, reconnected', async () => {
    const server = new Server();
    await server.start();
    cleanups.push(() => server.stop());
    server.freeze = true;
    const { log } = client(server.url, { heartbeatInterval: 50, reconnectInterval: 10 });
    await waitUntil('open', () => log.opens === 1);
    server.freeze = false;
    await waitUntil('a second connection', () => log.opens === 2);
    assert.equal(log.closes[0]?.code, DEAD_LINK_CODE);
    assert.equal(server.connections.length, 2);
  });

  it('close() on a CONNECTING socket -> no throw, no crash, one close event, no reconnect timer', async () => {
    const server = new Server();
    await server.start();
    cleanups.push(() => server.stop());
    let timersArmed = 0;
    const { rws, log } = client(server.url, {
      heartbeat: false,
      timers: {
        setTimeout: (fn, ms) => {
          timersArmed++;
          return setTimeout(fn, ms);
        },
      },
    });
    assert.equal(rws.readyState, ReconnectingWebSocket.CONNECTING);
    assert.doesNotThrow(() => rws.close());
    await waitUntil('the socket is closed', () => rws.readyState === ReconnectingWebSocket.CLOSED);
    // ws emits 'error' on the abandoned handshake a tick later: it must find a listener (#183).
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      log.closes.map((c) => c.code),
      [1006],
    );
    assert.equal(timersArmed, 0);
    assert.equal(log.opens, 0);
  });

  it('no WebSocket option on a runtime with a global one (Node 22+, browsers) -> the global is used', async () => {
    // Node 20 has none: stand ws's in as the global for this case, so it runs on every runtime.
    const g = globalThis as { WebSocket?: unknown };
    const standIn = typeof g.WebSocket !== 'function';
    if (standIn) g.WebSocket = WebSocket;
    const server = new Server();
    await server.start();
    cleanups.push(() => server.stop());
    const rws = new ReconnectingWebSocket(server.url, undefined, { heartbeatInterval: 50 });
    try {
      rws.send('via the global');
      const pongs: unknown[] = [];
      rws.addEventListener('message', (e) => pongs.push(e.data));
      await waitUntil('a pong', () => pongs.includes(PONG));
      assert.equal(server.connections[0]?.[0], 'via the global');
    } finally {
      rws.close();
      if (standIn) delete g.WebSocket;
    }
  });

  it('no server at all -> reconnect attempts on schedule, then open once one listens', async () => {
    const server = new Server();
    await server.start();
    const port = server.port;
    await server.stop();
    const { log } = client(`ws://127.0.0.1:${port}/`, { heartbeat: false, reconnectInterval: 20 });
    await waitUntil('3 failed attempts', () => log.closes.length >= 3);
    await server.start(port);
    cleanups.push(() => server.stop());
    await waitUntil('open', () => log.opens === 1);
  });
});

describe('ReconnectingWebSocket reconnect schedule against a real ws server', () => {
  /** Real timers, with every reconnect delay asked for recorded (heartbeat off: no other timer). */
  const recording = (delays: number[]) => ({
    setTimeout: (fn: () => void, ms: number) => {
      delays.push(ms);
      return setTimeout(fn, ms);
    },
  });

  it('attack: server accepts then closes at once, again and again -> with backoff { factor: 2 } the delays grow', async () => {
    const server = new Server();
    server.closeAtOnce = true;
    await server.start();
    cleanups.push(() => server.stop());
    const delays: number[] = [];
    const { log } = client(server.url, {
      heartbeat: false,
      reconnectInterval: 10,
      backoff: { factor: 2, jitter: 0 },
      timers: recording(delays),
    });
    await waitUntil('6 connections accepted and closed', () => server.connections.length >= 6);
    assert.ok(log.opens >= 5, `${log.opens} opens: each attempt did reach the server`);
    assert.deepEqual(delays.slice(0, 5), [10, 20, 40, 80, 160]);
  });

  it('attack: server restarted under 8 clients -> they come back spread over reconnectInterval x (1 ± 0.5), not at once', async () => {
    const server = new Server();
    await server.start();
    cleanups.push(() => server.stop());
    const rnd = mulberry32(SEED_OFFSET + 25);
    const delays: number[] = [];
    const clients = Array.from({ length: 8 }, () =>
      client(server.url, {
        heartbeat: false,
        reconnectInterval: 200,
        timers: { ...recording(delays), random: rnd },
      }),
    );
    await waitUntil('8 open', () => clients.every((c) => c.log.opens === 1));
    await server.stop();
    await server.start(server.port);
    await waitUntil('8 back', () => clients.every((c) => c.log.opens === 2));
    assert.equal(server.connections.length, 16);
    const first = delays.slice(0, 8);
    assert.ok(
      first.every((d) => d >= 100 && d <= 300),
      `delays ${first} within 200 x (1 ± 0.5)`,
    );
    assert.ok(new Set(first).size >= 6, `delays ${first}: spread, not one instant`);
    assert.ok(Math.max(...first) - Math.min(...first) >= 25, `delays ${first}: spread over at least 25 ms`);
  });
});

describe("ReconnectingWebSocket with Gatehouse's WebSocket endpoint", () => {
  const site = makeSite({ 'index.html': '<!doctype html><title>x</title>' });
  after(() => removeSite(site));

  async function gatehouse(port = 0): Promise<{ app: Gatehouse; port: number }> {
    const c = parseConfig({
      log: { format: 'off' },
      root: site,
      listen: { host: '127.0.0.1', port },
      websocket: [{ path: '/ws', mode: 'echo' }],
    });
    const app = createGatehouse(toServerOptions(c));
    const l = await app.listen();
    return { app, port: l.port };
  }

  it('queued sends echoed in order; {"type":"ping"} answered with {"type":"pong"}; survives a restart', async () => {
    let g = await gatehouse();
    cleanups.push(() => g.app.close());
    const { rws, log } = client(`ws://127.0.0.1:${g.port}/ws`, {
      heartbeatInterval: 50,
      reconnectInterval: 50,
    });
    rws.send('a');
    rws.send({ b: 1 });
    await waitUntil('the echoes', () => log.messages.filter((m) => m !== PONG).length === 2);
    assert.deepEqual(
      log.messages.filter((m) => m !== PONG),
      ['a', '{"b":1}'],
    );
    await waitUntil('a pong from Gatehouse', () => log.messages.includes(PONG));

    await g.app.close();
    await waitUntil('the client saw the close', () => log.closes.length === 1);
    assert.equal(log.closes[0]?.code, 1001, 'Gatehouse closes with Going Away on shutdown');
    g = await gatehouse(g.port);
    await waitUntil('reopened', () => log.opens === 2);
    rws.send('c');
    await waitUntil('the echo after the restart', () => log.messages.includes('c'));
    const pongs = log.messages.filter((m) => m === PONG).length;
    await waitUntil(
      'a pong on the new connection',
      () => log.messages.filter((m) => m === PONG).length > pongs,
    );
  });
});
