// Fuzz: hostile Host and request-target values, against the pure functions (never throw, idempotent,
// a fixed point of the WHATWG URL parser the cache key uses, so the key names exactly the URL fetched)
// and against a live Gatehouse with a caching proxy route (never 5xx, the upstream only ever receives
// canonical values).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { canonicalOriginForm, parseAuthority, parseRequestTarget } from '../../src/http/target.js';
import { primaryKeyOf } from '../../src/server/proxy/cache/index.js';
import { makeSite, raw, rawStatus, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { ITERATIONS, mulberry32, SEED_OFFSET } from '../helpers/random.js';

const TARGET_PIECES = [
  '/',
  '/',
  '/',
  'a',
  'api',
  '.',
  '..',
  '%2e',
  '%2E',
  '.%2e',
  '%2e.',
  '%2f',
  '%2F',
  '%5c',
  '\\',
  '//',
  '?',
  '#',
  '%',
  '%zz',
  '%4',
  '%41',
  '%7e',
  '~',
  "'",
  '|',
  '{',
  '}',
  '^',
  '`',
  '"',
  '<',
  '>',
  '@',
  ':',
  ';',
  '=',
  '&',
  '+',
  '\xe9',
  '\x01',
  '\x7f',
  ' ',
  '*',
  '[',
  ']',
  '!',
  '$',
  '(',
  ')',
  ',',
];
const HOST_PIECES = [
  'a',
  'example',
  '.',
  'com',
  'EXAMPLE',
  '-',
  '_',
  ':',
  '80',
  '443',
  '8080',
  '0',
  '65536',
  '[',
  ']',
  '::',
  '1',
  '127',
  'ffff',
  '0x7f',
  '/',
  '\\',
  '#',
  '?',
  '@',
  ' ',
  '%',
  '%2e',
  '\t',
  '\xe4',
  '!',
  '..',
];

function generator(seed: number) {
  const next = mulberry32(seed + SEED_OFFSET);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!;
  return {
    target: () => {
      let s = pick(['/', '/', '/api/', 'http://example.com/', 'http://example.com']);
      const n = Math.floor(next() * 10);
      for (let i = 0; i < n; i++) s += pick(TARGET_PIECES);
      return s;
    },
    host: () => {
      let s = '';
      const n = 1 + Math.floor(next() * 6);
      for (let i = 0; i < n; i++) s += pick(HOST_PIECES);
      return s;
    },
  };
}

/** What the WHATWG parser makes of a URL; undefined when it refuses it. */
function whatwg(s: string): URL | undefined {
  try {
    return new URL(s);
  } catch {
    return undefined;
  }
}

describe('fuzz: Host and request-target (pure)', () => {
  it(`parseAuthority: never throws; an accepted authority is idempotent and what the URL parser keeps (${ITERATIONS} values)`, () => {
    const g = generator(11);
    for (let i = 0; i < ITERATIONS; i++) {
      const h = g.host();
      const r = parseAuthority(h, 80);
      if (r.kind !== 'ok') continue;
      const again = parseAuthority(r.authority, 80);
      assert.equal(again.kind === 'ok' && again.authority, r.authority, h);
      assert.equal(whatwg(`http://${r.authority}/`)?.host, r.authority, JSON.stringify(h));
    }
  });

  it(`canonicalOriginForm: never throws; canonical targets are idempotent, dot-free and fixed points of the URL parser (${ITERATIONS} values)`, () => {
    const g = generator(12);
    for (let i = 0; i < ITERATIONS; i++) {
      const t = g.target();
      const r = parseRequestTarget('GET', t, 80);
      if (r.kind !== 'origin') continue;
      const p = r.path;
      assert.deepEqual(canonicalOriginForm(p), { kind: 'ok', path: p }, JSON.stringify(t));
      const path = p.split('?', 1)[0]!;
      for (const seg of path.split('/'))
        assert.ok(seg !== '.' && seg !== '..', `${JSON.stringify(t)} -> ${p}`);
      assert.ok(!/%2e/i.test(path) && !path.includes('\\') && !p.includes('#'), p);
      const u = whatwg(`http://example.com${p}`);
      assert.equal(u?.href, `http://example.com${p}`, `${JSON.stringify(t)} -> ${p}`);
      // The cache key names exactly the URL the upstream is asked for.
      const host = r.authority ?? 'example.com';
      assert.equal(primaryKeyOf('http', host, p), `GET http://${host}${p}`, p);
    }
  });
});

describe('fuzz: Host and request-target (live server)', () => {
  let upstream: Server;
  const seen: { host: string | undefined; url: string }[] = [];
  let site: string;
  let gh: TestServer;
  before(async () => {
    upstream = createServer((req, res) => {
      seen.push({ host: req.headers.host, url: req.url! });
      res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'public, max-age=600' });
      res.end(`${req.headers.host} ${req.url}`);
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const port = (upstream.address() as AddressInfo).port;
    site = makeSite({ 'index.html': 'home', 'a/b.txt': 'b' });
    gh = await startServer(site, {
      proxy: [
        {
          prefix: '/api',
          upstream: `http://127.0.0.1:${port}`,
          stripPrefix: false,
          cache: { enabled: true },
        },
      ],
    });
  });
  after(async () => {
    await gh?.close();
    upstream.closeAllConnections();
    await new Promise<void>((r) => upstream.close(() => r()));
    removeSite(site);
  });

  it('random hostile heads: never 5xx, the upstream only receives canonical targets and valid Hosts', async () => {
    const g = generator(13);
    const n = Math.min(300, Math.max(50, Math.floor(ITERATIONS / 10)));
    for (let i = 0; i < n; i++) {
      const target = g.target().replace(/[ \r\n]/g, '%20');
      const host = i % 3 === 0 ? g.host().replace(/[\r\n]/g, '') : 'example.com';
      const text = await raw(
        gh.port,
        `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
        5000,
      );
      const status = rawStatus(text);
      assert.ok(
        status === 0 || status < 500,
        `${JSON.stringify(target)} ${JSON.stringify(host)}: ${text.slice(0, 200)}`,
      );
    }
    assert.ok(seen.length > 0, 'some requests reached the upstream');
    for (const s of seen) {
      assert.deepEqual(canonicalOriginForm(s.url), { kind: 'ok', path: s.url });
      const a = parseAuthority(s.host ?? '', 80);
      assert.equal(a.kind === 'ok' && a.authority, s.host);
    }
  });
});
