// Issue 16: every deliberate mistake is caught. `gatehouse check` (checkUrl: the live prober and
// every area check) against the broken node:http site and against nginx with a typical hand-written
// config, both real servers on 127.0.0.1; each path must raise the findings named for its mistake.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { checkUrl } from '../../src/inspect/index.js';
import type { Report } from '../../src/inspect/types.js';
import { BROKEN_PATHS, type BrokenPath, type BrokenSite, startBrokenSite } from '../helpers/broken-site.js';
import { NGINX_MISTAKES, NGINX_SUITE, type NginxSite, startNginxSite } from '../helpers/nginx-site.js';

const FAST = { repeatDelayMs: 0 };
const ORIGIN = 'https://app.example';

/** The findings each broken path must raise (others may fire too). */
const EXPECTED: Record<BrokenPath, readonly string[]> = {
  '/html-cached-a-year': ['caching.html-long-lifetime'],
  '/assets/app.3f9a1c2b7d.js': ['caching.hashed-no-cache'],
  '/etag-per-request': ['validators.etag-unstable'],
  '/304-drops-validators': ['validators.304-drops-field'],
  '/cors-star-credentials': ['cors.wildcard-credentials'],
  '/cors-reflect': [
    'cors.reflects-any-origin-credentials',
    'cors.missing-vary-origin',
    'cors.preflight-failed',
  ],
  '/jsonp?callback=handle': ['jsonp.content-type', 'jsonp.nosniff-missing', 'jsonp.callback-reflected'],
  '/gzip-no-vary': ['coding.missing-vary', 'coding.same-etag'],
  '/loop-a': ['redirects.loop'],
  '/moved': ['redirects.permanent-to-temporary'],
  '/endless/1': ['redirects.too-many'],
  '/weak-etag-ranges': ['validators.weak-etag-ranges'],
  '/wrong-content-range': ['validators.content-range-invalid'],
  '/if-range-ignored': ['validators.if-range-mismatch-partial'],
  '/inm-always-304': ['validators.inm-wrong-304', 'validators.ims-ignored'],
  '/api-shared-cookie': ['caching.api-shared-with-credentials'],
  '/cache-conflicts': ['caching.no-store-with-max-age', 'caching.missing-date', 'caching.invalid-expires'],
  '/uncompressed-css': ['coding.text-uncompressed'],
  '/leaky-html': [
    'security.nosniff-missing',
    'security.referrer-policy-missing',
    'security.frame-protection-missing',
    'security.version-leak',
  ],
  '/upstream-dead': ['status.server-error'],
  '/missing': ['status.client-error'],
  '/outage-cached-a-year': ['caching.error-long-lifetime', 'status.client-error'],
  '/spa/': ['status.asset-html-fallback'],
  '/html-just-deployed': ['caching.html-no-cache-control'],
};

const NGINX_EXPECTED: Record<keyof typeof NGINX_MISTAKES, readonly string[]> = {
  '/index.html': ['caching.html-long-lifetime', 'security.version-leak'],
  '/assets/app.3f9a1c2b7d.js': ['security.nosniff-missing'],
  '/app.css': ['coding.missing-vary'],
};

function assertRaised(report: Report, ids: readonly string[], what: string): void {
  const got = new Set(report.findings.map((f) => f.id));
  const missing = ids.filter((id) => !got.has(id));
  assert.deepEqual(missing, [], `${what}: missing ${missing.join(', ')}; got ${[...got].join(', ')}`);
  // Everything an expected finding says is an error or a warning counts in the summary.
  assert.ok(report.summary.errors + report.summary.warnings > 0, what);
}

describe('gatehouse check catches each mistake of the broken site', () => {
  let site: BrokenSite;
  before(async () => {
    site = await startBrokenSite();
  });
  after(() => site.close());

  it('every broken path has expectations', () => {
    assert.deepEqual(Object.keys(EXPECTED).sort(), Object.keys(BROKEN_PATHS).sort());
  });

  for (const [path, ids] of Object.entries(EXPECTED) as [BrokenPath, readonly string[]][]) {
    it(`${path} (${BROKEN_PATHS[path]}) -> ${ids.join(', ')}`, async () => {
      const report = await checkUrl(site.url(path), { ...FAST, origin: ORIGIN });
      assertRaised(report, ids, path);
    });
  }
});

// The SPA folder's fallback answers every miss, so a hashed image or font of the previous deploy gets
// the page too; the finding must name that URL (the made-up .js probe raises the same id on its own).
describe('gatehouse check: a hashed image or font answered by the SPA fallback', () => {
  let site: BrokenSite;
  before(async () => {
    site = await startBrokenSite();
  });
  after(() => site.close());

  for (const path of ['/spa/assets/logo-3f2a9c1b.png', '/spa/assets/inter-B-x9aZ_k.woff2']) {
    it(`${path} answered 200 text/html -> status.asset-html-fallback names it`, async () => {
      const report = await checkUrl(site.url(path), { ...FAST, origin: ORIGIN });
      const named = report.findings.filter(
        (f) => f.id === 'status.asset-html-fallback' && f.message.includes(path),
      );
      assert.equal(named.length, 1, JSON.stringify(report.findings.map((f) => [f.id, f.message])));
      assert.equal(named[0]!.severity, 'error');
      assert.match(named[0]!.evidence, /-> 200; content-type: text\/html/);
    });
  }
});

describe('gatehouse check catches the hand-written nginx config mistakes', NGINX_SUITE, () => {
  let nginx: NginxSite;
  before(async () => {
    nginx = await startNginxSite();
  });
  after(() => nginx.close());

  for (const [path, ids] of Object.entries(NGINX_EXPECTED)) {
    it(`${path} (${NGINX_MISTAKES[path as keyof typeof NGINX_MISTAKES]}) -> ${ids.join(', ')}`, async () => {
      const report = await checkUrl(nginx.url(path), { ...FAST, origin: ORIGIN });
      assertRaised(report, ids, path);
    });
  }
});
