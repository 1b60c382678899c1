// Reloads in a real Chromium against the built site (hashed JS and CSS `immutable`, HTML and the
// unhashed /settings.js `no-cache`), asserting what the server received and the Performance API.
//
// Observed on Chromium 156 (and asserted exactly below):
// - Normal reload (F5: playwright's page.reload(), or CDP Page.reload without ignoreCache): only the
//   main resource is forced to revalidate, with `Cache-Control: max-age=0` and If-None-Match -> 304.
//   Subresources follow their own freshness (RFC 9111 §4.2): the fresh hashed JS and CSS are not asked
//   for at all; the `no-cache` /settings.js is revalidated with If-None-Match and WITHOUT a
//   Cache-Control of its own (Chromium's reload revalidates only the main resource since version 54).
// - Forced reload (Ctrl+Shift+R: CDP Page.reload with ignoreCache true): every request carries
//   `Cache-Control: no-cache` and `Pragma: no-cache` (RFC 9111 §5.2.1.4, §5.4) and no validator, so
//   each gets a 200 with its whole body, hashed files included.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Page } from 'playwright-core';
import {
  cdpReload,
  describeBrowser,
  type LaunchedBrowser,
  launchBrowser,
  type RecordingGatehouse,
  startRecordingGatehouse,
  timings,
} from '../helpers/browser.js';
import { removeSite } from '../helpers/http.js';
import { BUILT_SITE, HASHED_CSS, HASHED_JS, makeBuiltSite, PLAIN_JS } from './fixtures/site.js';

const ALL = ['/', HASHED_JS, HASHED_CSS, PLAIN_JS];
const sizeOf = (path: string) => Buffer.byteLength(BUILT_SITE[path === '/' ? 'index.html' : path.slice(1)]!);

describeBrowser(
  'reloads in Chromium: normal reload revalidates the HTML, forced reload refetches all',
  () => {
    let dir: string;
    let site: RecordingGatehouse;
    let browser: LaunchedBrowser;

    before(async () => {
      dir = makeBuiltSite();
      site = await startRecordingGatehouse({ root: dir });
      browser = await launchBrowser();
    });

    after(async () => {
      await browser?.close();
      await site?.close();
      if (dir) removeSite(dir);
    });

    /** A new tab with the site loaded (its files in the browser's cache from here on); the ETags seen. */
    async function loadedPage(): Promise<{ page: Page; etags: Map<string, string> }> {
      const page = await browser.context.newPage();
      await page.goto(`${site.url}/`);
      await site.settled();
      const etags = new Map<string, string>();
      for (const path of ALL) {
        const last = site.requestsFor(path).at(-1);
        if (last?.responseHeaders.etag) etags.set(path, last.responseHeaders.etag);
      }
      assert.equal(etags.size, ALL.length, 'every file was answered with an ETag once');
      return { page, etags };
    }

    async function assertNormalReload(page: Page, etags: Map<string, string>, from: number): Promise<void> {
      await site.settled();
      const html = site.onlyRequest('/', from);
      assert.equal(html.headers['cache-control'], 'max-age=0', 'the main resource is revalidated');
      assert.equal(html.headers.pragma, undefined);
      assert.equal(html.headers['if-none-match'], etags.get('/'));
      assert.equal(html.status, 304);

      assert.deepEqual(site.requestsFor(HASHED_JS, from), [], 'fresh hashed JS: not asked for');
      assert.deepEqual(site.requestsFor(HASHED_CSS, from), [], 'fresh hashed CSS: not asked for');
      const plain = site.onlyRequest(PLAIN_JS, from);
      assert.equal(plain.headers['cache-control'], undefined, 'a subresource gets no max-age=0 of its own');
      assert.equal(plain.headers['if-none-match'], etags.get(PLAIN_JS), 'no-cache: revalidated');
      assert.equal(plain.status, 304);
      assert.equal(site.seen.length - from, 2, 'nothing else reached the server');

      const t = await timings(page);
      assert.equal(t.get('/')?.entryType, 'navigation');
      assert.equal(t.get('/')?.transferSize, 300, 'the HTML: a 304, no body (Resource Timing: 300)');
      assert.equal(t.get('/')?.decodedBodySize, sizeOf('/'));
      for (const path of [HASHED_JS, HASHED_CSS]) {
        assert.equal(t.get(path)?.transferSize, 0, `${path}: transferSize 0`);
        assert.equal(t.get(path)?.deliveryType, 'cache', `${path}: from the cache`);
      }
      assert.equal(await page.evaluate(() => (window as unknown as { appRuns: number }).appRuns), 1);
    }

    it('normal reload (page.reload) -> HTML with Cache-Control: max-age=0 and If-None-Match -> 304', async () => {
      const { page, etags } = await loadedPage();
      try {
        const from = site.seen.length;
        await page.reload();
        await assertNormalReload(page, etags, from);
      } finally {
        await page.close();
      }
    });

    it('normal reload (CDP Page.reload, ignoreCache false) -> the same as page.reload', async () => {
      const { page, etags } = await loadedPage();
      try {
        const from = site.seen.length;
        await cdpReload(page, false);
        await assertNormalReload(page, etags, from);
      } finally {
        await page.close();
      }
    });

    it('forced reload (CDP Page.reload, ignoreCache) -> no-cache and Pragma: no-cache, 200 with bodies', async () => {
      const { page } = await loadedPage();
      try {
        const from = site.seen.length;
        await cdpReload(page, true);
        await site.settled();
        for (const path of ALL) {
          const r = site.onlyRequest(path, from);
          assert.equal(r.method, 'GET');
          assert.equal(r.headers['cache-control'], 'no-cache', `${path}: Cache-Control: no-cache`);
          assert.equal(r.headers.pragma, 'no-cache', `${path}: Pragma: no-cache`);
          assert.equal(r.headers['if-none-match'], undefined, `${path}: no validator sent`);
          assert.equal(r.headers['if-modified-since'], undefined, `${path}: no date validator either`);
          assert.equal(r.status, 200, `${path}: 200`);
          assert.equal(r.responseHeaders['content-length'], String(sizeOf(path)), `${path}: the whole body`);
        }
        assert.equal(site.seen.length - from, ALL.length, 'nothing else reached the server');

        const t = await timings(page);
        for (const path of ALL) {
          const e = t.get(path);
          assert.ok(e, `an entry for ${path}`);
          assert.equal(e.deliveryType, '', `${path}: from the network`);
          assert.equal(e.encodedBodySize, sizeOf(path), `${path}: its body was transferred`);
          assert.ok(e.transferSize > e.encodedBodySize, `${path}: transferSize counts body and head`);
        }
        assert.equal(await page.evaluate(() => (window as unknown as { appRuns: number }).appRuns), 1);
      } finally {
        await page.close();
      }
    });
  },
);
