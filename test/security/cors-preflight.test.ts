// Attack: using the CORS preflight answer as a grant or as a mirror. Since the default reflects
// Access-Control-Request-Headers (Authorization included), the echo must reach only allowed origins,
// only for a field that is a list of tokens (RFC 9110 §5.6.1), and only up to a bound. Real Gatehouse
// servers on 127.0.0.1:0, raw sockets where the bytes matter.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_REQUEST_HEADER_NAMES } from '../../src/http/cors.js';
import {
  get,
  makeSite,
  type Res,
  raw,
  rawStatus,
  removeSite,
  startServer,
  type TestServer,
} from '../helpers/http.js';

const ALLOWED = 'https://app.example';
const EVIL = 'https://evil.example';

/** The Access-Control-* response headers, by lowercase name. */
function ac(r: Res): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers)) if (k.startsWith('access-control-')) out[k] = String(v);
  return out;
}

function preflight(s: TestServer, origin: string, acrh: string): Promise<Res> {
  return get(s.url, '/api/items', {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': acrh },
  });
}

/** A raw preflight from ALLOWED with `acrhLines` written as they are (bytes as latin1). */
function rawPreflight(s: TestServer, acrhLines: string): Promise<string> {
  return raw(
    s.port,
    Buffer.from(
      `OPTIONS /api/items HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: ${ALLOWED}\r\n` +
        `Access-Control-Request-Method: POST\r\n${acrhLines}Connection: close\r\n\r\n`,
      'latin1',
    ),
  );
}

describe('attack: the preflight answer as a grant or a mirror', () => {
  let dir: string;
  /** `--cors ALLOWED` alone: the default, reflecting. */
  let s: TestServer;
  /** The same with credentials. */
  let cred: TestServer;
  before(async () => {
    dir = makeSite({ 'api/data.json': '{"secret":1}' });
    s = await startServer(dir, { cors: { origins: [ALLOWED] } });
    cred = await startServer(dir, { cors: { origins: [ALLOWED], credentials: true } });
  });
  after(async () => {
    await Promise.all([s.close(), cred.close()]);
    removeSite(dir);
  });

  it('attack: preflight from a disallowed origin asking for Authorization -> no Allow-* headers', async () => {
    for (const server of [s, cred]) {
      const r = await preflight(server, EVIL, 'authorization,content-type');
      assert.equal(r.status, 200);
      assert.deepEqual(ac(r), {});
    }
    // Control: the allowed origin gets the echo, so the empty answer above is the origin check.
    assert.equal(
      (await preflight(s, ALLOWED, 'authorization')).headers['access-control-allow-headers'],
      'authorization',
    );
  });

  it('attack: actual request from a disallowed origin with Authorization -> no Access-Control-* headers', async () => {
    for (const server of [s, cred]) {
      const r = await get(server.url, '/api/data.json', {
        headers: { origin: EVIL, authorization: 'Bearer stolen' },
      });
      assert.equal(r.status, 200);
      assert.deepEqual(ac(r), {});
    }
  });

  it('attack: lookalike and opaque origins asking for Authorization -> no Allow-* headers', async () => {
    for (const origin of [
      'https://app.example.evil.net',
      'https://evil-app.example',
      'https://app.example.',
      'https://app.example@evil.net',
      'http://app.example',
      'null',
      `${ALLOWED}, ${EVIL}`,
    ]) {
      const r = await preflight(s, origin, 'authorization');
      assert.deepEqual(ac(r), {}, origin);
    }
  });

  it('attack: credentials with the default reflection -> the origin is named, never "*"', async () => {
    const r = await preflight(cred, ALLOWED, 'authorization,x-csrf');
    assert.equal(r.headers['access-control-allow-origin'], ALLOWED);
    assert.equal(r.headers['access-control-allow-credentials'], 'true');
    assert.equal(r.headers['access-control-allow-headers'], 'authorization, x-csrf');
  });

  it('attack: a requested "*" under the default reflection -> not echoed into the wildcard', async () => {
    for (const server of [s, cred]) {
      const star = await preflight(server, ALLOWED, 'x-a, *');
      assert.deepEqual(ac(star), {}, 'a requested "*" is not echoed into the wildcard');
    }
  });

  it('attack: Access-Control-Request-Headers with non-token junk -> not reflected', async () => {
    for (const junk of [
      'x-a, <script>alert(1)</script>',
      '"authorization"',
      'x-a;q=1',
      'x-a: injected',
      'x-a, x(b)',
      'x a',
      'x-a/1',
      'x-a, {}',
      'x-a=1',
    ]) {
      const r = await preflight(s, ALLOWED, junk);
      assert.equal(r.status, 200, junk);
      assert.deepEqual(ac(r), {}, junk);
    }
  });

  it('attack: obs-text bytes in Access-Control-Request-Headers -> not reflected', async () => {
    const text = await rawPreflight(s, 'Access-Control-Request-Headers: x-a, x-\xe9\xff\r\n');
    assert.equal(rawStatus(text), 200);
    assert.doesNotMatch(text, /access-control-allow-/i);
    assert.doesNotMatch(text, /[\xe9\xff]/);
  });

  it('attack: a second Access-Control-Request-Headers line carrying junk -> the joined list is not reflected', async () => {
    const text = await rawPreflight(
      s,
      'Access-Control-Request-Headers: x-a\r\nAccess-Control-Request-Headers: x-b, "x-c"\r\n',
    );
    assert.equal(rawStatus(text), 200);
    assert.doesNotMatch(text, /access-control-allow-headers/i);
    // Control: two clean lines are one list (RFC 9110 §5.3) and are echoed.
    const ok = await rawPreflight(
      s,
      'Access-Control-Request-Headers: x-a\r\nAccess-Control-Request-Headers: x-b\r\n',
    );
    assert.match(ok, /\r\naccess-control-allow-headers: x-a, x-b\r\n/i);
  });

  it('attack: CR, LF or NUL inside Access-Control-Request-Headers -> 400 from the parser, nothing echoed', async () => {
    for (const bad of ['x-a\rSet-Cookie: a=b', 'x-a\0x-b', 'x-a\x01']) {
      const text = await rawPreflight(s, `Access-Control-Request-Headers: ${bad}\r\n`);
      assert.equal(rawStatus(text), 400, JSON.stringify(bad));
      assert.doesNotMatch(text, /access-control-allow-|set-cookie/i, JSON.stringify(bad));
    }
  });

  it('attack: obs-fold continuation of Access-Control-Request-Headers -> 400 (RFC 9112 §5.2), nothing echoed', async () => {
    const text = await rawPreflight(s, 'Access-Control-Request-Headers: x-a,\r\n Set-Cookie: a=b\r\n');
    assert.equal(rawStatus(text), 400);
    assert.doesNotMatch(text, /set-cookie|access-control-allow-headers/i);
  });

  it(`attack: huge Access-Control-Request-Headers list (${MAX_REQUEST_HEADER_NAMES + 1} names) -> preflight denied, nothing echoed`, async () => {
    const names = (n: number) => Array.from({ length: n }, (_, i) => `x-h${i}`).join(',');
    const r = await preflight(s, ALLOWED, names(MAX_REQUEST_HEADER_NAMES + 1));
    assert.equal(r.status, 200);
    assert.deepEqual(ac(r), {});
    // Control: at the bound the list is echoed, and the echo is no longer than the field asked.
    const ok = await preflight(s, ALLOWED, names(MAX_REQUEST_HEADER_NAMES));
    const echo = ok.headers['access-control-allow-headers'];
    assert.equal(echo?.split(', ').length, MAX_REQUEST_HEADER_NAMES);
    assert.ok(echo!.length <= names(MAX_REQUEST_HEADER_NAMES).length + MAX_REQUEST_HEADER_NAMES);
  });

  it('attack: Access-Control-Request-Headers beyond limits.maxHeaderBytes -> 431, nothing echoed', async () => {
    const long = Array.from({ length: 90 }, (_, i) => `x-${'a'.repeat(200)}-${i}`).join(',');
    const text = await rawPreflight(s, `Access-Control-Request-Headers: ${long}\r\n`);
    assert.equal(rawStatus(text), 431);
    assert.doesNotMatch(text, /access-control-allow-/i);
  });
});
