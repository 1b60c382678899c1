// Attacks on the shared session ticket secret (tls/session-tickets.ts) through the Redis it lives in,
// against a real redis-server and a real TLS listener: whoever can write to that Redis can plant any
// value there, and every instance reads it at start and at each rotation.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectRedis, type RedisConnection } from '../../src/server/redis/connection.js';
import { makeSite, removeSite } from '../helpers/http.js';
import { memoryLogger, startLoggedApp } from '../helpers/log.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { testTls, tlsExchange } from '../helpers/tls.js';
import { waitUntil } from '../helpers/wait.js';

const PREFIX = 'gh-tickets:';
const PLANTED_BYTES = 8 * 1024 * 1024;

/** Bytes redis-server has sent to all its clients so far (INFO stats). */
async function redisBytesSent(conn: RedisConnection): Promise<number> {
  const info = await conn.client.info('stats');
  return Number(/total_net_output_bytes:(\d+)/.exec(info)?.[1]);
}

describe('session ticket secret attacks', () => {
  let redis: TestRedis;
  let conn: RedisConnection;
  let site: string;
  before(async () => {
    redis = await startRedis();
    conn = connectRedis({ url: redis.url, keyPrefix: PREFIX, logger: memoryLogger() });
    await waitUntil('connected', () => conn.isUp());
    site = makeSite({ 'index.html': 'hi' });
  });
  after(async () => {
    await conn.close();
    await redis.close();
    removeSite(site);
  });

  it('attack: an 8 MiB ticket secret planted in Redis is read only up to 1025 bytes, refused, and the server serves with its own key', async () => {
    await conn.client.set(`${PREFIX}tls:ticket-secret`, Buffer.alloc(PLANTED_BYTES, 0x41));
    const files = await testTls();
    const logger = memoryLogger();
    const sentBefore = await redisBytesSent(conn);
    const { app } = await startLoggedApp(
      {
        root: site,
        redis: { url: redis.url, keyPrefix: PREFIX },
        tls: { cert: files.cert, key: files.key, sessionTickets: { store: 'redis' } },
      },
      logger,
    );
    try {
      const sentForStart = (await redisBytesSent(conn)) - sentBefore;
      // The planted value did not travel: GETRANGE 0..1024, not GET (the INFO replies are ~2 KB each).
      assert.ok(sentForStart < 64 * 1024, `redis sent ${sentForStart} bytes while the server started`);
      const warn = logger.lines.find((l) => l.level === 'warn' && /ticket secret refused/.test(l.msg));
      assert.match(String(warn?.obj.reason), /gh-tickets:tls:ticket-secret: over 1024 bytes/);
      // The handshakes reached the server and it serves, resuming with its own key.
      let handshakes = 0;
      app.server.on('secureConnection', () => handshakes++);
      const port = (app.server.address() as { port: number }).port;
      const first = await tlsExchange(port, files.caPem);
      const again = await tlsExchange(port, files.caPem, { session: first.session });
      assert.deepEqual([first.status, again.status, again.reused], [200, 200, true]);
      assert.equal(handshakes, 2);
    } finally {
      await app.close();
    }
  });
});
