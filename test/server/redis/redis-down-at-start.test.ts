// A Redis that cannot be reached when the server starts (a mistyped redis.url, a container not up
// yet), with a real redis-server started later on the port Gatehouse was pointed at: the failed first
// connect is logged once at start, naming the URL (password redacted) and the error; readiness is 503
// until Redis is reached, then a line says so and readiness is 200.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { afterEach, describe, it } from 'node:test';
import { parseConfig, toServerOptions } from '../../../src/config/load.js';
import type { GatehouseConfigInput } from '../../../src/config/schema.js';
import { createGatehouse, type Gatehouse } from '../../../src/server/app/gatehouse.js';
import { createLogger } from '../../../src/server/ops/log.js';
import { get, makeSite, removeSite } from '../../helpers/http.js';
import { freeLoopbackPort, startRedisOn, type TestRedis } from '../../helpers/redis.js';
import { waitUntil } from '../../helpers/wait.js';

/** A Gatehouse on 127.0.0.1:0 logging as `gatehouse serve` does by default (pretty lines). */
async function serve(config: GatehouseConfigInput) {
  const out = new PassThrough();
  let log = '';
  out.on('data', (d) => (log += d));
  const root = makeSite({ 'index.html': 'home' });
  const c = parseConfig({ ...config, root, listen: { host: '127.0.0.1', port: 0 } });
  const app = createGatehouse(toServerOptions(c), {
    logger: createLogger({ format: 'pretty', level: 'info' }, out),
  });
  const { url } = await app.listen();
  return { app, url, root, log: () => log, lines: (re: RegExp) => log.split('\n').filter((l) => re.test(l)) };
}

const AT_START = /WARN redis: unreachable at start/;

describe('redis down at start (real redis-server started later)', () => {
  let running: { app: Gatehouse; root: string } | undefined;
  let redis: TestRedis | undefined;
  afterEach(async () => {
    await running?.app.close();
    if (running) removeSite(running.root);
    running = undefined;
    await redis?.close();
    redis = undefined;
  });

  it('one line at start naming the URL and the error, /readyz 503; Redis started: a line, /readyz 200', async () => {
    const port = await freeLoopbackPort();
    const url = `redis://127.0.0.1:${port}`;
    const s = await serve({
      redis: { url },
      health: {},
      limits: { rateLimit: { requestsPerSec: 1000, burst: 1000, store: 'redis' } },
    });
    running = s;
    await waitUntil('the failed first connect is logged', () => AT_START.test(s.log()));
    const [line] = s.lines(AT_START);
    assert.ok(line?.includes(url), line);
    assert.match(line!, new RegExp(`ECONNREFUSED 127\\.0\\.0\\.1:${port}`));

    const notReady = await get(s.url, '/readyz');
    assert.equal(notReady.status, 503, notReady.text);
    assert.match(notReady.text, /Redis/);
    assert.equal((await get(s.url, '/healthz')).status, 200);
    // The site itself is served meanwhile (the rate limit fails open).
    assert.equal((await get(s.url, '/')).status, 200);

    redis = await startRedisOn(port);
    await waitUntil('Redis reached is logged', () => /INFO redis: reachable/.test(s.log()));
    assert.ok(s.lines(/INFO redis: reachable/)[0]?.includes(url), s.log());
    assert.equal((await get(s.url, '/readyz')).status, 200);
    // Each failed reconnect meanwhile was not another line.
    assert.equal(s.lines(/redis: unreachable/).length, 1, s.log());
  });

  it('the password in redis.url is not logged', async () => {
    const port = await freeLoopbackPort();
    const s = await serve({ redis: { url: `redis://user:s3cret-pw@127.0.0.1:${port}/0` } });
    running = s;
    await waitUntil('the failed first connect is logged', () => AT_START.test(s.log()));
    assert.match(s.log(), new RegExp(`redis://user:\\*\\*\\*@127\\.0\\.0\\.1:${port}/0`));
    assert.doesNotMatch(s.log(), /s3cret-pw/);
  });

  it('health.requireRedis: false keeps readiness 200 with Redis unreachable (still logged)', async () => {
    const port = await freeLoopbackPort();
    const s = await serve({ redis: { url: `redis://127.0.0.1:${port}` }, health: { requireRedis: false } });
    running = s;
    await waitUntil('the failed first connect is logged', () => AT_START.test(s.log()));
    assert.equal((await get(s.url, '/readyz')).status, 200);
  });
});
