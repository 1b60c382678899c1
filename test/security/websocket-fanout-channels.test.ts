// Attack: a WebSocket client picking a room name so that its room's Redis channel is another
// endpoint's channel (endpoints /chat and /chat:admin; room "admin" on /chat). It must neither read
// /chat:admin's broadcasts nor, by joining and leaving, unsubscribe the instance from /chat:admin's
// channel (which would cut that endpoint off from the other instances). Two real instances on one
// real redis-server, real ws clients.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectRedis, type RedisConnection } from '../../src/server/redis/connection.js';
import { makeSite, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { waitUntil } from '../helpers/wait.js';
import { openPeer, type Peer } from '../helpers/ws-peer.js';

const quietLogger = { info() {}, warn() {}, error() {}, isLevelEnabled: () => false };

describe('attack: websocket fan-out channel names', () => {
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
    dir = makeSite({ 'index.html': 'x' });
    const config = {
      redis: { url: redis.url },
      websocket: [
        { path: '/chat', mode: 'broadcast' as const, fanout: 'redis' as const },
        { path: '/chat:admin', mode: 'broadcast' as const, fanout: 'redis' as const },
      ],
    };
    [a, b] = await Promise.all([startServer(dir, config), startServer(dir, config)]);
    probe = connectRedis({ url: redis.url, keyPrefix: 'gatehouse:', logger: quietLogger });
    await waitUntil('probe connected', () => probe.isUp());
    await waitUntil('subscribed', async () => (await numsub('gatehouse:ws:/chat:admin')) === 2);
  });
  after(async () => {
    for (const p of peers) p.ws.terminate();
    await Promise.all([a?.close(), b?.close()]);
    await probe?.close();
    await redis?.close();
    removeSite(dir);
  });

  it('attack: room "admin" on /chat joined and left -> /chat:admin stays subscribed and its broadcasts never reach /chat', async () => {
    const [intruder, adminA, adminB] = await Promise.all([
      openPeer(a, '/chat'),
      openPeer(a, '/chat:admin'),
      openPeer(b, '/chat:admin'),
    ]);
    peers.push(intruder, adminA, adminB);
    intruder.ws.send(JSON.stringify({ type: 'join', room: 'admin' }));
    await waitUntil('joined', () => intruder.got.includes('{"type":"joined","room":"admin"}'));
    adminB.ws.send('secret 1');
    await waitUntil('admin on A has it', () => adminA.got.includes('secret 1'));
    intruder.ws.send(JSON.stringify({ type: 'leave', room: 'admin' }));
    await waitUntil('left', () => intruder.got.includes('{"type":"left","room":"admin"}'));
    // The instance is still subscribed to /chat:admin's channel: the next broadcast still crosses.
    assert.equal(await numsub('gatehouse:ws:/chat:admin'), 2);
    adminB.ws.send('secret 2');
    await waitUntil('admin on A still gets B broadcasts', () => adminA.got.includes('secret 2'));
    // A marker on /chat from B, after the secrets: once it is here, nothing else is on its way.
    const other = await openPeer(b, '/chat');
    peers.push(other);
    other.ws.send('marker');
    await waitUntil('marker', () => intruder.got.includes('marker'));
    assert.deepEqual(
      intruder.got.filter((g) => g.startsWith('secret')),
      [],
    );
  });
});
