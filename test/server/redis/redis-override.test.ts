// A feature's own `redis: { url, keyPrefix? }` in place of the top-level one (issue 17): the config
// loads without a top-level redis, and the feature's keys land on its own server, not the shared one.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError, parseConfig } from '../../../src/config/load.js';
import { connectRedis, type RedisConnection } from '../../../src/server/redis/connection.js';
import { get, makeSite, removeSite, startServer, type TestServer } from '../../helpers/http.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { waitUntil } from '../../helpers/wait.js';

const quiet = { info() {}, warn() {}, error() {}, isLevelEnabled: () => false };

describe('per-feature redis override: config', () => {
  const own = { url: 'redis://127.0.0.1:6390' };
  const cases: [string, object][] = [
    [
      'proxy[].cache.redis',
      {
        proxy: [
          {
            prefix: '/api',
            upstream: 'http://127.0.0.1:1',
            cache: { enabled: true, store: 'redis', redis: own },
          },
        ],
      },
    ],
    [
      'limits.rateLimit.redis',
      { limits: { rateLimit: { requestsPerSec: 1, burst: 1, store: 'redis', redis: own } } },
    ],
    ['websocket[].redis', { websocket: [{ path: '/ws', mode: 'broadcast', fanout: 'redis', redis: own }] }],
  ];
  for (const [key, input] of cases) {
    it(`${key} without a top-level redis -> loads`, () => {
      assert.doesNotThrow(() => parseConfig(input));
    });
  }
  it('neither the override nor the top-level redis -> ConfigError naming the key', () => {
    assert.throws(
      () => parseConfig({ limits: { rateLimit: { requestsPerSec: 1, burst: 1, store: 'redis' } } }),
      (e: Error) => e instanceof ConfigError && /limits\.rateLimit\.store/.test(e.message),
    );
  });
  it('an override with a bad url -> ConfigError', () => {
    assert.throws(() =>
      parseConfig({
        limits: { rateLimit: { requestsPerSec: 1, burst: 1, store: 'redis', redis: { url: 'http://x' } } },
      }),
    );
  });
});

describe('per-feature redis override: the rate limit on its own Redis', () => {
  let shared: TestRedis;
  let own: TestRedis;
  let dir: string;
  let s: TestServer;
  let sharedConn: RedisConnection;
  let ownConn: RedisConnection;
  before(async () => {
    [shared, own] = await Promise.all([startRedis(), startRedis()]);
    dir = makeSite({ 'index.html': 'x' });
    s = await startServer(dir, {
      redis: { url: shared.url, keyPrefix: 'shared:' },
      limits: {
        rateLimit: {
          requestsPerSec: 1,
          burst: 5,
          store: 'redis',
          redis: { url: own.url, keyPrefix: 'own:' },
        },
      },
    });
    sharedConn = connectRedis({ url: shared.url, keyPrefix: '', logger: quiet });
    ownConn = connectRedis({ url: own.url, keyPrefix: '', logger: quiet });
    await waitUntil('connected', () => sharedConn.isUp() && ownConn.isUp());
  });
  after(async () => {
    await s?.close();
    await Promise.all([sharedConn?.close(), ownConn?.close()]);
    await Promise.all([shared?.close(), own?.close()]);
    if (dir) removeSite(dir);
  });

  it("the bucket is written to the override's server under its prefix; the shared one stays empty", async () => {
    const r = await get(s.url, '/');
    assert.equal(r.status, 200);
    const keys = await waitUntil('bucket written', async () => {
      const k = await ownConn.client.keys('own:rl:*');
      return k.length > 0 ? k : undefined;
    });
    assert.ok(keys.length >= 1);
    assert.deepEqual(await sharedConn.client.keys('*'), []);
  });
});
