// Fuzz: Upgrade / Connection header combinations (and the handshake fields around them) against the
// real server with WebSocket endpoints, a pass-through, auth and static files. Whatever the
// combination: a well-formed answer, never a 500, no crash, and the server keeps serving.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { WebSocketServer } from 'ws';
import { hashPassword } from '../../src/server/steps/password-hash.js';
import { get, makeSite, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { ITERATIONS, mulberry32, SEED_OFFSET } from '../helpers/random.js';
import { WAIT_DEADLINE_MS } from '../helpers/wait.js';

const RUNS = Math.max(50, Math.min(400, Math.round(ITERATIONS / 10)));
const KEY = 'dGhlIHNhbXBsZSBub25jZQ==';

const METHODS = ['GET', 'GET', 'GET', 'GET', 'POST', 'HEAD', 'OPTIONS', 'PUT'];
const PATHS = [
  '/',
  '/index.html',
  '/ws',
  '/ws?x=1',
  '/private/ws',
  '/up/ws',
  '/private/up/ws',
  '/nope',
  '/up',
];
const UPGRADES = [
  'websocket',
  'WebSocket',
  'h2c',
  'TLS/1.0',
  'websocket, h2c',
  'h2c, websocket',
  'HTTP/2.0, websocket',
  '',
  'foo/1',
  'websocket/13',
  ',,',
];
const CONNECTIONS = [
  'Upgrade',
  'upgrade',
  'keep-alive, Upgrade',
  'close',
  'Upgrade, close',
  'Upgrade, HTTP2-Settings',
  '',
];
/** One line (or none: '') from each group. */
const EXTRAS: readonly (readonly string[])[] = [
  [`Sec-WebSocket-Key: ${KEY}`, `Sec-WebSocket-Key: ${KEY}`, 'Sec-WebSocket-Key: short', ''],
  ['Sec-WebSocket-Version: 13', 'Sec-WebSocket-Version: 13', 'Sec-WebSocket-Version: 8', ''],
  [
    'Origin: https://evil.example',
    'Origin: http://127.0.0.1',
    'Origin: https://good.example',
    'Origin: null',
    '',
  ],
  [
    `Authorization: Basic ${Buffer.from('alice:pw').toString('base64')}`,
    'Authorization: Basic Zm9vOmJhcg==',
    '',
  ],
  ['HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA', 'Sec-WebSocket-Extensions: permessage-deflate', ''],
];

function pick<V>(rnd: () => number, list: readonly V[]): V {
  return list[Math.floor(rnd() * list.length)]!;
}

/** One random request: head, optional body, optional bytes after it (early frames or garbage).
 *  A third start from a valid handshake and get one or two random lines more (mutations). */
function randomRequest(rnd: () => number): { text: string; offersWebSocket: boolean } {
  const lines: string[] = ['Host: 127.0.0.1'];
  const upgrades: string[] = [];
  let method = pick(rnd, METHODS);
  if (rnd() < 0.35) {
    method = 'GET';
    upgrades.push('websocket');
    lines.push(
      'Upgrade: websocket',
      'Connection: Upgrade',
      `Sec-WebSocket-Key: ${KEY}`,
      'Sec-WebSocket-Version: 13',
    );
    for (let n = pick(rnd, [0, 1, 2]); n > 0; n--) {
      const kind = rnd();
      if (kind < 0.3) {
        const u = pick(rnd, UPGRADES);
        upgrades.push(u);
        lines.push(`Upgrade: ${u}`);
      } else if (kind < 0.6) lines.push(`Connection: ${pick(rnd, CONNECTIONS)}`);
      else {
        const line = pick(rnd, pick(rnd, EXTRAS));
        if (line !== '') lines.push(line);
      }
    }
  } else {
    // Mostly one Upgrade line, sometimes none or two.
    for (let n = pick(rnd, [0, 1, 1, 1, 2]); n > 0; n--) upgrades.push(pick(rnd, UPGRADES));
    for (const u of upgrades) lines.push(`Upgrade: ${u}`);
    for (let n = pick(rnd, [0, 1, 1, 1, 2]); n > 0; n--) lines.push(`Connection: ${pick(rnd, CONNECTIONS)}`);
    for (const group of EXTRAS) {
      const line = pick(rnd, group);
      if (line !== '') lines.push(line);
    }
  }
  let body = '';
  const shape = rnd();
  if (shape < 0.2) {
    body = 'hello';
    lines.push('Content-Length: 5');
  } else if (shape < 0.3) {
    body = '5\r\nhello\r\n0\r\n\r\n';
    lines.push('Transfer-Encoding: chunked');
  }
  const tail = rnd() < 0.2 ? '\x81\x85garbage' : '';
  const text = `${method} ${pick(rnd, PATHS)} HTTP/1.1\r\n${lines.map((l) => `${l}\r\n`).join('')}\r\n${body}${tail}`;
  const offersWebSocket = upgrades.some((u) =>
    u.split(',').some((p) => p.trim().toLowerCase() === 'websocket'),
  );
  return { text, offersWebSocket };
}

/** Sends `text`; resolves with the first status code answered (0: closed without an answer). */
function firstStatus(port: number, text: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    let got = '';
    const done = (status: number) => {
      sock.destroy();
      resolve(status);
    };
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no answer to ${JSON.stringify(text)}`));
    }, WAIT_DEADLINE_MS);
    sock.on('data', (c: Buffer) => {
      got += c.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3}) [^\r\n]*\r\n/.exec(got);
      if (m && got.includes('\r\n\r\n')) {
        clearTimeout(timer);
        done(Number(m[1]));
      } else if (got.length >= 12 && !/^HTTP\/1\.1 \d{3} /.test(got)) {
        clearTimeout(timer);
        reject(new Error(`malformed answer ${JSON.stringify(got)} to ${JSON.stringify(text)}`));
      }
    });
    sock.on('error', () => {});
    sock.on('close', () => {
      clearTimeout(timer);
      resolve(0);
    });
    sock.write(text);
  });
}

describe('fuzz: Upgrade / Connection combinations against the real server', () => {
  let site: string;
  let upstream: Server;
  let wss: WebSocketServer;
  let s: TestServer;
  before(async () => {
    const hash = await hashPassword('pw', { N: 16384, r: 8, p: 1 });
    site = makeSite({ 'index.html': '<p>home</p>' });
    wss = new WebSocketServer({ noServer: true });
    upstream = createServer((req, res) => {
      req.resume();
      res.end('upstream');
    });
    upstream.on('upgrade', (req, socket, head) => {
      socket.on('error', () => socket.destroy());
      wss.handleUpgrade(req, socket, head, (ws) => ws.on('error', () => {}));
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const upUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    s = await startServer(site, {
      auth: [{ prefix: '/private', basic: { realm: 'P', users: { alice: hash } } }],
      cors: { origins: ['https://good.example'] },
      websocket: [
        { path: '/ws', mode: 'echo' },
        { path: '/private/ws', mode: 'echo' },
      ],
      proxy: [
        { prefix: '/up', upstream: upUrl },
        { prefix: '/private/up', upstream: upUrl },
      ],
    });
  });
  after(async () => {
    await s.close();
    for (const c of wss.clients) c.terminate();
    upstream.closeAllConnections();
    await new Promise<void>((r) => upstream.close(() => r()));
    removeSite(site);
  });

  it(`${RUNS} random combinations: a valid answer, never 500, and the server keeps serving`, {
    timeout: 120_000,
  }, async () => {
    const rnd = mulberry32(SEED_OFFSET + 0x5eed);
    const BATCH = 8;
    for (let i = 0; i < RUNS; i += BATCH) {
      const reqs = Array.from({ length: Math.min(BATCH, RUNS - i) }, () => randomRequest(rnd));
      const statuses = await Promise.all(reqs.map((r) => firstStatus(s.port, r.text)));
      for (const [k, status] of statuses.entries()) {
        const r = reqs[k]!;
        const what = JSON.stringify(r.text);
        assert.ok(status === 0 || (status >= 100 && status < 600), `status ${status} for ${what}`);
        assert.notEqual(status, 500, `500 for ${what}`);
        // Only a WebSocket handshake may switch protocols.
        if (status === 101) assert.ok(r.offersWebSocket, `101 without Upgrade: websocket for ${what}`);
      }
    }
    const after = await get(s.url, '/index.html');
    assert.equal(after.status, 200);
    assert.equal(after.text, '<p>home</p>');
  });
});
