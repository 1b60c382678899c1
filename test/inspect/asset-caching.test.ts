// `gatehouse check` on a page grades the caching of what the page references (its scripts, stylesheets
// and preloaded fonts, fetched by the asset probes), each as its own resource class, reported from the
// page; and what a no-cache response does once stale.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { referencedAssets } from '../../src/inspect/assets.js';
import { checkCaching } from '../../src/inspect/checks/caching.js';
import type { AssetProbe, Recording } from '../../src/inspect/types.js';
import { type ExchangeSpec, exchange, NOW_MS, recording } from '../helpers/recording.js';

const DATE = new Date(NOW_MS).toUTCString();
const PAGE_FIELDS = { date: DATE, 'content-type': 'text/html', 'cache-control': 'no-cache', etag: '"p"' };
const YEAR = 'public, max-age=31536000, immutable';

function page(assets: [AssetProbe['kind'], string, Record<string, string>][]): Recording {
  const rec = recording({ url: 'https://site.example/', probes: { primary: { headers: PAGE_FIELDS } } });
  rec.assets = assets.map(([kind, path, headers]) => {
    const spec: ExchangeSpec = { url: `https://site.example${path}`, headers: { date: DATE, ...headers } };
    return { kind, exchange: exchange(spec) };
  });
  return rec;
}

const assetFindings = (rec: Recording) =>
  checkCaching(rec)
    .filter((f) => f.message.startsWith("the page's "))
    .map((f) => [f.id, f.severity]);

describe('check: the caching of the assets a page references', () => {
  const cases: [condition: string, assets: Parameters<typeof page>[0], expected: string[][]][] = [
    [
      'a hashed script with max-age=60 -> hashed-short-lifetime, from the page',
      [['script', '/assets/app-3f2a9c1b.js', { 'cache-control': 'public, max-age=60' }]],
      [['caching.hashed-short-lifetime', 'warning']],
    ],
    [
      'a hashed stylesheet with no-cache -> hashed-no-cache',
      [['stylesheet', '/assets/main-9b8c7d6e.css', { 'cache-control': 'no-cache' }]],
      [['caching.hashed-no-cache', 'warning']],
    ],
    [
      'a hashed font with a day -> hashed-short-lifetime',
      [['font', '/assets/inter-5e6f7a8b.woff2', { 'cache-control': 'max-age=86400' }]],
      [['caching.hashed-short-lifetime', 'warning']],
    ],
    [
      "Gatehouse's defaults (hashed: a year, immutable; plain script: no-cache; plain font: a year) -> nothing",
      [
        ['script', '/assets/app-3f2a9c1b.js', { 'cache-control': YEAR }],
        ['script', '/app.js', { 'cache-control': 'no-cache' }],
        ['font', '/fonts/inter.woff2', { 'cache-control': 'public, max-age=31536000' }],
      ],
      [],
    ],
    [
      'an unversioned script fresh for a week -> unversioned-asset-long-lifetime',
      [['script', '/app.js', { 'cache-control': 'max-age=604800' }]],
      [['caching.unversioned-asset-long-lifetime', 'warning']],
    ],
    [
      'an unversioned stylesheet fresh for an hour -> nothing (at most a day)',
      [['stylesheet', '/site.css', { 'cache-control': 'max-age=3600' }]],
      [],
    ],
    [
      'a script versioned by its query (?v=) fresh for a year -> nothing',
      [['script', '/app.js?v=OHml2TCuGZ', { 'cache-control': YEAR }]],
      [],
    ],
    [
      'a missing asset (404) and the made-up probe are not graded here',
      [
        ['made-up', '/assets/index-deadbeef.js', { 'cache-control': 'max-age=5' }],
        ['script', '/assets/gone-3f2a9c1b.js', { 'cache-control': 'max-age=5' }],
      ],
      [],
    ],
  ];
  for (const [condition, assets, expected] of cases) {
    it(condition, () => {
      const rec = page(assets);
      if (condition.startsWith('a missing asset')) rec.assets![1]!.exchange.response!.status = 404;
      assert.deepEqual(assetFindings(rec), expected);
    });
  }

  it('the finding names the asset and its kind; the evidence its request and Cache-Control', () => {
    const [f] = checkCaching(
      page([['script', '/assets/app-3f2a9c1b.js', { 'cache-control': 'public, max-age=60' }]]),
    ).filter((x) => x.id === 'caching.hashed-short-lifetime');
    assert.match(f!.message, /^the page's script \/assets\/app-3f2a9c1b\.js has a content hash/);
    assert.equal(f!.evidence, 'GET /assets/app-3f2a9c1b.js -> 200; cache-control: public, max-age=60');
  });
});

describe('check: fonts and preloads are probed', () => {
  it('preload as=font / as=style / as=script and modulepreload are read; other preloads are not', () => {
    const html = `<link rel="preload" href="/fonts/inter-5e6f7a8b.woff2" as="font" crossorigin>
      <link rel=modulepreload href="/assets/vendor-1a2b3c4d.js"><link rel="preload" as="style" href="/a.css">
      <link rel="preload" as="image" href="/hero.png"><link rel="preload" as="script" href="/b.js">`;
    assert.deepEqual(
      referencedAssets(html, new URL('https://site.example/')).map((a) => [a.kind, a.url.pathname]),
      [
        ['font', '/fonts/inter-5e6f7a8b.woff2'],
        ['script', '/assets/vendor-1a2b3c4d.js'],
        ['stylesheet', '/a.css'],
        ['script', '/b.js'],
      ],
    );
  });
});

describe('check: no-cache is never served stale (RFC 9111 §4.2.4, §5.2.2.4)', () => {
  const onExpiry = (cc: string) =>
    checkCaching(
      recording({ probes: { primary: { headers: { date: DATE, 'cache-control': cc, etag: '"a"' } } } }),
    ).find((f) => f.id === 'caching.on-expiry')!.message;

  it('no-cache: "never served stale", not "served stale when the origin cannot be reached"', () => {
    const m = onExpiry('no-cache');
    assert.match(m, /never served stale/);
    assert.doesNotMatch(m, /cannot be reached/);
  });

  it('no-cache with stale-if-error: the extension has no effect', () => {
    const m = onExpiry('no-cache, stale-if-error=86400');
    assert.doesNotMatch(m, /stale when the origin fails/);
    assert.match(m, /no effect beside no-cache/);
  });

  it('max-age without no-cache: still served stale when the origin cannot be reached', () => {
    assert.match(onExpiry('max-age=60'), /served stale only when the origin cannot be reached/);
  });
});
