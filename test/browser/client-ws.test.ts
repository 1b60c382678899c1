// The client library loaded by a page with no bundler (issue 13 §4): a real `gatehouse serve` (the CLI, a
// child process, a config file turning on an echo WebSocket endpoint at /ws) serves a page whose module
// script imports /client/index.js (a copy of dist/client) from the same server and opens a
// ReconnectingWebSocket to /ws. Sends made before open arrive in order, the heartbeat is answered with a
// pong; then the Gatehouse process is killed (SIGKILL, no close frame) and a new one started on the same
// port, and the same client object reconnects and keeps working. The access logs show what each process
// received. Every wait is on a condition in the page (waitForFunction), never a fixed sleep.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import type { Page } from 'playwright-core';
import { describeBrowser, type LaunchedBrowser, launchBrowser } from '../helpers/browser.js';
import {
  accessLog,
  type CliServer,
  copyClientInto,
  GATEHOUSE_BIN,
  startCli,
} from '../helpers/page-server.js';
import { WAIT_DEADLINE_MS } from '../helpers/wait.js';

/** What the fixture page records; read with page.evaluate. */
interface PageLog {
  stateAtSend: number;
  opens: number;
  closeCodes: number[];
  echoes: string[];
  pongs: number;
  errors: string[];
}

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>client-ws</title><link rel="icon" href="data:,"></head>
<body>
<p id="state">loading</p>
<script type="module">
  import { ReconnectingWebSocket } from '/client/index.js';

  const log = { stateAtSend: -1, opens: 0, closeCodes: [], echoes: [], pongs: 0, errors: [] };
  window.pageLog = log;
  const ws = new ReconnectingWebSocket(\`ws://\${location.host}/ws\`, undefined, {
    // Short, but with room: a link silent for 2 x heartbeatInterval counts as dead, and a renderer starved
    // for a second on a loaded machine must not turn into an extra reconnect.
    heartbeatInterval: 1000,
    reconnectInterval: 100,
  });
  window.ws = ws;
  // Sent before the socket is open: queued, flushed in order on open (a string as is, an object as JSON).
  log.stateAtSend = ws.readyState;
  ws.send('first');
  ws.send({ type: 'second', content: 2 });
  ws.send('third');
  ws.addEventListener('open', () => log.opens++);
  ws.addEventListener('close', (e) => log.closeCodes.push(e.code));
  ws.addEventListener('error', (e) => log.errors.push(String(e.error ?? e.type)));
  ws.addEventListener('message', (e) => {
    if (e.data === '{"type":"pong"}') log.pongs++;
    else log.echoes.push(e.data);
  });
  document.getElementById('state').textContent = 'started';
</script>
</body>
</html>
`;

const CONFIG = { websocket: [{ path: '/ws', mode: 'echo' }] };

describeBrowser(
  'ReconnectingWebSocket in Chromium, loaded with no bundler from a real gatehouse serve',
  () => {
    let dir: string;
    let configPath: string;
    let browser: LaunchedBrowser;
    let first: CliServer | undefined;
    let second: CliServer | undefined;
    let page: Page;

    const serve = (port: number) =>
      startCli([
        GATEHOUSE_BIN,
        'serve',
        join(dir, 'site'),
        '--port',
        String(port),
        '--host',
        '127.0.0.1',
        '--config',
        configPath,
        '--log',
        'json',
      ]);

    const pageLog = () => page.evaluate(() => (window as unknown as { pageLog: PageLog }).pageLog);
    const waitFor = (what: string, fn: string) =>
      page.waitForFunction(fn, undefined, { timeout: WAIT_DEADLINE_MS }).catch(async (err: Error) => {
        throw new Error(
          `waiting until ${what}: ${err.message}\npage log: ${JSON.stringify(await pageLog())}`,
        );
      });

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-client-ws-'));
      // The site: the fixture page and the built client, as a user would copy dist/client next to a page.
      copyClientInto(join(dir, 'site'));
      writeFileSync(join(dir, 'site/index.html'), PAGE);
      configPath = join(dir, 'gatehouse.config.json');
      writeFileSync(configPath, JSON.stringify(CONFIG));
      first = await serve(0);
      browser = await launchBrowser();
      page = await browser.context.newPage();
    });

    after(async () => {
      await browser?.close();
      await Promise.all([first?.stop('SIGKILL'), second?.stop('SIGKILL')]);
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('queued sends arrive in order, the heartbeat gets a pong, and a server restart on the same port is survived', async () => {
      const pageErrors: string[] = [];
      page.on('pageerror', (e) => pageErrors.push(e.message));
      await page.goto(`${first!.url}/`);
      await waitFor('the module script ran', `document.getElementById('state').textContent === 'started'`);

      // 1. Sends before open were queued (readyState CONNECTING) and the echo returns them in order.
      await waitFor('three echoes arrived', 'window.pageLog.echoes.length >= 3');
      let log = await pageLog();
      assert.equal(log.stateAtSend, 0, 'the sends were made while CONNECTING');
      assert.deepEqual(log.echoes, ['first', '{"type":"second","content":2}', 'third']);
      assert.equal(log.opens, 1);

      // 2. The client's heartbeat ({"type":"ping"} every 1000 ms) is answered with {"type":"pong"}.
      await waitFor('a pong arrived', 'window.pageLog.pongs >= 1');
      await waitFor('a second pong arrived (the heartbeat repeats)', 'window.pageLog.pongs >= 2');
      assert.deepEqual((await pageLog()).echoes.length, 3, 'the pings were answered, not echoed');

      // The first process served the client module to the page and switched /ws to WebSocket.
      const firstLog = accessLog(first!.stdout());
      assert.ok(
        firstLog.some((r) => r.url === '/client/index.js' && r.status === 200),
        'the page imported /client/index.js',
      );
      assert.ok(
        firstLog.some((r) => r.url === '/client/websocket.js' && r.status === 200),
        'its relative import was fetched',
      );
      assert.equal(firstLog.filter((r) => r.url === '/ws' && r.status === 101).length, 1);

      // 3. Kill the server (no close frame): the client sees an abnormal close and keeps retrying.
      const port = first!.port;
      await first!.stop('SIGKILL');
      await waitFor('the close was seen', 'window.pageLog.closeCodes.length >= 1');
      log = await pageLog();
      assert.equal(log.closeCodes[0], 1006, 'a killed server is an abnormal closure');

      // 4. A new process on the same port: the same client object reconnects and works.
      second = await serve(port);
      assert.equal(second.port, port);
      await waitFor('the client reopened', 'window.pageLog.opens >= 2');
      await page.evaluate(() =>
        (window as unknown as { ws: { send(d: unknown): boolean } }).ws.send('after restart'),
      );
      await waitFor('the new send was echoed', `window.pageLog.echoes.includes('after restart')`);
      log = await pageLog();
      assert.equal(log.opens, 2);
      assert.deepEqual(log.echoes, ['first', '{"type":"second","content":2}', 'third', 'after restart']);
      assert.equal(
        await page.evaluate(() => (window as unknown as { ws: { readyState: number } }).ws.readyState),
        1,
      );
      await waitFor('the heartbeat runs on the new socket', `window.pageLog.pongs >= 3`);

      const secondLog = accessLog(second.stdout());
      assert.equal(secondLog.filter((r) => r.url === '/ws' && r.status === 101).length, 1, 'one reconnect');
      assert.deepEqual(pageErrors, []);
    });
  },
);
