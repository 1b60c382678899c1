// TLS session resumption across instances (RFC 8446 §4.6.1, RFC 5077; tls/session-tickets.ts): two
// real servers on real sockets that share a key file or a Redis resume each other's tickets, over
// TLS 1.2 and 1.3 and on the HTTP/2 and HTTP/1.1 listeners; servers that share nothing do not. Keys
// change per window, a certificate reload keeps the key, bad key files stop the start.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createServer as createTlsServer } from 'node:tls';
import { ConfigError, parseConfig, toServerOptions } from '../../../src/config/load.js';
import type { GatehouseConfigInput } from '../../../src/config/schema.js';
import { createGatehouse, type Gatehouse } from '../../../src/server/app/gatehouse.js';
import { createRedisPool } from '../../../src/server/redis/pool.js';
import {
  createTicketKeys,
  SESSION_ID_CONTEXT,
  ticketKeyFor,
  ticketWindow,
} from '../../../src/server/tls/session-tickets.js';
import { testPki } from '../../helpers/certs.js';
import { makeSite, removeSite } from '../../helpers/http.js';
import { memoryLogger } from '../../helpers/log.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { type TestTlsFiles, testTls, tlsExchange } from '../../helpers/tls.js';
import { waitUntil } from '../../helpers/wait.js';

let site: string;
let files: TestTlsFiles;
let keyDir: string;
let redis: TestRedis;
const apps: Gatehouse[] = [];

/** A key file of `bytes` random bytes with `mode`. */
function keyFile(name: string, bytes = 80, mode = 0o600): string {
  const p = join(keyDir, name);
  writeFileSync(p, Buffer.from(Array.from({ length: bytes }, () => Math.floor(Math.random() * 256))));
  chmodSync(p, mode);
  return p;
}

type Tickets = NonNullable<NonNullable<GatehouseConfigInput['tls']>['sessionTickets']>;

async function serve(
  tickets: Tickets,
  o: { http2?: boolean; redisUrl?: string; logger?: ReturnType<typeof memoryLogger> } = {},
): Promise<{ app: Gatehouse; port: number }> {
  const c = parseConfig({
    log: { format: 'off' },
    root: site,
    listen: { host: '127.0.0.1', port: 0 },
    ...(o.redisUrl ? { redis: { url: o.redisUrl } } : {}),
    tls: { cert: files.cert, key: files.key, http2: o.http2 ?? true, sessionTickets: tickets },
  });
  const app = createGatehouse(toServerOptions(c), o.logger ? { logger: o.logger } : {});
  apps.push(app);
  const { port } = await app.listen();
  return { app, port };
}

before(async () => {
  site = makeSite({ 'index.html': '<p>hi</p>' });
  files = await testTls();
  keyDir = mkdtempSync(join(tmpdir(), 'gatehouse-tickets-'));
  redis = await startRedis();
});

after(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await redis.close();
  removeSite(site);
  rmSync(keyDir, { recursive: true, force: true });
});

const versions = ['TLSv1.3', 'TLSv1.2'] as const;
const listeners = [
  { name: 'HTTP/2 listener, h2', http2: true, alpn: 'h2' },
  { name: 'HTTP/2 listener, http/1.1', http2: true, alpn: 'http/1.1' },
  { name: 'HTTP/1.1 listener', http2: false, alpn: 'http/1.1' },
] as const;

describe('session tickets from a shared key file', () => {
  for (const maxVersion of versions)
    for (const l of listeners)
      it(`${maxVersion}, ${l.name}: a session from server A resumes on server B, and back`, async () => {
        const shared = keyFile(`shared-${maxVersion}-${l.alpn.replace('/', '')}-${l.http2}`);
        const a = await serve({ keyFile: shared }, { http2: l.http2 });
        const b = await serve({ keyFile: shared }, { http2: l.http2 });
        const first = await tlsExchange(a.port, files.caPem, { maxVersion, alpn: l.alpn });
        assert.equal(first.protocol, maxVersion);
        assert.equal(first.alpn, l.alpn);
        assert.equal(first.status, 200);
        assert.equal(first.reused, false);
        assert.ok(first.session, 'A sent a ticket');
        const onB = await tlsExchange(b.port, files.caPem, {
          maxVersion,
          alpn: l.alpn,
          session: first.session,
        });
        assert.deepEqual([onB.reused, onB.status], [true, 200]);
        const backOnA = await tlsExchange(a.port, files.caPem, {
          maxVersion,
          alpn: l.alpn,
          session: onB.session,
        });
        assert.deepEqual([backOnA.reused, backOnA.status], [true, 200]);
      });

  it('servers that share nothing resume only their own tickets (the reference for the cases above)', async () => {
    const a = await serve({});
    const b = await serve({});
    for (const maxVersion of versions) {
      const first = await tlsExchange(a.port, files.caPem, { maxVersion });
      assert.equal(
        (await tlsExchange(a.port, files.caPem, { maxVersion, session: first.session })).reused,
        true,
      );
      const onB = await tlsExchange(b.port, files.caPem, { maxVersion, session: first.session });
      assert.deepEqual([onB.reused, onB.status], [false, 200], `${maxVersion}: a full handshake on B`);
    }
  });

  it('a certificate reload keeps the ticket key (setSecureContext would make a random one)', async () => {
    const shared = keyFile('reload');
    const a = await serve({ keyFile: shared });
    const b = await serve({ keyFile: shared });
    for (const maxVersion of versions) {
      const first = await tlsExchange(a.port, files.caPem, { maxVersion });
      assert.equal(await a.app.tls!.reload(), undefined);
      const again = await tlsExchange(a.port, files.caPem, { maxVersion, session: first.session });
      assert.equal(again.reused, true, `${maxVersion}: resumed on A after its reload`);
      const onB = await tlsExchange(b.port, files.caPem, { maxVersion, session: again.session });
      assert.equal(onB.reused, true, `${maxVersion}: A's post-reload ticket resumes on B`);
    }
  });

  it('enabled: false sends no sealed ticket (TLS 1.2: none; TLS 1.3: a 32-byte session cache id)', async () => {
    const shared = keyFile('disabled');
    const on = await serve({ keyFile: shared });
    const off = await serve({ keyFile: shared, enabled: false });
    const off2 = await serve({ keyFile: shared, enabled: false });
    const sealed = await tlsExchange(on.port, files.caPem, { maxVersion: 'TLSv1.2' });
    assert.ok(sealed.ticketBytes > 32, `a sealed ticket: ${sealed.ticketBytes} bytes`);
    const v12 = await tlsExchange(off.port, files.caPem, { maxVersion: 'TLSv1.2' });
    const v13 = await tlsExchange(off.port, files.caPem, { maxVersion: 'TLSv1.3' });
    assert.deepEqual([v12.ticketBytes, v13.ticketBytes], [0, 32]);
    for (const first of [v12, v13]) {
      const onOther = await tlsExchange(off2.port, files.caPem, {
        maxVersion: first.protocol as 'TLSv1.2',
        session: first.session,
      });
      assert.equal(onOther.reused, false, `${first.protocol}: not on another instance`);
    }
  });
});

describe('session tickets from Redis', () => {
  it('two servers on one Redis resume each other; the secret is 48 random bytes under the prefix', async () => {
    const a = await serve({ store: 'redis' }, { redisUrl: redis.url });
    const b = await serve({ store: 'redis' }, { redisUrl: redis.url });
    for (const maxVersion of versions)
      for (const alpn of ['h2', 'http/1.1'] as const) {
        const first = await tlsExchange(a.port, files.caPem, { maxVersion, alpn });
        const onB = await tlsExchange(b.port, files.caPem, { maxVersion, alpn, session: first.session });
        assert.deepEqual([onB.reused, onB.status], [true, 200], `${maxVersion} ${alpn}`);
      }
    const pool = createRedisPool({ url: redis.url, keyPrefix: 'gatehouse:' }, memoryLogger());
    try {
      await waitUntil('the test connection is ready', () => pool.get().isUp());
      const stored = await pool.get().client.getBuffer('gatehouse:tls:ticket-secret');
      assert.equal(stored?.length, 48);
    } finally {
      await pool.close();
    }
  });

  it('a secret of the wrong length in Redis is refused with a warning; the server serves with its own key', async () => {
    const prefix = 'short:';
    const pool = createRedisPool({ url: redis.url, keyPrefix: prefix }, memoryLogger());
    try {
      await waitUntil('the test connection is ready', () => pool.get().isUp());
      await pool.get().client.set(`${prefix}tls:ticket-secret`, 'tiny');
      const cfg = { store: 'redis', redis: { url: redis.url, keyPrefix: prefix } } as const;
      const logA = memoryLogger();
      const a = await serve(cfg, { logger: logA });
      const b = await serve(cfg);
      assert.match(logA.text('warn'), /session ticket secret refused/);
      const warn = logA.lines.find((l) => /session ticket secret refused/.test(l.msg));
      assert.match(String(warn?.obj.reason), /short:tls:ticket-secret: 4 bytes: at least 48 are needed/);
      for (const maxVersion of versions) {
        const first = await tlsExchange(a.port, files.caPem, { maxVersion });
        assert.equal(first.status, 200);
        assert.equal(
          (await tlsExchange(a.port, files.caPem, { maxVersion, session: first.session })).reused,
          true,
        );
        assert.equal(
          (await tlsExchange(b.port, files.caPem, { maxVersion, session: first.session })).reused,
          false,
        );
      }
    } finally {
      await pool.close();
    }
  });
});

describe('session tickets from Redis, Redis down', () => {
  it('Redis down at start: the server serves with its own key, then takes the shared one when Redis is back', async () => {
    const own = await startRedis();
    try {
      await own.stop();
      const logA = memoryLogger();
      const a = await serve({ store: 'redis' }, { redisUrl: own.url, logger: logA });
      assert.match(logA.text('warn'), /session ticket secret refused; this process uses its own key/);
      const first = await tlsExchange(a.port, files.caPem);
      assert.equal(first.status, 200);
      await own.start();
      await waitUntil('the shared secret is read', () => /secret readable again/.test(logA.text('info')));
      const b = await serve({ store: 'redis' }, { redisUrl: own.url });
      for (const maxVersion of versions) {
        const fromA = await tlsExchange(a.port, files.caPem, { maxVersion });
        const onB = await tlsExchange(b.port, files.caPem, { maxVersion, session: fromA.session });
        assert.equal(onB.reused, true, `${maxVersion}: A's ticket resumes on B once A has the shared secret`);
      }
    } finally {
      await own.close();
    }
  });
});

describe('node:cluster', () => {
  it("each worker keeps the key from its own secret (node:cluster hands over the first worker's key as they listen)", async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/ticket-cluster.ts'], {
      env: { ...process.env, SITE: site, TLS_CERT: files.cert, TLS_KEY: files.key },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    try {
      const m = await waitUntil('both workers listen', () => /^listening (\d+) (\d+)\n/m.exec(out));
      assert.equal(m[1], m[2], 'one port for both workers');
      const port = Number(m[1]);
      const slotOf = (raw: string) =>
        (JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as { slot: number }).slot;
      const first = await tlsExchange(port, files.caPem, { path: '/worker' });
      const issuer = slotOf(first.raw);
      const seen: { slot: number; reused: boolean }[] = [];
      await waitUntil('both workers answered a connection offering the ticket', async () => {
        const r = await tlsExchange(port, files.caPem, { path: '/worker', session: first.session });
        seen.push({ slot: slotOf(r.raw), reused: r.reused });
        return new Set(seen.map((x) => x.slot)).size === 2;
      });
      // Its issuer resumes it; the other worker, whose secret differs, makes a full handshake.
      for (const x of seen) assert.equal(x.reused, x.slot === issuer, JSON.stringify({ issuer, seen }));
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });
});

describe('key files and config', () => {
  const startError = async (tickets: Tickets) =>
    serve(tickets).then(
      () => 'started',
      (err: NodeJS.ErrnoException) => `${err.code} ${err.message}`,
    );

  it('a key file that is missing, too short, too long, world- or group-readable, or a folder stops the start', async () => {
    const missing = join(keyDir, 'nope');
    assert.equal(
      await startError({ keyFile: missing }),
      `GATEHOUSE_TLS tls: sessionTickets.keyFile ${missing}: cannot read (ENOENT)`,
    );
    const short = keyFile('short', 47);
    assert.equal(
      await startError({ keyFile: short }),
      `GATEHOUSE_TLS tls: sessionTickets.keyFile ${short}: 47 bytes: at least 48 are needed`,
    );
    const long = keyFile('long', 1025);
    assert.equal(
      await startError({ keyFile: long }),
      `GATEHOUSE_TLS tls: sessionTickets.keyFile ${long}: over 1024 bytes`,
    );
    const open = keyFile('open', 48, 0o644);
    assert.equal(
      await startError({ keyFile: open }),
      `GATEHOUSE_TLS tls: sessionTickets.keyFile ${open}: readable by group or others (mode 644): chmod 600 it`,
    );
    const group = keyFile('group', 48, 0o640);
    assert.match(await startError({ keyFile: group }), /readable by group or others \(mode 640\)/);
    assert.match(await startError({ keyFile: keyDir }), /not a regular file/);
    // 48 bytes (nginx's smallest key file) and mode 0400 are fine.
    assert.equal(await startError({ keyFile: keyFile('ok', 48, 0o400) }), 'started');
  });

  const configCases: { name: string; input: GatehouseConfigInput; error: RegExp }[] = [
    {
      name: 'keyFile with store redis',
      input: {
        redis: { url: 'redis://127.0.0.1:1' },
        tls: { dev: true, sessionTickets: { keyFile: 'k', store: 'redis' } },
      },
      error: /tls\.sessionTickets\.store: keyFile and store: "redis" exclude each other/,
    },
    {
      name: 'store redis without a Redis',
      input: { tls: { dev: true, sessionTickets: { store: 'redis' } } },
      error: /tls\.sessionTickets\.store: "redis" needs the top-level redis\.url/,
    },
    {
      name: 'rotateSecs under a minute',
      input: { tls: { dev: true, sessionTickets: { rotateSecs: 10 } } },
      error: /tls\.sessionTickets\.rotateSecs/,
    },
    {
      name: 'rotateSecs over seven days (RFC 8446 §4.6.1)',
      input: { tls: { dev: true, sessionTickets: { rotateSecs: 604801 } } },
      error: /tls\.sessionTickets\.rotateSecs/,
    },
  ];
  for (const c of configCases)
    it(`config: ${c.name} is refused naming the key`, () => {
      assert.throws(
        () => parseConfig(c.input),
        (err: Error) => err instanceof ConfigError && c.error.test(err.message),
      );
    });

  it('config: the defaults are enabled, local, rotateSecs 3600', () => {
    const c = parseConfig({ tls: { dev: true } });
    assert.deepEqual(c.tls?.sessionTickets, { enabled: true, rotateSecs: 3600, store: 'local' });
  });
});

describe('rotation', () => {
  it('ticketWindow and ticketKeyFor: one key per window, the same from the same secret', () => {
    const secret = Buffer.alloc(48, 7);
    const w = ticketWindow(7_200_000 + 5, 3600);
    assert.deepEqual(w, { index: 2, endsMs: 10_800_000 });
    assert.deepEqual(ticketWindow(10_799_999, 3600).index, 2);
    assert.deepEqual(ticketWindow(10_800_000, 3600).index, 3);
    assert.equal(ticketKeyFor(secret, 3600, 2).length, 48);
    assert.deepEqual(ticketKeyFor(secret, 3600, 2), ticketKeyFor(Buffer.alloc(48, 7), 3600, 2));
    assert.notDeepEqual(ticketKeyFor(secret, 3600, 2), ticketKeyFor(secret, 3600, 3));
    assert.notDeepEqual(ticketKeyFor(secret, 3600, 2), ticketKeyFor(secret, 7200, 2));
    assert.notDeepEqual(ticketKeyFor(secret, 3600, 2), ticketKeyFor(Buffer.alloc(48, 8), 3600, 2));
  });

  it('a key file gone at a rotation: logged once, the last good secret stays, so instances still agree', async () => {
    const file = keyFile('vanishing');
    const secret = readFileSync(file);
    const rotateSecs = 3600;
    const startMs = Date.now();
    const next = ticketWindow(startMs, rotateSecs).index + 10;
    // A clock 300 ms before the end of a window (real time runs it).
    const nowMs = () => next * rotateSecs * 1000 - 300 + (Date.now() - startMs);
    const logger = memoryLogger();
    const applied: Buffer[] = [];
    const keys = createTicketKeys(
      { enabled: true, rotateSecs, store: 'local', keyFile: file },
      { apply: (k) => applied.push(k), logger, redis: createRedisPool(undefined, logger), nowMs },
    );
    await keys.start();
    rmSync(file);
    try {
      assert.deepEqual(applied, [ticketKeyFor(secret, rotateSecs, next - 1)]);
      await waitUntil('the rotation ran', () => applied.length === 2);
      // The next window's key from the last good secret: what every other instance derives too.
      assert.deepEqual(applied[1], ticketKeyFor(secret, rotateSecs, next));
      const warns = logger.lines.filter((l) => l.level === 'warn');
      assert.equal(warns.length, 1);
      assert.equal(warns[0]!.msg, 'tls: session ticket secret refused; the last good one stays');
      assert.match(String(warns[0]!.obj.reason), /vanishing: cannot read \(ENOENT\)/);
    } finally {
      keys.close();
    }
  });

  it('at the end of its window the key changes: old tickets make a full handshake, open connections go on', async () => {
    const pki = await testPki();
    const secret = Buffer.alloc(64, 1);
    const rotateSecs = 3600;
    // A clock that reaches the end of a window 1.5 s from now (real time runs it).
    const startMs = Date.now();
    const windowEndMs = (ticketWindow(startMs, rotateSecs).index + 10) * rotateSecs * 1000;
    const nowMs = () => windowEndMs - 1500 + (Date.now() - startMs);
    const servers = [0, 1].map(() => {
      const s = createTlsServer(
        { cert: pki.chain, key: pki.leaf.keyPem, sessionIdContext: SESSION_ID_CONTEXT },
        (sock) => {
          let head = '';
          sock.on('data', (d: Buffer) => {
            head += d.toString('latin1');
            if (!head.includes('\r\n\r\n')) return;
            const close = /connection: close/i.test(head);
            head = '';
            sock.write(
              `HTTP/1.1 200 OK\r\ncontent-length: 2\r\n${close ? 'connection: close\r\n' : ''}\r\nok`,
            );
            if (close) sock.end();
          });
        },
      );
      const keys = createTicketKeys(
        { enabled: true, rotateSecs, store: 'local', secret },
        {
          apply: (k) => s.setTicketKeys(k),
          logger: memoryLogger(),
          redis: createRedisPool(undefined, memoryLogger()),
          nowMs,
        },
      );
      return { s, keys };
    });
    const ports: number[] = [];
    for (const { s, keys } of servers) {
      await keys.start();
      await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
      ports.push((s.address() as { port: number }).port);
    }
    try {
      const before = servers[0]!.keys.current();
      const tickets = [];
      for (const maxVersion of versions) {
        const t = await tlsExchange(ports[0]!, pki.root.certPem, { maxVersion });
        assert.equal(
          (await tlsExchange(ports[1]!, pki.root.certPem, { maxVersion, session: t.session })).reused,
          true,
        );
        tickets.push({ maxVersion, session: t.session });
      }
      assert.deepEqual(
        servers[0]!.keys.current(),
        before,
        'still the first window (the machine was slower than 1.5 s)',
      );
      // A connection open across the rotation.
      const { connect } = await import('node:tls');
      const open = connect({
        port: ports[0]!,
        host: '127.0.0.1',
        servername: 'localhost',
        ca: pki.root.certPem,
      });
      await new Promise((r) => open.once('secureConnect', r));
      await waitUntil('both servers rotated', () =>
        servers.every(({ keys }) => !keys.current()!.equals(before!)),
      );
      assert.deepEqual(servers[0]!.keys.current(), servers[1]!.keys.current());
      const reply = await new Promise<string>((resolve) => {
        let text = '';
        open.on('data', (d: Buffer) => {
          text += d.toString('latin1');
          if (text.endsWith('ok')) resolve(text);
        });
        open.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
      });
      assert.match(reply, /^HTTP\/1\.1 200/, 'the connection open across the rotation still answers');
      open.destroy();
      for (const { maxVersion, session } of tickets) {
        for (const port of ports) {
          const late = await tlsExchange(port, pki.root.certPem, { maxVersion, session });
          assert.deepEqual(
            [late.reused, late.status],
            [false, 200],
            `${maxVersion}: an old ticket after the rotation`,
          );
        }
        const fresh = await tlsExchange(ports[1]!, pki.root.certPem, { maxVersion });
        const onA = await tlsExchange(ports[0]!, pki.root.certPem, { maxVersion, session: fresh.session });
        assert.equal(onA.reused, true, `${maxVersion}: a ticket of the new window resumes across`);
      }
    } finally {
      for (const { s, keys } of servers) {
        keys.close();
        s.close();
      }
    }
  });
});
