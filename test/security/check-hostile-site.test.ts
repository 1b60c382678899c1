// gatehouse check against a hostile site: what it sends and reads must not hurt the user. Credentials
// given with --header stay with the origin given; bodies and slow answers are bounded; a response the
// HTTP parser refuses is recorded, not thrown; control characters never reach the terminal.
import assert from 'node:assert/strict';
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { type AddressInfo, createServer as createNetServer, type Server as NetServer } from 'node:net';
import { after, describe, it } from 'node:test';
import { checkCommand } from '../../src/cli/check.js';
import { MAX_BODY_BYTES, record } from '../../src/inspect/live.js';

const FAST = { repeatDelayMs: 0 };
const servers: (Server | NetServer)[] = [];
after(async () => {
  for (const s of servers) {
    if ('closeAllConnections' in s) s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

async function listen(s: Server | NetServer): Promise<number> {
  servers.push(s);
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return (s.address() as AddressInfo).port;
}

/** A server that records the headers of every request it gets and answers with `answer`. */
async function recorder(answer: (path: string) => { status: number; location?: string }) {
  const seen: IncomingHttpHeaders[] = [];
  const port = await listen(
    createHttpServer((req, res) => {
      seen.push(req.headers);
      const a = answer(req.url ?? '/');
      res.writeHead(a.status, a.location === undefined ? {} : { location: a.location });
      res.end('ok');
    }),
  );
  return { port, seen };
}

describe('check: credentials stay with the origin given', () => {
  it('attack: redirect to another origin -> the --header Authorization and Cookie are not forwarded', async () => {
    const evil = await recorder(() => ({ status: 200 }));
    const site = await recorder(() => ({ status: 302, location: `http://127.0.0.1:${evil.port}/steal` }));
    const rec = await record(`http://127.0.0.1:${site.port}/`, {
      ...FAST,
      headers: { Authorization: 'Bearer secret-token', Cookie: 'session=secret' },
    });
    assert.equal(site.seen[0]?.authorization, 'Bearer secret-token', 'the origin given gets them');
    assert.ok(evil.seen.length > 5, 'the probes went to the final URL');
    for (const h of evil.seen) {
      assert.equal(h.authorization, undefined);
      assert.equal(h.cookie, undefined);
    }
    assert.equal(rec.finalUrl, `http://127.0.0.1:${evil.port}/steal`);
  });

  it('attack: Location with userinfo (http://user:pass@host/) -> no Authorization made from it', async () => {
    const evil = await recorder(() => ({ status: 200 }));
    const site = await recorder(() => ({
      status: 301,
      location: `http://admin:hunter2@127.0.0.1:${evil.port}/`,
    }));
    const rec = await record(`http://127.0.0.1:${site.port}/`, FAST);
    assert.ok(evil.seen.length > 0);
    for (const h of evil.seen) assert.equal(h.authorization, undefined);
    assert.doesNotMatch(rec.finalUrl, /hunter2/);
  });

  it('attack: Location to file:///etc/passwd -> not followed, the chain stops there', async () => {
    const site = await recorder(() => ({ status: 302, location: 'file:///etc/passwd' }));
    const rec = await record(`http://127.0.0.1:${site.port}/`, FAST);
    const last = rec.redirects[rec.redirects.length - 1];
    assert.match(last?.error ?? '', /unsupported scheme: file:/);
    assert.deepEqual(rec.probes, {});
  });
});

describe('check: a hostile response is bounded and recorded', () => {
  it('attack: endless body -> read stops at the 8 MB cap and the check completes', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const port = await listen(
      createHttpServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const pump = () => {
          while (res.write(chunk)) {}
        };
        res.on('drain', pump);
        res.on('close', () => res.off('drain', pump));
        pump();
      }),
    );
    const rec = await record(`http://127.0.0.1:${port}/`, FAST);
    assert.equal(rec.probes.primary?.response?.bodyBytes, MAX_BODY_BYTES);
    assert.equal(rec.probes.repeat?.response?.bodyBytes, MAX_BODY_BYTES);
  });

  it('attack: body dripped forever -> the probe times out and is recorded with the error', async () => {
    const port = await listen(
      createHttpServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const t = setInterval(() => res.write('.'), 20);
        res.on('close', () => clearInterval(t));
      }),
    );
    const rec = await record(`http://127.0.0.1:${port}/`, { ...FAST, timeoutMs: 300 });
    const primary = rec.probes.primary;
    assert.equal(primary?.response?.status, 200);
    assert.match(primary?.error ?? '', /timed out after 300 ms/);
  });

  it('attack: a header block over the parser limit -> recorded as an error, not thrown', async () => {
    const port = await listen(
      createNetServer((socket) => {
        socket.on('data', () => {
          socket.end(`HTTP/1.1 200 OK\r\nx-big: ${'a'.repeat(100_000)}\r\ncontent-length: 0\r\n\r\n`);
        });
        socket.on('error', () => undefined);
      }),
    );
    const rec = await record(`http://127.0.0.1:${port}/`, FAST);
    assert.equal(rec.redirects[0]?.response, undefined);
    assert.match(rec.redirects[0]?.error ?? '', /HPE_HEADER_OVERFLOW|header/i);
  });

  it('attack: ANSI escape in a header -> refused by the parser, exit 1 naming it, nothing raw printed', async () => {
    const port = await listen(
      createNetServer((socket) => {
        socket.on('data', () => {
          socket.end(
            'HTTP/1.1 200 OK\r\nserver: \u001b]0;pwned\u0007\u001b[2J\r\ncontent-length: 2\r\n\r\nok',
          );
        });
        socket.on('error', () => undefined);
      }),
    );
    let out = '';
    let err = '';
    const code = await checkCommand([`http://127.0.0.1:${port}/`], {
      cwd: process.cwd(),
      stdout: { write: (s: string) => (out += s) },
      stderr: { write: (s: string) => (err += s) },
      repeatDelayMs: 0,
    });
    assert.equal(code, 1);
    assert.match(err, /cannot reach .*Invalid header value char/);
    assert.doesNotMatch(out + err, /\u001b|\u0007/);
  });
});
