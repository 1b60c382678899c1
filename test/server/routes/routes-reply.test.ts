// Routes that answer more than 200 with reply(status, body?, headers?): 201 + Location, 202, a
// handler-chosen 409 problem+json, 204/205/304, headers; against a real server on 127.0.0.1:0, with
// the error log captured (the routes: test/fixtures/runtimes/reply-routes.mjs, served by Bun and Deno on
// the runtime matrix). planAnswer (the pure decision) is tested table-style at the end.
// matrix: http1 h2 h1-tls adapters runtimes (the static, policy, proxy and cache suites run on every protocol and adapter)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { reply as publicReply } from '../../../src/index.js';
import {
  type AnswerInput,
  type AnswerPlan,
  planAnswer,
  Reply,
  reply,
} from '../../../src/server/routes/reply.js';
import { get, makeSite, raw, rawStatus, removeSite } from '../../helpers/http.js';
import { type RoutesServer, startRoutes } from '../../helpers/routes-server.js';
import { NO_LENGTH_ON_205 } from '../../helpers/runtimes.js';

const JSON_BODY = { 'content-type': 'application/json' };

describe('route replies', () => {
  let dir: string;
  let s: RoutesServer;
  let url: string;
  let port: number;
  /** The error log records for a request URL (written before the 500 is sent). */
  const errorsFor = async (u: string) => (await s.errors()).filter((e) => e.url === u);

  before(async () => {
    dir = makeSite({ 'index.html': '<!doctype html><title>home</title>' });
    s = await startRoutes('reply-routes.mjs', dir, {
      jsonp: { paths: ['/jsonp/*'] },
      cors: { origins: ['https://app.example'] },
    });
    ({ url, port } = s);
  });
  after(async () => {
    await s.app.close();
    removeSite(dir);
  });

  it('reply is exported from the library', () => {
    assert.equal(publicReply, reply);
  });

  describe('201 Created with Location', () => {
    it('absolute-path Location: 201, the JSON body, Location as given', async () => {
      const r = await get(url, '/api/items', { method: 'POST', headers: JSON_BODY, body: '{"name":"a"}' });
      assert.equal(r.status, 201);
      assert.equal(r.headers.location, '/api/items/7');
      assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(r.headers['cache-control'], 'no-store');
      assert.equal(r.headers['x-content-type-options'], 'nosniff');
      assert.equal(r.headers['content-length'], String(r.body.length));
      assert.deepEqual(JSON.parse(r.text), { id: 7, body: { name: 'a' } });
    });

    it('relative Location is resolved against the request URL (sibling of /api/things)', async () => {
      const r = await get(url, '/api/things', { method: 'POST' });
      assert.equal(r.status, 201);
      assert.equal(r.headers.location, '/api/things/8');
    });

    it('relative Location against a collection URL with a trailing slash, query and fragment kept', async () => {
      const r = await get(url, '/api/things/?page=2', { method: 'POST' });
      assert.equal(r.headers.location, '/api/things/9?v=1#f');
    });

    it('reply(201) without a body: Content-Length 0, no Content-Type', async () => {
      const r = await get(url, '/api/empty-201', { method: 'POST' });
      assert.equal(r.status, 201);
      assert.equal(r.headers['content-length'], '0');
      assert.equal(r.headers['content-type'], undefined);
      assert.equal(r.body.length, 0);
    });

    it('an absolute Location with another origin is sent absolute', async () => {
      const r = await get(url, '/api/other');
      assert.equal(r.status, 303);
      assert.equal(r.headers.location, 'https://other.example/a?b=1');
    });
  });

  it('202 Accepted with a body from an async handler', async () => {
    const r = await get(url, '/api/jobs', { method: 'POST' });
    assert.equal(r.status, 202);
    assert.deepEqual(JSON.parse(r.text), { queued: true, job: 'j1' });
  });

  it('a handler-chosen 409 application/problem+json (RFC 9457) keeps its type; the body is JSON', async () => {
    const r = await get(url, '/api/items/5', { method: 'PUT', headers: JSON_BODY, body: '{}' });
    assert.equal(r.status, 409);
    assert.equal(r.headers['content-type'], 'application/problem+json');
    assert.deepEqual(JSON.parse(r.text), {
      type: 'https://example.com/problems/version-conflict',
      title: 'Version conflict',
      status: 409,
      detail: 'Item 5 was changed since you read it.',
    });
  });

  describe('no content: 204, 205, 304', () => {
    it('reply(204): no body, no Content-Type or Content-Length (RFC 9110 §15.3.5)', async () => {
      const r = await get(url, '/api/items/5', { method: 'DELETE' });
      assert.equal(r.status, 204);
      assert.equal(r.body.length, 0);
      assert.equal(r.headers['content-type'], undefined);
      assert.equal(r.headers['content-length'], undefined);
      assert.equal(r.headers['cache-control'], 'no-store');
    });

    it('reply(205): no body, Content-Length 0 (RFC 9110 §15.3.6)', async () => {
      const r = await get(url, '/api/reset', { method: 'POST' });
      assert.equal(r.status, 205);
      assert.equal(r.headers['content-length'], NO_LENGTH_ON_205 ? undefined : '0');
      assert.equal(r.headers['content-type'], undefined);
    });

    it('reply(304) with an ETag: no body, no Content-Type (RFC 9110 §15.4.5)', async () => {
      const r = await raw(port, 'GET /api/etag HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      assert.equal(rawStatus(r), 304);
      assert.match(r, /^etag: "v1"$/im);
      assert.doesNotMatch(r, /^content-(type|length):/im);
      assert.ok(r.endsWith('\r\n\r\n'), 'nothing after the head');
    });

    it('reply(204, body) -> 500 problem+json, and a log line naming the route pattern and method', async () => {
      const r = await get(url, '/api/bad-204/42', { headers: { accept: 'application/json' } });
      assert.equal(r.status, 500);
      assert.equal(r.headers['content-type'], 'application/problem+json');
      assert.equal(JSON.parse(r.text).code, 'internal_error');
      assert.ok(!r.text.includes('oops'));
      const logged = await errorsFor('/api/bad-204/42');
      assert.equal(logged.length, 1);
      assert.match(logged[0]!.message!, /route GET \/api\/bad-204\/:id: a 204 answer cannot have a body/);
    });

    it('reply(304, null) -> 500 (null is a body)', async () => {
      const r = await get(url, '/api/bad-304');
      assert.equal(r.status, 500);
      assert.match((await errorsFor('/api/bad-304'))[0]!.message!, /route GET \/api\/bad-304: a 304 answer/);
    });
  });

  describe('headers', () => {
    const bad: [string, string, RegExp][] = [
      ['a header name that is not a token', '/api/bad-name', /header name "x bad" is not a token/],
      ['a NUL in a header value', '/api/bad-value', /header x-a has a value with CR, LF, NUL/],
      [
        'Transfer-Encoding (computed by the server)',
        '/api/reserved',
        /header Transfer-Encoding is set by the server/,
      ],
      ['a body JSON cannot represent', '/api/not-json', /JSON cannot represent/],
    ];
    for (const [name, path, msg] of bad) {
      it(`${name} -> 500, the log names the route`, async () => {
        const r = await get(url, path);
        assert.equal(r.status, 500);
        assert.equal(r.headers['x-a'], undefined);
        const logged = await errorsFor(path);
        assert.equal(logged.length, 1);
        assert.match(logged[0]!.message!, new RegExp(`^route GET ${path}: `));
        assert.match(logged[0]!.message!, msg);
      });
    }

    it("a reply's Cache-Control overrides the route default; extra headers are sent", async () => {
      const r = await get(url, '/api/head');
      assert.equal(r.status, 203);
      assert.equal(r.headers['cache-control'], 'public, max-age=60');
      assert.equal(r.headers['x-extra'], 'yes');
    });

    it("a reply's Vary merges with the CORS step's Vary (RFC 9110 §12.5.5)", async () => {
      const r = await get(url, '/api/vary', { headers: { origin: 'https://app.example' } });
      assert.equal(r.status, 200);
      const names = String(r.headers.vary)
        .split(',')
        .map((s) => s.trim().toLowerCase());
      assert.ok(names.includes('origin'), String(r.headers.vary));
      assert.ok(names.includes('accept-language'), String(r.headers.vary));
      assert.equal(r.headers['access-control-allow-origin'], 'https://app.example');
    });

    it('an array value sends one field line per member (Set-Cookie)', async () => {
      const r = await get(url, '/api/cookies');
      assert.deepEqual(r.headers['set-cookie'], ['a=1; Path=/', 'b=2; Path=/']);
    });
  });

  it('HEAD: the same status and headers, no body', async () => {
    const g = await get(url, '/api/head');
    const h = await get(url, '/api/head', { method: 'HEAD' });
    assert.equal(h.status, 203);
    assert.equal(h.body.length, 0);
    assert.equal(h.headers['content-length'], g.headers['content-length']);
    assert.equal(h.headers['x-extra'], 'yes');
    assert.equal(h.headers['content-type'], 'application/json; charset=utf-8');
  });

  it('a plain object with status/body/headers keys is a 200 JSON value, not a reply', async () => {
    const r = await get(url, '/api/shape');
    assert.equal(r.status, 200);
    assert.equal(r.headers.location, undefined);
    assert.deepEqual(JSON.parse(r.text), { status: 201, body: 'b', headers: { location: '/x' } });
  });

  describe('JSONP paths', () => {
    it('reply(200) with a callback: JSONP, with the reply headers', async () => {
      const r = await get(url, '/jsonp/ok?callback=cb');
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-type'], 'text/javascript; charset=utf-8');
      assert.equal(r.headers['x-a'], '1');
      assert.equal(r.text, '/**/ cb({"x":1});');
    });

    it('reply(201) with a callback: plain JSON (JSONP is for 200 only)', async () => {
      const r = await get(url, '/jsonp/created?callback=cb');
      assert.equal(r.status, 201);
      assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
      assert.deepEqual(JSON.parse(r.text), { x: 1 });
    });
  });
});

describe('reply()', () => {
  const bad: [string, number][] = [
    ['1xx (interim, RFC 9110 §15.2)', 100],
    ['199', 199],
    ['600', 600],
    ['a fraction', 3.5],
    ['a fraction in range', 201.5],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['0', 0],
    ['negative', -200],
    ['a numeric string', '201' as unknown as number],
  ];
  for (const [name, status] of bad) {
    it(`${name} -> TypeError naming the status`, () => {
      assert.throws(
        () => reply(status),
        (e: unknown) =>
          e instanceof TypeError &&
          e.message.includes(`status ${String(status)}`) &&
          /200 to 599/.test(e.message),
      );
    });
  }
  for (const status of [200, 201, 299, 304, 404, 599]) {
    it(`${status} is accepted`, () => assert.equal(reply(status).status, status));
  }
  it('a reply is frozen', () => {
    const r = reply(201, { a: 1 });
    assert.ok(Object.isFrozen(r));
    assert.ok(r instanceof Reply);
  });
});

describe('planAnswer', () => {
  const o: AnswerInput = { cacheControl: 'no-store', callback: undefined, target: '/api/items' };
  const send = (status: number, headers: Record<string, string | string[]>, body?: string): AnswerPlan =>
    body === undefined ? { kind: 'send', status, headers } : { kind: 'send', status, headers, body };
  const jsonHeaders = (body: string, extra: Record<string, string> = {}) => ({
    'cache-control': 'no-store',
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    'x-content-type-options': 'nosniff',
    ...extra,
  });
  const cases: [string, unknown, AnswerInput, AnswerPlan | RegExp][] = [
    ['plain value -> 200 JSON', { a: 1 }, o, send(200, jsonHeaders('{"a":1}'), '{"a":1}')],
    ['undefined -> 204', undefined, o, send(204, { 'cache-control': 'no-store' })],
    ['null -> 200 null', null, o, send(200, jsonHeaders('null'), 'null')],
    [
      'plain value with a callback -> JSONP',
      1,
      { ...o, callback: 'cb' },
      send(
        200,
        { ...jsonHeaders('/**/ cb(1);'), 'content-type': 'text/javascript; charset=utf-8' },
        '/**/ cb(1);',
      ),
    ],
    [
      'object shaped like a reply -> 200 JSON',
      { status: 500 },
      o,
      send(200, jsonHeaders('{"status":500}'), '{"status":500}'),
    ],
    ['plain BigInt -> invalid', 1n, o, /JSON cannot represent/],
    ['plain function -> invalid', () => 1, o, /JSON cannot represent/],
    [
      'reply 201 relative Location -> resolved',
      reply(201, 1, { location: 'items/7' }),
      o,
      send(201, jsonHeaders('1', { location: '/api/items/7' }), '1'),
    ],
    [
      'reply with `<` in the body -> escaped',
      reply(202, '<'),
      o,
      send(202, jsonHeaders('"\\u003c"'), '"\\u003c"'),
    ],
    [
      'reply header names are lowercased; values kept',
      reply(200, 1, { 'X-Trace': 'a b' }),
      o,
      send(200, jsonHeaders('1', { 'x-trace': 'a b' }), '1'),
    ],
    [
      'reply Content-Type overrides ours',
      reply(409, {}, { 'Content-Type': 'application/problem+json' }),
      o,
      send(409, jsonHeaders('{}', { 'content-type': 'application/problem+json' }), '{}'),
    ],
    [
      'reply 200 with a callback and its own Content-Type -> JSON, not JSONP',
      reply(200, 1, { 'content-type': 'application/json' }),
      { ...o, callback: 'cb' },
      send(200, jsonHeaders('1', { 'content-type': 'application/json' }), '1'),
    ],
    ['reply 204 -> no content headers', reply(204), o, send(204, { 'cache-control': 'no-store' })],
    ['reply 204 with a body -> invalid', reply(204, 'x'), o, /a 204 answer cannot have a body/],
    ['reply 205 with a body -> invalid', reply(205, 0), o, /a 205 answer cannot have a body/],
    ['reply 304 with null -> invalid', reply(304, null), o, /a 304 answer cannot have a body/],
    ['header name not a token -> invalid', reply(200, 1, { 'a:b': 'x' }), o, /not a token/],
    ['header value with CR LF -> invalid', reply(200, 1, { a: 'x\r\ny: z' }), o, /CR, LF/],
    ['header value above U+00FF -> invalid', reply(200, 1, { a: '\u2028' }), o, /CR, LF, NUL or another/],
    ['Content-Length -> invalid', reply(200, 1, { 'Content-Length': '1' }), o, /set by the server/],
    ['Content-Encoding -> invalid', reply(200, 1, { 'content-encoding': 'gzip' }), o, /set by the server/],
    ['Connection -> invalid', reply(200, 1, { connection: 'close' }), o, /set by the server/],
    [
      'the same header twice in two cases -> invalid',
      reply(200, 1, { 'x-a': '1', 'X-A': '2' }),
      o,
      /given twice/,
    ],
    ['two Location values -> invalid', reply(201, 1, { location: ['/a', '/b'] }), o, /exactly one value/],
    [
      'a number as a value -> invalid',
      reply(200, 1, { 'retry-after': 5 as unknown as string }),
      o,
      /not a string/,
    ],
    [
      'headers that are not an object -> invalid',
      reply(200, 1, 'x' as unknown as Record<string, string>),
      o,
      /plain object/,
    ],
    [
      'bad Location -> invalid naming it',
      reply(201, 1, { location: 'javascript:alert(1)' }),
      o,
      /Location "javascript:alert\(1\)" has the scheme/,
    ],
  ];
  for (const [name, value, input, want] of cases) {
    it(name, () => {
      const got = planAnswer(value, input);
      if (want instanceof RegExp) {
        assert.equal(got.kind, 'invalid');
        assert.match((got as { reason: string }).reason, want);
      } else {
        assert.deepEqual({ ...got, headers: { ...(got as { headers: object }).headers } }, want);
      }
    });
  }
});
