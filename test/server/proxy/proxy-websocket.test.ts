// WebSocket upgrades under a proxy prefix, passed through to a real upstream on 127.0.0.1:0. Off the
// runtimes matrix until Bun.serve and Deno.serve pass an upgrade under a prefix through natively
// (docs/runtimes.md); the rest of the proxy runs there (proxy.test.ts).
// matrix: http1 h2 h1-tls adapters (the static, policy, proxy and cache suites run on every protocol and adapter)
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { WebSocket, WebSocketServer } from 'ws';
import { makeSite, removeSite, startServer, wsTarget } from '../../helpers/http.js';

async function freePort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

describe('proxy: WebSocket pass-through', () => {
  it('upgrades through to the upstream, relays frames both ways and every subprotocol offered', async () => {
    const wss = new WebSocketServer({
      port: 0,
      host: '127.0.0.1',
      handleProtocols: (p) => [...p].at(-1) ?? false,
    });
    await new Promise((r) => wss.once('listening', r));
    let seenHeaders: IncomingMessage['headers'] = {};
    wss.on('connection', (ws, req) => {
      seenHeaders = req.headers;
      ws.on('message', (m) => ws.send(`echo:${m}`));
    });
    const port = (wss.address() as AddressInfo).port;
    const site = makeSite({});
    const gh = await startServer(site, { proxy: [{ prefix: '/ws', upstream: `http://127.0.0.1:${port}` }] });
    const ws = new WebSocket(wsTarget(gh, '/ws/chat').url, ['one', 'two'], wsTarget(gh, '/ws/chat').options);
    try {
      await new Promise((r, j) => {
        ws.once('open', r);
        ws.once('error', j);
      });
      assert.equal(ws.protocol, 'two');
      assert.deepEqual(String(seenHeaders['sec-websocket-protocol']).split(/\s*,\s*/), ['one', 'two']);
      assert.equal(seenHeaders['x-forwarded-for'], '127.0.0.1');
      ws.send('hi');
      const msg = await new Promise((r) => ws.once('message', (m) => r(String(m))));
      assert.equal(msg, 'echo:hi');
      const closed = new Promise((r) => ws.once('close', r));
      for (const c of wss.clients) c.terminate();
      await closed;
    } finally {
      ws.terminate();
      await gh.close();
      await new Promise((r) => wss.close(r));
      removeSite(site);
    }
  });

  it('an upstream refusal reaches the client as that status, not 101', async () => {
    const up = createServer((_q, r) => r.end());
    up.on('upgrade', (_req, socket: Socket) => {
      // The pass-through resets a refused handshake's connection the upstream has not closed yet.
      socket.on('error', () => {});
      socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 6\r\nWWW-Authenticate: Bearer\r\n\r\nnope!\n');
    });
    await new Promise<void>((r) => up.listen(0, '127.0.0.1', r));
    const port = (up.address() as AddressInfo).port;
    const site = makeSite({});
    const gh = await startServer(site, { proxy: [{ prefix: '/ws', upstream: `http://127.0.0.1:${port}` }] });
    try {
      const ws = new WebSocket(wsTarget(gh, '/ws/x').url, wsTarget(gh, '/ws/x').options);
      const status = await new Promise<number>((resolve) => {
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode!));
        ws.on('error', () => {});
      });
      assert.equal(status, 401);
    } finally {
      await gh.close();
      up.close();
      removeSite(site);
    }
  });

  it('an unreachable upstream -> 502 for the upgrade', async () => {
    const port = await freePort();
    const site = makeSite({});
    const gh = await startServer(site, { proxy: [{ prefix: '/ws', upstream: `http://127.0.0.1:${port}` }] });
    try {
      const ws = new WebSocket(wsTarget(gh, '/ws/x').url, wsTarget(gh, '/ws/x').options);
      const status = await new Promise<number>((resolve) => {
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode!));
        ws.on('error', () => {});
      });
      assert.equal(status, 502);
    } finally {
      await gh.close();
      removeSite(site);
    }
  });
});
