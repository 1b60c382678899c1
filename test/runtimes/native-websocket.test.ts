// WebSocket endpoints on the runtimes' own servers: `gatehouse serve` run by Bun (Bun.serve's upgrade)
// and by Deno (Deno.upgradeWebSocket) with a websocket config, reached from Node with the `ws` client.
// The handshake passes the same steps as on Node (a header rule's field on the 101, the access rule's
// 403, the origin policy's 403), then the endpoint's modes and limits (RFC 6455 §7.4.1 close codes),
// the metrics, the drain's 1001, and the Redis fan-out between two processes. Real processes and a
// real redis-server on 127.0.0.1, the build (dist/).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type WebSocket from 'ws';
import { get, makeSite, removeSite } from '../helpers/http.js';
import { startRedis } from '../helpers/redis.js';
import { GATEHOUSE_BIN, type Listening, runListening } from '../helpers/runtimes.js';
import { openWebSocket, refusedWebSocket } from '../helpers/ws-open.js';

const SERVERS = {
  bun: /^on Bun 1\.4\.\d+ \(Bun\.serve\)$/m,
  deno: /^on Deno 2\.9\.\d+ \(Deno\.serve\)$/m,
} as const;

const ALLOWED = 'http://allowed.example';

const CONFIG = {
  cors: { origins: [ALLOWED] },
  headers: [{ set: { 'X-Rule': 'ours' } }],
  auth: [{ prefix: '/closed', deny: ['loopback'] }],
  metrics: {},
  websocket: [
    { path: '/echo', mode: 'echo', maxPayloadBytes: 64, subprotocols: ['chat.v2', 'chat.v1'] },
    { path: '/chat', mode: 'broadcast' },
    { path: '/slow', mode: 'echo', rateLimit: { messagesPerSec: 1, burst: 2 } },
    { path: '/closed/ws', mode: 'echo' },
  ],
};

const nextMessage = (s: WebSocket): Promise<{ data: string; isBinary: boolean }> =>
  new Promise((resolve) => s.once('message', (d, isBinary) => resolve({ data: String(d), isBinary })));

const closeOf = (s: WebSocket): Promise<{ code: number; reason: string }> =>
  new Promise((resolve) => s.once('close', (code, reason) => resolve({ code, reason: String(reason) })));

/** Closes from the client and waits for the end of the closing handshake. */
async function bye(s: WebSocket): Promise<void> {
  const closed = closeOf(s);
  s.close();
  await closed;
}

for (const [runtime, line] of Object.entries(SERVERS) as [keyof typeof SERVERS, RegExp][]) {
  describe(`WebSocket endpoints on ${runtime}'s own server`, () => {
    let site: string;
    let s: Listening;
    const serve = () =>
      runListening(runtime, GATEHOUSE_BIN, [
        'serve',
        join(site, 'www'),
        '--config',
        join(site, 'gatehouse.config.json'),
        '--host',
        '127.0.0.1',
        '--port',
        '0',
      ]);

    before(async () => {
      site = makeSite({ 'www/index.html': '<h1>home</h1>' });
      writeFileSync(join(site, 'gatehouse.config.json'), JSON.stringify(CONFIG));
      s = await serve();
      // Not the node:http emulation (where `ws` would serve these endpoints): every test below is on
      // the runtime's own server.
      assert.match(s.stdout, line, s.stderr());
    });
    after(async () => {
      await s.close();
      removeSite(site);
    });

    it(`is served by the runtime's own server, not the node:http emulation`, () => {
      assert.match(s.stdout, line);
      assert.doesNotMatch(s.stderr(), /emulation/);
    });

    it('echo: a text and a binary message come back as sent; the steps field is on the 101', async () => {
      const { socket, head } = await openWebSocket(s.url, '/echo');
      try {
        assert.equal(head.headers['x-rule'], 'ours');
        const text = nextMessage(socket);
        socket.send('hello');
        assert.deepEqual(await text, { data: 'hello', isBinary: false });
        const bin = nextMessage(socket);
        socket.send(Buffer.from('bytes'));
        assert.deepEqual(await bin, { data: 'bytes', isBinary: true });
        const pong = nextMessage(socket);
        socket.send('{"type":"ping"}');
        assert.deepEqual(await pong, { data: '{"type":"pong"}', isBinary: false });
      } finally {
        await bye(socket);
      }
    });

    it('subprotocol: ours first (our order) that the client offered; none offered -> none', async () => {
      const a = await openWebSocket(s.url, '/echo', ['chat.v1', 'chat.v2']);
      assert.equal(a.socket.protocol, 'chat.v2');
      assert.equal(a.head.headers['sec-websocket-protocol'], 'chat.v2');
      await bye(a.socket);
      const b = await openWebSocket(s.url, '/echo', ['chat.v1']);
      assert.equal(b.socket.protocol, 'chat.v1');
      await bye(b.socket);
      const c = await openWebSocket(s.url, '/echo');
      assert.equal(c.head.headers['sec-websocket-protocol'], undefined);
      await bye(c.socket);
    });

    it('broadcast: a message from one client reaches both, in a room only its members', async () => {
      const a = (await openWebSocket(s.url, '/chat')).socket;
      const b = (await openWebSocket(s.url, '/chat')).socket;
      try {
        const toA = nextMessage(a);
        const toB = nextMessage(b);
        a.send('to everyone');
        assert.equal((await toA).data, 'to everyone');
        assert.equal((await toB).data, 'to everyone');
        const joined = nextMessage(b);
        b.send(JSON.stringify({ type: 'join', room: 'r1' }));
        assert.deepEqual(JSON.parse((await joined).data), { type: 'joined', room: 'r1' });
        const inRoom = nextMessage(b);
        const msg = JSON.stringify({ type: 'say', room: 'r1', content: 'hi' });
        a.send(msg);
        assert.equal((await inRoom).data, msg);
      } finally {
        await Promise.all([bye(a), bye(b)]);
      }
    });

    it('origin: a cross-origin handshake not on the CORS list -> 403; one on it, or none, switches', async () => {
      const r = await refusedWebSocket(openWebSocket(s.url, '/echo', [], 'http://evil.example'));
      assert.equal(r.status, 403);
      assert.match(r.body, /Origin/);
      await bye((await openWebSocket(s.url, '/echo', [], ALLOWED)).socket);
      await bye((await openWebSocket(s.url, '/echo')).socket);
    });

    it('the access rule refuses the handshake before the endpoint (403, the rule, not the origin)', async () => {
      const r = await refusedWebSocket(openWebSocket(s.url, '/closed/ws'));
      assert.equal(r.status, 403);
      assert.doesNotMatch(r.body, /Origin/);
    });

    it('a malformed Sec-WebSocket-Protocol -> 400, as ws answers on Node', async () => {
      const r = await get(s.url, '/echo', {
        headers: {
          connection: 'Upgrade',
          upgrade: 'websocket',
          'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
          'sec-websocket-version': '13',
          'sec-websocket-protocol': 'a b',
        },
      });
      assert.equal(r.status, 400);
    });

    it('a message over maxPayloadBytes closes with 1009; over the rate with 1008', async () => {
      const big = (await openWebSocket(s.url, '/echo')).socket;
      const bigClosed = closeOf(big);
      big.send('x'.repeat(100));
      assert.equal((await bigClosed).code, 1009);
      // One at a time: Deno may drop a connection it began to close while the peer still sends
      // (denoland/deno#21642), which is not what this checks.
      const fast = (await openWebSocket(s.url, '/slow')).socket;
      const fastClosed = closeOf(fast);
      for (const m of ['m0', 'm1']) {
        const echo = nextMessage(fast);
        fast.send(m);
        assert.equal((await echo).data, m);
      }
      fast.send('m2');
      assert.equal((await fastClosed).code, 1008);
    });

    it('metrics: open connections and the 101s, counted under ws', async () => {
      const a = (await openWebSocket(s.url, '/chat')).socket;
      const b = (await openWebSocket(s.url, '/chat')).socket;
      try {
        const m = (await get(s.url, '/metrics')).body.toString();
        assert.match(m, /^gatehouse_websockets_open 2$/m);
        assert.match(m, /^gatehouse_requests_total\{class="1xx",kind="ws"\} [1-9]\d*$/m);
      } finally {
        await Promise.all([bye(a), bye(b)]);
      }
      // The server counts a connection out once its closing handshake is over.
      let count = '';
      for (let i = 0; i < 50 && count !== '0'; i++) {
        count =
          /^gatehouse_websockets_open (\d+)$/m.exec((await get(s.url, '/metrics')).body.toString())?.[1] ??
          '';
        if (count !== '0') await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(count, '0');
    });

    it('SIGTERM: open connections get 1001 Going Away, then the process exits 0', async () => {
      const other = await serve();
      const a = (await openWebSocket(other.url, '/chat')).socket;
      const b = (await openWebSocket(other.url, '/echo')).socket;
      const closes = Promise.all([closeOf(a), closeOf(b)]);
      assert.equal(await other.close(), 0);
      for (const c of await closes) assert.equal(c.code, 1001);
    });

    it('fanout "redis": a broadcast reaches a client of another process', async () => {
      const redis = await startRedis();
      const config = join(site, 'fanout.config.json');
      writeFileSync(
        config,
        JSON.stringify({
          redis: { url: redis.url },
          websocket: [{ path: '/chat', mode: 'broadcast', fanout: 'redis' }],
        }),
      );
      const args = ['serve', join(site, 'www'), '--config', config, '--host', '127.0.0.1', '--port', '0'];
      const [one, two] = await Promise.all([
        runListening(runtime, GATEHOUSE_BIN, args),
        runListening(runtime, GATEHOUSE_BIN, args),
      ]);
      try {
        assert.match(one.stdout, line);
        const a = (await openWebSocket(one.url, '/chat')).socket;
        const b = (await openWebSocket(two.url, '/chat')).socket;
        // The other process subscribes as its first client joins: send until one arrives.
        const got = nextMessage(b);
        let arrived = false;
        void got.then(() => {
          arrived = true;
        });
        for (let i = 0; i < 100 && !arrived; i++) {
          a.send('across');
          await new Promise((r) => setTimeout(r, 20));
        }
        assert.equal((await got).data, 'across');
        await Promise.all([bye(a), bye(b)]);
      } finally {
        await Promise.all([one.close(), two.close()]);
        await redis.close();
      }
    });
  });
}
