// gatehouse check, live (issue 16): record() against real servers on 127.0.0.1 started here: the
// deliberately broken site (each mistake is in the recording), Gatehouse itself over HTTP/1.1 and
// over HTTPS with HTTP/2, nginx with a hand-written config when installed, and servers that fail.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createSecureServer, constants as http2Constants } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createServer } from '../../src/index.js';
import { field } from '../../src/inspect/exchange.js';
import { checkUrl } from '../../src/inspect/index.js';
import { MAX_BODY_BYTES, record } from '../../src/inspect/live.js';
import { buildReport } from '../../src/inspect/report.js';
import {
  HOSTILE_CALLBACK,
  type ProbeName,
  type Recording,
  STALE_IF_RANGE,
  WRONG_ETAG,
} from '../../src/inspect/types.js';
import { type BROKEN_PATHS, type BrokenSite, startBrokenSite } from '../helpers/broken-site.js';
import { NGINX_SUITE, type NginxSite, startNginxSite } from '../helpers/nginx-site.js';
import { REPO_ROOT } from '../helpers/page-server.js';
import { testTls } from '../helpers/tls.js';

const FAST = { repeatDelayMs: 0 };

const status = (rec: Recording, p: ProbeName) => rec.probes[p]?.response?.status;
const header = (rec: Recording, p: ProbeName, name: string) => {
  const r = rec.probes[p]?.response;
  return r === undefined ? undefined : field(r.headers, name);
};
const sent = (rec: Recording, p: ProbeName, name: string) => {
  const x = rec.probes[p];
  return x === undefined ? undefined : field(x.request.headers, name);
};

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function stop(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

describe('record: the broken site, each mistake in the recording', () => {
  let site: BrokenSite;
  before(async () => {
    site = await startBrokenSite();
  });
  after(() => site.close());

  const cases: [string, keyof typeof BROKEN_PATHS, object, (rec: Recording) => void][] = [
    [
      'HTML cached a year: primary has the year-long Cache-Control',
      '/html-cached-a-year',
      {},
      (rec) => {
        assert.match(header(rec, 'primary', 'content-type') ?? '', /text\/html/);
        assert.equal(header(rec, 'primary', 'cache-control'), 'public, max-age=31536000');
      },
    ],
    [
      'hashed asset no-cache: the URL and its no-cache are recorded',
      '/assets/app.3f9a1c2b7d.js',
      {},
      (rec) => {
        assert.match(rec.finalUrl, /app\.3f9a1c2b7d\.js$/);
        assert.equal(header(rec, 'primary', 'cache-control'), 'no-cache');
      },
    ],
    [
      'ETag per request: repeat has the same body and another strong tag',
      '/etag-per-request',
      {},
      (rec) => {
        const [a, b] = [rec.probes.primary?.response, rec.probes.repeat?.response];
        assert.equal(a?.bodySha256, b?.bodySha256);
        assert.notEqual(header(rec, 'primary', 'etag'), header(rec, 'repeat', 'etag'));
        assert.ok(rec.probes.repeat!.sentAtMs >= rec.probes['if-range-mismatch']!.receivedAtMs);
      },
    ],
    [
      '304 drops validators: inm-match sent the tag and got a bare 304',
      '/304-drops-validators',
      {},
      (rec) => {
        assert.equal(sent(rec, 'inm-match', 'if-none-match'), header(rec, 'primary', 'etag'));
        assert.equal(status(rec, 'inm-match'), 304);
        assert.equal(header(rec, 'inm-match', 'etag'), undefined);
        assert.equal(header(rec, 'inm-match', 'cache-control'), undefined);
        assert.equal(header(rec, 'inm-match', 'date'), undefined);
        assert.equal(sent(rec, 'inm-wrong', 'if-none-match'), WRONG_ETAG);
        assert.equal(status(rec, 'inm-wrong'), 200);
      },
    ],
    [
      'CORS * with credentials: cors-simple carries both',
      '/cors-star-credentials',
      { origin: 'https://app.example' },
      (rec) => {
        assert.equal(sent(rec, 'cors-simple', 'origin'), 'https://app.example');
        assert.equal(header(rec, 'cors-simple', 'access-control-allow-origin'), '*');
        assert.equal(header(rec, 'cors-simple', 'access-control-allow-credentials'), 'true');
        assert.equal(rec.options.origin, 'https://app.example');
      },
    ],
    [
      'CORS reflection: a random origin is echoed, no Vary, preflight 403',
      '/cors-reflect',
      { origin: 'https://app.example' },
      (rec) => {
        const random = sent(rec, 'cors-random', 'origin');
        assert.match(random ?? '', /^https:\/\/[0-9a-f]+\.example$/);
        assert.equal(header(rec, 'cors-random', 'access-control-allow-origin'), random);
        assert.equal(header(rec, 'cors-simple', 'vary'), undefined);
        const pre = rec.probes['cors-preflight'];
        assert.equal(pre?.request.method, 'OPTIONS');
        assert.equal(sent(rec, 'cors-preflight', 'access-control-request-method'), 'POST');
        assert.equal(
          sent(rec, 'cors-preflight', 'access-control-request-headers'),
          'authorization,content-type',
        );
        assert.equal(status(rec, 'cors-preflight'), 403);
      },
    ],
    [
      'JSONP: the hostile callback is sent and reflected raw, no nosniff',
      '/jsonp?callback=handle',
      {},
      (rec) => {
        assert.equal(rec.options.jsonpParam, 'callback');
        const x = rec.probes['jsonp-hostile'];
        assert.equal(new URL(x!.request.url).searchParams.get('callback'), HOSTILE_CALLBACK);
        assert.ok(x!.response!.bodySample.startsWith(HOSTILE_CALLBACK));
        assert.equal(header(rec, 'jsonp-hostile', 'x-content-type-options'), undefined);
      },
    ],
    [
      'gzip without Vary: coding-gzip is gzip and smaller, no Vary, same ETag as identity',
      '/gzip-no-vary',
      {},
      (rec) => {
        assert.equal(header(rec, 'coding-gzip', 'content-encoding'), 'gzip');
        assert.equal(header(rec, 'coding-gzip', 'vary'), undefined);
        assert.equal(header(rec, 'coding-identity', 'content-encoding'), undefined);
        const [id, gz] = [rec.probes['coding-identity']?.response, rec.probes['coding-gzip']?.response];
        assert.ok(gz!.bodyBytes < id!.bodyBytes);
        assert.equal(header(rec, 'coding-gzip', 'etag'), header(rec, 'coding-identity', 'etag'));
        assert.equal(sent(rec, 'coding-br', 'accept-encoding'), 'br');
      },
    ],
    [
      'weak ETag with Accept-Ranges: both on the primary; If-Range carries the weak tag',
      '/weak-etag-ranges',
      {},
      (rec) => {
        assert.equal(header(rec, 'primary', 'etag'), 'W/"weak-1"');
        assert.equal(header(rec, 'primary', 'accept-ranges'), 'bytes');
        assert.equal(sent(rec, 'if-range-match', 'if-range'), 'W/"weak-1"');
      },
    ],
    [
      'wrong Content-Range: range probe got 206 bytes 0-99',
      '/wrong-content-range',
      {},
      (rec) => {
        assert.equal(sent(rec, 'range', 'range'), 'bytes=0-9');
        assert.equal(sent(rec, 'range', 'accept-encoding'), 'identity');
        assert.equal(status(rec, 'range'), 206);
        assert.match(header(rec, 'range', 'content-range') ?? '', /^bytes 0-99\//);
        assert.equal(rec.probes['if-range-match'], undefined, 'no ETag: no If-Range with a tag');
      },
    ],
    [
      'If-Range ignored: the stale If-Range still got a 206',
      '/if-range-ignored',
      {},
      (rec) => {
        assert.equal(sent(rec, 'if-range-mismatch', 'if-range'), STALE_IF_RANGE);
        assert.equal(status(rec, 'if-range-mismatch'), 206);
        assert.equal(status(rec, 'if-range-match'), 206);
      },
    ],
    [
      '304 for any tag: inm-wrong got 304; ims sent Last-Modified and got 200',
      '/inm-always-304',
      {},
      (rec) => {
        assert.equal(status(rec, 'inm-wrong'), 304);
        assert.equal(sent(rec, 'ims', 'if-modified-since'), header(rec, 'primary', 'last-modified'));
        assert.equal(status(rec, 'ims'), 200);
      },
    ],
    [
      'API JSON shared-cacheable with Set-Cookie: both recorded',
      '/api-shared-cookie',
      {},
      (rec) => {
        assert.equal(header(rec, 'primary', 'cache-control'), 'public, max-age=600');
        assert.match(header(rec, 'primary', 'set-cookie') ?? '', /^session=/);
      },
    ],
    [
      'cache conflicts: no-store with max-age, Pragma, bad Expires, no Date',
      '/cache-conflicts',
      {},
      (rec) => {
        assert.equal(header(rec, 'primary', 'cache-control'), 'no-store, max-age=600');
        assert.equal(header(rec, 'primary', 'pragma'), 'no-cache');
        assert.equal(header(rec, 'primary', 'expires'), 'soon');
        assert.equal(header(rec, 'primary', 'date'), undefined);
      },
    ],
    [
      'uncompressed CSS: gzip and br asked, identity answered both times',
      '/uncompressed-css',
      {},
      (rec) => {
        assert.equal(header(rec, 'coding-gzip', 'content-encoding'), undefined);
        assert.equal(header(rec, 'coding-br', 'content-encoding'), undefined);
        assert.ok(rec.probes['coding-gzip']!.response!.bodyBytes > 10_000);
      },
    ],
    [
      'leaky HTML: Server and X-Powered-By versions, no security headers',
      '/leaky-html',
      {},
      (rec) => {
        assert.match(header(rec, 'primary', 'server') ?? '', /Apache\/2\.4\.1/);
        assert.equal(header(rec, 'primary', 'x-powered-by'), 'PHP/5.3.3');
        assert.equal(header(rec, 'primary', 'x-content-type-options'), undefined);
      },
    ],
  ];
  for (const [name, path, options, check] of cases) {
    it(`${path}: ${name}`, async () => check(await record(site.url(path), { ...FAST, ...options })));
  }

  it('/loop-a: the chain stops at the loop, no probes, checkUrl still returns the report', async () => {
    const rec = await record(site.url('/loop-a'), FAST);
    assert.deepEqual(
      rec.redirects.map((x) => x.response?.status ?? x.error),
      [302, 302, `redirect loop: ${site.url('/loop-a')} was already requested`],
    );
    assert.deepEqual(rec.probes, {});
    const report = await checkUrl(site.url('/loop-a'), FAST);
    assert.equal(report.url, site.url('/loop-a'));
  });

  it('/moved: 301 then 302 then 200, each hop recorded; probes go to the final URL', async () => {
    const rec = await record(site.url('/moved'), FAST);
    assert.deepEqual(
      rec.redirects.map((x) => [new URL(x.request.url).pathname, x.response?.status]),
      [
        ['/moved', 301],
        ['/moved-again', 302],
        ['/landing', 200],
      ],
    );
    assert.equal(rec.finalUrl, site.url('/landing'));
    assert.equal(rec.probes.primary?.request.url, site.url('/landing'));
    assert.equal(rec.probes.primary?.response?.bodySample, 'landed\n');
  });

  it('/endless/1: 10 redirects followed, then the chain stops without a final response', async () => {
    const rec = await record(site.url('/endless/1'), FAST);
    assert.equal(rec.redirects.length, 12);
    assert.ok(rec.redirects.slice(0, 11).every((x) => x.response?.status === 302));
    assert.equal(rec.redirects[11]?.error, 'more than 10 redirects');
    assert.equal(rec.redirects[11]?.request.url, site.url('/endless/12'));
    assert.deepEqual(rec.probes, {});
  });

  it('repeat: sent at least repeatDelayMs after the primary answered', async () => {
    const rec = await record(site.url('/etag-per-request'), { repeatDelayMs: 150 });
    const gap = rec.probes.repeat!.sentAtMs - rec.probes.primary!.receivedAtMs;
    assert.ok(gap >= 150, `gap ${gap} ms`);
  });

  it('cb= in the URL: the JSONP probe uses cb', async () => {
    const rec = await record(site.url('/jsonp?cb=x'), FAST);
    assert.equal(rec.options.jsonpParam, 'cb');
    assert.equal(new URL(rec.probes['jsonp-hostile']!.request.url).searchParams.get('cb'), HOSTILE_CALLBACK);
  });

  it('one keep-alive connection carries the redirect chain and every probe', async () => {
    const before = site.connections();
    const rec = await record(site.url('/moved'), { ...FAST, origin: 'https://app.example' });
    assert.ok(Object.keys(rec.probes).length >= 10);
    assert.equal(site.connections() - before, 1);
  });

  it('no validators: no conditional probes, but coding, range and If-Range mismatch are sent', async () => {
    const rec = await record(site.url('/html-cached-a-year'), FAST);
    for (const p of ['inm-match', 'inm-wrong', 'ims', 'if-range-match'] as const) {
      assert.equal(rec.probes[p], undefined, p);
    }
    for (const p of [
      'coding-identity',
      'coding-gzip',
      'coding-br',
      'range',
      'if-range-mismatch',
      'repeat',
    ] as const) {
      assert.ok(rec.probes[p]?.response, p);
    }
    assert.equal(rec.probes['cors-simple'], undefined, 'no --origin: no CORS probes');
    assert.equal(rec.probes['jsonp-hostile'], undefined, 'no callback parameter: no JSONP probe');
  });

  it('--jsonp NAME: the named parameter carries the hostile callback', async () => {
    const rec = await record(site.url('/jsonp'), { ...FAST, jsonp: 'callback' });
    assert.equal(rec.options.jsonpParam, 'callback');
    assert.ok(rec.probes['jsonp-hostile']?.response?.bodySample.startsWith(HOSTILE_CALLBACK));
  });

  it('--method HEAD and --header: primary only is HEAD; the header goes to every probe', async () => {
    const rec = await record(site.url('/html-cached-a-year'), {
      ...FAST,
      method: 'head',
      headers: [['X-Trace', 'abc']],
    });
    assert.equal(rec.probes.primary?.request.method, 'HEAD');
    assert.equal(rec.probes.primary?.response?.bodyBytes, 0);
    assert.equal(rec.probes.repeat?.request.method, 'GET');
    assert.equal(sent(rec, 'repeat', 'x-trace'), 'abc');
    assert.equal(sent(rec, 'primary', 'accept-encoding'), 'gzip, deflate, br');
  });
});

describe('record: failures are recorded, not thrown', () => {
  const servers: Server[] = [];
  after(async () => {
    for (const s of servers) await stop(s);
  });
  const serve = async (h: Parameters<typeof createHttpServer>[1] & object) => {
    const s = createHttpServer(h);
    servers.push(s);
    return listen(s);
  };

  it('a probe that hangs times out alone; the others are answered', async () => {
    const base = await serve((req, res) => {
      if (req.headers.range !== undefined) return; // never answers a Range request
      res.end('ok');
    });
    const rec = await record(`${base}/`, { ...FAST, timeoutMs: 300 });
    assert.equal(rec.probes.range?.error, 'timed out after 300 ms');
    assert.equal(rec.probes.range?.response, undefined);
    assert.equal(rec.probes['coding-gzip']?.response?.status, 200);
    assert.equal(rec.probes.repeat?.response?.status, 200);
  });

  it('HTTP/2: a stream reset for one probe is recorded alone; the session serves the rest', async () => {
    const files = await testTls();
    const server = createSecureServer({ cert: readFileSync(files.cert), key: readFileSync(files.key) });
    server.on('stream', (stream, headers) => {
      stream.on('error', () => undefined); // the refused stream's own error, server side
      if (headers.range !== undefined) return stream.close(http2Constants.NGHTTP2_REFUSED_STREAM);
      stream.respond({ ':status': 200, 'content-type': 'text/plain' });
      stream.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const rec = await record(`https://localhost:${port}/`, { ...FAST, ca: files.caPem });
      assert.match(rec.probes.range?.error ?? '', /REFUSED_STREAM|stream/i);
      assert.equal(rec.probes['if-range-mismatch']?.response, undefined);
      assert.equal(rec.probes['coding-br']?.response?.httpVersion, '2');
      assert.equal(rec.probes.repeat?.response?.status, 200);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('a silent site: checkUrl rejects naming the timeout', async () => {
    const base = await serve(() => undefined);
    await assert.rejects(checkUrl(`${base}/`, { ...FAST, timeoutMs: 200 }), /timed out after 200 ms/);
  });

  it('a closed port: checkUrl rejects with connection refused', async () => {
    const s = createHttpServer();
    const base = await listen(s);
    await stop(s);
    await assert.rejects(checkUrl(`${base}/`, FAST), /connection refused/);
  });

  it(`a body over ${MAX_BODY_BYTES} bytes is read up to the cap and hashed`, async () => {
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    const base = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      for (let i = 0; i < 9; i++) res.write(chunk);
      res.end();
    });
    const rec = await record(`${base}/`, FAST);
    assert.equal(rec.probes.primary?.response?.bodyBytes, MAX_BODY_BYTES);
    assert.equal(rec.probes.primary?.response?.bodySample.length, 4096);
    assert.match(rec.probes.primary?.response?.bodySha256 ?? '', /^[0-9a-f]{64}$/);
  });
});

describe('record: Gatehouse itself (examples/site, defaults)', () => {
  const SITE = join(REPO_ROOT, 'examples/site');
  /** Gatehouse on the example site over HTTPS with the test PKI, not yet listening. */
  const tlsApp = async () => {
    const files = await testTls();
    const app = createServer({
      root: SITE,
      listen: { host: '127.0.0.1', port: 0 },
      log: { format: 'off' },
      tls: { cert: files.cert, key: files.key },
    });
    return { files, app };
  };

  it('plain HTTP/1.1: the check runs end to end; zero errors and zero warnings on pages and assets', async () => {
    const app = createServer({ root: SITE, listen: { host: '127.0.0.1', port: 0 }, log: { format: 'off' } });
    const { url } = await app.listen();
    try {
      const rec = await record(`${url}/`, FAST);
      assert.equal(rec.probes.primary?.response?.status, 200);
      assert.equal(rec.probes.primary?.response?.httpVersion, '1.1');
      assert.equal(rec.probes['inm-match']?.response?.status, 304);
      assert.equal(rec.tls, undefined);
      const report = buildReport(rec);
      assert.deepEqual(
        report.findings.filter((f) => f.severity !== 'info'),
        [],
      );
      // Issue 16: Gatehouse's defaults give no error and no warning on the example site.
      const asset = readdirSync(join(SITE, 'assets')).find((n) => n.endsWith('.js'))!;
      for (const path of ['/index.html', `/assets/${asset}`, '/robots.txt', '/no-such-page']) {
        const r = await checkUrl(`${url}${path}`, { ...FAST, origin: 'https://app.example' });
        // Issue 26: a 404 is a warning about the URL, never about Gatehouse's headers.
        assert.deepEqual(
          r.findings.filter((f) => f.severity !== 'info').map((f) => `${f.id}:${f.severity}`),
          path === '/no-such-page' ? ['status.client-error:warning'] : [],
          path,
        );
      }
      // The SPA probes ran on the page: the made-up hashed asset is a 404, not the page.
      const madeUp = rec.assets?.find((a) => a.kind === 'made-up');
      assert.equal(madeUp?.exchange.response?.status, 404);
    } finally {
      await app.close();
    }
  });

  it('HTTPS with the test PKI: HTTP/2 by ALPN, one connection, the certificate trusted', async () => {
    const { files, app } = await tlsApp();
    let handshakes = 0;
    app.server.on('secureConnection', () => handshakes++);
    const { port } = await app.listen();
    try {
      const url = `https://localhost:${port}/`;
      const rec = await record(url, { ...FAST, ca: files.caPem, origin: 'https://app.example' });
      // One for every request (one HTTP/2 session), one for the certificate inspection (which may
      // close before the server reports it): 15 requests on their own connections would be 16.
      assert.ok(handshakes >= 1 && handshakes <= 2, `${handshakes} TLS handshakes`);
      assert.equal(rec.probes.primary?.response?.httpVersion, '2');
      assert.equal(rec.probes['cors-preflight']?.response?.httpVersion, '2');
      assert.equal(rec.tls?.alpn, 'h2');
      assert.match(rec.tls?.protocol ?? '', /^TLSv1\.[23]$/);
      assert.deepEqual(rec.tls?.certificate?.checks, {
        trusted: true,
        timeValid: true,
        hostnameMatches: true,
        keyStrength: true,
      });
      const report = await checkUrl(url, { ...FAST, ca: files.caPem });
      assert.equal(report.summary.errors, 0, JSON.stringify(report.findings));
      // HSTS stays opt-in (issue 15): its absence is the one warning over HTTPS.
      assert.deepEqual(
        report.findings.filter((f) => f.severity === 'warning').map((f) => f.id),
        ['security.hsts-missing'],
      );
      assert.ok(report.findings.some((f) => f.id === 'protocol.http-version'));
    } finally {
      await app.close();
    }
  });

  it('http -> https redirect: the chain crosses schemes, TLS facts are of the final URL', async () => {
    const { files, app } = await tlsApp();
    const { port } = await app.listen();
    const plain = createHttpServer((req, res) => {
      res.writeHead(308, { location: `https://localhost:${port}${req.url}` });
      res.end();
    });
    const base = await listen(plain);
    try {
      const rec = await record(`${base}/`, { ...FAST, ca: files.caPem });
      assert.deepEqual(
        rec.redirects.map((x) => x.response?.status),
        [308, 200],
      );
      assert.equal(rec.finalUrl, `https://localhost:${port}/`);
      assert.equal(rec.tls?.certificate?.checks.trusted, true);
      const ids = buildReport(rec).findings.map((f) => f.id);
      assert.ok(!ids.includes('protocol.no-https-redirect'));
    } finally {
      await stop(plain);
      await app.close();
    }
  });

  it('attack: an untrusted certificate on the checked site (CA not given) -> unreachable naming the certificate; --insecure records it untrusted', async () => {
    const { app } = await tlsApp();
    const { port } = await app.listen();
    try {
      const url = `https://localhost:${port}/`;
      await assert.rejects(checkUrl(url, FAST), /certificate not trusted.*--insecure/);
      const report = await checkUrl(url, { ...FAST, insecure: true });
      assert.ok(
        report.findings.some((f) => f.id === 'protocol.certificate-untrusted' && f.severity === 'error'),
      );
    } finally {
      await app.close();
    }
  });
});

describe('record: nginx with a hand-written config', NGINX_SUITE, () => {
  let nginx: NginxSite;
  before(async () => {
    nginx = await startNginxSite();
  });
  after(() => nginx.close());

  it('/index.html: expires 1y on the HTML page', async () => {
    const rec = await record(nginx.url('/index.html'), FAST);
    assert.equal(header(rec, 'primary', 'cache-control'), 'max-age=31536000');
    assert.ok(header(rec, 'primary', 'expires'));
    assert.match(header(rec, 'primary', 'server') ?? '', /^nginx\/\d/);
  });

  it('/assets/...: add_header Cache-Control in the location loses the server-level add_headers', async () => {
    const rec = await record(nginx.url('/assets/app.3f9a1c2b7d.js'), FAST);
    assert.equal(header(rec, 'primary', 'cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(header(rec, 'primary', 'x-content-type-options'), undefined);
    assert.equal(header(rec, 'primary', 'x-frame-options'), undefined);
  });

  it('/app.css: gzip on without gzip_vary, the server-level headers kept', async () => {
    const rec = await record(nginx.url('/app.css'), FAST);
    assert.equal(header(rec, 'coding-gzip', 'content-encoding'), 'gzip');
    assert.equal(header(rec, 'coding-gzip', 'vary'), undefined);
    assert.equal(header(rec, 'primary', 'x-content-type-options'), 'nosniff');
    assert.equal(status(rec, 'inm-match'), 304);
    assert.equal(status(rec, 'range'), 206);
  });
});

describe('checkUrl: errors carry stable codes', () => {
  it('a URL it cannot use -> GATEHOUSE_CHECK_USAGE', async () => {
    await assert.rejects(checkUrl('ftp://a.example/'), { code: 'GATEHOUSE_CHECK_USAGE' });
    await assert.rejects(checkUrl('http://a.example/', { headers: { Host: 'b.example' } }), {
      code: 'GATEHOUSE_CHECK_USAGE',
    });
  });

  it('nothing listening -> GATEHOUSE_CHECK_UNREACHABLE naming the URL', async () => {
    const s = createHttpServer();
    const base = await listen(s);
    await stop(s);
    await assert.rejects(checkUrl(`${base}/x`, FAST), {
      code: 'GATEHOUSE_CHECK_UNREACHABLE',
      message: `${base}/x: connection refused`,
    });
  });
});

describe('record: the SPA asset probes (issue 26)', () => {
  it('Gatehouse with spa: true: the made-up hashed asset and the referenced assets are not the page', async () => {
    const app = createServer({
      root: join(REPO_ROOT, 'examples/site'),
      static: { spa: true },
      listen: { host: '127.0.0.1', port: 0 },
      log: { format: 'off' },
    });
    const { url } = await app.listen();
    try {
      const rec = await record(`${url}/`, FAST);
      const assets = rec.assets ?? [];
      assert.equal(assets[0]?.kind, 'made-up');
      assert.equal(assets[0]?.exchange.response?.status, 404);
      assert.ok(assets.length > 1, 'the example page references its script or stylesheet');
      for (const a of assets.slice(1)) {
        assert.equal(a.exchange.response?.status, 200, a.exchange.request.url);
        assert.doesNotMatch(field(a.exchange.response!.headers, 'content-type') ?? '', /html/);
      }
      const ids = buildReport(rec).findings.map((f) => f.id);
      assert.ok(!ids.includes('status.asset-html-fallback'), ids.join(' '));
    } finally {
      await app.close();
    }
  });

  it('no asset probes for a non-HTML answer', async () => {
    const site = await startBrokenSite();
    try {
      const rec = await record(site.url('/uncompressed-css'), FAST);
      assert.equal(rec.assets, undefined);
    } finally {
      await site.close();
    }
  });
});
