// Header rules against a real Gatehouse (200, 404, 405, 429, encoded paths), and their config checks.
// The HTTPS-only Strict-Transport-Security on a server declared secure: headers-secure.test.ts.
// matrix: http1 h2 h1-tls adapters runtimes (the static, policy, proxy and cache suites run on every protocol, adapter and runtime)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load.js';
import { get, makeSite, removeSite, scheme, startServer, type TestServer } from '../../helpers/http.js';

describe('header rules on a real server', () => {
  let dir: string;
  let s: TestServer;
  before(async () => {
    dir = makeSite({
      'index.html': '<!doctype html><title>home</title>',
      'notes.txt': 'hi\n',
      'embed/widget.html': '<!doctype html><title>widget</title>',
    });
    s = await startServer(dir, {
      headers: [
        { preset: 'security', set: { 'Permissions-Policy': 'camera=()' } },
        { glob: '/embed/**', remove: ['X-Frame-Options'] },
        {
          glob: '*.txt',
          set: { 'X-Robots-Tag': 'noindex' },
          append: { Link: '</a.css>; rel=preload; as=style' },
        },
        { glob: ['*.txt', '/nothing/**'], append: { Link: '</b.js>; rel=modulepreload' } },
      ],
      limits: { rateLimit: { requestsPerSec: 0.1, burst: 1, paths: ['/limited/**'] } },
    });
  });
  after(async () => {
    await s.close();
    removeSite(dir);
  });

  const security = (h: Record<string, unknown>) => {
    assert.equal(h['x-content-type-options'], 'nosniff');
    assert.equal(h['referrer-policy'], 'strict-origin-when-cross-origin');
    assert.equal(h['permissions-policy'], 'camera=()');
  };

  it('200: preset, set and glob rules apply; HSTS over HTTPS only (RFC 6797 §7.2)', async () => {
    const r = await get(s.url, '/notes.txt');
    assert.equal(r.status, 200);
    security(r.headers);
    assert.equal(r.headers['x-frame-options'], 'SAMEORIGIN');
    // the suite runs on plain HTTP and on TLS: HSTS on the TLS run only
    const hsts = scheme(s) === 'https' ? 'max-age=31536000; includeSubDomains' : undefined;
    assert.equal(r.headers['strict-transport-security'], hsts);
    assert.equal(r.headers['x-robots-tag'], 'noindex');
    // append adds field lines; Node's client joins them with ", " (RFC 9110 §5.3).
    assert.equal(r.headers.link, '</a.css>; rel=preload; as=style, </b.js>; rel=modulepreload');
  });

  it('404 keeps the headers', async () => {
    const r = await get(s.url, '/missing.txt', { headers: { accept: 'application/json' } });
    assert.equal(r.status, 404);
    security(r.headers);
    assert.equal(r.headers['x-robots-tag'], 'noindex');
  });

  it('405 keeps the headers', async () => {
    const r = await get(s.url, '/notes.txt', { method: 'POST' });
    assert.equal(r.status, 405);
    security(r.headers);
    assert.equal(r.headers['x-frame-options'], 'SAMEORIGIN');
  });

  it('429 from the rate limiter keeps the headers (rules run first)', async () => {
    await get(s.url, '/limited/x');
    const r = await get(s.url, '/limited/x');
    assert.equal(r.status, 429);
    security(r.headers);
  });

  it('remove drops what an earlier rule set, for its paths only', async () => {
    const r = await get(s.url, '/embed/widget.html');
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-frame-options'], undefined);
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.equal(r.headers['x-robots-tag'], undefined);
  });

  it('globs match the decoded path: /%65mbed/ is /embed/', async () => {
    const r = await get(s.url, '/%65mbed/widget.html');
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-frame-options'], undefined);
  });

  it('HEAD carries them too', async () => {
    const r = await get(s.url, '/', { method: 'HEAD' });
    security(r.headers);
  });
});

describe('header rule config is checked at load (issues name the key)', () => {
  const load = (headers: unknown) => () => parseConfig({ headers });
  const cases: [string, unknown, RegExp][] = [
    [
      'a name that is not a token (RFC 9110 §5.1)',
      [{ set: { 'X Bad': 'v' } }],
      /headers\[0\]\.set\.X Bad: not a valid header name/,
    ],
    [
      'CR LF in a value (response splitting)',
      [{ set: { 'X-A': 'v\r\nSet-Cookie: x=1' } }],
      /headers\[0\]\.set\.X-A: header values cannot contain CR or LF/,
    ],
    [
      'a control character in a value',
      [{ append: { 'X-A': 'a\u0001b' } }],
      /headers\[0\]\.append\.X-A: control character 0x01/,
    ],
    [
      'non-Latin-1 text in a value',
      [{ set: { 'X-A': '中文' } }],
      /headers\[0\]\.set\.X-A: header values are Latin-1 only/,
    ],
    [
      'framing headers are not rules',
      [{ set: { 'Content-Length': '5' } }],
      /headers\[0\]\.set\.Content-Length: not allowed here: message framing/,
    ],
    [
      'Cache-Control belongs to cachePolicy',
      [{ set: { 'cache-control': 'no-store' } }],
      /headers\[0\]\.set\.cache-control: not allowed here: use cachePolicy/,
    ],
    [
      'a bad name in remove',
      [{ remove: ['ok', 'bad name'] }],
      /headers\[0\]\.remove\[1\]: not a valid header name/,
    ],
    [
      'a rule that does nothing',
      [{ glob: '/x' }],
      /headers\[0\]: a header rule needs set, append, remove or preset/,
    ],
    ['an unknown preset', [{ preset: 'paranoid' }], /headers\[0\]\.preset/],
    ['an unknown key', [{ sett: {} }], /unknown key headers\[0\]\.sett/],
  ];
  for (const [name, input, message] of cases) it(name, () => assert.throws(load(input), message));

  it('valid rules load', () => {
    const c = parseConfig({
      headers: [
        { preset: 'security' },
        { glob: ['/a/**'], set: { Vary: 'Cookie' }, remove: ['X-Frame-Options'] },
      ],
    });
    assert.equal(c.headers.length, 2);
  });

  it('trustProxy entries are checked too (names the index)', () => {
    assert.throws(
      () => parseConfig({ trustProxy: ['loopback', '10.0.0.0/33'] }),
      /trustProxy\[1\]: prefix length must be 0-32/,
    );
    assert.deepEqual(parseConfig({ trustProxy: ['loopback', '::ffff:10.0.0.0/104'] }).trustProxy, [
      'loopback',
      '::ffff:10.0.0.0/104',
    ]);
  });
});
