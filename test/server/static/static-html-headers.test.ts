// The static handler's security defaults on HTML files (static.htmlSecurityHeaders): frame protection
// (RFC 7034) and an explicit Referrer-Policy, on pages only, yielding to header rules that name them.
// matrix: http1 h2 h1-tls adapters runtimes (the static, policy, proxy and cache suites run on every protocol, adapter and runtime)
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { get, makeSite, removeSite, startServer, type TestServer } from '../../helpers/http.js';

const FILES = {
  'index.html': '<!doctype html><title>home</title>',
  'page.xhtml': '<html xmlns="http://www.w3.org/1999/xhtml"><title>x</title></html>',
  'app.js': 'export {};\n',
  'data.json': '{"a":1}',
};

describe('static.htmlSecurityHeaders', () => {
  const dir = makeSite(FILES);
  const servers: TestServer[] = [];
  const start = async (config: Parameters<typeof startServer>[1] = {}) => {
    const s = await startServer(dir, config);
    servers.push(s);
    return s;
  };
  after(async () => {
    for (const s of servers) await s.close();
    removeSite(dir);
  });

  it('default: an HTML page gets X-Frame-Options: SAMEORIGIN and Referrer-Policy', async () => {
    const s = await start();
    for (const path of ['/', '/index.html', '/page.xhtml']) {
      const r = await get(s.url, path);
      assert.equal(r.status, 200, path);
      assert.equal(r.headers['x-frame-options'], 'SAMEORIGIN', path);
      assert.equal(r.headers['referrer-policy'], 'strict-origin-when-cross-origin', path);
    }
  });

  it('default: scripts and JSON do not get them (no document to frame)', async () => {
    const s = await start();
    for (const path of ['/app.js', '/data.json']) {
      const r = await get(s.url, path);
      assert.equal(r.status, 200, path);
      assert.equal(r.headers['x-frame-options'], undefined, path);
      assert.equal(r.headers['referrer-policy'], undefined, path);
    }
  });

  it('false: an HTML page gets neither', async () => {
    const s = await start({ static: { htmlSecurityHeaders: false } });
    const r = await get(s.url, '/');
    assert.equal(r.headers['x-frame-options'], undefined);
    assert.equal(r.headers['referrer-policy'], undefined);
  });

  it('a header rule setting X-Frame-Options: DENY wins; the other default stays', async () => {
    const s = await start({ headers: [{ set: { 'X-Frame-Options': 'DENY' } }] });
    const r = await get(s.url, '/');
    assert.equal(r.headers['x-frame-options'], 'DENY');
    assert.equal(r.headers['referrer-policy'], 'strict-origin-when-cross-origin');
  });

  it('a header rule removing X-Frame-Options for a path: that page can be framed', async () => {
    const s = await start({
      headers: [{ preset: 'security' }, { glob: '/page.xhtml', remove: ['X-Frame-Options'] }],
    });
    const framed = await get(s.url, '/page.xhtml');
    assert.equal(framed.headers['x-frame-options'], undefined);
    const other = await get(s.url, '/');
    assert.equal(other.headers['x-frame-options'], 'SAMEORIGIN');
  });
});
