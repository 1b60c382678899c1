// Attack (issue 25 §3): one client floods a `fanout: "redis"` endpoint. Every message is published
// to every instance; one client's 75,000 messages in 8 s slowed plain HTTP on the other instance to
// about 0.5 s. Such an endpoint now has a message rate limit by default: the flooder is closed with
// 1008 and the other instance gets the burst, and at most the burst plus the sustained rate.
// The oracle is the documented default, written out here, never the constant under test.
//
// Counting without sleeping: after the flood a well-behaved client on the same instance sends a
// marker; Redis delivers one publisher's messages in order, so once the marker is on B every flood
// message that was published has arrived there too.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { makeSite, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { waitUntil } from '../helpers/wait.js';
import { openPeer } from '../helpers/ws-peer.js';

const FLOOD = 5_000;
/** The default of docs/websocket.md, docs/scale-out.md and the schema's description. */
const DOCUMENTED = { messagesPerSec: 100, burst: 200 };

describe('attack: a message flood on a websocket endpoint with fanout "redis" (no rateLimit configured)', () => {
  let redis: TestRedis;
  let dir: string;
  let a: TestServer;
  let b: TestServer;
  before(async () => {
    redis = await startRedis();
    dir = makeSite({});
    // No rateLimit key: the default applies.
    const config = {
      redis: { url: redis.url },
      websocket: [{ path: '/chat', mode: 'broadcast' as const, fanout: 'redis' as const }],
    };
    [a, b] = await Promise.all([startServer(dir, config), startServer(dir, config)]);
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await redis?.close();
    removeSite(dir);
  });

  it('attack: one client sends 5,000 messages at once -> closed with 1008, the other instance gets the burst (200) and at most 200 + 100/s x time', async () => {
    const listener = await openPeer(b, '/chat');
    const marker = await openPeer(a, '/chat');
    // Both instances' subscriptions hold: a message from A reaches B.
    await waitUntil(
      'fan-out from A reaches B',
      () => {
        marker.ws.send('ping');
        return listener.got.includes('ping');
        // Well under the limit: the marker must not be closed itself.
      },
      { intervalMs: 50 },
    );
    const flooder = await openPeer(a, '/chat');
    let closeCode = 0;
    flooder.ws.once('close', (code) => {
      closeCode = code;
    });
    const t0 = performance.now();
    for (let i = 0; i < FLOOD; i++) flooder.ws.send(`flood ${i}`);
    const code = await waitUntil('the flooder is closed', () => closeCode);
    const elapsedSec = (performance.now() - t0) / 1000;
    assert.equal(code, 1008, 'the flooder is closed for policy violation (RFC 6455 §7.4.1)');
    marker.ws.send('done');
    await waitUntil('the marker reached B', () => listener.got.includes('done'));
    const reached = listener.got.filter((m) => m.startsWith('flood ')).length;
    // The flood reached the server and went through Redis: the whole burst, and no more than the limit.
    assert.ok(reached >= DOCUMENTED.burst, `${reached} flood messages reached B, fewer than the burst`);
    const allowed = DOCUMENTED.burst + Math.ceil(DOCUMENTED.messagesPerSec * elapsedSec);
    assert.ok(reached <= allowed, `${reached} flood messages reached B (at most ${allowed}) of ${FLOOD}`);
    for (const p of [listener, marker]) p.ws.close();
  });
});

describe('websocket fanout "redis": the default message rate limit', () => {
  const endpoint = (extra: Record<string, unknown>) =>
    parseConfig({
      redis: { url: 'redis://127.0.0.1:1' },
      websocket: [{ path: '/chat', mode: 'broadcast', ...extra }],
    }).websocket[0]!;
  it('fanout "redis" without rateLimit -> 100 messages/s, burst 200 (as documented)', () =>
    assert.deepEqual(endpoint({ fanout: 'redis' }).rateLimit, DOCUMENTED));
  it('fanout "redis" with rateLimit false -> off', () =>
    assert.equal(endpoint({ fanout: 'redis', rateLimit: false }).rateLimit, undefined));
  it('fanout "redis" with its own rateLimit -> that one', () =>
    assert.deepEqual(endpoint({ fanout: 'redis', rateLimit: { messagesPerSec: 5, burst: 1 } }).rateLimit, {
      messagesPerSec: 5,
      burst: 1,
    }));
  it('local fan-out -> off unless configured', () => assert.equal(endpoint({}).rateLimit, undefined));
});
