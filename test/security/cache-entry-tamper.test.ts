// Attack: cache entries tampered with where they are stored (issue 25 §3). Whoever can write to the
// Redis a cache shares, or to a disk store's folder, could make Gatehouse serve a 101 (the client then
// hangs), a status that throws (99999: RangeError), a field with CR LF (the connection was reset and
// logged as 499, the client blamed), or a body far over maxEntryBytes. Every entry read back is now
// checked (src/cache/entry-check.ts): an invalid one is a miss (the upstream is asked), with a warning
// naming the key, counted in gatehouse_cache_invalid_entries_total.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { GatehouseConfigInput } from '../../src/config/schema.js';
import type { Gatehouse } from '../../src/server/app/gatehouse.js';
import { connectRedis, type RedisConnection } from '../../src/server/redis/connection.js';
import { get, makeSite, type Res, removeSite } from '../helpers/http.js';
import { type MemoryLogger, memoryLogger, startLoggedApp } from '../helpers/log.js';
import { type Handler, type Origin, origin, text } from '../helpers/origin.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { WAIT_DEADLINE_MS, waitUntil, waitUntilStored } from '../helpers/wait.js';

const MAX_ENTRY_BYTES = 10_000;
const OVERSIZED = 'y'.repeat(4 * MAX_ENTRY_BYTES);

interface Meta {
  response: { status: number; headers: Record<string, string> };
}

/** The tampering, each on its own path: what it does to the stored meta, or to the body. */
const TAMPERS: { name: string; path: string; meta?: (m: Meta) => void; body?: string }[] = [
  { name: 'status 101', path: '/t/s101', meta: (m) => void (m.response.status = 101) },
  { name: 'status 99999', path: '/t/s99999', meta: (m) => void (m.response.status = 99999) },
  {
    name: 'CR LF in a field value',
    path: '/t/crlf',
    meta: (m) => void (m.response.headers['x-note'] = 'a\r\nset-cookie: stolen=1'),
  },
  { name: 'field name not a token', path: '/t/name', meta: (m) => void (m.response.headers['x y'] = '1') },
  { name: 'body over maxEntryBytes', path: '/t/big', body: OVERSIZED },
];

/** A GET that fails instead of hanging (a served 101 leaves the client waiting). */
function getWithin(base: string, path: string): Promise<Res> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`GET ${path}: no answer`)), WAIT_DEADLINE_MS / 3);
  });
  return Promise.race([get(base, path), late]).finally(() => clearTimeout(timer));
}

/** The value of one metric sample, 0 when absent. */
function sample(body: string, name: string, labels: string): number {
  const line = body.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

function upstream(): Promise<Origin> {
  const routes: Record<string, Handler> = {};
  for (const t of TAMPERS)
    routes[t.path] = (_q, s, n) => text(s, 200, { 'cache-control': 'max-age=3600' }, `fetch ${n}`);
  return origin(routes);
}

/** After tampering: a miss that reached the upstream, a warning naming the key. */
async function assertMiss(url: string, up: Origin, logger: MemoryLogger, t: (typeof TAMPERS)[number]) {
  const r = await getWithin(url, t.path);
  assert.equal(r.status, 200, `${t.name}: ${r.status}`);
  assert.equal(r.text, 'fetch 2', `${t.name}: the upstream was asked again`);
  assert.equal(up.count(t.path), 2, t.name);
  const warned = logger.lines.find(
    (l) => l.level === 'warn' && typeof l.obj.key === 'string' && l.obj.key.endsWith(t.path),
  );
  assert.ok(warned, `${t.name}: a warning names the key\n${logger.text('warn')}`);
}

describe('attack: cache entries tampered with in Redis', () => {
  let redis: TestRedis;
  let probe: RedisConnection;
  let up: Origin;
  let site: string;
  let gh: { app: Gatehouse; url: string };
  const logger = memoryLogger();
  before(async () => {
    redis = await startRedis();
    up = await upstream();
    site = makeSite({});
    gh = await startLoggedApp(
      {
        root: site,
        redis: { url: redis.url },
        metrics: {},
        proxy: [
          {
            prefix: '/t',
            upstream: up.url,
            stripPrefix: false,
            // No memory tier: each request reads the entry from Redis as another instance would.
            cache: { enabled: true, store: 'redis', maxEntryBytes: MAX_ENTRY_BYTES, memoryCacheBytes: 0 },
          },
        ],
      },
      logger,
    );
    probe = connectRedis({ url: redis.url, keyPrefix: '', logger: memoryLogger() });
    await waitUntil('connected', () => probe.isUp());
  });
  after(async () => {
    await gh.app.close();
    await probe.close();
    await up.close();
    await redis.close();
    removeSite(site);
  });

  /** The Redis hash of the entry stored for `path`. */
  async function entryOf(path: string): Promise<string> {
    return waitUntil(`the entry of ${path} is in Redis`, async () => {
      for (const k of await probe.client.keys('*:e:*')) {
        if ((await probe.client.hget(k, 'k'))?.endsWith(path)) return k;
      }
      return undefined;
    });
  }

  for (const t of TAMPERS) {
    it(`attack: ${t.name} written into a stored entry -> a miss (upstream asked), a warning naming the key, counted`, async () => {
      assert.equal((await getWithin(gh.url, t.path)).text, 'fetch 1');
      const entry = await entryOf(t.path);
      if (t.meta !== undefined) {
        const meta = JSON.parse((await probe.client.hget(entry, 'm'))!) as Meta;
        t.meta(meta);
        await probe.client.hset(entry, 'm', JSON.stringify(meta));
      }
      if (t.body !== undefined) await probe.client.hset(entry, 'b', t.body);
      const before = sample(
        (await get(gh.url, '/metrics')).text,
        'gatehouse_cache_invalid_entries_total',
        '{route="/t",store="redis"}',
      );
      await assertMiss(gh.url, up, logger, t);
      const after = sample(
        (await get(gh.url, '/metrics')).text,
        'gatehouse_cache_invalid_entries_total',
        '{route="/t",store="redis"}',
      );
      assert.equal(after, before + 1, `${t.name}: counted once`);
    });
  }
});

describe('attack: cache entries tampered with in a disk store folder', () => {
  let up: Origin;
  let site: string;
  let dir: string;
  const logger = memoryLogger();
  const config = (): GatehouseConfigInput => ({
    root: site,
    metrics: {},
    proxy: [
      {
        prefix: '/t',
        upstream: up.url,
        stripPrefix: false,
        cache: { enabled: true, store: 'disk', dir, maxEntryBytes: MAX_ENTRY_BYTES },
      },
    ],
  });
  before(async () => {
    up = await upstream();
    site = makeSite({});
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-tamper-'));
  });
  after(async () => {
    await up.close();
    removeSite(site);
    rmSync(dir, { recursive: true, force: true });
  });

  it('attack: status 101 / 99999, CR LF, a bad field name, an oversized body in the files -> misses, warnings naming the keys, counted', async () => {
    const first = await startLoggedApp(config(), memoryLogger());
    try {
      for (const t of TAMPERS) {
        assert.equal((await getWithin(first.url, t.path)).text, 'fetch 1');
        await waitUntilStored(first.url, t.path);
      }
    } finally {
      await first.app.close(); // the entries are on disk
    }
    const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
    for (const t of TAMPERS) {
      const file = files.find((f) =>
        (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { key: string }).key.endsWith(t.path),
      );
      assert.ok(file, `${t.name}: stored`);
      const doc = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { meta: Meta; bodyBytes: number };
      t.meta?.(doc.meta);
      if (t.body !== undefined) {
        writeFileSync(join(dir, file.replace(/\.json$/, '.body')), t.body);
        doc.bodyBytes = t.body.length;
      }
      writeFileSync(join(dir, file), JSON.stringify(doc));
    }
    const second = await startLoggedApp(config(), logger);
    try {
      for (const t of TAMPERS) await assertMiss(second.url, up, logger, t);
      const metrics = (await get(second.url, '/metrics')).text;
      const counted = sample(metrics, 'gatehouse_cache_invalid_entries_total', '{route="/t",store="disk"}');
      assert.equal(counted, TAMPERS.length, metrics);
    } finally {
      await second.app.close();
    }
  });
});
