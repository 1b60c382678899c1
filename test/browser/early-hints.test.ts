// 103 Early Hints reach a real Chromium: a page served over HTTPS + HTTP/2 by Gatehouse's TLS listener
// with the test leaf of test/helpers/tls.ts, which Chromium trusts by its SPKI pin
// (--ignore-certificate-errors-spki-list, for this test only). Chromium reports a resource it fetched
// because of a 103 with `initiatorType: 'early-hints'` in Resource Timing, and the page's
// `firstInterimResponseStart` is then > 0; with static.earlyHints off the same page shows `link` /
// `script` and 0, so the test fails if the hints do not arrive.
import assert from 'node:assert/strict';
import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, it } from 'node:test';
import { describeBrowser, type LaunchedBrowser, launchBrowser } from '../helpers/browser.js';
import { makeSite, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { type TestTlsFiles, testTls } from '../helpers/tls.js';

const CSS = '/assets/main-3f2a9c1b.css';
const JS = '/assets/app-B-x9aZ_k.js';
const PAGE = `<!doctype html><html><head><title>hints</title>
<link rel=stylesheet href="${CSS}">
<script type=module src="${JS}"></script>
</head><body><p id=mark>early hints</p></body></html>`;

/** base64 sha256 of the leaf's SubjectPublicKeyInfo: what Chromium's SPKI allow-list takes. */
function spkiPin(certFile: string): string {
  const spki = new X509Certificate(readFileSync(certFile)).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest('base64');
}

interface Seen {
  protocol: string;
  firstInterimResponseStart: number;
  /** initiatorType of each resource, by path. */
  initiators: Record<string, string>;
  color: string;
  ran: boolean;
}

describeBrowser('103 Early Hints in Chromium over HTTP/2', () => {
  let tls: TestTlsFiles;
  let dir: string;
  let on: TestServer;
  let off: TestServer;
  let browser: LaunchedBrowser;

  before(async () => {
    dir = makeSite({
      'index.html': PAGE,
      [CSS.slice(1)]: '#mark { color: rgb(1, 2, 3) }',
      [JS.slice(1)]: 'window.appRan = true;',
    });
    tls = await testTls();
    const files = { cert: tls.cert, key: tls.key };
    on = await startServer(dir, { tls: files });
    off = await startServer(dir, { tls: files, static: { earlyHints: false } });
    browser = await launchBrowser([`--ignore-certificate-errors-spki-list=${spkiPin(tls.cert)}`]);
  });

  after(async () => {
    await browser?.close();
    await on?.close();
    await off?.close();
    if (dir) removeSite(dir);
  });

  async function visit(base: string): Promise<Seen> {
    const page = await browser.context.newPage();
    try {
      // Every visit starts cold: a cached asset would need no preload.
      const cdp = await browser.context.newCDPSession(page);
      await cdp.send('Network.clearBrowserCache');
      await cdp.detach();
      await page.goto(`${base}/`, { waitUntil: 'load' });
      return await page.evaluate(() => {
        const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming & {
          firstInterimResponseStart?: number;
        };
        const initiators: Record<string, string> = {};
        for (const e of performance.getEntriesByType('resource') as PerformanceResourceTiming[]) {
          initiators[new URL(e.name).pathname] = e.initiatorType;
        }
        return {
          protocol: nav.nextHopProtocol,
          firstInterimResponseStart: nav.firstInterimResponseStart ?? -1,
          initiators,
          color: getComputedStyle(document.getElementById('mark')!).color,
          ran: (window as unknown as { appRan?: boolean }).appRan === true,
        };
      });
    } finally {
      await page.close();
    }
  }

  it('with hints: the CSS and the module come from the 103 (initiatorType early-hints), and are used', async () => {
    // Chromium's docs/early-hints.md: "Due to an implementation limitation, initiatorType may not
    // always set to 'early-hints'" (one CI run in many on a loaded machine showed `link` though the
    // 103 had arrived). So up to three cold visits; the 103 must arrive on every one, and without
    // hints (the next test) the initiators are never `early-hints`.
    let seen: Seen | undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      seen = await visit(on.url);
      assert.equal(seen.protocol, 'h2');
      assert.ok(
        seen.firstInterimResponseStart > 0,
        `firstInterimResponseStart ${seen.firstInterimResponseStart}`,
      );
      if (seen.initiators[CSS] === 'early-hints' && seen.initiators[JS] === 'early-hints') break;
    }
    assert.ok(seen);
    assert.equal(seen.initiators[CSS], 'early-hints', JSON.stringify(seen.initiators));
    assert.equal(seen.initiators[JS], 'early-hints', JSON.stringify(seen.initiators));
    assert.equal(seen.color, 'rgb(1, 2, 3)');
    assert.ok(seen.ran, 'the module ran');
  });

  it('static.earlyHints false: the same page loads them from the document (link, script), no interim', async () => {
    const seen = await visit(off.url);
    assert.equal(seen.protocol, 'h2');
    assert.equal(seen.firstInterimResponseStart, 0);
    assert.equal(seen.initiators[CSS], 'link', JSON.stringify(seen.initiators));
    assert.equal(seen.initiators[JS], 'script', JSON.stringify(seen.initiators));
    assert.equal(seen.color, 'rgb(1, 2, 3)');
    assert.ok(seen.ran);
  });
});
