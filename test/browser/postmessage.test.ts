// postMessage in a real Chromium, with the client library loaded by a page with no bundler: the page
// (origin A) imports `/client/index.js` (dist/client, copied into its site) with <script type="module">,
// subscribes `onMessageFrom([B], ...)` and then embeds two iframes, one from origin B and one from
// origin C (three Gatehouse servers, three ports). Each frame posts a hello to its parent on load and
// echoes what its parent sends it. Only B's messages may reach the handler; a raw `message` listener
// in the page records everything delivered, so the test sees that C's messages did arrive and were
// refused by the guard, not lost. `postTo` sends to B with B's origin (B echoes back); sent to the C
// frame with B's origin, the browser drops it (HTML §9.3.3: the target origin must match).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { fileURLToPath } from 'node:url';
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

/** The built client library (`npm run build`; npm test builds first). */
const DIST_CLIENT = fileURLToPath(new URL('../../dist/client/', import.meta.url));

const PAGE_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>parent</title><link rel="icon" href="data:,"></head>
<body>
<script type="module">
  import { onMessageFrom, postTo } from '/client/index.js';
  const q = new URLSearchParams(location.search);
  const allowedOrigin = q.get('b');
  window.raw = [];
  window.handled = [];
  addEventListener('message', (e) => window.raw.push({ origin: e.origin, data: e.data }));
  window.unsubscribe = onMessageFrom([allowedOrigin], (data, e) => window.handled.push({ origin: e.origin, data }));
  window.gh = { onMessageFrom, postTo };
  for (const [id, origin] of [['b', q.get('b')], ['c', q.get('c')]]) {
    const f = document.createElement('iframe');
    f.id = id;
    f.src = origin + '/frame.html?parent=' + encodeURIComponent(location.origin);
    document.body.append(f);
  }
</script>
</body></html>
`;

const FRAME_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>frame</title><link rel="icon" href="data:,"></head>
<body><script>
  const parentOrigin = new URLSearchParams(location.search).get('parent');
  addEventListener('message', (e) => {
    if (e.origin !== parentOrigin) return;
    e.source.postMessage({ kind: 'echo', from: location.origin, got: e.data }, e.origin);
  });
  parent.postMessage({ kind: 'hello', from: location.origin }, parentOrigin);
</script></body></html>
`;

interface Delivered {
  origin: string;
  data: { kind: string; from: string; got?: unknown };
}

describeBrowser('postMessage in Chromium: the client library (no bundler) guards origins', () => {
  let pageDir: string;
  let frameDir: string;
  let a: RecordingGatehouse;
  let b: RecordingGatehouse;
  let c: RecordingGatehouse;
  let browser: LaunchedBrowser;

  before(async () => {
    assert.ok(existsSync(join(DIST_CLIENT, 'index.js')), `no ${DIST_CLIENT}index.js: run npm run build`);
    pageDir = makeSite({ 'index.html': PAGE_HTML });
    copyClientInto(pageDir);
    frameDir = makeSite({ 'frame.html': FRAME_HTML });
    // B and C are framed by A, another origin: they allow it (static.htmlSecurityHeaders sends
    // X-Frame-Options: SAMEORIGIN on HTML by default), the way docs/client.md tells embedders to.
    const framed = { root: frameDir, headers: [{ glob: '/frame.html', remove: ['X-Frame-Options'] }] };
    [a, b, c] = await Promise.all([
      startRecordingGatehouse({ root: pageDir }),
      startRecordingGatehouse(framed),
      startRecordingGatehouse(framed),
    ]);
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await Promise.all([a?.close(), b?.close(), c?.close()]);
    if (pageDir) removeSite(pageDir);
    if (frameDir) removeSite(frameDir);
  });

  /** A new tab on A's page, once both frames' hellos were delivered to it. */
  async function openParent(): Promise<Page> {
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${a.url}/?b=${encodeURIComponent(b.url)}&c=${encodeURIComponent(c.url)}`);
    await page.waitForFunction(
      () =>
        (window as unknown as { raw?: Delivered[] }).raw?.filter((m) => m.data.kind === 'hello').length === 2,
    );
    assert.deepEqual(errors, [], 'no script errors in the page');
    return page;
  }

  const read = (page: Page, name: 'raw' | 'handled') =>
    page.evaluate((n) => (window as unknown as Record<string, Delivered[]>)[n]!, name);

  it('page loads /client/index.js as a module, no bundler: its files served as JavaScript', async () => {
    const page = await openParent();
    try {
      await a.settled();
      const modules = a.seen.filter((s) => s.url.startsWith('/client/'));
      const paths = modules.map((s) => s.url);
      assert.ok(paths.includes('/client/index.js') && paths.includes('/client/message.js'), paths.join());
      for (const m of modules) {
        assert.equal(m.status, 200, m.url);
        assert.match(m.responseHeaders['content-type'] ?? '', /^text\/javascript\b/, m.url);
      }
    } finally {
      await page.close();
    }
  });

  it('hellos from B (allowed) and C (not) both delivered -> only B reaches the handler', async () => {
    const page = await openParent();
    try {
      const hellos = (await read(page, 'raw')).filter((m) => m.data.kind === 'hello');
      assert.deepEqual(hellos.map((m) => m.origin).sort(), [b.url, c.url].sort(), 'both frames posted');
      assert.deepEqual(await read(page, 'handled'), [
        { origin: b.url, data: { kind: 'hello', from: b.url } },
      ]);
      // The frames really came from B and C.
      assert.ok(b.requestsFor(`/frame.html?parent=${encodeURIComponent(a.url)}`).length > 0);
      assert.ok(c.requestsFor(`/frame.html?parent=${encodeURIComponent(a.url)}`).length > 0);
    } finally {
      await page.close();
    }
  });

  it('postTo(frameB, data, B) -> B echoes it; postTo(frameC, data, B) -> dropped by the browser', async () => {
    const page = await openParent();
    try {
      await page.evaluate(
        ({ bOrigin, cOrigin }) => {
          const w = window as unknown as { gh: { postTo: (t: unknown, d: unknown, o: string) => void } };
          // No inner named functions here: tsx would wrap them in a helper the page lacks (__name).
          const frameB = (document.getElementById('b') as HTMLIFrameElement).contentWindow;
          const frameC = (document.getElementById('c') as HTMLIFrameElement).contentWindow;
          w.gh.postTo(frameB, { n: 1 }, bOrigin);
          // Wrong origin for frame C: never delivered. Then the right one: its echo must be C's only.
          w.gh.postTo(frameC, { n: 2 }, bOrigin);
          w.gh.postTo(frameC, { n: 3 }, cOrigin);
        },
        { bOrigin: b.url, cOrigin: c.url },
      );
      await page.waitForFunction(
        () =>
          (window as unknown as { raw: Delivered[] }).raw.filter((m) => m.data.kind === 'echo').length === 2,
      );
      const echoes = (await read(page, 'raw')).filter((m) => m.data.kind === 'echo');
      assert.deepEqual(
        echoes.map((m) => [m.origin, m.data.got]).sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
        [
          [b.url, { n: 1 }],
          [c.url, { n: 3 }],
        ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
        'B got its message; C got only the one addressed to its own origin',
      );
      const handledEchoes = (await read(page, 'handled')).filter((m) => m.data.kind === 'echo');
      assert.deepEqual(handledEchoes, [
        { origin: b.url, data: { kind: 'echo', from: b.url, got: { n: 1 } } },
      ]);
    } finally {
      await page.close();
    }
  });

  it("postTo(frame, data, '*') -> a TypeError in the page, nothing sent", async () => {
    const page = await openParent();
    try {
      const result = await page.evaluate(() => {
        const w = window as unknown as { gh: { postTo: (t: unknown, d: unknown, o: string) => void } };
        try {
          w.gh.postTo((document.getElementById('b') as HTMLIFrameElement).contentWindow, { n: 9 }, '*');
          return 'sent';
        } catch (e) {
          return `${(e as Error).name}: ${(e as Error).message}`;
        }
      });
      assert.match(result, /^TypeError: postTo: '\*' is refused/);
    } finally {
      await page.close();
    }
  });

  it('after unsubscribe, B still delivers to the window but the handler gets nothing more', async () => {
    const page = await openParent();
    try {
      await page.evaluate(
        ({ bOrigin }) => {
          const w = window as unknown as {
            unsubscribe: () => void;
            gh: { postTo: (t: unknown, d: unknown, o: string) => void };
          };
          w.unsubscribe();
          w.gh.postTo((document.getElementById('b') as HTMLIFrameElement).contentWindow, { n: 4 }, bOrigin);
        },
        { bOrigin: b.url },
      );
      await page.waitForFunction(() =>
        (window as unknown as { raw: Delivered[] }).raw.some((m) => m.data.kind === 'echo'),
      );
      assert.deepEqual(await read(page, 'handled'), [
        { origin: b.url, data: { kind: 'hello', from: b.url } },
      ]);
    } finally {
      await page.close();
    }
  });
  it('attack: opaque origins (file://, file:///x, data:, about:, javascript:, blob:null) -> onMessageFrom and postTo throw in Chromium too', async () => {
    const page = await openParent();
    try {
      const opaque = [
        'file://',
        'file:///etc/passwd',
        'data:text/html,x',
        'about:blank',
        'javascript:void 0',
        'blob:null/0b5e',
      ];
      const result = await page.evaluate((list) => {
        const w = window as unknown as {
          gh: {
            onMessageFrom: (o: string[], h: () => void) => () => void;
            postTo: (t: unknown, d: unknown, o: string) => void;
          };
        };
        const frame = (document.getElementById('b') as HTMLIFrameElement).contentWindow;
        // No named functions in here: tsx's __name helper does not exist in the page.
        const on: string[][] = [];
        const post: string[][] = [];
        for (const o of list) {
          try {
            w.gh.onMessageFrom([o], () => {})();
            on.push([o, 'accepted']);
          } catch (e) {
            on.push([o, (e as Error).name]);
          }
          try {
            w.gh.postTo(frame, 'secret', o);
            post.push([o, 'accepted']);
          } catch (e) {
            post.push([o, (e as Error).name]);
          }
        }
        // What makes the attack possible: Chromium gives file: URLs a tuple-looking origin.
        return { fileOrigin: new URL('file:///x').origin, on, post };
      }, opaque);
      assert.equal(result.fileOrigin, 'file://', "Chromium's URL#origin for file: (Node says 'null')");
      assert.deepEqual(
        result.on,
        opaque.map((o) => [o, 'TypeError']),
      );
      assert.deepEqual(
        result.post,
        opaque.map((o) => [o, 'TypeError']),
      );
    } finally {
      await page.close();
    }
  });
});
