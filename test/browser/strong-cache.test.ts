// The strong cache in a real Chromium: a built site whose JS and CSS carry a content hash in their
// names gets `public, max-age=31536000, immutable` for them and `no-cache` for the HTML (and for the
// unhashed /settings.js). On a second, normal navigation the browser must take the hashed files from
// its cache (nothing reaches the server, transferSize 0) and revalidate the HTML with If-None-Match,
// which the server answers 304 (RFC 9111 §4.2 freshness, §4.3.1 validation; RFC 9110 §13.1.2).
//
// A normal navigation, not a reload: observed on Chromium 156, `page.goto` of the URL the tab shows,
// a click on a link to it, and a new tab all send no Cache-Control of their own (same-URL navigations
// are not turned into reloads); a reload would add `Cache-Control: max-age=0` (see reload.test.ts).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Page } from 'playwright-core';
import {
  describeBrowser,
  type LaunchedBrowser,
  launchBrowser,
  type RecordingGatehouse,
  serveCli,
  startRecordingGatehouse,
  timings,
} from '../helpers/browser.js';
import { removeSite } from '../helpers/http.js';
import { waitUntil } from '../helpers/wait.js';
import { BUILT_SITE, HASHED_CSS, HASHED_JS, makeBuiltSite, PLAIN_JS } from './fixtures/site.js';

const IMMUTABLE = 'public, max-age=31536000, immutable';
const sizeOf = (path: string) => Buffer.byteLength(BUILT_SITE[path === '/' ? 'index.html' : path.slice(1)]!);

describeBrowser('strong cache in Chromium: hashed assets from the browser cache, HTML revalidated', () => {
  let dir: string;
  let site: RecordingGatehouse;
  let browser: LaunchedBrowser;
  /** The ETags of the first answers, by path. */
  const etags = new Map<string, string>();

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

  /** The script ran and the stylesheet applied in `page`, wherever they came from. */
  async function assertAssetsWork(page: Page): Promise<void> {
    assert.equal(await page.evaluate(() => (window as unknown as { appRuns: number }).appRuns), 1);
    assert.equal(await page.evaluate(() => (window as unknown as { settingsRuns: number }).settingsRuns), 1);
    const color = await page.evaluate(() => getComputedStyle(document.getElementById('mark')!).color);
    assert.equal(color, 'rgb(1, 2, 3)');
  }

  /** A second navigation's expectations: hashed files never asked for, HTML and /settings.js 304. */
  async function assertSecondNavigation(page: Page, from: number): Promise<void> {
    await site.settled();
    assert.deepEqual(site.requestsFor(HASHED_JS, from), [], 'no request for the hashed JS');
    assert.deepEqual(site.requestsFor(HASHED_CSS, from), [], 'no request for the hashed CSS');
    for (const path of ['/', PLAIN_JS]) {
      const r = site.onlyRequest(path, from);
      assert.equal(r.headers['if-none-match'], etags.get(path), `${path} revalidated with its ETag`);
      assert.equal(r.headers['cache-control'], undefined, `${path}: a navigation, not a reload`);
      assert.equal(r.status, 304, `${path} answered 304`);
      assert.equal(r.responseHeaders['content-length'], undefined, 'a 304 has no body');
    }
    assert.equal(site.seen.length - from, 2, 'nothing else reached the server');

    const t = await timings(page);
    for (const path of [HASHED_JS, HASHED_CSS]) {
      const e = t.get(path);
      assert.ok(e, `a resource entry for ${path}`);
      assert.equal(e.transferSize, 0, `${path}: transferSize 0 (from the cache)`);
      assert.equal(e.deliveryType, 'cache');
      assert.equal(e.decodedBodySize, sizeOf(path), `${path}: the whole file, from the cache`);
    }
    const nav = t.get('/');
    assert.ok(nav && nav.entryType === 'navigation');
    // Resource Timing: a response validated with a 304 reports 300 octets (the header allowance).
    assert.equal(nav.transferSize, 300, 'the HTML: validated, no body transferred');
    assert.equal(nav.decodedBodySize, sizeOf('/'), 'the HTML came from the cache after the 304');
    await assertAssetsWork(page);
  }

  it('first navigation, empty cache -> every file 200 from the server, hashed ones immutable', async () => {
    const page = await browser.context.newPage();
    try {
      const from = site.seen.length;
      await page.goto(`${site.url}/`);
      await site.settled();
      for (const path of ['/', HASHED_JS, HASHED_CSS, PLAIN_JS]) {
        const r = site.onlyRequest(path, from);
        assert.equal(r.method, 'GET');
        assert.equal(r.headers['if-none-match'], undefined, `${path}: nothing to revalidate yet`);
        assert.equal(r.status, 200);
        assert.equal(r.responseHeaders['content-length'], String(sizeOf(path)));
        assert.ok(r.responseHeaders.etag, `${path} has an ETag`);
        etags.set(path, r.responseHeaders.etag);
      }
      assert.equal(site.requestsFor('/', from)[0]!.responseHeaders['cache-control'], 'no-cache');
      assert.equal(site.requestsFor(PLAIN_JS, from)[0]!.responseHeaders['cache-control'], 'no-cache');
      assert.equal(site.requestsFor(HASHED_JS, from)[0]!.responseHeaders['cache-control'], IMMUTABLE);
      assert.equal(site.requestsFor(HASHED_CSS, from)[0]!.responseHeaders['cache-control'], IMMUTABLE);
      assert.equal(site.seen.length - from, 4, 'no other request (the icon is inline)');

      const t = await timings(page);
      for (const path of ['/', HASHED_JS, HASHED_CSS, PLAIN_JS]) {
        const e = t.get(path);
        assert.ok(e, `an entry for ${path}`);
        assert.equal(e.deliveryType, '', `${path} from the network`);
        assert.equal(e.encodedBodySize, sizeOf(path));
        assert.ok(e.transferSize > e.encodedBodySize, `${path}: transferSize counts the body and head`);
      }
      await assertAssetsWork(page);
    } finally {
      await page.close();
    }
  });

  it('second navigation in a new tab -> hashed JS and CSS from the cache, HTML If-None-Match -> 304', async () => {
    const page = await browser.context.newPage();
    try {
      const from = site.seen.length;
      await page.goto(`${site.url}/`);
      await assertSecondNavigation(page, from);
    } finally {
      await page.close();
    }
  });

  it('second navigation by a link click to the same URL -> the same: cache, and a 304 for the HTML', async () => {
    const page = await browser.context.newPage();
    try {
      await page.goto(`${site.url}/`);
      const from = site.seen.length;
      await Promise.all([page.waitForEvent('load'), page.click('#self')]);
      await assertSecondNavigation(page, from);
    } finally {
      await page.close();
    }
  });

  it('second navigation by page.goto of the URL the tab shows -> a navigation too, not a reload', async () => {
    const page = await browser.context.newPage();
    try {
      await page.goto(`${site.url}/`);
      const from = site.seen.length;
      await page.goto(`${site.url}/`);
      await assertSecondNavigation(page, from);
    } finally {
      await page.close();
    }
  });

  it('the same against a `gatehouse serve` process: its access log shows 200s, then only two 304s', async () => {
    const served = await serveCli(dir);
    const first = await browser.context.newPage();
    const second = await browser.context.newPage();
    try {
      // A new origin (another port): nothing of it is in the browser's cache yet.
      await first.goto(`${served.url}/`);
      const lines = (from: number) => served.log.slice(from).map((l) => [l.url, l.status]);
      const sorted = (x: (string | number)[][]) => x.sort((p, q) => String(p[0]).localeCompare(String(q[0])));
      await waitUntil('four access lines', () => served.log.length >= 4);
      assert.deepEqual(
        sorted(lines(0)),
        sorted([
          ['/', 200],
          [HASHED_JS, 200],
          [HASHED_CSS, 200],
          [PLAIN_JS, 200],
        ]),
      );

      const from = served.log.length;
      await second.goto(`${served.url}/`);
      // Both 304s come from this one page load; a request for a hashed file would be logged alongside.
      await waitUntil('two more access lines', () => served.log.length >= from + 2);
      await assertAssetsWork(second);
      const t = await timings(second);
      assert.equal(t.get(HASHED_JS)?.transferSize, 0);
      assert.equal(t.get(HASHED_CSS)?.transferSize, 0);
      assert.deepEqual(
        sorted(lines(from)),
        sorted([
          ['/', 304],
          [PLAIN_JS, 304],
        ]),
        'no line for the hashed JS or CSS',
      );
    } finally {
      await first.close();
      await second.close();
      await served.close();
    }
  });
});
