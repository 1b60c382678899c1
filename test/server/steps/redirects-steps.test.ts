// The redirect steps alone (createHttpsRedirect, createCanonical) on node:http servers of the test's
// own: in process by design, so off the runtimes matrix (split from redirects.test.ts).
// matrix: http1 h2 h1-tls adapters (the static, policy, proxy and cache suites run on every protocol and adapter)
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { parseConfig, toServerOptions } from '../../../src/config/load.js';
import { createStaticHandler, serveSteps } from '../../../src/server/index.js';
import type { Step } from '../../../src/server/node/types.js';
import { createHttpsRedirect } from '../../../src/server/steps/https-redirect.js';
import { type CanonicalStepOptions, createCanonical } from '../../../src/server/steps/redirects.js';
import { makeSite, raw, rawStatus, removeSite } from '../../helpers/http.js';
import { listen, parseRaw, rawGet } from './redirects-raw.js';

describe('HTTP -> HTTPS (createHttpsRedirect)', () => {
  let server: Server;
  let port: number;
  let pinned: Server;
  let pinnedPort: number;
  const serve = (step: Step) => createServer(serveSteps([step], (_req, res) => res.writeHead(404).end()));
  before(async () => {
    server = serve(createHttpsRedirect({ httpsPort: 8443 }));
    port = await listen(server);
    pinned = serve(createHttpsRedirect({ hosts: ['site.test'] }));
    pinnedPort = await listen(pinned);
  });
  after(() => {
    server.close();
    pinned.close();
  });

  const cases: [string, string, string, number, string | undefined][] = [
    [
      'path and query kept, port replaced',
      '/a/b?x=1',
      'Host: site.test:8080\r\n',
      308,
      'https://site.test:8443/a/b?x=1',
    ],
    ['host lowercased', '/', 'Host: SITE.test\r\n', 308, 'https://site.test:8443/'],
    ['IPv6 host', '/', 'Host: [::1]:80\r\n', 308, 'https://[::1]:8443/'],
    [
      'absolute-form target: its host counts',
      'http://other.test/p',
      'Host: site.test\r\n',
      308,
      'https://other.test:8443/p',
    ],
    [
      '//evil.com path stays a path',
      '//evil.com/x',
      'Host: site.test\r\n',
      308,
      'https://site.test:8443//evil.com/x',
    ],
    ['Host with a path -> 400', '/', 'Host: evil.com/x\r\n', 400, undefined],
    ['Host with user info -> 400', '/', 'Host: a@evil.com\r\n', 400, undefined],
    ['Host with a backslash -> 400', '/', 'Host: evil.com\\x\r\n', 400, undefined],
    ['two Host headers -> 400', '/', 'Host: site.test\r\nHost: evil.com\r\n', 400, undefined],
  ];
  for (const [name, target, headers, status, location] of cases) {
    it(name, async () => {
      const r = parseRaw(await rawGet(port, target, headers));
      assert.equal(r.status, status, r.head);
      assert.equal(r.location, location);
    });
  }

  it('POST is redirected with 308 (method kept)', async () => {
    const r = parseRaw(
      await raw(
        port,
        'POST /form HTTP/1.1\r\nHost: site.test\r\nContent-Length: 2\r\nConnection: close\r\n\r\nab',
      ),
    );
    assert.equal(r.status, 308);
    assert.equal(r.location, 'https://site.test:8443/form');
  });

  it('HTTP/1.0 without Host -> 400', async () => {
    assert.equal(rawStatus(await raw(port, 'GET / HTTP/1.0\r\n\r\n')), 400);
  });

  it('hosts: only listed names are redirected; port 443 is not written', async () => {
    const ok = parseRaw(await rawGet(pinnedPort, '/x', 'Host: site.test\r\n'));
    assert.equal(ok.location, 'https://site.test/x');
    assert.equal(rawStatus(await rawGet(pinnedPort, '/x', 'Host: evil.com\r\n')), 400);
  });
});

describe('canonical paths (createCanonical)', () => {
  let dir: string;
  const servers: Server[] = [];
  const ports: Record<string, number> = {};
  const start = async (name: string, o: CanonicalStepOptions, withFiles: boolean) => {
    const opts = toServerOptions(parseConfig({ root: dir, log: { format: 'off' } }));
    const st = createStaticHandler({ root: dir, static: opts.static, cachePolicy: [] });
    const step = createCanonical(o, withFiles ? st.files : undefined);
    assert.ok(step);
    const server = createServer(
      serveSteps(
        [step],
        st.final,
        (_err, _req, res) => {
          res.statusCode = 500;
          res.end();
        },
        // The step's own guard against targets the entry refuses first (a backslash).
        { checkTarget: false },
      ),
    );
    servers.push(server);
    ports[name] = await listen(server);
  };
  before(async () => {
    dir = makeSite({
      'index.html': 'home',
      'about/index.html': 'about',
      LICENSE: 'MIT',
      'app.js': 'js',
    });
    await start('add', { trailingSlash: 'add', indexHtml: true }, true);
    await start('remove', { trailingSlash: 'remove', indexHtml: true }, true);
    await start('index', { trailingSlash: 'ignore', indexHtml: true }, false);
  });
  after(() => {
    for (const s of servers) s.close();
    removeSite(dir);
  });

  it('nothing to do -> no step', () => {
    assert.equal(createCanonical({ trailingSlash: 'ignore', indexHtml: false }), undefined);
  });

  const cases: [string, string, string, number, string | undefined][] = [
    ['index: /index.html -> /', 'index', '/index.html', 301, '/'],
    [
      'index: /about/index.html -> /about/ with the query',
      'index',
      '/about/index.html?x=1',
      301,
      '/about/?x=1',
    ],
    ['index: //evil.com/index.html stays on-site', 'index', '//evil.com/index.html', 301, '/evil.com/'],
    ['index: /\\evil.com/index.html stays on-site', 'index', '/\\evil.com/index.html', 301, '/%5Cevil.com/'],
    ['index: other paths untouched', 'index', '/app.js', 200, undefined],
    ['add: missing /spa-route -> /spa-route/', 'add', '/spa-route', 301, '/spa-route/'],
    ['add: a file without extension stays (/LICENSE)', 'add', '/LICENSE', 200, undefined],
    ['add: a file with extension stays', 'add', '/app.js', 200, undefined],
    ['add: /about/index.html -> /about/', 'add', '/about/index.html', 301, '/about/'],
    ['add: /about/ is canonical', 'add', '/about/', 200, undefined],
    ['remove: /spa/ -> /spa', 'remove', '/spa/?q', 301, '/spa?q'],
    ['remove: a file with a slash -> the file', 'remove', '/app.js/', 301, '/app.js'],
    [
      'remove: a directory keeps its slash (the static handler needs it)',
      'remove',
      '/about/',
      200,
      undefined,
    ],
    ['remove: /about/index.html -> /about/ (directory)', 'remove', '/about/index.html', 301, '/about/'],
    ['remove: /index.html -> /', 'remove', '/index.html', 301, '/'],
  ];
  for (const [name, server, target, status, location] of cases) {
    it(name, async () => {
      const r = parseRaw(await rawGet(ports[server]!, target));
      assert.equal(r.status, status, r.head);
      assert.equal(r.location, location);
      if (status === 301) assert.match(r.head, /^cache-control: no-cache$/im);
    });
  }

  it('only GET and HEAD are canonicalised', async () => {
    const r = parseRaw(
      await raw(
        ports.index!,
        'POST /index.html HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n',
      ),
    );
    assert.equal(r.status, 405);
    const h = parseRaw(
      await raw(ports.index!, 'HEAD /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
    );
    assert.equal(h.status, 301);
  });
});
