// The CORS step against real servers on 127.0.0.1:0: preflights answered before everything else, and
// CORS headers that survive on every later response (200, 301, 304, 404, 405, 500).
// matrix: http1 h2 h1-tls adapters runtimes (the static, policy, proxy and cache suites run on every protocol, adapter and runtime)
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, symlinkSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { z } from 'zod';
import { parseServeFlags, UsageError } from '../../../src/cli/main.js';
import type { corsSchema } from '../../../src/config/cors.js';
import { ConfigError, parseConfig } from '../../../src/config/load.js';
import type { GatehouseConfigInput } from '../../../src/config/schema.js';
import { corsApplies, isPreflightShaped } from '../../../src/http/cors.js';
import type { CorsOptions } from '../../../src/server/steps/cors.js';
import { hashPassword } from '../../../src/server/steps/password-hash.js';
import { needs } from '../../helpers/ci.js';
import { get, makeSite, type Res, removeSite, startServer, type TestServer } from '../../helpers/http.js';
import { waitUntilEncoded } from '../../helpers/wait.js';

// Compile-time check: the resolved config section is what the server step runs on.
const resolvedCorsIsCorsOptions = (c: z.output<typeof corsSchema>): CorsOptions => c;
void resolvedCorsIsCorsOptions;

const A = 'https://a.com';
const JS = `export const x = 1;\n${'console.log("cors");\n'.repeat(100)}`; // > 1 KB, compressible
const ALLOW_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS, HEAD';

/** The Access-Control-* response headers, by lowercase name. */
function ac(r: Res): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers)) if (k.startsWith('access-control-')) out[k] = String(v);
  return out;
}

/** Vary as a lowercase, sorted list of names. */
function vary(h: IncomingHttpHeaders): string[] {
  return (h.vary ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean)
    .sort();
}

function preflight(
  s: TestServer,
  path: string,
  origin: string,
  method: string,
  requestHeaders?: string,
): Promise<Res> {
  const headers: Record<string, string> = { origin, 'access-control-request-method': method };
  if (requestHeaders !== undefined) headers['access-control-request-headers'] = requestHeaders;
  return get(s.url, path, { method: 'OPTIONS', headers });
}

describe('CORS', () => {
  let dir: string;
  const servers: TestServer[] = [];
  const start = async (cors: GatehouseConfigInput['cors'], extra: GatehouseConfigInput = {}) => {
    const s = await startServer(dir, { ...extra, cors });
    servers.push(s);
    return s;
  };
  // The file whose read fails (below); under CI the 500 case must run, so its absence fails it.
  const hasProcMem = existsSync('/proc/self/mem');

  before(() => {
    dir = makeSite({
      'index.html': '<!doctype html><title>home</title>',
      'notes.txt': 'hello\n',
      'app.js': JS,
      'docs/index.html': '<!doctype html><title>docs</title>',
      'api/data.json': '{"a":1}',
    });
    // A directory entry the static handler cannot read: reading /proc/self/mem at offset 0 fails with
    // EIO even for root, so the handler answers 500 (static.followSymlinks lets it reach the file).
    if (hasProcMem) symlinkSync('/proc/self/mem', join(dir, 'boom.txt'));
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
    removeSite(dir);
  });

  describe('a list of origins', () => {
    let s: TestServer;
    before(async () => {
      s = await start(
        {
          origins: [A, 'https://*.example.com', 'HTTPS://B.com:443/'],
          headers: ['Content-Type', 'X-Token'],
          exposeHeaders: ['ETag', 'X-Request-Id'],
        },
        { static: { followSymlinks: true } },
      );
    });

    it('no Origin -> 200 without CORS headers, Vary: Origin (another Origin gets another answer)', async () => {
      const r = await get(s.url, '/notes.txt');
      assert.equal(r.status, 200);
      assert.deepEqual(ac(r), {});
      assert.deepEqual(vary(r.headers), ['origin']);
    });

    it('allowed Origin -> echoed, Expose-Headers, Vary: Origin, no credentials header', async () => {
      const r = await get(s.url, '/notes.txt', { headers: { origin: A } });
      assert.equal(r.status, 200);
      assert.equal(r.text, 'hello\n');
      assert.deepEqual(ac(r), {
        'access-control-allow-origin': A,
        'access-control-expose-headers': 'ETag, X-Request-Id',
      });
      assert.deepEqual(vary(r.headers), ['origin']);
    });

    it('HEAD from an allowed Origin -> the same CORS headers', async () => {
      const r = await get(s.url, '/notes.txt', { method: 'HEAD', headers: { origin: A } });
      assert.equal(r.status, 200);
      assert.equal(r.headers['access-control-allow-origin'], A);
    });

    it('disallowed Origin -> 200 as usual, no Access-Control-* at all, Vary: Origin', async () => {
      const r = await get(s.url, '/notes.txt', { headers: { origin: 'https://evil.net' } });
      assert.equal(r.status, 200);
      assert.equal(r.text, 'hello\n');
      assert.deepEqual(ac(r), {});
      assert.deepEqual(vary(r.headers), ['origin']);
    });

    for (const origin of [
      'https://a.com.evil.net',
      'https://evil-a.com',
      'https://a.com.',
      'https://xa.com',
    ]) {
      it(`lookalike ${origin} -> not allowed`, async () => {
        const r = await get(s.url, '/notes.txt', { headers: { origin } });
        assert.equal(r.headers['access-control-allow-origin'], undefined);
      });
    }

    const variants: [string, string, string | undefined][] = [
      ['other scheme', 'http://a.com', undefined],
      ['explicit default port (never serialised by browsers)', 'https://a.com:443', undefined],
      ['other port', 'https://a.com:8443', undefined],
      ['trailing slash (not a serialised origin)', 'https://a.com/', undefined],
      ['scheme and host in capitals (scheme compared as serialised)', 'HTTPS://A.COM', undefined],
      ['host in capitals (host compared lowercased), echoed as received', 'https://A.COM', 'https://A.COM'],
      ['configured "HTTPS://B.com:443/" normalised to https://b.com', 'https://b.com', 'https://b.com'],
    ];
    for (const [name, origin, want] of variants) {
      it(`${name}: ${origin} -> ${want ?? 'not allowed'}`, async () => {
        const r = await get(s.url, '/notes.txt', { headers: { origin } });
        assert.equal(r.headers['access-control-allow-origin'], want);
        assert.deepEqual(vary(r.headers), ['origin']);
      });
    }

    it('Origin: null when null is not listed -> not allowed', async () => {
      const r = await get(s.url, '/notes.txt', { headers: { origin: 'null' } });
      assert.equal(r.headers['access-control-allow-origin'], undefined);
    });

    const pattern: [string, boolean][] = [
      ['https://app.example.com', true],
      ['https://a.b.example.com', true],
      ['https://example.com', false],
      ['https://example.com.evil.net', false],
      ['https://evilexample.com', false],
      ['http://app.example.com', false],
      ['https://app.example.com:8443', false],
    ];
    for (const [origin, ok] of pattern) {
      it(`subdomain pattern https://*.example.com: ${origin} -> ${ok ? 'echoed' : 'not allowed'}`, async () => {
        const r = await get(s.url, '/notes.txt', { headers: { origin } });
        assert.equal(r.headers['access-control-allow-origin'], ok ? origin : undefined);
      });
    }

    it('Vary merges with Accept-Encoding on a compressible file, neither replacing the other', async () => {
      // The variants compressed on the fly are made in the background: identity until then.
      const files = s.app.static.files;
      for (const ae of ['br', 'gzip'])
        await waitUntilEncoded(s.url, '/app.js', ae, { headers: { origin: A }, files });
      for (const ae of ['br', 'gzip', undefined]) {
        const headers: Record<string, string> = { origin: A };
        if (ae) headers['accept-encoding'] = ae;
        const r = await get(s.url, '/app.js', { headers });
        assert.equal(r.status, 200);
        assert.equal(r.headers['content-encoding'], ae);
        assert.deepEqual(vary(r.headers), ['accept-encoding', 'origin'], `${ae}: ${r.headers.vary}`);
        assert.equal(r.headers['access-control-allow-origin'], A);
      }
      const plain = await get(s.url, '/app.js', { headers: { 'accept-encoding': 'br' } });
      assert.deepEqual(vary(plain.headers), ['accept-encoding', 'origin'], 'without Origin too');
    });

    it('304 keeps the CORS headers and both Vary names', async () => {
      const headers = { origin: A, 'accept-encoding': 'br' };
      const { etag } = (await get(s.url, '/app.js', { headers })).headers;
      const r = await get(s.url, '/app.js', { headers: { ...headers, 'if-none-match': etag! } });
      assert.equal(r.status, 304);
      assert.equal(r.headers['access-control-allow-origin'], A);
      assert.equal(r.headers['access-control-expose-headers'], 'ETag, X-Request-Id');
      assert.deepEqual(vary(r.headers), ['accept-encoding', 'origin']);
    });

    it('404 keeps the CORS headers and Vary: Origin', async () => {
      const r = await get(s.url, '/missing.txt', { headers: { origin: A, accept: 'application/json' } });
      assert.equal(r.status, 404);
      assert.equal(r.headers['content-type'], 'application/problem+json');
      assert.equal(r.headers['access-control-allow-origin'], A);
      assert.deepEqual(vary(r.headers), ['origin']);
    });

    it('405 keeps the CORS headers, Allow and Vary: Origin', async () => {
      const r = await get(s.url, '/notes.txt', { method: 'DELETE', headers: { origin: A } });
      assert.equal(r.status, 405);
      assert.equal(r.headers.allow, 'GET, HEAD, OPTIONS');
      assert.equal(r.headers['access-control-allow-origin'], A);
      assert.deepEqual(vary(r.headers), ['origin']);
    });

    it('301 to the slash form of a directory keeps the CORS headers', async () => {
      const r = await get(s.url, '/docs', { headers: { origin: A } });
      assert.equal(r.status, 301);
      assert.equal(r.headers.location, '/docs/');
      assert.equal(r.headers['access-control-allow-origin'], A);
      assert.deepEqual(vary(r.headers), ['origin']);
    });

    it(
      '500 from the static handler keeps the CORS headers and Vary: Origin',
      needs(hasProcMem, 'no /proc/self/mem here (the file whose read fails with EIO)'),
      async () => {
        assert.ok(hasProcMem, '/proc/self/mem exists: CI must run this case (its read fails with EIO)');
        const r = await get(s.url, '/boom.txt', { headers: { origin: A, accept: 'application/json' } });
        assert.equal(r.status, 500);
        assert.equal(r.headers['access-control-allow-origin'], A);
        assert.equal(r.headers['access-control-expose-headers'], 'ETag, X-Request-Id');
        assert.deepEqual(vary(r.headers), ['origin']);
      },
    );

    it('OPTIONS without Access-Control-Request-Method is not a preflight: 204 + Allow from static', async () => {
      const r = await get(s.url, '/notes.txt', { method: 'OPTIONS', headers: { origin: A } });
      assert.equal(r.status, 204);
      assert.equal(r.headers.allow, 'GET, HEAD, OPTIONS');
      assert.equal(r.headers['access-control-allow-origin'], A);
      assert.equal(r.headers['access-control-allow-methods'], undefined);
      assert.deepEqual(vary(r.headers), ['origin']);
    });

    it('OPTIONS with Access-Control-Request-Method but no Origin is not a preflight either', async () => {
      const r = await get(s.url, '/notes.txt', {
        method: 'OPTIONS',
        headers: { 'access-control-request-method': 'PUT' },
      });
      assert.equal(r.status, 204);
      assert.equal(r.headers.allow, 'GET, HEAD, OPTIONS');
      assert.deepEqual(ac(r), {});
    });

    it('preflight from an allowed origin -> 200, Content-Length: 0, the full answer', async () => {
      const r = await preflight(s, '/api/data.json', A, 'PUT', 'content-type, x-token');
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-length'], '0');
      assert.equal(r.body.length, 0);
      assert.deepEqual(ac(r), {
        'access-control-allow-origin': A,
        'access-control-allow-methods': ALLOW_METHODS,
        'access-control-allow-headers': 'Content-Type, X-Token',
        'access-control-max-age': '86400',
      });
      assert.deepEqual(vary(r.headers), ['origin']);
      assert.equal(r.headers.allow, undefined, 'answered by the CORS step, not the static handler');
    });

    it('preflight for a path with no file is still answered (CORS runs before the handlers)', async () => {
      const r = await preflight(s, '/no/such/path', A, 'POST');
      assert.equal(r.status, 200);
      assert.equal(r.headers['access-control-allow-origin'], A);
    });

    it('preflight from a subdomain -> echoed', async () => {
      const r = await preflight(s, '/', 'https://app.example.com', 'PATCH');
      assert.equal(r.headers['access-control-allow-origin'], 'https://app.example.com');
    });

    it('preflight denied by origin -> 200, Content-Length: 0, no Access-Control-* headers', async () => {
      const r = await preflight(s, '/', 'https://a.com.evil.net', 'PUT');
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-length'], '0');
      assert.deepEqual(ac(r), {});
      assert.deepEqual(vary(r.headers), ['origin']);
    });

    it('preflight denied by method (not listed, or not the listed case) -> no Access-Control-*', async () => {
      for (const m of ['PROPFIND', 'patch']) {
        const r = await preflight(s, '/', A, m);
        assert.equal(r.status, 200);
        assert.deepEqual(ac(r), {}, m);
      }
    });

    it('preflight denied by an unlisted header -> no Access-Control-*', async () => {
      const r = await preflight(s, '/', A, 'PUT', 'x-token, x-other');
      assert.deepEqual(ac(r), {});
    });

    it('preflight: CORS-safelisted names need no listing; Authorization does', async () => {
      const ok = await preflight(s, '/', A, 'PUT', 'accept, accept-language, content-language');
      assert.equal(ok.headers['access-control-allow-origin'], A);
      const auth = await preflight(s, '/', A, 'GET', 'authorization');
      assert.deepEqual(ac(auth), {});
    });
  });

  describe('null listed', () => {
    let s: TestServer;
    before(async () => {
      s = await start({ origins: ['null', A] });
    });

    it('Origin: null -> echoed "null"', async () => {
      const r = await get(s.url, '/notes.txt', { headers: { origin: 'null' } });
      assert.equal(r.headers['access-control-allow-origin'], 'null');
      assert.deepEqual(vary(r.headers), ['origin']);
    });

    it('preflight from Origin: null -> allowed', async () => {
      const r = await preflight(s, '/', 'null', 'PUT');
      assert.equal(r.headers['access-control-allow-origin'], 'null');
    });
  });

  describe('wildcard', () => {
    let s: TestServer;
    before(async () => {
      s = await start({ origins: ['*'], headers: ['*'], exposeHeaders: ['*'] });
    });

    it('any Origin -> "*", no Vary (the answer is the same for every origin)', async () => {
      for (const origin of ['https://x.net', 'null', A]) {
        const r = await get(s.url, '/notes.txt', { headers: { origin } });
        assert.equal(r.headers['access-control-allow-origin'], '*', origin);
        assert.equal(r.headers['access-control-expose-headers'], '*');
        assert.equal(r.headers['access-control-allow-credentials'], undefined);
        assert.equal(r.headers.vary, undefined);
      }
    });

    it('no Origin -> "*" as well, so the response does not depend on Origin', async () => {
      const r = await get(s.url, '/notes.txt');
      assert.equal(r.headers['access-control-allow-origin'], '*');
      assert.equal(r.headers.vary, undefined);
    });

    it('a compressible file: Vary is Accept-Encoding alone', async () => {
      const r = await get(s.url, '/app.js', { headers: { origin: A, 'accept-encoding': 'gzip' } });
      assert.deepEqual(vary(r.headers), ['accept-encoding']);
      assert.equal(r.headers['access-control-allow-origin'], '*');
    });

    it('preflight -> "*" and headers "*", no Vary', async () => {
      const r = await preflight(s, '/', 'https://x.net', 'DELETE', 'x-custom');
      assert.equal(r.status, 200);
      assert.deepEqual(ac(r), {
        'access-control-allow-origin': '*',
        'access-control-allow-methods': ALLOW_METHODS,
        'access-control-allow-headers': '*',
        'access-control-max-age': '86400',
      });
      assert.equal(r.headers.vary, undefined);
    });

    it('preflight: headers "*" does not cover Authorization (Fetch: CORS non-wildcard request-header name)', async () => {
      const r = await preflight(s, '/', 'https://x.net', 'GET', 'authorization');
      assert.deepEqual(ac(r), {});
    });
  });

  describe('credentials, named Authorization, preflightStatus 204', () => {
    let s: TestServer;
    before(async () => {
      s = await start({
        origins: [A],
        credentials: true,
        headers: ['X-Token', 'Authorization'],
        preflightStatus: 204,
        maxAgeSec: 600,
      });
    });

    it('allowed Origin -> echoed (never "*") with Access-Control-Allow-Credentials: true', async () => {
      const r = await get(s.url, '/notes.txt', { headers: { origin: A } });
      assert.deepEqual(ac(r), {
        'access-control-allow-origin': A,
        'access-control-allow-credentials': 'true',
      });
      assert.deepEqual(vary(r.headers), ['origin']);
    });

    it('disallowed Origin -> no credentials header either', async () => {
      const r = await get(s.url, '/notes.txt', { headers: { origin: 'https://b.com' } });
      assert.deepEqual(ac(r), {});
    });

    it('preflight -> 204 without Content-Length, Authorization allowed because it is named', async () => {
      const r = await preflight(s, '/', A, 'PUT', 'authorization, x-token');
      assert.equal(r.status, 204);
      assert.equal(r.headers['content-length'], undefined);
      assert.deepEqual(ac(r), {
        'access-control-allow-origin': A,
        'access-control-allow-credentials': 'true',
        'access-control-allow-methods': ALLOW_METHODS,
        'access-control-allow-headers': 'X-Token, Authorization',
        'access-control-max-age': '600',
      });
    });

    it('denied preflight -> 204 too, no Access-Control-*', async () => {
      const r = await preflight(s, '/', 'https://b.com', 'PUT');
      assert.equal(r.status, 204);
      assert.deepEqual(ac(r), {});
      assert.deepEqual(vary(r.headers), ['origin']);
    });
  });

  describe('reflect mode', () => {
    let s: TestServer;
    before(async () => {
      s = await start({ origins: [A], reflectHeaders: true });
    });

    it('preflight -> the requested headers come back; Vary names Origin and the request fields', async () => {
      const r = await preflight(s, '/', A, 'PUT', 'X-Foo, x-bar');
      assert.equal(r.status, 200);
      assert.equal(r.headers['access-control-allow-headers'], 'x-foo, x-bar');
      assert.deepEqual(vary(r.headers), [
        'access-control-request-headers',
        'access-control-request-method',
        'origin',
      ]);
    });

    it('Authorization is reflected too (no headers list restricts it)', async () => {
      const r = await preflight(s, '/', A, 'PUT', 'authorization');
      assert.equal(r.headers['access-control-allow-headers'], 'authorization');
    });

    it('a simple request has Vary: Origin only', async () => {
      const r = await get(s.url, '/notes.txt', { headers: { origin: A } });
      assert.deepEqual(vary(r.headers), ['origin']);
    });
  });

  describe('default (origins alone, as --cors ORIGIN): a JSON API preflight passes', () => {
    let s: TestServer;
    let any: TestServer;
    let cred: TestServer;
    let strict: TestServer;
    let ruled: TestServer;
    const REFLECT_VARY = ['access-control-request-headers', 'access-control-request-method', 'origin'];
    before(async () => {
      s = await start({ origins: [A] });
      any = await start({ origins: ['*'] });
      cred = await start({ origins: [A], credentials: true });
      strict = await start({ origins: [A], reflectHeaders: false });
      ruled = await start({ origins: [A] }, { headers: [{ set: { Vary: 'Accept-Language' } }] });
    });

    it('Content-Type and Authorization asked for -> echoed, Vary names Origin and the request fields', async () => {
      const r = await preflight(s, '/api/items', A, 'POST', 'authorization,content-type');
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-length'], '0');
      assert.deepEqual(ac(r), {
        'access-control-allow-origin': A,
        'access-control-allow-methods': ALLOW_METHODS,
        'access-control-allow-headers': 'authorization, content-type',
        'access-control-max-age': '86400',
      });
      assert.deepEqual(vary(r.headers), REFLECT_VARY);
    });

    it('no Access-Control-Request-Headers -> passes without Allow-Headers, same Vary', async () => {
      const r = await preflight(s, '/api/items', A, 'POST');
      assert.equal(r.headers['access-control-allow-origin'], A);
      assert.equal(r.headers['access-control-allow-headers'], undefined);
      assert.deepEqual(vary(r.headers), REFLECT_VARY);
    });

    it('Vary set by a header rule is merged with the preflight Vary, not replaced', async () => {
      const r = await preflight(ruled, '/api/items', A, 'POST', 'content-type');
      assert.equal(r.headers['access-control-allow-headers'], 'content-type');
      assert.deepEqual(vary(r.headers), ['accept-language', ...REFLECT_VARY]);
    });

    it('non-preflight responses keep Vary: Origin alone', async () => {
      const r = await get(s.url, '/notes.txt', { headers: { origin: A } });
      assert.equal(r.headers['access-control-allow-origin'], A);
      assert.deepEqual(vary(r.headers), ['origin']);
    });

    it('origins "*" (as --cors \'*\') -> Allow-Origin "*" and the names echoed, Authorization too', async () => {
      const r = await preflight(any, '/api/items', 'https://x.net', 'POST', 'authorization,content-type');
      assert.deepEqual(ac(r), {
        'access-control-allow-origin': '*',
        'access-control-allow-methods': ALLOW_METHODS,
        'access-control-allow-headers': 'authorization, content-type',
        'access-control-max-age': '86400',
      });
      assert.deepEqual(vary(r.headers), ['access-control-request-headers', 'access-control-request-method']);
    });

    it('credentials -> the names echoed with Allow-Credentials (an echoed list, never "*")', async () => {
      const r = await preflight(cred, '/api/items', A, 'POST', 'authorization,content-type');
      assert.equal(r.headers['access-control-allow-origin'], A);
      assert.equal(r.headers['access-control-allow-credentials'], 'true');
      assert.equal(r.headers['access-control-allow-headers'], 'authorization, content-type');
    });

    it('reflectHeaders: false -> only CORS-safelisted names; Content-Type (JSON) denied', async () => {
      const denied = await preflight(strict, '/api/items', A, 'POST', 'content-type');
      assert.equal(denied.status, 200);
      assert.deepEqual(ac(denied), {});
      assert.deepEqual(vary(denied.headers), ['origin']);
      const ok = await preflight(strict, '/api/items', A, 'POST', 'accept-language');
      assert.equal(ok.headers['access-control-allow-origin'], A);
      assert.equal(ok.headers['access-control-allow-headers'], undefined);
    });

    it('disallowed origin asking for Authorization -> no Access-Control-* on the preflight or the request', async () => {
      const p = await preflight(s, '/api/items', 'https://evil.net', 'POST', 'authorization,content-type');
      assert.equal(p.status, 200);
      assert.deepEqual(ac(p), {});
      assert.deepEqual(vary(p.headers), REFLECT_VARY);
      const r = await get(s.url, '/notes.txt', {
        method: 'GET',
        headers: { origin: 'https://evil.net', authorization: 'Bearer t' },
      });
      assert.equal(r.status, 200);
      assert.deepEqual(ac(r), {});
    });

    it('non-token junk in Access-Control-Request-Headers -> no Access-Control-* at all', async () => {
      for (const junk of ['x-a, x(b)', '"x-a"', 'x-a;q=1', 'x-a: 1']) {
        const r = await preflight(s, '/api/items', A, 'POST', junk);
        assert.equal(r.status, 200, junk);
        assert.deepEqual(ac(r), {}, junk);
      }
    });
  });

  describe('the CLI flags (node bin/gatehouse.js serve DIR --cors ...)', () => {
    const BIN = join(import.meta.dirname, '../../../bin/gatehouse.js');
    const run = async (args: string[], check: (url: string) => Promise<void>) => {
      const child = spawn(process.execPath, [BIN, 'serve', dir, '--port', '0', '--log', 'off', ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      try {
        const url = await new Promise<string>((resolve, reject) => {
          let out = '';
          let err = '';
          child.stderr.on('data', (d) => (err += d));
          child.stdout.on('data', (d) => {
            out += d;
            const m = /listening on (http:\/\/\S+)\n/.exec(out);
            if (m) resolve(m[1]!);
          });
          child.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
        });
        await check(url);
      } finally {
        child.kill('SIGTERM');
        await exit;
      }
    };
    const pre = (url: string, origin: string, acrh: string) =>
      get(url, '/api/items', {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': acrh },
      });

    it('--cors ORIGIN alone -> Content-Type and Authorization echoed; another origin gets nothing', async () => {
      await run(['--cors', A], async (url) => {
        const r = await pre(url, A, 'authorization,content-type');
        assert.equal(r.headers['access-control-allow-origin'], A);
        assert.equal(r.headers['access-control-allow-headers'], 'authorization, content-type');
        assert.equal(r.headers['access-control-allow-credentials'], undefined);
        assert.deepEqual(ac(await pre(url, 'https://evil.net', 'authorization')), {});
      });
    });

    it("--cors-credentials with --cors '*' -> exit 2 naming the flag, nothing listens", () => {
      const r = spawnSync(
        process.execPath,
        [BIN, 'serve', dir, '--port', '0', '--cors', '*', '--cors-credentials'],
        {
          encoding: 'utf8',
        },
      );
      assert.equal(r.status, 2);
      assert.match(r.stderr, /--cors-credentials cannot be used with --cors '\*'/);
      assert.equal(r.stdout, '');
    });

    const flags: [string, string[], Record<string, unknown> | RegExp][] = [
      ['--cors alone -> origins only (headers not restricted)', ['--cors', A], { origins: [A] }],
      [
        '--cors-headers splits on commas and trims',
        ['--cors', A, '--cors-headers', ' Content-Type ,X-Token,'],
        { origins: [A], headers: ['Content-Type', 'X-Token'] },
      ],
      [
        '--cors-credentials -> credentials: true',
        ['--cors', A, '--cors-credentials'],
        { origins: [A], credentials: true },
      ],
      [
        "--cors-headers without --cors -> merged over the file's origins",
        ['--cors-headers', 'X-A'],
        { headers: ['X-A'] },
      ],
      [
        "--cors '*' with --cors-credentials -> usage error",
        ['--cors', '*', '--cors-credentials'],
        /--cors-credentials cannot be used with --cors '\*'/,
      ],
      [
        "--cors-headers '*' with --cors-credentials -> usage error",
        ['--cors', A, '--cors-headers', '*', '--cors-credentials'],
        /not a wildcard with credentials/,
      ],
      [
        '--cors-headers with a name that is not a token -> usage error',
        ['--cors', A, '--cors-headers', 'X A'],
        /--cors-headers: "X A" is not a header name/,
      ],
      [
        '--cors-headers empty -> usage error',
        ['--cors', A, '--cors-headers', ','],
        /--cors-headers: expected NAME/,
      ],
    ];
    for (const [name, args, want] of flags) {
      it(name, () => {
        if (want instanceof RegExp) {
          assert.throws(
            () => parseServeFlags(args),
            (e: unknown) => e instanceof UsageError && want.test(e.message),
          );
        } else {
          assert.deepEqual(parseServeFlags(args).overrides.cors, want);
        }
      });
    }

    it('--cors-headers restricts, --cors-credentials adds Allow-Credentials', async () => {
      await run(
        ['--cors', A, '--cors-headers', 'Content-Type, Authorization', '--cors-credentials'],
        async (url) => {
          const r = await pre(url, A, 'authorization,content-type');
          assert.deepEqual(ac(r), {
            'access-control-allow-origin': A,
            'access-control-allow-credentials': 'true',
            'access-control-allow-methods': ALLOW_METHODS,
            'access-control-allow-headers': 'Content-Type, Authorization',
            'access-control-max-age': '86400',
          });
          assert.deepEqual(ac(await pre(url, A, 'x-other')), {}, 'an unlisted header is denied');
        },
      );
    });
  });

  describe('paths', () => {
    let s: TestServer;
    before(async () => {
      s = await start({ origins: [A], paths: ['/api/**'] });
    });

    it('inside the globs -> CORS headers', async () => {
      const r = await get(s.url, '/api/data.json', { headers: { origin: A } });
      assert.equal(r.headers['access-control-allow-origin'], A);
      assert.deepEqual(vary(r.headers), ['origin']);
    });

    it('outside -> nothing, not even Vary; preflights pass through to the handlers', async () => {
      const r = await get(s.url, '/notes.txt', { headers: { origin: A } });
      assert.deepEqual(ac(r), {});
      assert.equal(r.headers.vary, undefined);
      const p = await preflight(s, '/notes.txt', A, 'PUT');
      assert.equal(p.status, 204);
      assert.equal(p.headers.allow, 'GET, HEAD, OPTIONS');
      assert.deepEqual(ac(p), {});
    });

    it('matched on the normalised path the handler serves', async () => {
      const r = await get(s.url, '/x/../%61pi/data.json', { headers: { origin: A } });
      assert.equal(r.status, 200);
      assert.equal(r.headers['access-control-allow-origin'], A);
    });
  });

  describe('paths and auth decide "is this a preflight" alike', () => {
    let s: TestServer;
    let none: TestServer;
    before(async () => {
      const hash = await hashPassword('pw', { N: 16384, r: 8, p: 1 });
      const auth = [{ prefix: '/', basic: { users: { alice: hash } } }];
      s = await start({ origins: [A], paths: ['/api/**'] }, { auth });
      none = await startServer(dir, { auth });
      servers.push(none);
    });

    it('preflight on a CORS path under auth -> answered by CORS, no credentials asked', async () => {
      const p = await preflight(s, '/api/data.json', A, 'PUT');
      assert.equal(p.status, 200);
      assert.equal(p.headers['access-control-allow-origin'], A);
      const denied = await preflight(s, '/api/data.json', 'https://evil.example', 'PUT');
      assert.equal(denied.status, 200, 'a failing preflight is answered by CORS too');
      assert.deepEqual(ac(denied), {});
    });

    it('preflight-shaped OPTIONS outside cors.paths -> an ordinary OPTIONS: 401', async () => {
      const p = await preflight(s, '/notes.txt', A, 'PUT');
      assert.equal(p.status, 401);
      assert.ok(p.headers['www-authenticate']);
    });

    it('preflight-shaped OPTIONS without cors configured -> 401', async () => {
      const p = await preflight(none, '/api/data.json', A, 'PUT');
      assert.equal(p.status, 401);
    });
  });

  describe('corsApplies and the preflight shape (pure)', () => {
    const api = { paths: [/^\/api\//] };
    const cases: [string, Parameters<typeof corsApplies>[0], string | null, boolean][] = [
      ['CORS not configured -> never', undefined, '/api/x', false],
      ['no paths -> every path', { paths: undefined }, '/x', true],
      ['no paths, undecodable path -> still applies', { paths: undefined }, null, true],
      ['path inside the globs -> applies', api, '/api/x', true],
      ['path outside the globs -> does not', api, '/x', false],
      ['undecodable path with globs -> does not', api, null, false],
    ];
    for (const [name, scope, path, want] of cases) {
      it(name, () => assert.equal(corsApplies(scope, path), want));
    }
    const shapes: [string, string, string | undefined, string | undefined, boolean][] = [
      ['OPTIONS + Origin + ACRM -> preflight shape', 'OPTIONS', A, 'PUT', true],
      ['OPTIONS without ACRM -> ordinary', 'OPTIONS', A, undefined, false],
      ['OPTIONS without Origin -> ordinary', 'OPTIONS', undefined, 'PUT', false],
      ['GET with Origin + ACRM -> ordinary', 'GET', A, 'PUT', false],
      ['lowercase options -> ordinary (methods are case-sensitive)', 'options', A, 'PUT', false],
    ];
    for (const [name, method, origin, acrm, want] of shapes) {
      it(name, () => assert.equal(isPreflightShaped(method, origin, acrm), want));
    }
  });

  describe('config', () => {
    it('defaults are filled in; headers and reflectHeaders stay absent (corsHeaderRule reads them)', () => {
      assert.deepEqual(parseConfig({ cors: { origins: [A] } }).cors, {
        origins: [A],
        credentials: false,
        methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'],
        exposeHeaders: [],
        maxAgeSec: 86400,
        preflightStatus: 200,
      });
    });

    it('"*" with credentials is refused at load, naming cors.credentials', () => {
      assert.throws(
        () => parseConfig({ cors: { origins: ['*'], credentials: true } }),
        (err: unknown) => err instanceof ConfigError && /cors\.credentials: /.test(err.message),
      );
    });

    it('bad origin entries name cors.origins[i]', () => {
      assert.throws(
        () => parseConfig({ cors: { origins: [A, 'https://a.com/app', 'https://*a.com'] } }),
        (err: unknown) =>
          err instanceof ConfigError &&
          /cors\.origins\[1\]: /.test(err.message) &&
          /cors\.origins\[2\]: /.test(err.message) &&
          !/origins\[0\]/.test(err.message),
      );
    });

    it('unknown keys, bad statuses and "*" headers with credentials are refused', () => {
      assert.throws(
        () => parseConfig({ cors: { origins: [A], allowOrigin: A } }),
        /unknown key cors\.allowOrigin/,
      );
      assert.throws(
        () => parseConfig({ cors: { origins: [A], preflightStatus: 201 } }),
        /cors\.preflightStatus/,
      );
      assert.throws(
        () => parseConfig({ cors: { origins: [A], credentials: true, headers: ['*'] } }),
        /cors\.headers\[0\]/,
      );
      assert.throws(() => parseConfig({ cors: { origins: [] } }), /cors\.origins/);
    });
  });
});
