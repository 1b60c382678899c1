// CORS in a real Chromium: a page on one origin POSTs JSON with Authorization to an API on another,
// configured as `--cors ORIGIN` alone (no headers list). The browser must send its CORS-preflight
// (Fetch §4.8) and accept our answer; a page on an origin that is not listed must get a TypeError.
// Three Gatehouse servers on 127.0.0.1:0 (two page origins, one API); the API server records every
// request it receives and the head it answered with, so the test sees the preflight itself.
import assert from 'node:assert/strict';
import type { OutgoingHttpHeaders } from 'node:http';
import { after, before, it } from 'node:test';
import { parseConfig, toServerOptions } from '../../src/config/load.js';
import { createGatehouse, type Gatehouse } from '../../src/server/app/gatehouse.js';
import { describeBrowser, type LaunchedBrowser, launchBrowser } from '../helpers/browser.js';
import { makeSite, removeSite, startServer, type TestServer } from '../helpers/http.js';

interface Seen {
  method: string;
  url: string;
  origin: string | undefined;
  acrm: string | undefined;
  acrh: string | undefined;
  status: number;
  headers: OutgoingHttpHeaders;
}

/** What the page gets back from its fetch: the status and JSON, or the error's name. */
type FetchResult = { status: number; json: unknown } | { error: string; message: string };

const BODY = { name: 'widget', qty: 3 };

describeBrowser(
  'CORS in Chromium: fetch POST with JSON and Authorization, API started with --cors ORIGIN alone',
  () => {
    let dir: string;
    let page: TestServer;
    let evil: TestServer;
    let api: Gatehouse;
    let apiUrl: string;
    let browser: LaunchedBrowser;
    const seen: Seen[] = [];
    let routeCalls = 0;

    before(async () => {
      dir = makeSite({ 'index.html': '<!doctype html><title>page</title><p>page</p>' });
      page = await startServer(dir);
      evil = await startServer(dir);
      // The config `--cors ORIGIN` produces (src/cli/main.ts): origins only.
      const config = parseConfig({
        root: dir,
        log: { format: 'off' },
        listen: { host: '127.0.0.1', port: 0 },
        cors: { origins: [page.url] },
      });
      api = createGatehouse(toServerOptions(config), {
        routes: [
          {
            path: '/api/items',
            methods: ['POST'],
            handler: (req, ctx) => {
              routeCalls++;
              return { received: ctx.body, authorization: req.headers.authorization ?? null };
            },
          },
        ],
      });
      // First listener: records the request and, once answered, the head that went out.
      api.server.prependListener('request', (req, res) => {
        const h = req.headers;
        res.on('finish', () => {
          seen.push({
            method: req.method!,
            url: req.url!,
            origin: h.origin,
            acrm: h['access-control-request-method'] as string | undefined,
            acrh: h['access-control-request-headers'] as string | undefined,
            status: res.statusCode,
            headers: res.getHeaders(),
          });
        });
      });
      apiUrl = (await api.listen()).url;
      browser = await launchBrowser();
    });

    after(async () => {
      await browser?.close();
      await Promise.all([page?.close(), evil?.close(), api?.close()]);
      removeSite(dir);
    });

    /** Loads `origin`'s page in a fresh tab and runs the JSON POST from it. */
    async function postFrom(origin: string): Promise<FetchResult> {
      const tab = await browser.context.newPage();
      try {
        await tab.goto(`${origin}/`);
        return await tab.evaluate(
          async ({ url, body }) => {
            try {
              const r = await fetch(url, {
                method: 'POST',
                headers: { 'Content-Type': 'application/json', Authorization: 'Bearer t' },
                body: JSON.stringify(body),
              });
              return { status: r.status, json: await r.json() };
            } catch (e) {
              return { error: (e as Error).name, message: (e as Error).message };
            }
          },
          { url: `${apiUrl}/api/items`, body: BODY },
        );
      } finally {
        await tab.close();
      }
    }

    const accessControl = (h: OutgoingHttpHeaders) =>
      Object.keys(h).filter((k) => k.startsWith('access-control-allow-'));

    it('allowed page origin -> the preflight passes, the POST answers 200 with readable JSON', async () => {
      const result = await postFrom(page.url);
      assert.deepEqual(result, { status: 200, json: { received: BODY, authorization: 'Bearer t' } });
      assert.equal(routeCalls, 1);

      const preflights = seen.filter((s) => s.method === 'OPTIONS' && s.origin === page.url);
      assert.equal(preflights.length, 1, 'Chromium sent exactly one preflight');
      const p = preflights[0]!;
      assert.equal(p.url, '/api/items');
      assert.equal(p.acrm, 'POST');
      assert.equal(
        p.acrh,
        'authorization,content-type',
        'Chromium lists the unsafe names, sorted, lowercase',
      );
      assert.equal(p.status, 200);
      assert.equal(p.headers['access-control-allow-origin'], page.url);
      assert.equal(p.headers['access-control-allow-headers'], 'authorization, content-type');
      assert.match(String(p.headers.vary), /Access-Control-Request-Headers/);

      // The JSON was readable, so the POST's answer passed the browser's CORS check (Fetch §4.10).
      assert.equal(seen.filter((s) => s.method === 'POST').length, 1);
    });

    it('page origin not listed -> TypeError in the page, a preflight answered without Allow-*, no POST', async () => {
      const before = seen.length;
      const callsBefore = routeCalls;
      const result = await postFrom(evil.url);
      assert.ok('error' in result, JSON.stringify(result));
      assert.equal(result.error, 'TypeError');

      const mine = seen.slice(before);
      assert.deepEqual(
        mine.map((s) => [s.method, s.origin]),
        [['OPTIONS', evil.url]],
        'only the preflight reached the API; the POST was never sent',
      );
      const p = mine[0]!;
      assert.equal(p.acrh, 'authorization,content-type');
      assert.equal(p.status, 200);
      assert.deepEqual(accessControl(p.headers), []);
      assert.match(
        String(p.headers.vary),
        /Origin/,
        'the recorded head is complete (pending fields folded in)',
      );
      assert.equal(routeCalls, callsBefore, 'the route never ran');
    });
  },
);
