// The example site that `npm start` serves, in Chromium, served by npm start's own command line: the page
// loads with no console error, page error, failed request or error status, and its live panel shows the
// WebSocket open and a pong. (test/cli/example-site.test.ts checks the committed files.) npm test builds
// first; run alone, build first (npm run build).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { describeBrowser, type LaunchedBrowser, launchBrowser } from '../helpers/browser.js';
import { accessLog, type CliServer, REPO_ROOT, startShell } from '../helpers/page-server.js';
import { WAIT_DEADLINE_MS } from '../helpers/wait.js';

describeBrowser('the example site in Chromium, served by npm start', () => {
  let server: CliServer;
  let browser: LaunchedBrowser;

  before(async () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    // npm start's exact command; later flags win, so a free port instead of 8080 and a JSON access log.
    server = await startShell(`${pkg.scripts.start} --port 0 --log json`);
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('loads with no console error, page error or failed request; the live panel shows open and a pong', async () => {
    const problems: string[] = [];
    const page = await browser.context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('requestfailed', (r) => {
      // Chromium reports every HEAD fetch as net::ERR_ABORTED once its head has arrived (a bare node:http
      // server gets the same); their statuses are checked through 'response' and the table below.
      if (r.method() === 'HEAD' && r.failure()?.errorText === 'net::ERR_ABORTED') return;
      problems.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`);
    });
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
    });

    const res = await page.goto(`${server.url}/`);
    assert.equal(res?.status(), 200);
    await page
      .waitForFunction(
        () =>
          document.getElementById('ws-state')?.textContent === 'open' &&
          document.getElementById('ws-pong')?.getAttribute('datetime'),
        undefined,
        { timeout: WAIT_DEADLINE_MS },
      )
      .catch((err: Error) => {
        throw new Error(`the panel never showed open and a pong: ${err.message}\n${problems.join('\n')}`);
      });
    const panel = await page.evaluate(() => ({
      state: document.getElementById('ws-state')!.textContent,
      reconnects: document.getElementById('ws-reconnects')!.textContent,
      pong: document.getElementById('ws-pong')!.textContent,
      pongAt: document.getElementById('ws-pong')!.getAttribute('datetime'),
    }));
    assert.equal(panel.state, 'open');
    assert.equal(panel.reconnects, '0');
    assert.notEqual(panel.pong, '-');
    assert.ok(!Number.isNaN(Date.parse(panel.pongAt!)), `a time: ${panel.pongAt}`);

    // The page's other script ran too, and the inspect table fills without errors.
    await page.click('#inspect');
    await page.waitForFunction(() => document.querySelectorAll('#headers tr').length > 0, undefined, {
      timeout: WAIT_DEADLINE_MS,
    });
    await page.waitForFunction(() => !(document.getElementById('inspect') as HTMLButtonElement).disabled);
    const statuses = await page.$$eval('#headers tr', (rows) =>
      rows.map((tr) => [tr.children[0]?.textContent, tr.children[1]?.textContent]),
    );
    assert.ok(statuses.length >= 6, JSON.stringify(statuses));
    for (const [path, status] of statuses) assert.equal(status, '200', `HEAD ${path}`);
    await page.close();

    assert.deepEqual(problems, []);
    const log = accessLog(server.stdout());
    for (const path of ['/', '/client/index.js', '/client/websocket.js']) {
      assert.ok(
        log.some((r) => r.url === path && r.status === 200),
        `${path} was served: ${server.stdout()}`,
      );
    }
    assert.equal(
      log.filter((r) => r.url === '/ws' && r.status === 101).length,
      1,
      'one WebSocket, no reconnect',
    );
  });
});
