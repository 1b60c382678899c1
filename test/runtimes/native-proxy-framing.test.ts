// The proxy's own HTTP/1.1 upstream client on Bun (proxy/socket-pool.ts over http/response-framing.ts):
// `gatehouse serve` run by Bun in front of a raw node:net upstream on 127.0.0.1 that answers each
// request with bytes of the test's choosing and counts requests and connections. Attacks on the framing
// of a response (RFC 9112 §6.3, §7.1, §11.2) end in 502 or in a connection that is not reused; the
// well-formed cases (keep-alive reuse, chunked with trailers, close-delimited, 1xx, HEAD, 304) pass.
import assert from 'node:assert/strict';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { get, makeSite, removeSite } from '../helpers/http.js';
import { type Listening, requireRuntime, serveOn } from '../helpers/runtimes.js';

/** What the upstream writes for one request: `path` without /api, the connection's number (from 1). */
type Answer = (path: string, conn: number, sock: Socket) => string | Buffer | undefined;

describe("the proxy's upstream client on Bun: response framing", () => {
  const answers = new Map<string, Answer>();
  let requests = 0;
  let connections = 0;
  /** The connection each path was answered on, last first. */
  const connOf = new Map<string, number>();
  let upstream: Server;
  let site: string;
  let s: Listening;

  before(async () => {
    requireRuntime('bun');
    upstream = createServer((sock) => {
      const conn = ++connections;
      sock.on('error', () => {});
      let buf = '';
      sock.on('data', (d: Buffer) => {
        buf += d.toString('latin1');
        for (let end = buf.indexOf('\r\n\r\n'); end !== -1; end = buf.indexOf('\r\n\r\n')) {
          const head = buf.slice(0, end);
          buf = buf.slice(end + 4);
          requests++;
          const [, path = ''] = /^[A-Z]+ (\S+)/.exec(head) ?? [];
          connOf.set(path, conn);
          const answer = answers.get(path.replace(/\?.*$/, ''));
          const out = answer?.(path, conn, sock) ?? 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n';
          if (out !== '') sock.write(out);
        }
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const port = (upstream.address() as AddressInfo).port;
    site = makeSite({
      'index.html': 'home',
      'conf/gatehouse.json': JSON.stringify({
        proxy: [{ prefix: '/api', upstream: `http://127.0.0.1:${port}` }],
      }),
    });
    s = await serveOn('bun', site, ['--config', join(site, 'conf/gatehouse.json')]);
  });
  after(async () => {
    await s.close();
    upstream.close();
    removeSite(site);
  });
  beforeEach(() => {
    answers.clear();
  });

  /** Requests and connections the upstream saw during `run`. */
  async function counted(run: () => Promise<void>): Promise<{ requests: number; connections: number }> {
    const r0 = requests;
    const c0 = connections;
    await run();
    return { requests: requests - r0, connections: connections - c0 };
  }

  const ok = (body: string, extra = '') =>
    `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n${extra}\r\n${body}`;

  it('keep-alive: three requests in a row share one upstream connection', async () => {
    answers.set('/ka', () => ok('same'));
    // A first request opens the connection the next ones reuse.
    await get(s.url, '/api/ka');
    const n = await counted(async () => {
      for (let i = 0; i < 3; i++) assert.equal((await get(s.url, '/api/ka')).body.toString(), 'same');
    });
    assert.deepEqual(n, { requests: 3, connections: 0 });
  });

  it('a chunked body split into odd pieces, with a trailer section, arrives whole', async () => {
    answers.set('/chunked', (_p, _c, sock) => {
      sock.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel');
      setTimeout(() => sock.write('lo\r\n6;ext="x"\r\n world\r\n0\r\nX-Sum: 1\r\n\r\n'), 20);
      return '';
    });
    const r = await get(s.url, '/api/chunked');
    assert.equal(r.status, 200);
    assert.equal(r.body.toString(), 'hello world');
  });

  it('a body delimited by the close passes whole; its connection is not reused', async () => {
    answers.set('/close', (_p, _c, sock) => {
      sock.end('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nto the end');
      return '';
    });
    const r = await get(s.url, '/api/close');
    assert.equal(r.body.toString(), 'to the end');
    answers.set('/after', () => ok('fresh'));
    const n = await counted(async () => {
      assert.equal((await get(s.url, '/api/after')).body.toString(), 'fresh');
    });
    assert.equal(n.requests, 1);
  });

  it('an interim 103 before the final response: the final one is served (RFC 9110 §15.2)', async () => {
    answers.set(
      '/hints',
      () => `HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n${ok('final')}`,
    );
    const r = await get(s.url, '/api/hints');
    assert.equal(r.status, 200);
    assert.equal(r.body.toString(), 'final');
  });

  it('HEAD and 304 answers end at their head whatever Content-Length says; the connection is reused', async () => {
    answers.set('/head', () => 'HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n');
    answers.set('/nm', () => 'HTTP/1.1 304 Not Modified\r\nETag: "a"\r\nContent-Length: 500\r\n\r\n');
    await get(s.url, '/api/head', { method: 'HEAD' });
    const n = await counted(async () => {
      const h = await get(s.url, '/api/head', { method: 'HEAD' });
      assert.equal(h.status, 200);
      const nm = await get(s.url, '/api/nm', { headers: { 'if-none-match': '"a"' } });
      assert.equal(nm.status, 304);
    });
    assert.deepEqual(n, { requests: 2, connections: 0 });
  });

  it('attack: Content-Length beside Transfer-Encoding (response smuggling) -> chunked wins, connection not reused', async () => {
    // The Content-Length would end the body after "5\r\nh": a reader trusting it leaves the rest of this
    // response on the connection, to be read as the answer to the next request (RFC 9112 §6.3 rule 3).
    answers.set(
      '/te-cl',
      () =>
        'HTTP/1.1 200 OK\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
    );
    answers.set('/next', () => ok('next'));
    const n = await counted(async () => {
      const r = await get(s.url, '/api/te-cl');
      assert.equal(r.status, 200);
      assert.equal(r.body.toString(), 'hello');
      assert.equal((await get(s.url, '/api/next')).body.toString(), 'next');
    });
    assert.equal(n.requests, 2, 'both requests reached the upstream');
    assert.notEqual(
      connOf.get('/next'),
      connOf.get('/te-cl'),
      'the smuggling-shaped response closed its connection',
    );
  });

  it('attack: a second response appended after the first -> never served to the next request', async () => {
    answers.set('/split', () => `${ok('first')}${ok('SMUGGLED')}`);
    answers.set('/victim', () => ok('genuine'));
    const n = await counted(async () => {
      assert.equal((await get(s.url, '/api/split')).body.toString(), 'first');
      assert.equal((await get(s.url, '/api/victim')).body.toString(), 'genuine');
    });
    assert.equal(n.requests, 2);
    // The bytes past the first response stayed on its connection: reused, they would be the next answer.
    assert.equal(n.connections, 1, 'the connection with bytes past the response was closed');
  });

  it('attack: an unsolicited response on an idle connection -> that connection is dropped, not read later', async () => {
    answers.set('/idle', (_p, _c, sock) => {
      setTimeout(() => sock.write(ok('SMUGGLED')), 30);
      return ok('first');
    });
    answers.set('/victim', () => ok('genuine'));
    assert.equal((await get(s.url, '/api/idle')).body.toString(), 'first');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const n = await counted(async () => {
      assert.equal((await get(s.url, '/api/victim')).body.toString(), 'genuine');
    });
    assert.deepEqual(n, { requests: 1, connections: 1 });
  });

  const refused: [string, string][] = [
    [
      'conflicting Content-Length values',
      'HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nabcde',
    ],
    ['a negative Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n'],
    [
      'Transfer-Encoding in an HTTP/1.0 response',
      'HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    ],
    ['chunked before another coding', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n'],
    [
      'obs-fold in the head (a header line folded to inject)',
      'HTTP/1.1 200 OK\r\nX-A: 1\r\n X-B: 2\r\nContent-Length: 0\r\n\r\n',
    ],
    ['whitespace before the colon', 'HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n'],
    ['a bare LF inside the head', 'HTTP/1.1 200 OK\r\nX-A: 1\nContent-Length: 0\r\n\r\n'],
    [
      'a bare LF ending a chunk-size line',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n',
    ],
    [
      'a chunk size with a sign',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n+5\r\nhello\r\n0\r\n\r\n',
    ],
    [
      'a chunk longer than its size',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhello\r\n0\r\n\r\n',
    ],
    ['an invalid status line', 'HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n'],
    [
      'an unasked 101',
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n',
    ],
  ];
  for (const [name, bytes] of refused) {
    it(`attack: ${name} -> 502, and the next request gets a clean answer`, async () => {
      answers.set('/bad', () => bytes);
      answers.set('/good', () => ok('good'));
      const n = await counted(async () => {
        const r = await get(s.url, '/api/bad');
        assert.equal(r.status, 502, r.body.toString());
        assert.equal(r.headers['content-type'], 'application/problem+json');
        assert.doesNotMatch(r.body.toString(), /hello|X-B/);
      });
      assert.equal(n.requests, 1, 'the attack reached the upstream');
      assert.equal((await get(s.url, '/api/good')).body.toString(), 'good');
    });
  }

  it('attack: an endless response head -> 502 once past 64 KiB, and the server keeps serving', async () => {
    // Far past the bound: a proxy that kept reading would wait for the head's end until here.
    const CAP = 64 * 1024 * 1024;
    let written = 0;
    answers.set('/endless-head', (_p, _c, sock) => {
      sock.write('HTTP/1.1 200 OK\r\n');
      const line = `X-Pad: ${'a'.repeat(1000)}\r\n`;
      // A write failing (the proxy reset the connection) stops the loop.
      const more = (err?: Error | null) => {
        if (err || sock.destroyed || written > CAP) return;
        written += line.length * 16;
        sock.write(line.repeat(16), more);
      };
      more();
      return '';
    });
    answers.set('/good', () => ok('good'));
    const r = await get(s.url, '/api/endless-head');
    assert.equal(r.status, 502);
    assert.ok(written < CAP, `the proxy closed the connection (${written} bytes written)`);
    assert.equal((await get(s.url, '/api/good')).body.toString(), 'good');
  });
});
