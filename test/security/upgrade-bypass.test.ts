// Attack: skipping the request steps by asking for an Upgrade. Every route to a handler (static,
// library routes, proxy, WebSocket endpoint, WebSocket pass-through) must pass header rules, CORS and
// origin checks, the rate limit, auth and IP rules and redirects; other Upgrades are ignored.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { WebSocketServer } from 'ws';
import { parseConfig, toServerOptions } from '../../src/config/load.js';
import type { GatehouseConfigInput } from '../../src/config/schema.js';
import { createGatehouse, type Gatehouse } from '../../src/server/app/gatehouse.js';
import type { Logger } from '../../src/server/ops/log.js';
import { hashPassword } from '../../src/server/steps/password-hash.js';
import { makeSite, raw, rawStatus, removeSite } from '../helpers/http.js';
import { waitUntil } from '../helpers/wait.js';

const T = { timeout: 20_000 };
const KEY = 'dGhlIHNhbXBsZSBub25jZQ==';
const WS_HEADERS = [
  'Upgrade: websocket',
  'Connection: Upgrade',
  `Sec-WebSocket-Key: ${KEY}`,
  'Sec-WebSocket-Version: 13',
];
const ALICE = `Authorization: Basic ${Buffer.from('alice:pw').toString('base64')}`;

/** A request head; `lines` are extra header lines. */
function head(path: string, lines: string[], method = 'GET'): string {
  return `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${lines.map((l) => `${l}\r\n`).join('')}\r\n`;
}

/** Sends a handshake and resolves with the response head (the socket is closed after it). */
function handshake(port: number, path: string, lines: string[] = []): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    let got = '';
    sock.on('data', (c: Buffer) => {
      got += c.toString('latin1');
      const end = got.indexOf('\r\n\r\n');
      // Stop at the end of a 101's head, or of a response with its whole body (keep-alive).
      if (end === -1) return;
      const length = Number(field(got, 'Content-Length') ?? Number.NaN);
      if (rawStatus(got) === 101 || got.length - end - 4 >= length) sock.destroy();
    });
    sock.on('error', reject);
    sock.on('close', () => resolve(got));
    sock.write(head(path, [...WS_HEADERS, ...lines]));
  });
}

function field(text: string, name: string): string | undefined {
  const end = text.indexOf('\r\n\r\n');
  const re = new RegExp(`^${name}: *(.*)$`, 'im');
  return re.exec(end === -1 ? text : text.slice(0, end))?.[1]?.trim();
}

interface Upstream {
  url: string;
  handshakes: IncomingMessage[];
  requests: IncomingMessage[];
  close(): Promise<void>;
}

/** An upstream with a WebSocket echo on every path; it records handshakes and plain requests. */
async function wsUpstream(): Promise<Upstream> {
  const handshakes: IncomingMessage[] = [];
  const requests: IncomingMessage[] = [];
  const wss = new WebSocketServer({ noServer: true });
  wss.on('connection', (ws) => ws.on('message', (d, isBinary) => ws.send(d, { binary: isBinary })));
  const server: Server = createServer((req, res) => {
    requests.push(req);
    res.end('upstream');
  });
  server.on('upgrade', (req, socket, h) => {
    handshakes.push(req);
    wss.handleUpgrade(req, socket, h, (ws) => wss.emit('connection', ws, req));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    handshakes,
    requests,
    close: async () => {
      for (const c of wss.clients) c.terminate();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

interface Started {
  app: Gatehouse;
  port: number;
  logs: Record<string, unknown>[];
}

async function start(config: GatehouseConfigInput): Promise<Started> {
  const logs: Record<string, unknown>[] = [];
  const logger: Logger = {
    info: (o: object | string) => typeof o === 'object' && logs.push(o as Record<string, unknown>),
    warn: () => {},
    error: () => {},
    isLevelEnabled: () => true,
  };
  const c = parseConfig({ ...config, listen: { host: '127.0.0.1', port: 0 } });
  const app = createGatehouse(toServerOptions(c), {
    logger,
    routes: [
      { path: '/private/route', handler: () => ({ secret: true }) },
      {
        path: '/echo-body',
        methods: ['POST'],
        handler: (req, ctx) => ({ body: ctx.body, upgrade: req.headers.upgrade ?? null }),
      },
    ],
  });
  const { port } = await app.listen();
  return { app, port, logs };
}

describe('attack: Upgrade as a way around the request steps', () => {
  let site: string;
  let up: Upstream;
  let s: Started;
  before(async () => {
    const hash = await hashPassword('pw', { N: 16384, r: 8, p: 1 });
    site = makeSite({ 'private/file.txt': 'secret file', 'index.html': '<p>home</p>' });
    up = await wsUpstream();
    s = await start({
      root: site,
      auth: [
        { prefix: '/private', basic: { realm: 'Private', users: { alice: hash } } },
        { prefix: '/blocked', deny: ['loopback'] },
      ],
      cors: { origins: ['https://good.example'] },
      redirects: [{ from: '/up/old', to: '/up/new', status: 308 }],
      websocket: [
        { path: '/private/ws', mode: 'echo' },
        { path: '/blocked/ws', mode: 'echo' },
        { path: '/open/ws', mode: 'echo' },
      ],
      proxy: [
        { prefix: '/private/up', upstream: up.url },
        { prefix: '/blocked/up', upstream: up.url },
        { prefix: '/up', upstream: up.url },
      ],
    });
  });
  after(async () => {
    await s.app.close();
    await up.close();
    removeSite(site);
  });

  const targets = [
    ['static file', '/private/file.txt'],
    ['library route', '/private/route'],
    ['proxy', '/private/up/x'],
    ['WebSocket endpoint', '/private/ws'],
    ['WebSocket pass-through', '/private/up/ws'],
  ] as const;

  for (const [what, path] of targets) {
    it(
      `attack: handshake without credentials to a ${what} under auth -> 401 with WWW-Authenticate`,
      T,
      async () => {
        const before = up.handshakes.length + up.requests.length;
        const r = await handshake(s.port, path);
        assert.equal(rawStatus(r), 401, r);
        assert.match(field(r, 'WWW-Authenticate') ?? '', /^Basic realm="Private"/);
        assert.equal(up.handshakes.length + up.requests.length, before, 'nothing reached the upstream');
      },
    );
    it(`attack: plain request without credentials to a ${what} under auth -> 401`, T, async () => {
      const r = await raw(s.port, head(path, ['Connection: close']));
      assert.equal(rawStatus(r), 401, r);
    });
    it(
      `attack: handshake from a denied address to a ${what.replace('under auth', '')} -> 403`,
      T,
      async () => {
        const r = await handshake(s.port, path.replace('/private', '/blocked'));
        assert.equal(rawStatus(r), 403, r);
      },
    );
  }

  it('with credentials the WebSocket endpoint switches (101)', T, async () => {
    const r = await handshake(s.port, '/private/ws?switched=1', [ALICE]);
    assert.equal(rawStatus(r), 101, r);
    // Logged once, as any request: status, time taken and bytes (the 101 head) included.
    const lines = s.logs.filter((l) => l.url === '/private/ws?switched=1');
    assert.equal(lines.length, 1, JSON.stringify(lines));
    assert.equal(lines[0]!.status, 101, 'the switch is logged');
    assert.equal(typeof lines[0]!.ms, 'number', JSON.stringify(lines[0]));
    assert.ok((lines[0]!.bytes as number) > 0, JSON.stringify(lines[0]));
  });

  it('with credentials the pass-through switches and the upstream sees the handshake once', T, async () => {
    const before = up.handshakes.length;
    const r = await handshake(s.port, '/private/up/ws', [ALICE]);
    assert.equal(rawStatus(r), 101, r);
    assert.equal(up.handshakes.length, before + 1);
    assert.equal(up.handshakes.at(-1)!.url, '/ws', 'the prefix is stripped as for any request');
    assert.equal(up.handshakes.at(-1)!.headers.upgrade, 'websocket');
  });

  it('attack: refused handshake is logged like any request (status 401)', T, async () => {
    await handshake(s.port, '/private/ws?logged=1');
    const line = s.logs.find((l) => l.url === '/private/ws?logged=1');
    assert.equal(line?.status, 401);
  });

  for (const [i, protocols] of ['a b', 'chat, chat'].entries()) {
    it(
      `attack: a handshake ws refuses after the steps (Sec-WebSocket-Protocol: ${protocols}) -> 400, logged as 400, not 101`,
      T,
      async () => {
        const url = `/open/ws?bad-protocol=${i}`;
        const r = await handshake(s.port, url, [`Sec-WebSocket-Protocol: ${protocols}`]);
        assert.equal(rawStatus(r), 400, r);
        const line = await waitUntil('the access log line', () => s.logs.find((l) => l.url === url));
        assert.equal(line.status, 400, 'the status logged is the one sent');
        assert.equal(s.logs.filter((l) => l.url === url).length, 1, 'one line, no 101 beside it');
        assert.match(
          field(r, 'Content-Type') ?? '',
          /^application\/problem\+json/,
          'answered like any refusal',
        );
        assert.match(r, /Sec-WebSocket-Protocol/);
      },
    );
  }

  it(
    'attack: cross-site handshake to the pass-through (Origin not allowed) -> 403, upstream untouched',
    T,
    async () => {
      const before = up.handshakes.length;
      const r = await handshake(s.port, '/up/ws', ['Origin: https://evil.example']);
      assert.equal(rawStatus(r), 403, r);
      assert.equal(up.handshakes.length, before);
    },
  );

  it('attack: cross-site handshake to the endpoint (Origin not allowed) -> 403', T, async () => {
    const r = await handshake(s.port, '/open/ws', ['Origin: https://evil.example']);
    assert.equal(rawStatus(r), 403, r);
  });

  it('an allowed or same-origin Origin passes to the pass-through', T, async () => {
    assert.equal(rawStatus(await handshake(s.port, '/up/ws', ['Origin: https://good.example'])), 101);
    assert.equal(rawStatus(await handshake(s.port, '/up/ws', ['Origin: http://127.0.0.1'])), 101);
  });

  it(
    'attack: handshake to a redirected path under the pass-through -> the redirect, not the upstream',
    T,
    async () => {
      const before = up.handshakes.length;
      const r = await handshake(s.port, '/up/old');
      assert.equal(rawStatus(r), 308, r);
      assert.equal(field(r, 'Location'), '/up/new');
      assert.equal(up.handshakes.length, before);
    },
  );

  it('attack: GET with Upgrade: h2c is served normally (RFC 9110 §7.8), keep-alive intact', T, async () => {
    const h2c = [
      'Connection: Upgrade, HTTP2-Settings',
      'Upgrade: h2c',
      'HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA',
    ];
    const r = await raw(s.port, head('/', h2c) + head('/', ['Connection: close']));
    const answers = r.split('HTTP/1.1 ').slice(1);
    assert.equal(answers.length, 2, r);
    assert.equal(rawStatus(r), 200, r);
    assert.match(answers[0]!, /<p>home<\/p>/);
    assert.match(answers[1]!, /^200 /);
  });

  it('attack: POST with Upgrade: h2c and a body is served normally, body included', T, async () => {
    const json = 'Content-Type: application/json';
    const lines = ['Connection: Upgrade', 'Upgrade: h2c', json, 'Content-Length: 5'];
    const chunked = ['Connection: Upgrade, close', 'Upgrade: h2c', json, 'Transfer-Encoding: chunked'];
    const a = await raw(
      s.port,
      `${head('/echo-body', lines, 'POST')}[1,2]${head('/', ['Connection: close'])}`,
    );
    assert.equal(rawStatus(a), 200, a);
    assert.match(a, /\{"body":\[1,2\],"upgrade":null\}/);
    assert.equal(a.split('HTTP/1.1 ').length - 1, 2, 'the next request on the connection is answered too');
    const b = await raw(s.port, `${head('/echo-body', chunked, 'POST')}3\r\n"x"\r\n0\r\n\r\n`);
    assert.match(b, /\{"body":"x","upgrade":null\}/);
  });

  it('attack: Upgrade: websocket to a path without an endpoint is served normally', T, async () => {
    const r = await handshake(s.port, '/index.html');
    assert.equal(rawStatus(r), 200, r);
    assert.match(r, /<p>home<\/p>/);
  });

  it('Upgrade: h2c under a proxy prefix is proxied as a plain request', T, async () => {
    const before = up.handshakes.length;
    const r = await raw(s.port, head('/up/plain', ['Connection: Upgrade, close', 'Upgrade: h2c']));
    assert.equal(rawStatus(r), 200, r);
    assert.match(r, /upstream$/);
    assert.equal(up.handshakes.length, before);
  });
});

describe('attack: Upgrade as a way around the rate limit', () => {
  let site: string;
  let up: Upstream;
  let s: Started;
  before(async () => {
    site = makeSite({});
    up = await wsUpstream();
    s = await start({
      root: site,
      limits: { rateLimit: { requestsPerSec: 0.001, burst: 2, paths: ['/limited/**'] } },
      websocket: [{ path: '/limited/ws', mode: 'echo' }],
      proxy: [{ prefix: '/limited/up', upstream: up.url }],
    });
  });
  after(async () => {
    await s.app.close();
    await up.close();
    removeSite(site);
  });

  for (const path of ['/limited/ws', '/limited/up/ws']) {
    it(`attack: handshakes to ${path} past the rate limit -> 429 with Retry-After`, T, async () => {
      // Both targets share one client bucket of 2: the endpoint's test spends it.
      const statuses: number[] = [];
      const answers: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await handshake(s.port, path);
        statuses.push(rawStatus(r));
        answers.push(r);
      }
      assert.equal(statuses.at(-1), 429, answers.at(-1));
      assert.match(field(answers.at(-1)!, 'Retry-After') ?? '', /^\d+$/);
    });
  }
});
