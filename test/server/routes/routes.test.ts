// Library routes against a real server on 127.0.0.1:0: JSON, JSONP, bodies and their limits, errors.
// matrix: http1 h2 h1-tls adapters runtimes (the static, policy, proxy and cache suites run on every protocol and adapter)
// On the runtime matrix the routes (test/fixtures/runtimes/library-routes.mjs) are served by Bun or Deno in
// a child process, and what their handlers counted is asked of it.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { runInNewContext } from 'node:vm';
import { createRoutes, type Route } from '../../../src/server/routes/routes.js';
import { get, makeSite, rawConnect, rawStatus, removeSite } from '../../helpers/http.js';
import { waitFor } from '../../helpers/proxy-attack.js';
import { type RoutesServer, startRoutes } from '../../helpers/routes-server.js';
import { EARLY_ANSWER_KEEPS_OPEN, EARLY_CLOSE_BY_HOST } from '../../helpers/runtimes.js';

const LIMIT = 1024;

/**
 * An answer before the request's content is in says `Connection: close` on Node; on the fetch face it
 * does not (EARLY_ANSWER_KEEPS_OPEN), though Deno.serve adds one of its own when the body is unread then.
 */
function closeOfEarlyAnswer(raw: string): void {
  const connection = header(raw, 'connection')?.toLowerCase();
  if (EARLY_CLOSE_BY_HOST) assert.ok(connection === undefined || connection === 'close', connection);
  else assert.equal(connection, EARLY_ANSWER_KEEPS_OPEN ? undefined : 'close');
}

/** Whether `raw` holds a whole response: its head and a body of its Content-Length. */
function answered(raw: string): boolean {
  const end = raw.indexOf('\r\n\r\n');
  const length = /^content-length: *(\d+)/im.exec(raw.slice(0, end));
  return end >= 0 && length !== null && raw.length - end - 4 >= Number(length[1]);
}

/**
 * Writes `parts` to a raw socket, one after another, and collects the response until the server
 * closes, a whole response is in (an early answer may keep the connection: closeOfEarlyAnswer), or
 * `untilMs`. Write errors (EPIPE, ECONNRESET once the server has answered and closed) are expected
 * when the server refuses a body early, so they end the writing, not the test.
 */
function rawSend(port: number, parts: (string | Buffer)[], untilMs = 10_000): Promise<string> {
  return new Promise((resolve) => {
    const sock = rawConnect(port);
    const chunks: Buffer[] = [];
    let closed = false;
    const done = () => {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(Buffer.concat(chunks).toString('latin1'));
    };
    const timer = setTimeout(done, untilMs);
    sock.on('data', (c) => {
      chunks.push(c);
      if (answered(Buffer.concat(chunks).toString('latin1'))) done();
    });
    sock.on('error', () => {});
    sock.on('close', done);
    sock.on('connect', async () => {
      for (const p of parts) {
        if (closed || sock.destroyed) return;
        const ok = sock.write(p);
        if (!ok) await new Promise((r) => sock.once('drain', r).once('close', r));
      }
    });
  });
}

function header(raw: string, name: string): string | undefined {
  const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
  const m = new RegExp(`^${name}: (.*)$`, 'im').exec(head);
  return m?.[1];
}

describe('library routes', () => {
  let dir: string;
  let s: RoutesServer;

  before(async () => {
    dir = makeSite({ 'index.html': '<!doctype html><title>home</title>' });
    s = await startRoutes('library-routes.mjs', dir, {
      jsonp: { paths: ['/jsonp/*'] },
      limits: { maxBodyBytes: LIMIT },
    });
  });
  after(async () => {
    await s.app.close();
    removeSite(dir);
  });

  describe('JSON answers', () => {
    it('GET: 200 application/json; charset=utf-8, Cache-Control: no-store, nosniff', async () => {
      const r = await get(s.url, '/api/time');
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(r.headers['cache-control'], 'no-store');
      assert.equal(r.headers['x-content-type-options'], 'nosniff');
      assert.equal(r.headers['content-length'], String(r.body.length));
      assert.deepEqual(JSON.parse(r.text), { now: 1700000000000, html: '</script>&' });
      assert.ok(!r.text.includes('<'), 'escaped: inert if sniffed');
    });

    it('HEAD: the GET headers without a body (GET implies HEAD)', async () => {
      const g = await get(s.url, '/api/head');
      const h = await get(s.url, '/api/head', { method: 'HEAD' });
      assert.equal(h.status, 200);
      assert.equal(h.body.length, 0);
      assert.equal(h.headers['content-length'], g.headers['content-length']);
      assert.equal((await s.counts())['head:HEAD'], 1);
    });

    it(':name params are percent-decoded', async () => {
      assert.deepEqual(JSON.parse((await get(s.url, '/api/users/a%20b')).text), { id: 'a b' });
    });

    it('splat params cross segments', async () => {
      assert.deepEqual(JSON.parse((await get(s.url, '/api/files/a/b.txt')).text), { splat: 'a/b.txt' });
    });

    it('malformed percent-encoding in a param -> 400', async () => {
      assert.equal((await get(s.url, '/api/users/%zz')).status, 400);
    });

    it('query is a URLSearchParams', async () => {
      const r = await get(s.url, '/api/query?a=1&b=x&b=y');
      assert.deepEqual(JSON.parse(r.text), { a: '1', all: ['x', 'y'] });
    });

    it('undefined -> 204 without a body', async () => {
      const r = await get(s.url, '/api/nothing');
      assert.equal(r.status, 204);
      assert.equal(r.body.length, 0);
      assert.equal(r.headers['content-type'], undefined);
      assert.equal(r.headers['cache-control'], 'no-store');
    });

    it('a promise is awaited', async () => {
      assert.deepEqual(JSON.parse((await get(s.url, '/api/async')).text), { async: true });
    });

    it('route cacheControl option', async () => {
      assert.equal((await get(s.url, '/api/cached')).headers['cache-control'], 'public, max-age=60');
    });

    it('paths without a route go on to the static handler', async () => {
      const r = await get(s.url, '/index.html');
      assert.equal(r.status, 200);
      assert.match(r.text, /home/);
    });
  });

  describe('methods', () => {
    it('a method the route lacks -> 405 with Allow of every route on the path', async () => {
      const r = await get(s.url, '/api/time', { method: 'DELETE' });
      assert.equal(r.status, 405);
      assert.equal(r.headers.allow, 'GET, HEAD, OPTIONS');
      const e = await get(s.url, '/api/echo', { method: 'GET' });
      assert.equal(e.status, 405);
      assert.equal(e.headers.allow, 'POST, PUT, PATCH, DELETE, OPTIONS');
    });

    it('OPTIONS -> 204 with Allow', async () => {
      const r = await get(s.url, '/api/time', { method: 'OPTIONS' });
      assert.equal(r.status, 204);
      assert.equal(r.headers.allow, 'GET, HEAD, OPTIONS');
    });

    it('a later route on the same path answers its own method', async () => {
      const r = await get(s.url, '/api/echo', { method: 'DELETE' });
      assert.deepEqual(JSON.parse(r.text), { deleted: true });
    });
  });

  describe('JSON bodies', () => {
    const json = { 'content-type': 'application/json' };
    for (const method of ['POST', 'PUT', 'PATCH']) {
      it(`${method} with a JSON body: ctx.body`, async () => {
        const r = await get(s.url, '/api/echo', { method, headers: json, body: '{"a":[1,2]}' });
        assert.equal(r.status, 200);
        assert.deepEqual(JSON.parse(r.text), { method, body: { a: [1, 2] } });
      });
    }

    it('application/*+json and charset=utf-8 are accepted', async () => {
      const r = await get(s.url, '/api/echo', {
        method: 'POST',
        headers: { 'content-type': 'application/merge-patch+json; charset=UTF-8' },
        body: '{"x":1}',
      });
      assert.equal(r.status, 200);
    });

    it('no body: ctx.body is undefined', async () => {
      const r = await get(s.url, '/api/echo', { method: 'POST' });
      assert.deepEqual(JSON.parse(r.text), { method: 'POST', body: null });
    });

    it('invalid JSON -> 400', async () => {
      const r = await get(s.url, '/api/echo', { method: 'POST', headers: json, body: '{"a":' });
      assert.equal(r.status, 400);
      assert.match(r.text, /not valid JSON/);
    });

    it('invalid UTF-8 -> 400', async () => {
      const raw = await rawSend(s.port, [
        'POST /api/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\nConnection: close\r\n\r\n',
        Buffer.from([0x22, 0xff, 0xfe, 0x22, 0x20]),
      ]);
      assert.equal(rawStatus(raw), 400);
    });

    it('unsupported Content-Type -> 415 with Accept-Post', async () => {
      const r = await get(s.url, '/api/echo', {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'hi',
      });
      assert.equal(r.status, 415);
      assert.equal(r.headers['accept-post'], 'application/json');
      assert.equal(JSON.parse(r.text).code, 'unsupported_media_type');
    });

    it('no Content-Type with a body -> 415; PATCH names Accept-Patch', async () => {
      const raw = await rawSend(s.port, [
        'PATCH /api/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
      ]);
      assert.equal(rawStatus(raw), 415);
      assert.equal(header(raw, 'accept-patch'), 'application/json');
    });

    it('a charset other than UTF-8 -> 415', async () => {
      const r = await get(s.url, '/api/echo', {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=iso-8859-1' },
        body: '{}',
      });
      assert.equal(r.status, 415);
    });

    it('a content coding -> 415', async () => {
      const r = await get(s.url, '/api/echo', {
        method: 'POST',
        headers: { ...json, 'content-encoding': 'gzip' },
        body: '{}',
      });
      assert.equal(r.status, 415);
    });

    it('chunked body within the limit is read', async () => {
      const raw = await rawSend(s.port, [
        'POST /api/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n',
        '5\r\n{"a":\r\n',
        '2\r\n1}\r\n',
        '0\r\n\r\n',
      ]);
      assert.equal(rawStatus(raw), 200);
      assert.match(raw, /\{"method":"POST","body":\{"a":1\}\}/);
    });

    it('Content-Length over the limit -> 413 before reading, Connection: close; the server keeps serving', async () => {
      const body = Buffer.alloc(4 * 1024 * 1024, 0x20);
      const raw = await rawSend(s.port, [
        `POST /api/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
        body,
      ]);
      assert.equal(rawStatus(raw), 413, raw.slice(0, 200));
      closeOfEarlyAnswer(raw);
      assert.match(raw, /larger than 1024 bytes/);
      assert.equal((await get(s.url, '/api/time')).status, 200);
    });

    it('Content-Length one byte over the limit -> 413; exactly at the limit -> read', async () => {
      const over = JSON.stringify(' '.repeat(LIMIT - 1)); // LIMIT + 1 bytes
      const at = JSON.stringify(' '.repeat(LIMIT - 2)); // LIMIT bytes
      assert.equal(Buffer.byteLength(over), LIMIT + 1);
      assert.equal(Buffer.byteLength(at), LIMIT);
      assert.equal(
        (await get(s.url, '/api/echo', { method: 'POST', headers: json, body: over })).status,
        413,
      );
      assert.equal((await get(s.url, '/api/echo', { method: 'POST', headers: json, body: at })).status, 200);
    });

    it('attack: a client that leaves mid-body once refused -> the server keeps serving', async () => {
      // Bun's body stream fails (AbortError) when the client goes mid-body; that failure, with nobody
      // reading any more, once ended the Bun process (an unhandled rejection).
      const sock = rawConnect(s.port);
      let got = '';
      let error = '';
      sock.on('data', (c: Buffer) => {
        got += c.toString('latin1');
      });
      sock.on('error', (err: NodeJS.ErrnoException) => {
        error = err.code ?? err.message;
      });
      sock.on('close', () => {
        error ||= 'closed';
      });
      // A chunked body (Bun fails its stream when the client goes; a Content-Length one it ends quietly).
      sock.write(
        'POST /api/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
      );
      const chunk = `${(600).toString(16)}\r\n${' '.repeat(600)}\r\n`;
      for (let i = 0; i < 4000 && !sock.destroyed && !got.includes('\r\n\r\n'); i++)
        if (!sock.write(chunk))
          await new Promise((resolve) => sock.once('drain', resolve).once('close', resolve));
      // Its answer, or the connection ended under the writes (Node closes after its 413).
      await waitFor(() => got.includes('\r\n\r\n') || error !== '' || sock.destroyed, 'the refusal');
      // The server refused before the body was in: its 413, or the connection ended under the writes.
      assert.ok(
        rawStatus(got) === 413 || /EPIPE|ECONNRESET/.test(error),
        `refused: ${got.slice(0, 40)} ${error}`,
      );
      sock.destroy();
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal((await get(s.url, '/api/time')).status, 200, 'still serving');
    });

    it('chunked without Content-Length over the limit -> 413 once the limit is passed', async () => {
      const chunk = `${(600).toString(16)}\r\n${' '.repeat(600)}\r\n`;
      const raw = await rawSend(s.port, [
        'POST /api/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
        chunk,
        chunk,
        ...Array.from({ length: 2000 }, () => chunk),
      ]);
      assert.equal(rawStatus(raw), 413, raw.slice(0, 200));
      closeOfEarlyAnswer(raw);
      assert.equal((await get(s.url, '/api/time')).status, 200, 'still serving');
    });
  });

  describe('errors', () => {
    for (const path of ['/api/throw', '/api/reject', '/api/bigint']) {
      it(`${path}: 500 with a request id, no stack trace or message`, async () => {
        const r = await get(s.url, path, { headers: { accept: 'application/json' } });
        assert.equal(r.status, 500);
        const body = JSON.parse(r.text) as { requestId?: string; code?: string };
        assert.match(body.requestId ?? '', /^[0-9a-f-]{36}$/);
        assert.equal(r.headers['x-request-id'], body.requestId);
        assert.equal(body.code, 'internal_error');
        assert.ok(!r.text.includes('secret'), r.text);
        assert.ok(!r.text.includes('    at '), 'no stack trace');
      });
    }
  });

  describe('JSONP on JSONP paths', () => {
    it('valid callback: text/javascript, nosniff, escaped, no-store', async () => {
      const r = await get(s.url, '/jsonp/data?callback=got');
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-type'], 'text/javascript; charset=utf-8');
      assert.equal(r.headers['x-content-type-options'], 'nosniff');
      assert.equal(r.headers['cache-control'], 'no-store');
      assert.ok(r.text.startsWith('/**/ got('));
      assert.ok(!/[<>&\u2028]/.test(r.text), r.text);
      let got: unknown;
      runInNewContext(r.text, {
        got: (v: unknown) => {
          got = JSON.parse(JSON.stringify(v));
        },
      });
      assert.deepEqual(got, { msg: '</script><b>&', ls: '\u2028' });
    });

    it('no callback: plain JSON', async () => {
      const r = await get(s.url, '/jsonp/data');
      assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
    });

    it('invalid callback: 400, not echoed, the handler does not run', async () => {
      const before = (await s.counts()).jsonp ?? 0;
      const r = await get(s.url, '/jsonp/data?callback=alert(1)//');
      assert.equal(r.status, 400);
      assert.ok(!r.text.includes('alert'));
      assert.equal((await s.counts()).jsonp ?? 0, before);
    });

    it('POST on a JSONP path answers JSON (JSONP is GET only)', async () => {
      const r = await get(s.url, '/jsonp/post?callback=cb', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"x":1}',
      });
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
      assert.deepEqual(JSON.parse(r.text), { got: { x: 1 } });
    });
  });
});

describe('createRoutes', () => {
  const ctx = {
    logger: { info() {}, warn() {}, error() {}, isLevelEnabled: () => false },
    clientAddress: () => '',
  };
  it('no routes -> no step', () => {
    assert.equal(createRoutes([], undefined, { maxBodyBytes: 1 }, ctx), undefined);
  });
  const bad: [string, Route, RegExp][] = [
    ['path without /', { path: 'api', handler: () => 1 }, /routes\[0\]\.path/],
    [
      'method that is not a token',
      { path: '/a', methods: ['GE T'], handler: () => 1 },
      /routes\[0\]\.methods/,
    ],
    [
      'cacheControl with a line break',
      { path: '/a', cacheControl: 'x\r\ny', handler: () => 1 },
      /cacheControl/,
    ],
  ];
  for (const [name, route, msg] of bad) {
    it(`${name} -> throws naming the key`, () => {
      assert.throws(() => createRoutes([route], undefined, { maxBodyBytes: 1 }, ctx), msg);
    });
  }
  it('handlers see IncomingMessage', () => {
    const r: Route = { path: '/x', handler: (req: IncomingMessage) => req.method };
    assert.ok(createRoutes([r], undefined, { maxBodyBytes: 1 }, ctx));
  });
});
