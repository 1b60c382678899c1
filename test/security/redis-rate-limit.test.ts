// Attack: getting around the shared (Redis) rate limit or abusing its keys. An untrusted peer that
// rotates X-Forwarded-For must stay one client (one bucket, one key); a forwarded address crafted
// to look like another key, a glob or a command must not reach any key but its own bucket's (the
// key is a script KEYS argument, never text in a command). Real Gatehouse, real redis-server.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectRedis, type RedisConnection } from '../../src/server/redis/connection.js';
import { get, makeSite, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { waitUntil } from '../helpers/wait.js';

const SLOW = { requestsPerSec: 0.1, burst: 3, store: 'redis' as const };
const quietLogger = { info() {}, warn() {}, error() {}, isLevelEnabled: () => false };

describe('attack: redis rate limit keys', () => {
  let redis: TestRedis;
  let dir: string;
  let untrusting: TestServer;
  let trusting: TestServer;
  let probe: RedisConnection;
  before(async () => {
    redis = await startRedis();
    dir = makeSite({ 'index.html': '<!doctype html><title>x</title>' });
    [untrusting, trusting] = await Promise.all([
      // Loopback peers are not trusted proxies here: their X-Forwarded-For is the client's own word.
      startServer(dir, {
        redis: { url: redis.url, keyPrefix: 'a:' },
        trustProxy: ['10.0.0.0/8'],
        limits: { rateLimit: SLOW },
      }),
      // Loopback is a trusted proxy here: what it forwards becomes the client address.
      startServer(dir, {
        redis: { url: redis.url, keyPrefix: 'b:' },
        trustProxy: ['loopback'],
        limits: { rateLimit: SLOW },
      }),
    ]);
    probe = connectRedis({ url: redis.url, keyPrefix: '', logger: quietLogger });
    await waitUntil('probe connected', () => probe.isUp());
    for (const s of [untrusting, trusting])
      await waitUntil(
        'instance counting',
        async () => (await get(s.url, '/', { localAddress: '127.0.0.90' })).headers.ratelimit,
      );
    await probe.client.flushall();
  });
  after(async () => {
    await Promise.all([untrusting?.close(), trusting?.close()]);
    await probe?.close();
    await redis?.close();
    removeSite(dir);
  });

  it('attack: rotating X-Forwarded-For from an untrusted peer -> one bucket, then 429', async () => {
    const got: number[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await get(untrusting.url, '/', {
        localAddress: '127.0.0.31',
        headers: { 'x-forwarded-for': `203.0.113.${i}, 198.51.100.${i}` },
      });
      got.push(r.status);
    }
    assert.deepEqual(got, [200, 200, 200, 429, 429, 429]);
    assert.deepEqual(await probe.client.keys('a:rl:*'), ['a:rl:127.0.0.31']);
  });

  it('attack: key injection through a forwarded address -> only the bucket key is written, other keys untouched', async () => {
    await probe.client.set('b:canary', 'keep');
    await probe.client.set('b:rl:192.0.2.7', 'not a bucket');
    await probe.client.set('other', 'keep');
    const hostile = [
      'b:canary',
      '*',
      'b:rl:*',
      '192.0.2.7 x',
      '../canary',
      '{b}:canary',
      'FLUSHALL',
      '"192.0.2.7"',
      '192.0.2.7\\r\\nFLUSHALL',
      "'); redis.call('DEL','other') --",
      '[::1]:80:canary',
    ];
    for (const xff of hostile) {
      const r = await get(trusting.url, '/', {
        localAddress: '127.0.0.32',
        headers: { 'x-forwarded-for': xff },
      });
      // Counted (or refused) like any client; never an error of the limiter.
      assert.ok(r.status === 200 || r.status === 429, `${xff}: ${r.status}`);
    }
    assert.equal(await probe.client.get('b:canary'), 'keep');
    assert.equal(await probe.client.get('b:rl:192.0.2.7'), 'not a bucket');
    assert.equal(await probe.client.get('other'), 'keep');
    // Every bucket the hostile values made is a hash under the prefix, named by a parsed address or
    // `unknown`: the raw header text never became a key.
    const made = (await probe.client.keys('b:rl:*')).filter((k) => k !== 'b:rl:192.0.2.7');
    assert.ok(made.length >= 1);
    for (const k of made) {
      assert.match(k, /^b:rl:(unknown|[0-9a-f.:]+(\/\d+)?)$/, k);
      assert.equal(await probe.client.type(k), 'hash');
    }
  });

  it('attack: many spoofed IPv6 addresses in one /64 from a trusted proxy -> one bucket', async () => {
    const got: number[] = [];
    for (let i = 1; i <= 5; i++) {
      const r = await get(trusting.url, '/', {
        localAddress: '127.0.0.33',
        headers: { 'x-forwarded-for': `2001:db8:1:2::${i.toString(16)}` },
      });
      got.push(r.status);
    }
    assert.deepEqual(got, [200, 200, 200, 429, 429]);
    assert.deepEqual(await probe.client.keys('b:rl:2001:db8:*'), ['b:rl:2001:db8:1:2::/64']);
  });
});
