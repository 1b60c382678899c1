// Timeouts fire on time (issue 12): each one measured against real sockets on 127.0.0.1. The proxy's
// connectMs, headersMs and idleMs ran on undici's 499 ms "fast timer" tick and the server's
// headersTimeoutMs / requestTimeoutMs on Node's 1 s connection check, so a 200 ms timeout fired after
// ~1000 ms. This file is the one place where tests bound time from above, because timeliness is the
// requirement. The bound is relative, not a constant: half the timeout's own value, plus the lag every
// timer of this process suffered meanwhile (lagProbe, measured during the same test), so a loaded
// machine widens it and the old ~800 ms on a 200 ms timeout still fails.
// matrix: http1 h2 h1-tls (the listener's own limits: an app that mounts Gatehouse owns its server and these)
import assert from 'node:assert/strict';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import {
  makeSite,
  rawConnect,
  rawStatus,
  removeSite,
  startServer,
  type TestServer,
} from '../../helpers/http.js';
import {
  httpUpstream,
  proxyTo,
  rawClient,
  rawUpstream,
  type Proxy as TestProxy,
} from '../../helpers/proxy-attack.js';
import { testTls } from '../../helpers/tls.js';
import {
  type LagProbe,
  lagProbe,
  WAIT_DEADLINE_MS,
  waitUntil,
  waitUntilElapsed,
} from '../../helpers/wait.js';

/** The event-loop lag reference of the running test (every test here gets a fresh one). */
let lag: LagProbe;
beforeEach(() => {
  lag = lagProbe();
});
afterEach(() => lag.stop());

/** Fired no earlier than its value, and at most half its value late beyond the measured lag. */
function assertOnTime(what: string, elapsedMs: number, valueMs: number, earlyMs = 5): void {
  const ms = Math.round(elapsedMs);
  const lagMs = Math.round(lag.maxMs());
  assert.ok(ms >= valueMs - earlyMs, `${what}: fired after ${ms} ms, before its ${valueMs} ms`);
  assert.ok(
    ms < valueMs + valueMs / 2 + lagMs,
    `${what}: fired after ${ms} ms, ${ms - valueMs} ms past its ${valueMs} ms (event-loop lag meanwhile ${lagMs} ms)`,
  );
}

interface Timed {
  /** ms from the last write to the first response byte (or the close when nothing came). */
  ms: number;
  text: string;
}

/** Connects, writes `parts` (each after the previous `gapMs`), and times the answer from the last write. */
function timed(port: number, parts: readonly string[], gapMs = 0): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const sock = rawConnect(port);
    let t0 = 0;
    let text = '';
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      resolve({ ms: performance.now() - t0, text });
      sock.destroy();
    };
    // Turns a server that never answers into a failure (then `text` is empty), not a wait.
    const deadline = setTimeout(finish, WAIT_DEADLINE_MS);
    sock.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      finish();
    });
    sock.on('close', finish);
    sock.on('error', reject);
    sock.once('connect', async () => {
      for (const [i, p] of parts.entries()) {
        // Time itself is what the test is about: the server must not answer before the last part.
        if (i > 0) await waitUntilElapsed(Date.now(), gapMs);
        if (done) return;
        t0 = performance.now();
        sock.write(p);
      }
    });
  });
}

const GET = 'GET /api/x HTTP/1.1\r\nHost: x\r\n\r\n';

describe('proxy timeouts fire on time', () => {
  it('headersMs: 200 against an upstream that never answers -> 504 after ~200 ms', async () => {
    const up = await httpUpstream(() => {});
    const px = await proxyTo(up.url, { timeouts: { headersMs: 200 } });
    try {
      for (let i = 0; i < 2; i++) {
        const r = await timed(px.server.port, [GET]);
        assert.equal(rawStatus(r.text), 504, r.text);
        assertOnTime('headersMs', r.ms, 200);
      }
    } finally {
      await px.close();
      await up.close();
    }
  });

  it('headersMs counts from the end of the request body: a body sent late still gets its 200 ms', async () => {
    const up = await httpUpstream((req) => req.resume());
    const px = await proxyTo(up.url, { timeouts: { headersMs: 200 } });
    try {
      const head = 'POST /api/x HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nab';
      // The rest of the body comes 300 ms later: a clock started with the request would answer 504
      // before it is sent.
      const r = await timed(px.server.port, [head, 'cde'], 300);
      assert.equal(rawStatus(r.text), 504, r.text);
      assertOnTime('headersMs after the body', r.ms, 200);
    } finally {
      await px.close();
      await up.close();
    }
  });

  it('connectMs: 200 to a TLS upstream that never answers the handshake -> 504 after ~200 ms', async () => {
    const held: Socket[] = [];
    // Never reads, so it never sees the proxy's close either: its sockets are destroyed at the end.
    const silent = createNetServer((s) => {
      held.push(s);
      s.on('error', () => {});
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as AddressInfo).port;
    const px = await proxyTo(`https://127.0.0.1:${port}`, { timeouts: { connectMs: 200 }, retry: false });
    try {
      const r = await timed(px.server.port, [GET]);
      assert.equal(rawStatus(r.text), 504, r.text);
      assert.match(r.text, /connect timeout/);
      assertOnTime('connectMs', r.ms, 200);
    } finally {
      await px.close();
      for (const h of held) h.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  it('idleMs: 200 with a body that stalls after its first bytes -> the connection closes ~200 ms later', async () => {
    // Timed from the upstream's write: the proxy takes the bytes after it, so the close cannot
    // rightly come sooner than idleMs after it, however the loaded machine delays the client.
    let sentMs = 0;
    const up = await rawUpstream((sock) => {
      sentMs = performance.now();
      sock.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nfirst');
    });
    const px = await proxyTo(up.url, { timeouts: { idleMs: 200 } });
    try {
      const c = rawClient(px.server.port, GET);
      await c.closed;
      assert.match(c.text(), /first$/);
      assertOnTime('idleMs', performance.now() - sentMs, 200);
    } finally {
      await px.close();
      await up.close();
    }
  });

  it('idleMs counts from the last chunk: chunks 50 ms apart for 400 ms pass, then ~300 ms of silence ends it', async () => {
    const CHUNKS = 8;
    // Timed from the upstream's last write, as above.
    let lastMs = 0;
    const up = await httpUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      let n = 0;
      const next = () => {
        lastMs = performance.now();
        res.write(`chunk-${n};`);
        if (++n < CHUNKS) setTimeout(next, 50);
      };
      next();
    });
    const px = await proxyTo(up.url, { timeouts: { idleMs: 300 } });
    try {
      const c = rawClient(px.server.port, GET);
      await c.closed;
      // A proxy that timed idleMs from the head would have cut the stream at ~300 ms, mid-way.
      assert.match(c.text(), new RegExp(`chunk-${CHUNKS - 1};`), 'the stream was cut while chunks flowed');
      assertOnTime('idleMs after the last chunk', performance.now() - lastMs, 300);
    } finally {
      await px.close();
      await up.close();
    }
  });

  it('idleMs does not run while the client is too slow to take the body (the upstream is paused)', async () => {
    const SIZE = 16 * 1024 * 1024;
    const up = await httpUpstream((_req, res) => {
      res.writeHead(200, { 'content-length': String(SIZE) });
      res.end(Buffer.alloc(SIZE, 0x61));
    });
    const px = await proxyTo(up.url, { timeouts: { idleMs: 200 } });
    try {
      const c = rawClient(px.server.port, GET, { paused: true });
      // Three idleMs without reading: the proxy has paused the upstream long before.
      await waitUntilElapsed(Date.now(), 600);
      assert.equal(c.sock.destroyed, false);
      let got = 0;
      c.sock.on('data', (d: Buffer) => (got += d.length));
      c.sock.resume();
      await waitUntil('the whole body arrives', () => got >= SIZE || c.sock.destroyed);
      assert.ok(got >= SIZE, `only ${got} of ${SIZE} bytes arrived`);
    } finally {
      await px.close();
      await up.close();
    }
  });
});

describe('server timeouts fire on time', () => {
  let site: string;
  let s: TestServer;
  let px: TestProxy;
  let up: Awaited<ReturnType<typeof httpUpstream>>;
  before(async () => {
    site = makeSite({ 'a.txt': 'a' });
    s = await startServer(site, { limits: { headersTimeoutMs: 300, requestTimeoutMs: 0 } });
    // A request body that never completes, on a route that waits for it (a proxied POST).
    up = await httpUpstream((req) => req.resume());
    px = await proxyTo(
      up.url,
      { timeouts: { headersMs: 60_000, idleMs: 60_000 } },
      { limits: { headersTimeoutMs: 200, requestTimeoutMs: 400 } },
    );
  });
  after(async () => {
    await s.close();
    await px.close();
    await up.close();
    removeSite(site);
  });

  it('limits.headersTimeoutMs: 300 with half a request head -> 408 after ~300 ms', async () => {
    // Twice: the second request starts right after the first 408, so a periodic check (the old 1 s
    // one) cannot happen to land just after the deadline for both.
    for (let i = 0; i < 2; i++) {
      const r = await timed(s.port, ['GET /a.txt HTTP/1.1\r\nHost: x\r\n']);
      assert.equal(rawStatus(r.text), 408, r.text);
      assertOnTime('headersTimeoutMs', r.ms, 300);
    }
  });

  it('the plain-HTTP listener beside TLS (listen.httpPort) times a slow head out the same way', async () => {
    const files = await testTls();
    const t = await startServer(site, {
      tls: { cert: files.cert, key: files.key },
      listen: { httpPort: 0 },
      limits: { headersTimeoutMs: 300, requestTimeoutMs: 0 },
    });
    try {
      const port = Number(new URL(String(t.httpUrl)).port);
      for (let i = 0; i < 2; i++) {
        const r = await timed(port, ['GET /a.txt HTTP/1.1\r\nHost: x\r\n']);
        assert.equal(rawStatus(r.text), 408, r.text);
        assertOnTime('headersTimeoutMs', r.ms, 300);
      }
    } finally {
      await t.close();
    }
  });

  it('limits.requestTimeoutMs: 400 with a body that never completes -> 408 after ~400 ms', async () => {
    // Twice, like headersTimeoutMs above.
    for (let i = 0; i < 2; i++) {
      const r = await timed(px.server.port, [
        'POST /api/x HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab',
      ]);
      assert.equal(rawStatus(r.text), 408, r.text);
      assertOnTime('requestTimeoutMs', r.ms, 400);
    }
  });
});
