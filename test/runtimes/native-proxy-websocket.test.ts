// Proxied WebSocket on the runtimes' own servers: `gatehouse serve` run by Bun (Bun.serve) and by Deno
// (Deno.serve) relays messages between the client and a `ws` upstream in this process (proxy/relay.ts):
// text and binary both ways, the upstream's subprotocol on the 101, close codes and reasons (RFC 6455
// §7.4), a refusal -> 502, the origin check's 403 before the upstream is asked, maxUpgrades, 1001 at
// shutdown, and the bound on what a relay holds for a side that does not read. Real processes on
// 127.0.0.1, the build (dist/).
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import WebSocket, { WebSocketServer } from 'ws';
import { makeSite, removeSite } from '../helpers/http.js';
import { GATEHOUSE_BIN, type Listening, runListening } from '../helpers/runtimes.js';
import { openWebSocket, refusedWebSocket } from '../helpers/ws-open.js';

const SERVERS = { bun: /\(Bun\.serve\)/, deno: /\(Deno\.serve\)/ } as const;

const ALLOWED = 'http://allowed.example';

/** A `ws` upstream that echoes, counts what reached it and remembers each handshake and close. */
interface Upstream {
  readonly url: string;
  readonly handshakes: IncomingMessage[];
  readonly received: { data: string; isBinary: boolean }[];
  readonly closes: { code: number; reason: string }[];
  open(): number;
  close(): Promise<void>;
}

async function startUpstream(): Promise<Upstream> {
  const handshakes: IncomingMessage[] = [];
  const received: { data: string; isBinary: boolean }[] = [];
  const closes: { code: number; reason: string }[] = [];
  const wss = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    // The upstream's preference: chat.v2 over chat.v1, whatever the client's order.
    handleProtocols: (offered) => (offered.has('chat.v2') ? 'chat.v2' : offered.has('chat.v1') && 'chat.v1'),
    verifyClient: (info, cb) => (info.req.url!.startsWith('/refuse') ? cb(false, 403) : cb(true)),
  });
  await new Promise<void>((resolve) => wss.once('listening', resolve));
  wss.on('connection', (socket, req) => {
    handshakes.push(req);
    socket.on('message', (d, isBinary) => {
      const data = String(d);
      received.push({ data, isBinary });
      if (data === 'close me') socket.close(4001, 'done here');
      else if (data === 'drop me') socket.terminate();
      else if (data === 'flood') for (let i = 0; i < 512; i++) socket.send(Buffer.alloc(64 * 1024, i));
      else socket.send(d, { binary: isBinary });
    });
    socket.on('close', (code, reason) => closes.push({ code, reason: String(reason) }));
  });
  return {
    url: `http://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    handshakes,
    received,
    closes,
    open: () => wss.clients.size,
    close: () =>
      new Promise((resolve) => {
        for (const c of wss.clients) c.terminate();
        wss.close(() => resolve());
      }),
  };
}

const nextMessage = (s: WebSocket): Promise<{ data: string; isBinary: boolean }> =>
  new Promise((resolve) => s.once('message', (d, isBinary) => resolve({ data: String(d), isBinary })));

const closeOf = (s: WebSocket): Promise<{ code: number; reason: string }> =>
  new Promise((resolve) => s.once('close', (code, reason) => resolve({ code, reason: String(reason) })));

async function bye(s: WebSocket): Promise<void> {
  const closed = closeOf(s);
  s.close();
  await closed;
}

/** Waits until `check` holds (the other side's events come in their own time). */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(check(), what);
}

for (const [runtime, line] of Object.entries(SERVERS) as [keyof typeof SERVERS, RegExp][]) {
  describe(`proxied WebSocket on ${runtime}'s own server`, () => {
    let up: Upstream;
    let few: Upstream;
    /** Takes connections and never answers a handshake. */
    let silent: Server;
    const held: Socket[] = [];
    let site: string;
    let s: Listening;
    const serve = () =>
      runListening(runtime, GATEHOUSE_BIN, [
        'serve',
        site,
        '--config',
        join(site, 'conf/gatehouse.json'),
        '--host',
        '127.0.0.1',
        '--port',
        '0',
      ]);

    before(async () => {
      [up, few] = await Promise.all([startUpstream(), startUpstream()]);
      silent = createServer((c) => held.push(c));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      site = makeSite({
        'index.html': '<h1>home</h1>',
        'conf/gatehouse.json': JSON.stringify({
          cors: { origins: [ALLOWED] },
          proxy: [
            { prefix: '/ws', upstream: up.url },
            { prefix: '/few', upstream: few.url, maxUpgrades: 2 },
            { prefix: '/silent', upstream: silentUrl, timeouts: { connectMs: 200, headersMs: 200 } },
          ],
        }),
      });
      s = await serve();
      assert.match(s.stdout, line, s.stderr());
    });
    after(async () => {
      await s.close();
      await Promise.all([up.close(), few.close()]);
      for (const c of held) c.destroy();
      silent.close();
      removeSite(site);
    });

    it('relays a text and a binary message both ways; the upstream got each once, with the forwarding fields', async () => {
      const before = up.received.length;
      const { socket } = await openWebSocket(s.url, '/ws/room?x=1');
      try {
        const text = nextMessage(socket);
        socket.send('hello');
        assert.deepEqual(await text, { data: 'hello', isBinary: false });
        const bin = nextMessage(socket);
        socket.send(Buffer.from('bytes'));
        assert.deepEqual(await bin, { data: 'bytes', isBinary: true });
        assert.deepEqual(up.received.slice(before), [
          { data: 'hello', isBinary: false },
          { data: 'bytes', isBinary: true },
        ]);
        const h = up.handshakes.at(-1)!;
        assert.equal(h.url, '/room?x=1');
        assert.equal(h.headers['x-forwarded-for'], '127.0.0.1');
        assert.equal(h.headers['x-forwarded-proto'], 'http');
        assert.match(String(h.headers.via), /gatehouse/);
      } finally {
        await bye(socket);
      }
    });

    it("the upstream's subprotocol reaches the client on the 101; none offered -> none", async () => {
      const a = await openWebSocket(s.url, '/ws/p', ['chat.v1', 'chat.v2']);
      assert.equal(up.handshakes.at(-1)!.headers['sec-websocket-protocol'], 'chat.v1, chat.v2');
      assert.equal(a.socket.protocol, 'chat.v2');
      assert.equal(a.head.headers['sec-websocket-protocol'], 'chat.v2');
      await bye(a.socket);
      const b = await openWebSocket(s.url, '/ws/p');
      assert.equal(b.head.headers['sec-websocket-protocol'], undefined);
      await bye(b.socket);
    });

    it("close codes and reasons pass through: the upstream's to the client, the client's to the upstream", async () => {
      const a = (await openWebSocket(s.url, '/ws/c')).socket;
      const closed = closeOf(a);
      a.send('close me');
      assert.deepEqual(await closed, { code: 4001, reason: 'done here' });
      const b = (await openWebSocket(s.url, '/ws/c')).socket;
      const n = up.closes.length;
      b.close(4002, 'leaving');
      await closeOf(b);
      await until(() => up.closes.length > n, 'the upstream saw the close');
      assert.deepEqual(up.closes.at(-1), { code: 4002, reason: 'leaving' });
    });

    it('an upstream gone without a Close -> 1011 to the client (1006 is never sent)', async () => {
      const a = (await openWebSocket(s.url, '/ws/d')).socket;
      const closed = closeOf(a);
      a.send('drop me');
      assert.equal((await closed).code, 1011);
    });

    it('an upstream that refuses the handshake -> 502 (no 101)', async () => {
      const r = await refusedWebSocket(openWebSocket(s.url, '/ws/refuse'));
      assert.equal(r.status, 502);
    });

    it('an upstream that does not answer the handshake in time (connectMs + headersMs) -> 504', async () => {
      const r = await refusedWebSocket(openWebSocket(s.url, '/silent/x'));
      assert.equal(r.status, 504);
    });

    it('a cross-origin handshake not on the CORS list -> 403 before the upstream is asked; one on it relays', async () => {
      const n = up.handshakes.length;
      const r = await refusedWebSocket(openWebSocket(s.url, '/ws/o', [], 'http://evil.example'));
      assert.equal(r.status, 403);
      assert.match(r.body, /Origin/);
      assert.equal(up.handshakes.length, n);
      await bye((await openWebSocket(s.url, '/ws/o', [], ALLOWED)).socket);
    });

    it('maxUpgrades: a third relay to the upstream -> 503; a closed one frees its place', async () => {
      const a = (await openWebSocket(s.url, '/few/1')).socket;
      const b = (await openWebSocket(s.url, '/few/2')).socket;
      try {
        const r = await refusedWebSocket(openWebSocket(s.url, '/few/3'));
        assert.equal(r.status, 503);
        assert.equal(few.handshakes.length, 2);
        await bye(a);
        // The place is free once both sides closed.
        let c: WebSocket | undefined;
        for (let i = 0; i < 50 && c === undefined; i++) {
          c = await openWebSocket(s.url, '/few/4').then(
            (o) => o.socket,
            () => new Promise<undefined>((r) => setTimeout(() => r(undefined), 20)),
          );
        }
        assert.ok(c, 'a relay opened after one closed');
        await bye(c);
      } finally {
        if (a.readyState === WebSocket.OPEN) await bye(a);
        await bye(b);
      }
    });

    it('a client that reads nothing while the upstream floods: the relay ends (bounded buffers), the upstream is closed', async () => {
      // A raw client: the handshake, one masked text frame ("flood", RFC 6455 §5.2), then it never reads.
      const port = Number(new URL(s.url).port);
      const raw = connect(port, '127.0.0.1');
      await new Promise((resolve) => raw.once('connect', resolve));
      raw.write(
        'GET /ws/flood HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
          'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
      );
      const head = await new Promise<string>((resolve) =>
        raw.once('data', (c: Buffer) => resolve(String(c))),
      );
      assert.match(head, /^HTTP\/1\.1 101/);
      raw.pause();
      const mask = Buffer.from([1, 2, 3, 4]);
      const payload = Buffer.from('flood').map((b, i) => b ^ mask[i % 4]!);
      const n = up.closes.length;
      raw.write(Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, payload]));
      try {
        await until(() => up.closes.length > n, 'the upstream side was closed');
      } finally {
        raw.destroy();
      }
    });

    it('SIGTERM: open relays get 1001 Going Away, the upstream sees its side closed, the process exits 0', async () => {
      const other = await serve();
      const a = (await openWebSocket(other.url, '/ws/s1')).socket;
      const b = (await openWebSocket(other.url, '/ws/s2')).socket;
      const n = up.closes.length;
      const closes = Promise.all([closeOf(a), closeOf(b)]);
      assert.equal(await other.close(), 0);
      // The reason is ours on Bun; Deno.serve's shutdown closes its WebSockets with its own first.
      for (const c of await closes) assert.equal(c.code, 1001);
      await until(() => up.closes.length >= n + 2, 'the upstream saw both relays close');
    });
  });
}
