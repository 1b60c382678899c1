// matrix: http1 runtimes (the WebSocket endpoints run on Node and on each runtime's own server)
// websocket[].fanout "redis" (issue 17): two Gatehouse instances on one real redis-server and real
// `ws` clients. A broadcast from a client on A reaches every client on A and B exactly once, the
// sender included; rooms reach their members on both; binary stays binary; with Redis down local
// delivery goes on, and cross-instance delivery comes back with Redis.
//
// "Exactly once" without sleeping: after the message under test, a marker is sent from each
// instance; Redis delivers a channel's messages in order, so once every client has both markers,
// every copy of the earlier message (a duplicate included) has arrived.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError, parseConfig } from '../../../src/config/load.js';
import { connectRedis, type RedisConnection } from '../../../src/server/redis/connection.js';
import { decodeFanout, encodeFanout } from '../../../src/server/websocket/fanout-redis.js';
import { makeSite, removeSite, startServer, type TestServer } from '../../helpers/http.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { waitUntil } from '../../helpers/wait.js';
import { openPeer, type Peer } from '../../helpers/ws-peer.js';

const quietLogger = { info() {}, warn() {}, error() {}, isLevelEnabled: () => false };

const count = (p: Peer, m: string) => p.got.filter((g) => g === m).length;

describe('websocket fanout redis (two instances, real redis-server)', () => {
  let redis: TestRedis;
  let dir: string;
  let a: TestServer;
  let b: TestServer;
  let probe: RedisConnection;
  const peers: Peer[] = [];
  const numsub = async (channel: string) =>
    Number(((await probe.client.pubsub('NUMSUB', channel)) as [string, number])[1]);

  before(async () => {
    redis = await startRedis();
    dir = makeSite({ 'index.html': '<!doctype html><title>x</title>' });
    const config = {
      redis: { url: redis.url },
      websocket: [{ path: '/chat', mode: 'broadcast' as const, fanout: 'redis' as const }],
    };
    [a, b] = await Promise.all([startServer(dir, config), startServer(dir, config)]);
    probe = connectRedis({ url: redis.url, keyPrefix: 'gatehouse:', logger: quietLogger });
    await waitUntil('probe connected', () => probe.isUp());
    await waitUntil('both instances subscribed', async () => (await numsub('gatehouse:ws:/chat')) === 2);
  });
  after(async () => {
    for (const p of peers) p.ws.terminate();
    await Promise.all([a?.close(), b?.close()]);
    await probe?.close();
    await redis?.close();
    removeSite(dir);
  });

  async function markersFromBoth(a1: Peer, b1: Peer, all: Peer[], tag: string): Promise<void> {
    a1.ws.send(`end-a-${tag}`);
    b1.ws.send(`end-b-${tag}`);
    await waitUntil(`markers ${tag} everywhere`, () =>
      all.every((p) => count(p, `end-a-${tag}`) === 1 && count(p, `end-b-${tag}`) === 1),
    );
  }

  it('a broadcast from a client on A reaches every client on A and B exactly once, the sender included', async () => {
    const [a1, a2, b1, b2] = await Promise.all([
      openPeer(a, '/chat'),
      openPeer(a, '/chat'),
      openPeer(b, '/chat'),
      openPeer(b, '/chat'),
    ]);
    peers.push(a1, a2, b1, b2);
    a1.ws.send('hello from A');
    await waitUntil('everyone has it', () => [a1, a2, b1, b2].every((p) => count(p, 'hello from A') >= 1));
    b2.ws.send('hello from B');
    await waitUntil('everyone has B', () => [a1, a2, b1, b2].every((p) => count(p, 'hello from B') >= 1));
    await markersFromBoth(a1, b1, [a1, a2, b1, b2], '1');
    for (const p of [a1, a2, b1, b2]) {
      assert.equal(count(p, 'hello from A'), 1);
      assert.equal(count(p, 'hello from B'), 1);
    }
    // Each instance's clients see its own messages in the order sent.
    assert.ok(a1.got.indexOf('hello from A') < a1.got.indexOf('end-a-1'));
    for (const p of [a1, a2, b1, b2]) p.ws.close();
  });

  it('binary messages cross instances as binary, byte for byte', async () => {
    const [a1, b1] = await Promise.all([openPeer(a, '/chat'), openPeer(b, '/chat')]);
    peers.push(a1, b1);
    const bytes = Buffer.from([0, 10, 255, 0x7b, 0x0a, 0x7d]);
    a1.ws.send(bytes, { binary: true });
    await markersFromBoth(a1, b1, [a1, b1], '2');
    for (const p of [a1, b1]) assert.equal(count(p, `bin:${bytes.toString('hex')}`), 1);
    a1.ws.close();
    b1.ws.close();
  });

  it('a room message reaches the members on A and B once, and no one outside the room', async () => {
    const [a1, a2, b1, b2] = await Promise.all([
      openPeer(a, '/chat'),
      openPeer(a, '/chat'),
      openPeer(b, '/chat'),
      openPeer(b, '/chat'),
    ]);
    peers.push(a1, a2, b1, b2);
    for (const p of [a1, b1]) p.ws.send(JSON.stringify({ type: 'join', room: 'r:1' }));
    await waitUntil('joined', () => [a1, b1].every((p) => p.got.includes('{"type":"joined","room":"r:1"}')));
    await waitUntil('room subscribed on both', async () => (await numsub('gatehouse:ws:/chat#r:1')) === 2);
    const msg = JSON.stringify({ type: 'message', room: 'r:1', content: 'in the room' });
    a2.ws.send(msg);
    await markersFromBoth(a1, b1, [a1, a2, b1, b2], '3');
    assert.equal(count(a1, msg), 1);
    assert.equal(count(b1, msg), 1);
    assert.equal(count(a2, msg), 0);
    assert.equal(count(b2, msg), 0);
    // The last local member leaving unsubscribes that instance from the room's channel.
    b1.ws.send(JSON.stringify({ type: 'leave', room: 'r:1' }));
    await waitUntil('B left the room channel', async () => (await numsub('gatehouse:ws:/chat#r:1')) === 1);
    for (const p of [a1, a2, b1, b2]) p.ws.close();
  });

  it('Redis stopped: local delivery goes on; cross-instance delivery returns with Redis', async () => {
    const [a1, a2, b1] = await Promise.all([
      openPeer(a, '/chat'),
      openPeer(a, '/chat'),
      openPeer(b, '/chat'),
    ]);
    peers.push(a1, a2, b1);
    await redis.stop();
    await waitUntil('probe sees it down', () => !probe.isUp());
    a1.ws.send('during the outage');
    await waitUntil('local clients have it', () =>
      [a1, a2].every((p) => count(p, 'during the outage') === 1),
    );
    await redis.start();
    await waitUntil('resubscribed', async () => probe.isUp() && (await numsub('gatehouse:ws:/chat')) === 2);
    // Publishes are dropped (not queued) while the instance's connection is down; poll with fresh
    // messages until one crosses, then check it crossed once.
    let n = 0;
    await waitUntil('crosses again', () => {
      a1.ws.send(`after ${++n}`);
      return b1.got.some((g) => g.startsWith('after '));
    });
    await markersFromBoth(a1, b1, [a1, a2, b1], '4');
    const crossed = b1.got.filter((g) => g.startsWith('after '));
    assert.equal(new Set(crossed).size, crossed.length, `no duplicates: ${crossed.join(', ')}`);
    for (const p of [a1, a2, b1]) p.ws.close();
  });
});

describe('websocket fanout redis: shutdown while Redis is down', () => {
  it('close() completes with Redis stopped and a room subscribed', async () => {
    const redis = await startRedis();
    const dir = makeSite({ 'index.html': 'x' });
    try {
      const s = await startServer(dir, {
        redis: { url: redis.url },
        websocket: [{ path: '/chat', mode: 'broadcast', fanout: 'redis' }],
      });
      const p = await openPeer(s, '/chat');
      p.ws.send(JSON.stringify({ type: 'join', room: 'r' }));
      await waitUntil('joined', () => p.got.length > 0);
      await redis.stop();
      let closed = false;
      const closing = s.close().then(() => {
        closed = true;
      });
      await waitUntil('server closed', () => closed);
      await closing;
    } finally {
      await redis.close();
      removeSite(dir);
    }
  });
});

describe('websocket fanout redis: wire format and config', () => {
  it('decode(encode) round-trips the head and the bytes (a newline in the message included)', () => {
    const data = Buffer.from('a\nb{"i":"x"}\n');
    const m = decodeFanout(encodeFanout({ i: 'id-1', p: '/chat', r: 'r\n1', b: false }, data));
    assert.deepEqual(m?.head, { i: 'id-1', p: '/chat', r: 'r\n1', b: false });
    assert.ok(m?.data.equals(data));
  });

  const foreign: [string, Buffer][] = [
    ['no newline', Buffer.from('{"i":"x","p":"/chat","b":false}')],
    ['head not JSON', Buffer.from('hello\nworld')],
    ['head without an instance id', Buffer.from('{"p":"/chat","b":false}\nx')],
    ['binary flag not a boolean', Buffer.from('{"i":"x","p":"/chat","b":1}\nx')],
    ['room name too long', Buffer.from(`{"i":"x","p":"/chat","r":"${'r'.repeat(129)}","b":false}\nx`)],
  ];
  for (const [name, payload] of foreign) {
    it(`${name} -> not delivered`, () => assert.equal(decodeFanout(payload), undefined));
  }

  it('fanout redis without the top-level redis -> ConfigError naming the key', () => {
    assert.throws(
      () => parseConfig({ websocket: [{ path: '/chat', mode: 'broadcast', fanout: 'redis' }] }),
      (e: Error) =>
        e instanceof ConfigError &&
        /websocket\[0\]\.fanout: "redis" needs the top-level redis\.url/.test(e.message),
    );
  });

  it('fanout redis on an echo endpoint -> an issue naming the key', () => {
    assert.throws(
      () =>
        parseConfig({
          redis: { url: 'redis://127.0.0.1:1' },
          websocket: [{ path: '/e', mode: 'echo', fanout: 'redis' }],
        }),
      /websocket\[0\]\.fanout: "redis" applies to mode "broadcast" only/,
    );
  });

  it('default fanout is local', () => {
    assert.equal(
      parseConfig({ websocket: [{ path: '/chat', mode: 'broadcast' }] }).websocket[0]?.fanout,
      'local',
    );
  });
});
