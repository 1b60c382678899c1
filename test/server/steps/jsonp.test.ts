// JSONP for static .json files against a real server on 127.0.0.1:0.
// matrix: http1 h2 h1-tls adapters runtimes (the static, policy, proxy and cache suites run on every protocol, adapter and runtime)
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runInNewContext } from 'node:vm';
import { get, makeSite, type Res, removeSite, startServer, type TestServer } from '../../helpers/http.js';
import { waitUntil } from '../../helpers/wait.js';

const DATA = {
  msg: 'hi </script><script>alert(1)</script>',
  ls: 'a\u2028b\u2029c',
  amp: 'x & y',
  n: [1, null],
};
const DATA_TEXT = `${JSON.stringify(DATA, null, 2)}\n`;
const LARGE = { rows: Array.from({ length: 400 }, (_, i) => ({ i, s: `row <${i}>` })) };

/** Runs a JSONP body and returns what the callback received (as plain JSON). */
function runJsonp(body: string, callback: string): unknown {
  let got: unknown;
  const sandbox: Record<string, unknown> = {};
  const parts = callback.split('.');
  let target = sandbox;
  for (const p of parts.slice(0, -1)) target = (target[p] ??= {}) as Record<string, unknown>;
  target[parts.at(-1)!] = (v: unknown) => {
    got = JSON.parse(JSON.stringify(v));
  };
  runInNewContext(body, sandbox);
  return got;
}

function assertNotEchoed(r: Res, needles: string[]): void {
  const headers = JSON.stringify(r.headers);
  for (const n of needles) {
    if (n.length < 3) continue;
    assert.ok(!r.text.includes(n), `body echoes ${JSON.stringify(n)}: ${r.text}`);
    assert.ok(!headers.includes(n), `headers echo ${JSON.stringify(n)}`);
  }
}

describe('JSONP (static .json files)', () => {
  let dir: string;
  let s: TestServer;
  let dotted: TestServer;
  before(async () => {
    dir = makeSite({
      'index.html': '<!doctype html><title>home</title>',
      'data/a.json': DATA_TEXT,
      'data/bom.json': `\ufeff${JSON.stringify({ bom: true })}`,
      'data/large.json': JSON.stringify(LARGE),
      'data/broken.json': '{"a": 1, }); alert(1); ({',
      'data/notes.txt': 'plain text\n',
      'data/sub/x.json': '{"x":1}',
      'secret.json': '{"secret":true}',
      'api/time': '{}',
    });
    s = await startServer(dir, {
      jsonp: { paths: ['/data/**'] },
      static: { maxCachedFileBytes: 4096 },
    });
    dotted = await startServer(dir, {
      jsonp: { paths: ['/data/*.json'], callbackParam: 'cb', allowDottedCallbacks: true },
    });
  });
  after(async () => {
    await s.close();
    await dotted.close();
    removeSite(dir);
  });

  it('valid callback: 200 text/javascript, nosniff, /**/ cb(json); with the same value', async () => {
    const r = await get(s.url, '/data/a.json?callback=handle');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.equal(r.headers['content-length'], String(r.body.length));
    assert.ok(r.text.startsWith('/**/ handle('), r.text);
    assert.ok(r.text.endsWith(');'), r.text);
    assert.deepEqual(runJsonp(r.text, 'handle'), DATA);
    assert.equal(r.headers.vary, undefined);
  });

  it('escapes </script>, <, >, & and U+2028/U+2029 as \\uXXXX', async () => {
    const r = await get(s.url, '/data/a.json?callback=cb');
    assert.ok(!r.text.includes('</script>'));
    assert.ok(!/[<>&\u2028\u2029]/.test(r.text), r.text);
    assert.ok(r.text.includes('\\u003c/script\\u003e'));
    assert.ok(r.text.includes('\\u2028') && r.text.includes('\\u2029'));
    assert.ok(r.text.includes('x \\u0026 y'));
  });

  it('Cache-Control and Last-Modified are the file policy; the ETag is its own, strong, per callback', async () => {
    const plain = await get(s.url, '/data/a.json');
    const a = await get(s.url, '/data/a.json?callback=a');
    const b = await get(s.url, '/data/a.json?callback=b');
    assert.equal(a.headers['cache-control'], plain.headers['cache-control']);
    assert.equal(a.headers['last-modified'], plain.headers['last-modified']);
    assert.match(a.headers.etag!, /^"[A-Za-z0-9_-]{27}"$/);
    assert.notEqual(a.headers.etag, plain.headers.etag);
    assert.notEqual(a.headers.etag, b.headers.etag);
    const again = await get(s.url, '/data/a.json?callback=a');
    assert.equal(again.headers.etag, a.headers.etag, 'stable');
  });

  it('If-None-Match with the JSONP tag -> 304 with validators and no body', async () => {
    const a = await get(s.url, '/data/a.json?callback=a');
    const c = await get(s.url, '/data/a.json?callback=a', { headers: { 'if-none-match': a.headers.etag! } });
    assert.equal(c.status, 304);
    assert.equal(c.body.length, 0);
    assert.equal(c.headers.etag, a.headers.etag);
    assert.equal(c.headers['cache-control'], a.headers['cache-control']);
    assert.equal(c.headers['last-modified'], a.headers['last-modified']);
  });

  it("If-None-Match with another callback's tag or the plain file's tag -> 200", async () => {
    const plain = await get(s.url, '/data/a.json');
    const b = await get(s.url, '/data/a.json?callback=b');
    for (const tag of [plain.headers.etag!, b.headers.etag!]) {
      const r = await get(s.url, '/data/a.json?callback=a', { headers: { 'if-none-match': tag } });
      assert.equal(r.status, 200);
    }
  });

  it('If-Modified-Since at Last-Modified -> 304; If-Match with another tag -> 412', async () => {
    const a = await get(s.url, '/data/a.json?callback=a');
    const ims = await get(s.url, '/data/a.json?callback=a', {
      headers: { 'if-modified-since': a.headers['last-modified']! },
    });
    assert.equal(ims.status, 304);
    const im = await get(s.url, '/data/a.json?callback=a', { headers: { 'if-match': '"nope"' } });
    assert.equal(im.status, 412);
  });

  it('HEAD: the GET headers, no body', async () => {
    const g = await get(s.url, '/data/a.json?callback=a');
    const h = await get(s.url, '/data/a.json?callback=a', { method: 'HEAD' });
    assert.equal(h.status, 200);
    assert.equal(h.body.length, 0);
    for (const k of ['content-type', 'content-length', 'etag', 'cache-control', 'x-content-type-options']) {
      assert.equal(h.headers[k], g.headers[k], k);
    }
  });

  it('repeated parameter: the first callback wins', async () => {
    const r = await get(s.url, '/data/a.json?callback=first&callback=second');
    assert.equal(r.status, 200);
    assert.ok(r.text.startsWith('/**/ first('), r.text);
  });

  it('no callback: the plain file as application/json from the static handler', async () => {
    const r = await get(s.url, '/data/a.json?other=1');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(r.text, DATA_TEXT);
  });

  const attempts: [string, string, string[]][] = [
    ['call and comment alert(1)//', 'alert(1)//', ['alert(1)']],
    ['statement separator a;b', 'a%3Bb', ['a;b', 'a%3Bb']],
    ['dotted opener.document.x (not allowed)', 'opener.document.x', ['opener.document']],
    ['1000-character name', 'a'.repeat(1000), ['a'.repeat(100)]],
    ['unicode letters', encodeURIComponent('ünïcödé'), ['ünïcödé', 'nïc', '%C3%BCn']],
    ['space a b (%20)', 'a%20b', ['a%20b']],
    ['space a b (+)', 'a+b', ['a+b']],
    ['empty', '', []],
    ['encoded CR LF', '%0d%0a', ['%0d%0a', '\r\n']],
    ['CR LF header injection', '%0d%0aSet-Cookie:%20x=1', ['Set-Cookie', 'x=1']],
    ['script tag', encodeURIComponent('<script>alert(1)</script>'), ['<script>', 'alert(1)']],
    ['malformed percent-encoding', 'ab%zz', ['ab%zz']],
    ['leading digit', '1abc', ['1abc']],
  ];
  for (const [name, value, needles] of attempts) {
    it(`injection attempt (${name}) -> 400, never echoed`, async () => {
      for (const accept of ['application/json', 'text/html']) {
        const r = await get(s.url, `/data/a.json?callback=${value}`, { headers: { accept } });
        assert.equal(r.status, 400, `${name}: ${r.text}`);
        assert.ok(!r.headers['content-type']!.includes('javascript'));
        assert.equal(r.headers['set-cookie'], undefined);
        assert.match(r.text, /not a valid JSONP callback/);
        assertNotEchoed(r, needles);
      }
    });
  }

  it('problem+json for API clients', async () => {
    const r = await get(s.url, '/data/a.json?callback=a;b', { headers: { accept: 'application/json' } });
    assert.equal(r.headers['content-type'], 'application/problem+json');
    assert.equal(JSON.parse(r.text).code, 'bad_request');
  });

  it('POST, PUT, DELETE on a JSONP path -> 405 with Allow: GET, HEAD, OPTIONS (callback or not)', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      for (const path of ['/data/a.json?callback=a', '/data/a.json']) {
        const r = await get(s.url, path, { method, body: method === 'POST' ? '{}' : undefined });
        assert.equal(r.status, 405, `${method} ${path}`);
        assert.equal(r.headers.allow, 'GET, HEAD, OPTIONS');
      }
    }
  });

  it('OPTIONS on a JSONP path -> 204 with Allow, as on any other path (callback or not)', async () => {
    const elsewhere = await get(s.url, '/secret.json', { method: 'OPTIONS' });
    for (const path of ['/data/a.json?callback=a', '/data/a.json']) {
      const r = await get(s.url, path, { method: 'OPTIONS' });
      assert.equal(r.status, 204, path);
      assert.equal(r.headers.allow, elsewhere.headers.allow, path);
      assert.match(String(r.headers.allow), /\bOPTIONS\b/);
      assert.equal(r.body.length, 0);
    }
  });

  it('missing file with a callback -> 404 problem details', async () => {
    const r = await get(s.url, '/data/nope.json?callback=a', { headers: { accept: 'application/json' } });
    assert.equal(r.status, 404);
    assert.equal(r.headers['content-type'], 'application/problem+json');
  });

  it('a file that is not valid JSON is never wrapped: 500 with a request id, no stack', async () => {
    const r = await get(s.url, '/data/broken.json?callback=a', { headers: { accept: 'application/json' } });
    assert.equal(r.status, 500);
    assert.ok(!r.text.includes('alert'));
    assert.ok(!r.text.includes('    at '), 'no stack trace');
    const body = JSON.parse(r.text) as { requestId?: string };
    assert.equal(body.requestId, r.headers['x-request-id']);
  });

  it('a UTF-8 BOM at the start of the file is dropped', async () => {
    const r = await get(s.url, '/data/bom.json?callback=a');
    assert.equal(r.status, 200);
    assert.deepEqual(runJsonp(r.text, 'a'), { bom: true });
  });

  it('a file too large for the memory cache is read from disk', async () => {
    const r = await get(s.url, '/data/large.json?callback=a');
    assert.equal(r.status, 200);
    assert.ok(r.body.length > 4096);
    assert.equal(r.headers['content-length'], String(r.body.length));
    assert.deepEqual(runJsonp(r.text, 'a'), LARGE);
  });

  it('a non-JSON file on a JSONP path is served as it is', async () => {
    const r = await get(s.url, '/data/notes.txt?callback=a');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(r.text, 'plain text\n');
  });

  it('off the JSONP paths a callback is ignored: plain JSON', async () => {
    const r = await get(s.url, '/secret.json?callback=a');
    assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(r.text, '{"secret":true}');
    const post = await get(s.url, '/secret.json', { method: 'POST' });
    assert.equal(post.headers.allow, 'GET, HEAD, OPTIONS', 'the static 405');
  });

  it('dot segments cannot reach a file off the JSONP paths as JSONP', async () => {
    const r = await get(s.url, '/data/%2e%2e/secret.json?callback=a');
    assert.ok(!String(r.headers['content-type']).includes('javascript'));
  });

  it('a changed file gives a new body and ETag', async () => {
    const before = await get(s.url, '/data/sub/x.json?callback=a');
    writeFileSync(join(dir, 'data/sub/x.json'), '{"x":2,"more":true}');
    // The file is re-checked after static.revalidateMs: wait for the change, not for a fixed time.
    const after = await waitUntil('the changed file is served', async () => {
      const r = await get(s.url, '/data/sub/x.json?callback=a');
      return r.headers.etag !== before.headers.etag ? r : undefined;
    });
    assert.notEqual(after.headers.etag, before.headers.etag);
    assert.deepEqual(runJsonp(after.text, 'a'), { x: 2, more: true });
  });

  it('callbackParam and allowDottedCallbacks: ns.fn accepted on the server that allows it', async () => {
    const r = await get(dotted.url, '/data/a.json?cb=ns.fn');
    assert.equal(r.status, 200);
    assert.ok(r.text.startsWith('/**/ ns.fn('));
    assert.deepEqual(runJsonp(r.text, 'ns.fn'), DATA);
    const other = await get(dotted.url, '/data/a.json?callback=x');
    assert.equal(
      other.headers['content-type'],
      'application/json; charset=utf-8',
      'callback is not the param',
    );
  });
});
