// cacheApiTier in a real Chromium: a page (no bundler, dist/client copied into its site) fetches a
// year-cacheable JSON through createCachingFetch({ stores: [cacheApiTier()] }) twice; after a reload
// (memory gone) a new instance fetches it again. The server must see one request for it, the later
// answers must say `hit` in Cache-Status, the reloaded instance's hit must come from the Cache API
// tier (its stats), and caches.keys() must list the tier's Cache.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Page } from 'playwright-core';
import {
  describeBrowser,
  type LaunchedBrowser,
  launchBrowser,
  type RecordingGatehouse,
  startRecordingGatehouse,
} from '../helpers/browser.js';
import { makeSite, removeSite } from '../helpers/http.js';
import { copyClientInto } from '../helpers/page-server.js';

/** A hashed name: the static rules give it a year (public, max-age=31536000, immutable). */
const DATA = '/data-1a2b3c4d.json';

const PAGE_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>tier</title><link rel="icon" href="data:,"></head>
<body>
<script type="module">
  import { cacheApiTier, createCachingFetch } from '/client/index.js';
  const f = createCachingFetch({ stores: [cacheApiTier()] });
  window.get = async (url) => {
    const r = await f(url);
    return { status: r.status, cacheStatus: r.headers.get('cache-status'), body: await r.json() };
  };
  window.tierHits = async () => (await f.stats()).tiers.find((t) => t.name === 'cache-api')?.hits;
  window.ready = true;
</script>
</body></html>
`;

interface Got {
  status: number;
  cacheStatus: string | null;
  body: unknown;
}

describeBrowser('cacheApiTier in Chromium: the caching fetch persists in the Cache API', () => {
  let dir: string;
  let server: RecordingGatehouse;
  let browser: LaunchedBrowser;
  let page: Page;

  before(async () => {
    dir = makeSite({ 'index.html': PAGE_HTML, [DATA.slice(1)]: '{"v":1}' });
    copyClientInto(dir);
    server = await startRecordingGatehouse({ root: dir });
    browser = await launchBrowser();
    page = await browser.context.newPage();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    if (dir) removeSite(dir);
  });

  const ready = () => page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
  const get = (): Promise<Got> =>
    page.evaluate((u) => (window as unknown as { get(u: string): Promise<Got> }).get(u), DATA);

  it('two fetches, a reload, a new instance: one server request; later answers are hits from the tier', async () => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${server.url}/`);
    await ready();
    const first = await get();
    assert.deepEqual(first.body, { v: 1 });
    assert.match(first.cacheStatus ?? '', /fwd=uri-miss; stored/);
    const second = await get();
    assert.equal(second.cacheStatus, 'gatehouse-client; hit');

    await page.reload();
    await ready();
    const third = await get();
    assert.equal(third.cacheStatus, 'gatehouse-client; hit');
    assert.deepEqual(third.body, { v: 1 });
    // The reloaded page's memory tier is empty: the hit came from the Cache API tier.
    assert.equal(
      await page.evaluate(() => (window as unknown as { tierHits(): Promise<number> }).tierHits()),
      1,
    );

    await server.settled();
    const seen = server.requestsFor(DATA);
    assert.equal(seen.length, 1, 'the server saw one request for the data');
    assert.match(seen[0]!.responseHeaders['cache-control'] ?? '', /max-age=31536000/);
    assert.ok((await page.evaluate(() => caches.keys())).includes('gatehouse-client'));
    assert.deepEqual(errors, [], 'no script errors in the page');
  });
});
