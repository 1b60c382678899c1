// The status area of gatehouse check (issue 26 §1): the final status (5xx an error, 4xx a warning) and
// the SPA fallback (a script, stylesheet or hashed asset answered 200 text/html), on recorded exchanges;
// the asset URLs the live prober picks (assets.ts) from a page's markup.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assetTargets, MAX_REFERENCED_ASSETS, referencedAssets } from '../../src/inspect/assets.js';
import { checkStatus } from '../../src/inspect/checks/status.js';
import type { AssetProbe, Recording, Severity } from '../../src/inspect/types.js';
import { type FindingCase, findingTableTests } from '../helpers/inspect-cases.js';
import { type ExchangeSpec, exchange, recording, response } from '../helpers/recording.js';

const PAGE = 'https://site.example/app/';
const HTML = { 'content-type': 'text/html; charset=utf-8' };
const JS = { 'content-type': 'text/javascript' };

function withAssets(primary: ExchangeSpec, assets: [AssetProbe['kind'], string, ExchangeSpec][]): Recording {
  const rec = recording({ url: PAGE, probes: { primary } });
  rec.assets = assets.map(([kind, url, spec]) => ({ kind, exchange: exchange({ url, ...spec }) }));
  return rec;
}

const SEVERITY: Record<string, Severity> = {
  'status.server-error': 'error',
  'status.client-error': 'warning',
  'status.asset-html-fallback': 'error',
};

const CASES: FindingCase[] = [
  [
    '502 (a proxy to a dead upstream)',
    recording({ probes: { primary: { status: 502 } } }),
    'status.server-error',
    true,
  ],
  ['500', recording({ probes: { primary: { status: 500 } } }), 'status.server-error', true],
  ['200', recording({ probes: { primary: { status: 200 } } }), 'status.server-error', false],
  [
    '404 is not a server error',
    recording({ probes: { primary: { status: 404 } } }),
    'status.server-error',
    false,
  ],
  ['404', recording({ probes: { primary: { status: 404 } } }), 'status.client-error', true],
  ['410', recording({ probes: { primary: { status: 410 } } }), 'status.client-error', true],
  ['204', recording({ probes: { primary: { status: 204 } } }), 'status.client-error', false],
  ['no final response', recording({ probes: { primary: { error: 'reset' } } }), 'status.client-error', false],
  [
    'the made-up hashed asset answered 200 text/html (try_files fallback)',
    withAssets({ headers: HTML }, [
      ['made-up', 'https://site.example/assets/index-deadbeef.js', { headers: HTML }],
    ]),
    'status.asset-html-fallback',
    true,
  ],
  [
    'a referenced stylesheet answered 200 text/html',
    withAssets({ headers: HTML }, [['stylesheet', 'https://site.example/app.css', { headers: HTML }]]),
    'status.asset-html-fallback',
    true,
  ],
  [
    'the made-up asset answered 404 text/html (a 404 page is fine)',
    withAssets({ headers: HTML }, [
      ['made-up', 'https://site.example/assets/index-deadbeef.js', { status: 404, headers: HTML }],
    ]),
    'status.asset-html-fallback',
    false,
  ],
  [
    'a referenced script answered 200 text/javascript',
    withAssets({ headers: HTML }, [
      ['script', 'https://site.example/assets/app-3f2a9c1b.js', { headers: JS }],
    ]),
    'status.asset-html-fallback',
    false,
  ],
  [
    'the URL checked is a hashed asset and answered 200 text/html',
    recording({ url: 'https://site.example/assets/app-3f2a9c1b.js', probes: { primary: { headers: HTML } } }),
    'status.asset-html-fallback',
    true,
  ],
  // Any content-hashed name is an asset, not only scripts and stylesheets: an image or a font of the
  // previous deploy answered with the page breaks the same way.
  [
    'the URL checked is a hashed .png and answered 200 text/html',
    recording({
      url: 'https://site.example/assets/logo-3f2a9c1b.png',
      probes: { primary: { headers: HTML } },
    }),
    'status.asset-html-fallback',
    true,
  ],
  [
    'the URL checked is a hashed .woff2 (base64url hash) and answered 200 text/html',
    recording({
      url: 'https://site.example/assets/inter-B-x9aZ_k.woff2',
      probes: { primary: { headers: HTML } },
    }),
    'status.asset-html-fallback',
    true,
  ],
  [
    'the URL checked is a hashed .png and answered 200 image/png',
    recording({
      url: 'https://site.example/assets/logo-3f2a9c1b.png',
      probes: { primary: { headers: { 'content-type': 'image/png' } } },
    }),
    'status.asset-html-fallback',
    false,
  ],
  [
    'the URL checked is a .png without a hash and answered 200 text/html (may be a page route)',
    recording({ url: 'https://site.example/logo.png', probes: { primary: { headers: HTML } } }),
    'status.asset-html-fallback',
    false,
  ],
  [
    'the URL checked is a page and answered 200 text/html',
    recording({ url: PAGE, probes: { primary: { headers: HTML } } }),
    'status.asset-html-fallback',
    false,
  ],
];

describe('checkStatus: each finding fires and stays quiet (issue 26)', () => {
  findingTableTests({
    area: 'status',
    check: checkStatus,
    cases: CASES,
    severity: SEVERITY,
    allIdsListed: true,
  });

  it('the messages name the status and the asset path', () => {
    const [bad] = checkStatus(recording({ probes: { primary: { status: 503 } } }));
    assert.match(bad!.message, /answers 503/);
    const fallback = checkStatus(
      withAssets({ headers: HTML }, [
        ['made-up', 'https://site.example/assets/index-deadbeef.js', { headers: HTML }],
      ]),
    );
    assert.match(fallback[0]!.message, /^\/assets\/index-deadbeef\.js, a made-up hashed asset URL/);
    assert.match(fallback[0]!.evidence, /content-type: text\/html/);
  });

  it("a 404 through Gatehouse's proxy names stripPrefix; through another proxy, the prefix; else neither", () => {
    const notFound = (headers: Record<string, string>) =>
      checkStatus(recording({ probes: { primary: { status: 404, headers } } }));
    const [ours] = notFound({ via: '1.1 cdn.example, 1.1 gatehouse' });
    assert.equal(ours!.id, 'status.client-error');
    assert.match(ours!.message, /Gatehouse's proxy: the proxy strips its prefix by default/);
    assert.match(ours!.evidence, /^status 404; via: 1\.1 cdn\.example, 1\.1 gatehouse$/);
    const [other] = notFound({ via: '1.1 varnish (Varnish/7.5)' });
    assert.match(other!.message, /through a proxy: check whether the proxy keeps or strips/);
    assert.doesNotMatch(other!.message, /stripPrefix/);
    const [plain] = notFound({});
    assert.match(plain!.message, /^the URL answers 404, not a success/);
    const [gone] = checkStatus(
      recording({ probes: { primary: { status: 410, headers: { via: '1.1 gatehouse' } } } }),
    );
    assert.match(gone!.message, /^the URL answers 410, not a success/);
  });
});

describe('assets.ts: which asset URLs are probed', () => {
  const base = new URL('https://site.example/app/page');
  it('scripts and stylesheets in document order, same origin only, without repeats', () => {
    const html = `<!doctype html><link rel="icon" href="/favicon.ico"><link rel=stylesheet href='/assets/main-9b8c7d6e.css'>
      <script type="module" src="/assets/index-3f2a9c1b.js"></script><script src="https://cdn.example/x.js"></script>
      <script src="rel.js"></script><script src="/assets/index-3f2a9c1b.js"></script><script>inline()</script>`;
    assert.deepEqual(
      referencedAssets(html, base).map((a) => [a.kind, a.url.href]),
      [
        ['stylesheet', 'https://site.example/assets/main-9b8c7d6e.css'],
        ['script', 'https://site.example/assets/index-3f2a9c1b.js'],
        ['script', 'https://site.example/app/rel.js'],
      ],
    );
  });

  it('the made-up asset goes in the first asset folder, else /assets/; none for a non-HTML or non-2xx page', () => {
    const page = response({ headers: HTML, body: '<script src="/static/js/main-3f2a9c1b.js"></script>' });
    const got = assetTargets(base, page, undefined).map((a) => [a.kind, a.url.pathname]);
    assert.deepEqual(got, [
      ['made-up', '/static/js/index-deadbeef.js'],
      ['script', '/static/js/main-3f2a9c1b.js'],
    ]);
    const bare = assetTargets(base, response({ headers: HTML, body: '<p>hi' }), undefined);
    assert.deepEqual(
      bare.map((a) => a.url.pathname),
      ['/assets/index-deadbeef.js'],
    );
    assert.deepEqual(assetTargets(base, response({ headers: JS }), undefined), []);
    assert.deepEqual(assetTargets(base, response({ status: 404, headers: HTML }), undefined), []);
  });

  it('a content-coded page is read from the identity probe; at most MAX_REFERENCED_ASSETS references', () => {
    const scripts = Array.from({ length: 9 }, (_, i) => `<script src="/a${i}.js"></script>`).join('');
    const gz = response({ headers: { ...HTML, 'content-encoding': 'gzip' }, body: '\u001f\u008b...' });
    const identity = response({ headers: HTML, body: scripts });
    assert.equal(assetTargets(base, gz, undefined).length, 1);
    assert.equal(assetTargets(base, gz, identity).length, 1 + MAX_REFERENCED_ASSETS);
  });
});
