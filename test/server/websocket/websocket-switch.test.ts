// The 101 Switching Protocols carries what the request steps set (header rules, CORS, rate limit), for a
// WebSocket endpoint (ws writes the 101) and for the proxy's pass-through (the upstream's 101), with
// real `ws` clients and a real `ws` upstream; and switchFields / switchHead as tables.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { WebSocket, WebSocketServer } from 'ws';
import { parseConfig, toServerOptions } from '../../../src/config/load.js';
import { switchFields } from '../../../src/http/switch-fields.js';
import { createGatehouse, type Gatehouse } from '../../../src/server/app/gatehouse.js';
import type { Logger } from '../../../src/server/ops/log.js';
import { switchHead } from '../../../src/server/proxy/upgrade.js';
import { makeSite, removeSite } from '../../helpers/http.js';

const T = { timeout: 30_000 };
const GOOD = 'https://good.example';

/** Opens a WebSocket; resolves with the 101's fields and the open socket. */
function open(url: string, origin = GOOD): Promise<{ ws: WebSocket; res: IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { origin });
    let res: IncomingMessage | undefined;
    ws.once('upgrade', (r) => {
      res = r;
    });
    ws.once('open', () => resolve({ ws, res: res! }));
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, r) => reject(new Error(`status ${r.statusCode}`)));
  });
}

/** Sends `text` and resolves with the first message back. */
function roundTrip(ws: WebSocket, text: string): Promise<string> {
  return new Promise((resolve) => {
    ws.once('message', (m) => resolve(String(m)));
    ws.send(text);
  });
}

describe("the 101 carries the request steps' fields", () => {
  let site: string;
  let app: Gatehouse;
  let port: number;
  let upstream: WebSocketServer;
  before(async () => {
    upstream = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise((r) => upstream.once('listening', r));
    // The upstream's own 101 fields: one of its own, one a step also sets, a Vary, a hop-by-hop one.
    upstream.on('headers', (lines) =>
      lines.push('X-Upstream: yes', 'X-Rule: upstream', 'Vary: Accept', 'Keep-Alive: timeout=5'),
    );
    upstream.on('connection', (ws) => ws.on('message', (m) => ws.send(`up:${m}`)));
    site = makeSite({});
    const logger: Logger = { info() {}, warn() {}, error() {}, isLevelEnabled: () => false };
    const config = parseConfig({
      root: site,
      listen: { host: '127.0.0.1', port: 0 },
      headers: [{ preset: 'security' }, { set: { 'X-Rule': 'ours' } }],
      cors: { origins: [GOOD], credentials: true },
      limits: { rateLimit: { requestsPerSec: 100, burst: 100 } },
      websocket: [{ path: '/ws', mode: 'echo' }],
      proxy: [{ prefix: '/up', upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` }],
    });
    app = createGatehouse(toServerOptions(config), { logger });
    port = (await app.listen()).port;
  });
  after(async () => {
    await app.close();
    for (const c of upstream.clients) c.terminate();
    await new Promise((r) => upstream.close(r));
    removeSite(site);
  });

  /** The fields every 101 from us carries, whoever wrote it. */
  function assertStepFields(res: IncomingMessage): void {
    const h = res.headers;
    assert.equal(h['x-rule'], 'ours', 'header rule set');
    assert.equal(h['x-content-type-options'], 'nosniff', 'security preset');
    assert.equal(h['x-frame-options'], 'SAMEORIGIN', 'security preset');
    assert.equal(h['access-control-allow-origin'], GOOD, 'CORS');
    assert.equal(h['access-control-allow-credentials'], 'true', 'CORS');
    assert.match(String(h.vary), /\bOrigin\b/, 'CORS Vary');
    assert.ok(h['ratelimit-policy'], 'rate limit (a setHeader field, not a pending one)');
    assert.equal(h.connection, 'Upgrade', 'the switch, never Connection: close or a step value');
    assert.equal(h.upgrade, 'websocket');
    assert.equal(h['content-length'], undefined, 'a 101 has no content');
  }

  it("WebSocket endpoint: header rules, CORS and rate-limit fields are on ws's 101", T, async () => {
    const { ws, res } = await open(`ws://127.0.0.1:${port}/ws`);
    try {
      assertStepFields(res);
      assert.equal(res.rawHeaders.filter((n) => n.toLowerCase() === 'sec-websocket-accept').length, 1);
      assert.equal(await roundTrip(ws, 'hi'), 'hi', 'the connection works');
    } finally {
      ws.terminate();
    }
  });

  it(
    "pass-through: the upstream's 101 fields plus the steps' (steps win, Vary merged, hop-by-hop gone)",
    T,
    async () => {
      const { ws, res } = await open(`ws://127.0.0.1:${port}/up/x`);
      try {
        assertStepFields(res);
        assert.equal(res.headers['x-upstream'], 'yes', "the upstream's own field is kept");
        assert.equal(res.headers['keep-alive'], undefined, "the upstream's hop-by-hop field is dropped");
        assert.deepEqual(
          String(res.headers.vary)
            .split(/\s*,\s*/)
            .sort(),
          ['Accept', 'Origin'],
        );
        assert.equal(res.rawHeaders.filter((n) => n.toLowerCase() === 'x-rule').length, 1);
        assert.equal(await roundTrip(ws, 'hi'), 'up:hi', 'the tunnel works');
      } finally {
        ws.terminate();
      }
    },
  );
});

describe("switchFields: the steps' fields a 101 may carry", () => {
  const cases: [string, [string, string | number | string[]][], [string, string][]][] = [
    ['an ordinary field -> kept', [['X-Rule', 'on']], [['X-Rule', 'on']]],
    ['a number -> as text', [['x-n', 7]], [['x-n', '7']]],
    [
      'a list (Set-Cookie) -> one line each',
      [['set-cookie', ['a=1', 'b=2']]],
      [
        ['set-cookie', 'a=1'],
        ['set-cookie', 'b=2'],
      ],
    ],
    ['Connection: close (draining) -> dropped, the switch has its own', [['connection', 'close']], []],
    [
      'Upgrade, Keep-Alive, Transfer-Encoding -> dropped (hop-by-hop)',
      [
        ['upgrade', 'h2c'],
        ['keep-alive', 'x'],
        ['transfer-encoding', 'chunked'],
      ],
      [],
    ],
    ['Content-Length -> dropped (no content on a 101)', [['content-length', '0']], []],
    [
      "Sec-WebSocket-Accept / -Protocol -> dropped (the handshake's own)",
      [
        ['Sec-WebSocket-Accept', 'x'],
        ['sec-websocket-protocol', 'p'],
      ],
      [],
    ],
  ];
  for (const [name, input, want] of cases) it(name, () => assert.deepEqual(switchFields(input), want));
});

describe("switchHead: the pass-through's 101", () => {
  const UP = ['Upgrade', 'websocket', 'Connection', 'Upgrade', 'Sec-WebSocket-Accept', 'abc'];
  const cases: [string, string[], [string, string][], string[]][] = [
    [
      "no step fields -> the upstream's, Connection: Upgrade",
      UP,
      [],
      ['Upgrade: websocket', 'Sec-WebSocket-Accept: abc', 'Connection: Upgrade'],
    ],
    [
      "a step field -> added after the upstream's",
      UP,
      [['x-rule', 'on']],
      ['Upgrade: websocket', 'Sec-WebSocket-Accept: abc', 'Connection: Upgrade', 'x-rule: on'],
    ],
    [
      "the same name from both -> the step's only",
      [...UP, 'X-Rule', 'up'],
      [['x-rule', 'on']],
      ['Upgrade: websocket', 'Sec-WebSocket-Accept: abc', 'Connection: Upgrade', 'x-rule: on'],
    ],
    [
      'Vary from both -> merged',
      [...UP, 'Vary', 'Accept'],
      [['vary', 'Origin']],
      ['Upgrade: websocket', 'Sec-WebSocket-Accept: abc', 'Connection: Upgrade', 'vary: Accept, Origin'],
    ],
    [
      "a field the upstream's Connection names -> dropped",
      ['Upgrade', 'websocket', 'Connection', 'Upgrade, X-Hop', 'X-Hop', '1'],
      [],
      ['Upgrade: websocket', 'Connection: Upgrade'],
    ],
    [
      'Keep-Alive from the upstream -> dropped',
      [...UP, 'Keep-Alive', 'timeout=5'],
      [],
      ['Upgrade: websocket', 'Sec-WebSocket-Accept: abc', 'Connection: Upgrade'],
    ],
  ];
  for (const [name, up, steps, want] of cases) {
    it(name, () =>
      assert.equal(
        switchHead('Switching Protocols', up, steps),
        `HTTP/1.1 101 Switching Protocols\r\n${want.map((l) => `${l}\r\n`).join('')}\r\n`,
      ),
    );
  }
});
