// Attacks on route replies: a spoofed Host or absolute-form target must not reach Location, and
// handler-supplied headers and Locations (often built from user input) must not split the response,
// redirect to another origin through a relative reference, or smuggle framing headers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseConfig, toServerOptions } from '../../src/config/load.js';
import { createGatehouse, type Gatehouse } from '../../src/server/app/gatehouse.js';
import { reply } from '../../src/server/routes/reply.js';
import type { Route } from '../../src/server/routes/routes.js';
import { get, makeSite, raw, rawStatus, removeSite } from '../helpers/http.js';

/** The head of a raw response (everything before the blank line). */
const headOf = (r: string) => r.slice(0, r.indexOf('\r\n\r\n'));

describe('route reply attacks', () => {
  let dir: string;
  let app: Gatehouse;
  let url: string;
  let port: number;

  before(async () => {
    dir = makeSite({ 'index.html': '<!doctype html><title>home</title>' });
    const routes: Route[] = [
      {
        path: '/api/items',
        methods: ['POST'],
        handler: () => reply(201, { id: 7 }, { location: 'items/7' }),
      },
      // A route that echoes user input into its headers: the mistakes an application makes.
      {
        path: '/api/go',
        methods: ['POST'],
        handler: (_req, { body }) => reply(201, null, { location: (body as { to: string }).to }),
      },
      {
        path: '/api/tag',
        methods: ['POST'],
        handler: (_req, { body }) => reply(200, { ok: true }, { 'x-tag': (body as { tag: string }).tag }),
      },
      {
        path: '/api/headers',
        methods: ['POST'],
        handler: (_req, { body }) => reply(200, { ok: true }, body as Record<string, string>),
      },
      { path: '/api/shape', methods: ['POST'], handler: (_req, { body }) => body },
    ];
    const c = parseConfig({ root: dir, log: { format: 'off' }, listen: { host: '127.0.0.1', port: 0 } });
    app = createGatehouse(toServerOptions(c), { routes });
    ({ url, port } = await app.listen());
  });
  after(async () => {
    await app.close();
    removeSite(dir);
  });

  const post = (path: string, body: unknown) =>
    get(url, path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('attack: Host header spoofed -> Location stays origin-relative', async () => {
    const r = await raw(
      port,
      'POST /api/items HTTP/1.1\r\nHost: evil.example\r\nX-Forwarded-Host: evil.example\r\nConnection: close\r\n\r\n',
    );
    assert.equal(rawStatus(r), 201);
    assert.match(headOf(r), /^location: \/api\/items\/7$/im);
    assert.doesNotMatch(r, /evil/);
  });

  it('attack: absolute-form target naming another authority -> Location stays origin-relative', async () => {
    const r = await raw(
      port,
      'POST http://evil.example/api/items HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n',
    );
    assert.equal(rawStatus(r), 201);
    assert.match(headOf(r), /^location: \/api\/items\/7$/im);
  });

  it('attack: CRLF in a reply header value -> 500, not sent', async () => {
    const r = await post('/api/tag', { tag: 'a\r\nSet-Cookie: session=evil' });
    assert.equal(r.status, 500);
    assert.equal(r.headers['set-cookie'], undefined);
    assert.equal(r.headers['x-tag'], undefined);
  });

  it('attack: bare LF in a reply header value -> 500, not sent', async () => {
    const r = await post('/api/tag', { tag: 'a\nSet-Cookie: session=evil' });
    assert.equal(r.status, 500);
    assert.equal(r.headers['set-cookie'], undefined);
  });

  it('attack: CRLF in Location -> 500, not sent', async () => {
    const r = await post('/api/go', { to: '/x\r\nSet-Cookie: session=evil' });
    assert.equal(r.status, 500);
    assert.equal(r.headers.location, undefined);
    assert.equal(r.headers['set-cookie'], undefined);
  });

  it('attack: TAB in Location (the URL parser would drop it silently) -> 500', async () => {
    const r = await post('/api/go', { to: 'jav\tascript:alert(1)' });
    assert.equal(r.status, 500);
    assert.equal(r.headers.location, undefined);
  });

  for (const to of [
    'javascript:alert(1)',
    'JavaScript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:x',
  ]) {
    it(`attack: ${to.split(':')[0]}: Location -> 500`, async () => {
      const r = await post('/api/go', { to });
      assert.equal(r.status, 500);
      assert.equal(r.headers.location, undefined);
    });
  }

  for (const to of ['//evil.example/x', '/\\evil.example', '\\\\evil.example', '\\/evil.example']) {
    it(`attack: relative Location ${JSON.stringify(to)} naming another host (open redirect) -> 500`, async () => {
      const r = await post('/api/go', { to });
      assert.equal(r.status, 500);
      assert.equal(r.headers.location, undefined);
    });
  }

  it('attack: dot segments leaving // at the path start -> sent as /.//, never a network-path reference', async () => {
    const r = await post('/api/go', { to: '/a/..//evil.example' });
    assert.equal(r.status, 201);
    assert.equal(r.headers.location, '/.//evil.example');
    // What a browser does with it: stays on our origin.
    assert.equal(new URL(r.headers.location, 'https://ours.example/').origin, 'https://ours.example');
  });

  it('attack: userinfo in an absolute Location (https://bank.example@evil.example) -> 500', async () => {
    const r = await post('/api/go', { to: 'https://bank.example@evil.example/' });
    assert.equal(r.status, 500);
    assert.equal(r.headers.location, undefined);
  });

  for (const name of ['Content-Length', 'Transfer-Encoding', 'Connection', 'content-encoding']) {
    it(`attack: ${name} in reply headers (framing) -> 500, not sent`, async () => {
      const value = name === 'Content-Length' ? '0' : name === 'Connection' ? 'upgrade' : 'chunked';
      const r = await post('/api/headers', { [name]: value });
      assert.equal(r.status, 500);
      assert.equal(r.headers['transfer-encoding'], undefined);
      assert.equal(r.headers['content-encoding'], undefined);
    });
  }

  it('attack: header name with a colon or space (header injection) -> 500', async () => {
    for (const name of ['X-A: b\r\nSet-Cookie', 'X A', 'X-A:']) {
      const r = await post('/api/headers', { [name]: 'v' });
      assert.equal(r.status, 500, name);
      assert.equal(r.headers['set-cookie'], undefined);
    }
  });

  it('attack: a __proto__ header name from JSON input -> an ordinary header, no prototype change', async () => {
    const body = '{"__proto__":"x","constructor":"y"}';
    const r = await raw(
      port,
      `POST /api/headers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    assert.equal(rawStatus(r), 200);
    assert.match(headOf(r), /^__proto__: x$/m);
    assert.match(headOf(r), /^constructor: y$/m);
    assert.equal(({} as Record<string, unknown>).x, undefined);
  });

  it('attack: a JSON body shaped like a reply echoed as the answer -> 200 JSON, its headers not sent', async () => {
    const shape = { status: 302, body: null, headers: { location: 'https://evil.example/' } };
    const r = await post('/api/shape', shape);
    assert.equal(r.status, 200);
    assert.equal(r.headers.location, undefined);
    assert.deepEqual(JSON.parse(r.text), shape);
  });
});
