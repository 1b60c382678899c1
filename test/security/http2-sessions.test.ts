// Attacks on HTTP/2 sessions (issue 25 §1): idle sessions that hold connection slots, sessions that
// never make a request, streams whose client takes no data (zero window), header blocks that keep
// being refused (HPACK bomb). Each test counts what reached the server (its sessions, the guard's
// counts in /metrics) and what the client was told (GOAWAY, RST_STREAM).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import {
  type ClientHttp2Session,
  constants,
  type Http2SecureServer,
  connect as http2Connect,
} from 'node:http2';
import type { AddressInfo } from 'node:net';
import { connect as netConnect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { get, makeSite, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { testTls } from '../helpers/tls.js';
import { lagProbe, WAIT_DEADLINE_MS, waitUntil } from '../helpers/wait.js';

const KEEP_ALIVE_MS = 400;
const HEADERS_MS = 300;
const SEND_MS = 400;
/** Not the default (3), so a guard that ignores the configured value fails. */
const MAX_REFUSED_BLOCKS = 5;

/** An HTTP/2 session to `s` from `localAddress` (a loopback address of its own). */
function open(
  s: TestServer,
  ca: string,
  localAddress = '127.0.0.1',
  settings: Record<string, number> = {},
): ClientHttp2Session {
  const session = http2Connect(s.url, {
    ca,
    settings,
    // Node's client refuses to send a block whose decoded size is over 64 kB: the bomb must go out.
    maxSendHeaderBlockLength: 1 << 20,
    createConnection: () =>
      tlsConnect({
        ca,
        servername: 'localhost',
        ALPNProtocols: ['h2'],
        socket: netConnect({ host: '127.0.0.1', port: s.port, localAddress }),
      }),
  });
  session.on('error', () => {});
  return session;
}

/** What the server said when it ended a session: the GOAWAY code (undefined: none) and when it came. */
function ending(session: ClientHttp2Session): Promise<{ goaway: number | undefined; goawayMs: number }> {
  let goaway: number | undefined;
  let goawayMs = 0;
  session.on('goaway', (code) => {
    goaway ??= code;
    goawayMs ||= performance.now();
  });
  return new Promise((resolve) => session.once('close', () => resolve({ goaway, goawayMs })));
}

function ask(session: ClientHttp2Session, headers: Record<string, string | string[]>) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = session.request(headers);
    let status = 0;
    let body = '';
    req.on('response', (h) => (status = Number(h[':status'])));
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => resolve({ status, body }));
    req.on('error', reject);
  });
}

/** `p`, or a failure naming `what` after WAIT_DEADLINE_MS (a hang becomes a failure). */
function within<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting until ${what}`)), WAIT_DEADLINE_MS);
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}

/** A counter of the text format (0 when absent). */
function metric(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
}

describe('attacks on HTTP/2 sessions', () => {
  let site: string;
  let s: TestServer;
  let upstream: Server;
  let ca: string;
  let tlsFiles: { cert: string; key: string };
  const big = 'x'.repeat(512 * 1024);
  /** Sessions the server opened. */
  let sessions = 0;
  /** When the server opened the session of each client port. */
  const openedMs = new Map<number, number>();
  /** Handshakes the server gave up on (ERR_TLS_HANDSHAKE_TIMEOUT). */
  let handshakeTimeouts = 0;
  /** Sessions the 50-session attack opened (each must be closed as no_request). */
  let noRequestSessions = 0;
  /** The session guard's counts. */
  const stats = () => s.app.tls!.http2Stats()!;
  before(async () => {
    upstream = createServer((req, res) => {
      req.resume();
      res.end(big);
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    site = makeSite({ 'a.txt': 'public', 'big.bin': big });
    const tls = await testTls();
    ca = tls.caPem;
    tlsFiles = { cert: tls.cert, key: tls.key };
    s = await startServer(site, {
      tls: tlsFiles,
      proxy: [{ prefix: '/api', upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` }],
      metrics: { path: '/metrics', allow: ['loopback'] },
      limits: {
        keepAliveTimeoutMs: KEEP_ALIVE_MS,
        headersTimeoutMs: HEADERS_MS,
        sendTimeoutMs: SEND_MS,
        maxConnections: 50,
      },
    });
    (s.app.server as Http2SecureServer).on('session', (session) => {
      sessions++;
      openedMs.set(session.socket.remotePort!, performance.now());
    });
    s.app.server.on('tlsClientError', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ERR_TLS_HANDSHAKE_TIMEOUT') handshakeTimeouts++;
    });
  });
  after(async () => {
    await s.close();
    upstream.close();
    removeSite(site);
  });

  it('attack: 50 sessions that send only the preface and SETTINGS (all of maxConnections) -> GOAWAY NO_ERROR for no request after headersTimeoutMs, and a new client gets in', async () => {
    const before = sessions;
    const timeoutsBefore = handshakeTimeouts;
    const closedBefore = { ...stats().closed };
    const lag = lagProbe();
    const idle = Array.from({ length: 50 }, () => open(s, ca));
    const ends = idle.map(ending);
    // Each client's port once it has a session, to find when the server opened it (undefined: closed
    // before, its handshake timed out).
    const ports = idle.map(
      (c) =>
        new Promise<number | undefined>((r) => {
          c.once('connect', () => r(c.socket.localPort!));
          c.once('close', () => r(undefined));
        }),
    );
    const results = await Promise.all(ends);
    lag.stop();
    const got = await Promise.all(ports);
    // Every connection reached the server, as a session or as a handshake it gave up on: headersTimeoutMs
    // is the handshake's deadline too, which a loaded machine makes a few of 50 at once miss.
    const opened = sessions - before;
    assert.equal(opened + (handshakeTimeouts - timeoutsBefore), 50);
    assert.ok(opened >= 25, `${opened} of 50 handshakes finished`);
    noRequestSessions += opened;
    const withSession = results.filter((_, i) => got[i] !== undefined);
    assert.equal(withSession.length, opened);
    assert.deepEqual(new Set(withSession.map((r) => r.goaway)), new Set([constants.NGHTTP2_NO_ERROR]));
    // Closed for the reason named, each by the rule of headersTimeoutMs: keepAliveTimeoutMs (400 ms)
    // would close them too, a little later.
    const closed = stats().closed;
    assert.equal(closed.no_request - closedBefore.no_request, opened);
    assert.equal(closed.idle - closedBefore.idle, 0);
    // Not before headersTimeoutMs from the server's own session start (the timer may round 1 ms down);
    // late by at most the value again (the 100 ms sweep, the GOAWAY's trip) plus the measured lag.
    const lagMs = Math.round(lag.maxMs());
    for (const [i, r] of results.entries()) {
      if (got[i] === undefined) continue;
      const ms = Math.round(r.goawayMs - openedMs.get(got[i])!);
      assert.ok(ms >= HEADERS_MS - 1, `session ${i}: GOAWAY after ${ms} ms, before its ${HEADERS_MS} ms`);
      assert.ok(
        ms < 2 * HEADERS_MS + lagMs,
        `session ${i}: GOAWAY after ${ms} ms, over twice its ${HEADERS_MS} ms (event-loop lag ${lagMs} ms)`,
      );
    }
    assert.equal((await get(s.url, '/a.txt')).text, 'public');
  });

  it('attack: a session that makes one request and then idles -> GOAWAY after keepAliveTimeoutMs', async () => {
    const c = open(s, ca);
    const end = ending(c);
    assert.equal((await ask(c, { ':path': '/a.txt' })).body, 'public');
    const answeredMs = performance.now();
    const { goaway } = await end;
    assert.equal(goaway, constants.NGHTTP2_NO_ERROR);
    // Not before keepAliveTimeoutMs (the sweep may add up to 100 ms; the timer may round 1 ms down).
    assert.ok(performance.now() - answeredMs >= KEEP_ALIVE_MS - 1, `${performance.now() - answeredMs} ms`);
  });

  it('a session that keeps making requests is not closed while it does', async () => {
    const c = open(s, ca);
    const end = ending(c);
    let closed = false;
    void end.then(() => (closed = true));
    const untilMs = performance.now() + 3 * KEEP_ALIVE_MS;
    while (performance.now() < untilMs) {
      assert.equal((await ask(c, { ':path': '/a.txt' })).status, 200);
      await new Promise((r) => setTimeout(r, KEEP_ALIVE_MS / 4));
    }
    assert.equal(closed, false);
    c.close();
  });

  /** A request from a client that announced a zero window: its stream's RST code and head status. */
  async function zeroWindow(path: string): Promise<{ status: number; rst: number }> {
    const c = open(s, ca, '127.0.0.1', { initialWindowSize: 0 });
    try {
      const req = c.request({ ':path': path });
      let status = 0;
      req.on('response', (h) => (status = Number(h[':status'])));
      req.on('error', () => {});
      req.pause();
      const rst = await within(
        'the stalled stream is reset',
        new Promise<number>((r) => req.once('close', () => r(req.rstCode))),
      );
      return { status, rst };
    } finally {
      c.destroy();
    }
  }

  it('attack: a client that takes no DATA (zero window) on a static file -> the session guard resets the stream after sendTimeoutMs', async () => {
    const before = stats().sendTimeouts;
    const { status, rst } = await zeroWindow('/big.bin');
    // The request reached the handler (the head came), then the guard cancelled the stream.
    assert.equal(status, 200);
    assert.equal(rst, constants.NGHTTP2_CANCEL);
    assert.equal(stats().sendTimeouts - before, 1);
  });

  // The proxy's own send timer (proxy/forward.ts, limits.sendTimeoutMs from its first stalled write)
  // resets a proxied stream before the guard's sweep does; the guard is the second line behind it.
  it('attack: a client that takes no DATA (zero window) on a proxied path -> the stream is reset after sendTimeoutMs (the proxy send timer, the session guard behind it)', async () => {
    const { status, rst } = await zeroWindow('/api/big');
    assert.equal(status, 200);
    assert.equal(rst, constants.NGHTTP2_CANCEL);
  });

  it('attack: an HPACK bomb (one 3.9 kB field repeated 40 times per header block) -> GOAWAY ENHANCE_YOUR_CALM once maxRefusedHeaderBlocks + 1 blocks were refused', async () => {
    // A server of its own: the client waits for the guard's 100 ms sweep after each block, which takes
    // longer than the shared server's keepAliveTimeoutMs (refused blocks open no stream).
    const bombed = await startServer(site, {
      tls: tlsFiles,
      metrics: { path: '/metrics', allow: ['loopback'] },
      limits: { http2: { maxRefusedHeaderBlocks: MAX_REFUSED_BLOCKS } },
    });
    const stats = () => bombed.app.tls!.http2Stats()!;
    const c = open(bombed, ca, '127.0.0.4');
    try {
      const end = ending(c);
      // One round trip first: our SETTINGS (maxHeaderListSize) are acknowledged and apply.
      assert.equal((await ask(c, { ':path': '/a.txt' })).status, 200);
      let sent = 0;
      let resets = 0;
      const bomb = Array.from({ length: 40 }, () => 'b'.repeat(3900));
      // One block at a time, each sent once the guard has counted the last one: nothing else is in
      // flight, so the session must end after exactly maxRefusedHeaderBlocks + 1. (A client that floods
      // on is still writing when the GOAWAY comes, and Node's client then never reports the close: seen,
      // a 1-in-6 hang.) Bounded: a guard that never closes lets it run out of blocks, not hang.
      while (!c.closed && !c.destroyed && sent < 4 * MAX_REFUSED_BLOCKS) {
        const rst = await new Promise<number>((resolve) => {
          const req = c.request({ ':path': '/a.txt', 'x-bomb': bomb });
          req.on('error', () => {});
          req.on('close', () => resolve(req.rstCode));
        });
        sent++;
        if (rst === constants.NGHTTP2_ENHANCE_YOUR_CALM) resets++;
        await waitUntil(`the guard counts refused block ${sent}`, () => stats().refusedHeaderBlocks === sent);
        if (stats().closed.header_blocks > 0) break;
      }
      // Every block reached the server and was refused there (RST_STREAM ENHANCE_YOUR_CALM, RFC 9113
      // §10.5.1); the block past the limit closed the session, and no more.
      assert.equal(sent, MAX_REFUSED_BLOCKS + 1, `${sent} blocks sent before the GOAWAY`);
      assert.equal(resets, sent);
      const { goaway } = await within('the bombed session closes', end);
      assert.equal(goaway, constants.NGHTTP2_ENHANCE_YOUR_CALM);
      const m = (await get(bombed.url, '/metrics')).text;
      assert.equal(metric(m, 'gatehouse_http2_refused_header_blocks_total'), MAX_REFUSED_BLOCKS + 1, m);
      assert.equal(metric(m, 'gatehouse_http2_sessions_closed_total', '{reason="header_blocks"}'), 1, m);
    } finally {
      c.destroy();
      await bombed.close();
    }
  });

  it('the counts of the session guard are in /metrics', async () => {
    const m = (await get(s.url, '/metrics')).text;
    for (const name of ['gatehouse_http2_client_resets_total', 'gatehouse_http2_refused_connections_total']) {
      assert.match(m, new RegExp(`^${name} \\d+$`, 'm'));
    }
    assert.ok(
      metric(m, 'gatehouse_http2_sessions_closed_total', '{reason="no_request"}') >= noRequestSessions,
      m,
    );
    assert.ok(metric(m, 'gatehouse_http2_sessions_closed_total', '{reason="idle"}') >= 1, m);
  });
});
