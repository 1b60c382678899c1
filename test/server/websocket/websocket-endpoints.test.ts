// matrix: http1 runtimes (the WebSocket endpoints run on Node and on each runtime's own server)
// WebSocket endpoints served by Gatehouse (startServer: node:http, or Bun.serve / Deno.serve on the
// runtimes matrix), talked to over the wire only, with the `ws` client and raw handshake heads: echo,
// the handshake's guards, subprotocols and permessage-deflate, broadcast and rooms. What needs the
// endpoints in process (client counts, logs, custom handlers, mocked clocks) is in websocket.test.ts.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { makeSite, raw, rawStatus, removeSite, startServer, type TestServer } from '../../helpers/http.js';
import { Gen } from '../../helpers/random.js';
import { CONNECTION_CLOSE_KEPT_OPEN, NO_ENDPOINT_DEFLATE } from '../../helpers/runtimes.js';
import {
  ALLOWED_ORIGIN,
  handshake,
  KEY,
  open,
  refused,
  T,
  UPGRADE,
  VALID,
  within,
} from '../../helpers/ws-client.js';

describe('websocket endpoints over the wire', () => {
  let s: TestServer;
  let root: string;
  const url = (path: string) => `ws://127.0.0.1:${s.port}${path}`;
  /** The refusal of a raw handshake: read until the server closes, or 1 s where it keeps it open. */
  const refusal = (head: string) => raw(s.port, head, CONNECTION_CLOSE_KEPT_OPEN ? 1000 : undefined);
  before(async () => {
    root = makeSite({ 'index.html': '<h1>home</h1>' });
    s = await startServer(root, {
      cors: { origins: [ALLOWED_ORIGIN] },
      websocket: [
        { path: '/echo', mode: 'echo', maxPayloadBytes: 1024 },
        { path: '/broadcast', mode: 'broadcast' },
        { path: '/strict', mode: 'echo', requireOrigin: true },
        { path: '/proto', mode: 'echo', subprotocols: ['chat.v2', 'chat.v1'] },
        { path: '/deflate', mode: 'echo', perMessageDeflate: true },
      ],
    });
  });
  after(async () => {
    await s.close();
    removeSite(root);
  });

  describe('echo', () => {
    it('echoes text as text and binary as binary', T, async () => {
      const p = await open(url('/echo'));
      await p.send('hello');
      const t = await p.next();
      assert.equal(t.text, 'hello');
      assert.equal(t.isBinary, false);
      const bin = Buffer.from([0, 1, 2, 255]);
      await p.send(bin);
      const b = await p.next();
      assert.deepEqual(b.data, bin);
      assert.equal(b.isBinary, true);
      p.ws.close();
      await p.closed;
    });

    it('matches the path before the query string', T, async () => {
      const p = await open(url('/echo?token=abc'));
      await p.send('q');
      assert.equal((await p.next()).text, 'q');
      p.ws.close();
      await p.closed;
    });

    it('{"type":"ping"} gets {"type":"pong"} and is not echoed', T, async () => {
      const p = await open(url('/echo'));
      await p.send('{"type":"ping","id":1}');
      await p.send('after');
      assert.deepEqual(await p.nextJson(), { type: 'pong' });
      assert.equal((await p.next()).text, 'after');
      p.ws.close();
      await p.closed;
    });

    it('a message over maxPayloadBytes closes the connection with 1009', T, async () => {
      const p = await open(url('/echo'));
      await p.send('x'.repeat(2048));
      const { code } = await within(p.closed, 'close');
      assert.equal(code, 1009);
    });
  });

  describe('handshake guards', () => {
    it('POST -> 400 with a problem+json body', T, async () => {
      const text = await refusal(handshake('/echo', VALID, 'POST'));
      assert.equal(rawStatus(text), 400);
      assert.match(text, /Content-Type: application\/problem\+json/);
      assert.match(text, /"code":"bad_request"/);
      assert.match(text, /must be a GET request/);
    });

    it('missing Sec-WebSocket-Key -> 400', T, async () => {
      const text = await refusal(handshake('/echo', [...UPGRADE, 'Sec-WebSocket-Version: 13']));
      assert.equal(rawStatus(text), 400);
      assert.match(text, /Sec-WebSocket-Key/);
    });

    it('missing Sec-WebSocket-Version -> 400', T, async () => {
      const text = await refusal(handshake('/echo', [...UPGRADE, `Sec-WebSocket-Key: ${KEY}`]));
      assert.equal(rawStatus(text), 400);
      assert.match(text, /Sec-WebSocket-Version header/);
    });

    it('version 8 -> 426 with Sec-WebSocket-Version: 13', T, async () => {
      const lines = [...UPGRADE, `Sec-WebSocket-Key: ${KEY}`, 'Sec-WebSocket-Version: 8'];
      const text = await refusal(handshake('/echo', lines));
      assert.equal(rawStatus(text), 426);
      assert.match(text, /\r\nSec-WebSocket-Version: 13\r\n/);
      assert.match(text, /\r\nUpgrade: websocket\r\n/);
    });

    it('allowed cross-site Origin -> open', T, async () => {
      const p = await open(url('/echo'), { origin: ALLOWED_ORIGIN });
      p.ws.close();
    });

    it('disallowed Origin -> 403', T, async () => {
      const r = await refused(url('/echo'), { origin: 'https://evil.example' });
      assert.equal(r.status, 403);
      assert.match(r.body, /Origin/);
    });

    it('same-origin Origin (matches Host) -> open without the allow-list', T, async () => {
      const p = await open(url('/echo'), { origin: `http://127.0.0.1:${s.port}` });
      p.ws.close();
    });

    it('no Origin (a non-browser client) -> open', T, async () => {
      const p = await open(url('/echo'));
      p.ws.close();
    });

    it('no Origin on a requireOrigin endpoint -> 403', T, async () => {
      const r = await refused(url('/strict'));
      assert.equal(r.status, 403);
      assert.match(r.body, /requires an Origin/);
      const p = await open(url('/strict'), { origin: ALLOWED_ORIGIN });
      p.ws.close();
    });

    it('clients resetting mid-handshake do not crash the server', T, async () => {
      const g = new Gen(0x5e7);
      await Promise.all(
        Array.from(
          { length: 20 },
          () =>
            new Promise<void>((resolve) => {
              const c = connect(s.port, '127.0.0.1', () => {
                c.write(handshake(g.pick(['/echo', '/strict']), VALID));
                c.resetAndDestroy();
              });
              c.on('error', () => {});
              c.on('close', () => resolve());
            }),
        ),
      );
      const p = await open(url('/echo'));
      await p.send('alive');
      assert.equal((await p.next()).text, 'alive');
      p.ws.close();
    });
  });

  describe('subprotocols and compression', () => {
    it('selects the first of ours the client offers (our preference order)', T, async () => {
      const p = await open(url('/proto'), {}, ['chat.v1', 'chat.v2']);
      assert.equal(p.ws.protocol, 'chat.v2');
      p.ws.close();
    });

    it('selects none when the client offers none of ours (the ws client then fails)', T, async () => {
      await assert.rejects(open(url('/proto'), {}, ['other']), /no subprotocol/);
      const p = await open(url('/echo'), {}, ['chat.v1']).catch((e: Error) => e);
      assert.ok(p instanceof Error, 'an endpoint without subprotocols never agrees to one');
    });

    it('a client offering no subprotocol connects', T, async () => {
      const p = await open(url('/proto'));
      assert.equal(p.ws.protocol, '');
      p.ws.close();
    });

    it('perMessageDeflate is negotiated only where enabled', T, async () => {
      const d = await open(url('/deflate'), { perMessageDeflate: true });
      if (NO_ENDPOINT_DEFLATE) assert.equal(d.ws.extensions, '', 'the runtime cannot offer it here');
      else assert.match(d.ws.extensions, /permessage-deflate/);
      const text = 'compressible '.repeat(500);
      await d.send(text);
      assert.equal((await d.next()).text, text);
      const e = await open(url('/echo'), { perMessageDeflate: true });
      assert.equal(e.ws.extensions, '');
      d.ws.close();
      e.ws.close();
    });
  });

  describe('broadcast', () => {
    it('without rooms: every client on the path gets it, the sender included', T, async () => {
      const [a, b, c] = await Promise.all([1, 2, 3].map(() => open(url('/broadcast'))));
      await a!.send('hello all');
      for (const p of [a!, b!, c!]) assert.equal((await p.next()).text, 'hello all');
      await b!.send(Buffer.from([9, 9]));
      for (const p of [a!, b!, c!]) {
        const m = await p.next();
        assert.equal(m.isBinary, true);
        assert.deepEqual(m.data, Buffer.from([9, 9]));
      }
      for (const p of [a!, b!, c!]) p.ws.close();
    });

    it('with rooms: only members get a room message; join and leave are acknowledged', T, async () => {
      const [a, b, c] = await Promise.all([1, 2, 3].map(() => open(url('/broadcast'))));
      for (const p of [a!, b!]) {
        await p.send('{"type":"join","room":"r1"}');
        assert.deepEqual(await p.nextJson(), { type: 'joined', room: 'r1' });
      }
      const roomMsg = '{"type":"chat","room":"r1","content":"hi r1"}';
      await a!.send(roomMsg);
      assert.equal((await a!.next()).text, roomMsg);
      assert.equal((await b!.next()).text, roomMsg);
      // c is not a member: its next message is the one sent to everyone afterwards.
      await a!.send('{"type":"chat","content":"everyone"}');
      assert.deepEqual(await c!.nextJson(), { type: 'chat', content: 'everyone' });
      await a!.next();
      await b!.next();

      await b!.send('{"type":"leave","room":"r1"}');
      assert.deepEqual(await b!.nextJson(), { type: 'left', room: 'r1' });
      await a!.send(roomMsg);
      assert.equal((await a!.next()).text, roomMsg);
      await a!.send('after');
      assert.equal((await b!.next()).text, 'after');
      for (const p of [a!, b!, c!]) p.ws.close();
    });

    it('a malformed room is refused, not sent to everyone', T, async () => {
      const [a, b] = await Promise.all([1, 2].map(() => open(url('/broadcast'))));
      await a!.send('{"type":"chat","room":7}');
      assert.deepEqual(await a!.nextJson(), {
        type: 'error',
        content: { code: 'bad_room', message: 'room must be a string of 1 to 128 characters' },
      });
      await a!.send('next');
      assert.equal((await b!.next()).text, 'next');
      for (const p of [a!, b!]) p.ws.close();
    });

    it('{"type":"ping"} is answered to the sender only', T, async () => {
      const [a, b] = await Promise.all([1, 2].map(() => open(url('/broadcast'))));
      await a!.send('{"type":"ping"}');
      assert.deepEqual(await a!.nextJson(), { type: 'pong' });
      await a!.send('next');
      assert.equal((await b!.next()).text, 'next');
      for (const p of [a!, b!]) p.ws.close();
    });
  });
});
