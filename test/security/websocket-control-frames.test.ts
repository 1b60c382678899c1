// Attacks on a WebSocket endpoint below the message layer: Ping floods (RFC 6455 §5.5.2: every Ping
// costs a Pong), permessage-deflate bombs (RFC 7692: a few KB that inflate to megabytes) and messages
// cut into thousands of fragments (RFC 6455 §5.4). Each test counts what reached the server.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { websocketSchema } from '../../src/config/websocket.js';
import { bindTunnel } from '../../src/server/node/entry.js';
import type { Logger } from '../../src/server/ops/log.js';
import { createWebSocketEndpoints } from '../../src/server/websocket/index.js';
import { MAX_FRAGMENTS, MAX_PENDING_PONGS } from '../../src/server/websocket/ws-peer.js';
import { waitUntil } from '../helpers/wait.js';

const T = { timeout: 30_000 };
const quiet: Logger = { info: () => {}, warn: () => {}, error: () => {}, isLevelEnabled: () => false };

/** What the server's custom handlers saw. */
const seen = { pings: 0, messages: 0, messageBytes: 0 };
const count = (socket: WebSocket): void => {
  socket.on('ping', () => seen.pings++);
  socket.on('message', (d: Buffer) => {
    seen.messages++;
    seen.messageBytes += d.length;
  });
};
const reset = (): void => {
  seen.pings = 0;
  seen.messages = 0;
  seen.messageBytes = 0;
};

const endpoints = createWebSocketEndpoints(
  websocketSchema.parse([
    { path: '/plain', mode: 'custom' },
    { path: '/limited', mode: 'custom', rateLimit: { messagesPerSec: 0.001, burst: 3 } },
    { path: '/deflate', mode: 'custom', perMessageDeflate: true, maxPayloadBytes: 1024 * 1024 },
  ]),
  {
    originAllowed: () => false,
    handlers: { '/plain': count, '/limited': count, '/deflate': count },
    logger: quiet,
  },
);
const server = createServer((_q, res) => res.end());
server.on('upgrade', (req, socket, head) => {
  socket.on('error', () => socket.destroy());
  const { res, tunnel } = bindTunnel(req, socket, head);
  if (!endpoints.handleUpgrade(req, res, tunnel)) socket.destroy();
});
let port = 0;
before(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
after(async () => {
  await endpoints.close();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

/** A raw client: the handshake, then whatever frames the test writes; it never reads. */
async function rawWebSocket(path: string): Promise<Socket> {
  const sock = connect(port, '127.0.0.1');
  sock.on('error', () => {});
  await new Promise((r) => sock.once('connect', r));
  sock.pause();
  sock.write(
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
  );
  return sock;
}

/** A masked client frame (RFC 6455 §5.2) with a zero masking key, so the payload is as written. */
function frame(opcode: number, payload: Buffer, fin = true): Buffer {
  const head = [(fin ? 0x80 : 0) | opcode];
  if (payload.length < 126) head.push(0x80 | payload.length);
  else head.push(0x80 | 126, payload.length >> 8, payload.length & 0xff);
  return Buffer.concat([Buffer.from([...head, 0, 0, 0, 0]), payload]);
}

/** Writes `batch` up to `times` times, as fast as the socket takes it, until the server closes it. */
async function flood(sock: Socket, batch: Buffer, times: number): Promise<{ sent: number; closed: boolean }> {
  let closed = false;
  sock.once('close', () => {
    closed = true;
  });
  let sent = 0;
  const deadline = Date.now() + 20_000;
  while (sent < times && !closed && Date.now() < deadline) {
    const ok = sock.write(batch);
    sent++;
    if (!ok) {
      await new Promise<void>((r) => {
        const t = setTimeout(r, 100);
        sock.once('drain', () => {
          clearTimeout(t);
          r();
        });
      });
    }
  }
  // The server may still be closing: give it the moment a close takes.
  await waitUntil('the flood settled', () => closed || sock.writableLength === 0).catch(() => {});
  return { sent, closed };
}

describe('attack: WebSocket Ping flood', () => {
  it(
    'attack: Pings from a client that never reads the Pongs: terminated, the Pongs not queued without end',
    T,
    async () => {
      reset();
      const sock = await rawWebSocket('/plain');
      const ping = frame(0x9, Buffer.alloc(125, 0x61));
      const PER_BATCH = 1000;
      const BATCHES = 300; // 300,000 Pings, 39 MB of Pongs if all were queued
      const { sent, closed } = await flood(sock, Buffer.concat(Array(PER_BATCH).fill(ping)), BATCHES);
      await waitUntil('the server gave up on the client', () => closed);
      sock.destroy();
      // The flood reached the server: far more Pings than the bound were read and answered before
      // the kernel's socket buffers filled, then at most MAX_PENDING_PONGS waited before the end.
      assert.ok(seen.pings > MAX_PENDING_PONGS, `the server saw ${seen.pings} Pings`);
      assert.ok(sent < BATCHES, `terminated before the client wrote all ${BATCHES} batches (wrote ${sent})`);
    },
  );

  it('attack: a Ping counts against websocket[].rateLimit like a message (1008)', T, async () => {
    reset();
    const ws = new WebSocket(`ws://127.0.0.1:${port}/limited`);
    ws.on('error', () => {});
    await new Promise((r) => ws.once('open', r));
    let pongs = 0;
    ws.on('pong', () => pongs++);
    const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
    for (let i = 0; i < 50; i++) ws.ping(`p${i}`);
    assert.equal(await closed, 1008);
    // burst 3: the fourth Ping closes; the rest are dropped (ws answers a Ping before its event).
    assert.ok(seen.pings >= 3, `the server saw ${seen.pings} Pings`);
    assert.equal(seen.pings, 3, 'no listener saw a Ping over the limit');
    assert.ok(pongs <= 4, `${pongs} Pongs`);
  });
});

describe('attack: permessage-deflate bomb', () => {
  it(
    'attack: 32 MiB of zeros in one compressed message to a 1 MiB endpoint: 1009, nothing delivered',
    T,
    async () => {
      reset();
      const ws = new WebSocket(`ws://127.0.0.1:${port}/deflate`, { perMessageDeflate: true });
      ws.on('error', () => {});
      await new Promise((r) => ws.once('open', r));
      assert.match(ws.extensions, /permessage-deflate/, 'compression negotiated');
      const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
      ws.send('small');
      await waitUntil('the small message', () => seen.messages === 1);
      const rss0 = process.memoryUsage().rss;
      ws.send(Buffer.alloc(32 * 1024 * 1024));
      assert.equal(await closed, 1009);
      assert.equal(seen.messages, 1, 'the bomb never reached a listener');
      assert.equal(seen.messageBytes, 5);
      // The inflated bytes were dropped at the bound, never held whole (the client's own 32 MiB
      // buffer and its compressor are in this process too, so the bound is loose).
      const grewMiB = (process.memoryUsage().rss - rss0) / 1024 / 1024;
      assert.ok(grewMiB < 96, `RSS grew ${grewMiB.toFixed(1)} MiB`);
    },
  );
});

describe('attack: a message in thousands of fragments', () => {
  it(
    'attack: 100,000 one-byte fragments of one message: closed with 1008, nothing delivered',
    T,
    async () => {
      reset();
      const ws = new WebSocket(`ws://127.0.0.1:${port}/plain`, { perMessageDeflate: false });
      ws.on('error', () => {});
      await new Promise((r) => ws.once('open', r));
      const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
      let written = 0;
      // RFC 6455 §5.4: a text frame without FIN, then continuation frames, never the last one.
      for (let i = 0; i < 100_000 && ws.readyState === WebSocket.OPEN; i++) {
        ws.send('x', { fin: false });
        written++;
        if (i % 1000 === 999) await new Promise((r) => setImmediate(r));
      }
      assert.equal(await closed, 1008);
      assert.ok(written > MAX_FRAGMENTS, `the client wrote ${written} fragments`);
      assert.equal(seen.messages, 0);
    },
  );
});
