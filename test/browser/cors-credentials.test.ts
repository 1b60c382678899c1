// A credentialed CORS request in a real Chromium: a page on one origin (a Gatehouse on its own port)
// calls an API Gatehouse on another port configured `cors: { origins: [PAGE], credentials: true }`.
// The API sets a cookie on a first credentialed call; the next JSON POST with `credentials: 'include'`
// must be preflighted (Fetch §4.8: the preflight itself never carries credentials) and then sent
// with the Cookie, its answer readable because it carries Access-Control-Allow-Credentials: true and
// the exact origin (Fetch §3.2.5). A page on an origin not listed gets a TypeError.
//
// Cookies and sites: 127.0.0.1 on two ports is two origins but one site (a site ignores the port),
// so the API's `SameSite=Lax` cookie is first-party here: Chromium stores it from a credentialed
// cross-origin answer and sends it back on credentialed requests (verified below: the server sees it).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { reply } from '../../src/server/routes/reply.js';
import {
  describeBrowser,
  type LaunchedBrowser,
  launchBrowser,
  type RecordingGatehouse,
  type SeenRequest,
  startRecordingGatehouse,
} from '../helpers/browser.js';
import { makeSite, removeSite } from '../helpers/http.js';

const COOKIE = 'sid=s3cret-1';

/** What the page gets back from its fetch: the status and JSON, or the error's name. */
type FetchResult = { status: number; json: unknown } | { error: string; message: string };

describeBrowser('credentialed CORS in Chromium: preflight, then the POST with the API origin cookie', () => {
  let dir: string;
  let page: RecordingGatehouse;
  let evil: RecordingGatehouse;
  let api: RecordingGatehouse;
  let browser: LaunchedBrowser;

  before(async () => {
    dir = makeSite({ 'index.html': '<!doctype html><title>page</title><link rel="icon" href="data:,">' });
    page = await startRecordingGatehouse({ root: dir });
    evil = await startRecordingGatehouse({ root: dir });
    api = await startRecordingGatehouse(
      { root: dir, cors: { origins: [page.url], credentials: true } },
      {
        routes: [
          {
            path: '/api/login',
            methods: ['POST'],
            handler: () =>
              reply(200, { ok: true }, { 'set-cookie': `${COOKIE}; Path=/; HttpOnly; SameSite=Lax` }),
          },
          {
            path: '/api/items',
            methods: ['POST'],
            handler: (req, ctx) => ({ received: ctx.body, cookie: req.headers.cookie ?? null }),
          },
        ],
      },
    );
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await Promise.all([page?.close(), evil?.close(), api?.close()]);
    if (dir) removeSite(dir);
  });

  /** Loads `origin`'s page in a fresh tab and runs JSON POSTs to the API from it, in order. */
  async function postsFrom(
    origin: string,
    calls: { path: string; credentials: RequestCredentials }[],
  ): Promise<FetchResult[]> {
    const tab = await browser.context.newPage();
    try {
      await tab.goto(`${origin}/`);
      return await tab.evaluate(
        async ({ base, calls }) => {
          const out: FetchResult[] = [];
          for (const c of calls) {
            try {
              const r = await fetch(`${base}${c.path}`, {
                method: 'POST',
                credentials: c.credentials,
                headers: { 'Content-Type': 'application/json' },
                body: JSON.stringify({ from: c.path }),
              });
              out.push({ status: r.status, json: await r.json() });
            } catch (e) {
              out.push({ error: (e as Error).name, message: (e as Error).message });
            }
          }
          return out;
        },
        { base: api.url, calls },
      );
    } finally {
      await tab.close();
    }
  }

  it('allowed origin, credentials include -> preflight without Cookie, then the POST with it', async () => {
    const from = api.seen.length;
    const results = await postsFrom(page.url, [
      { path: '/api/login', credentials: 'include' },
      { path: '/api/items', credentials: 'include' },
      // The control: the same request without credentials carries no cookie, so the one above
      // came from the credentials mode, not from some other path.
      { path: '/api/items', credentials: 'same-origin' },
    ]);
    assert.deepEqual(results, [
      { status: 200, json: { ok: true } },
      { status: 200, json: { received: { from: '/api/items' }, cookie: COOKIE } },
      { status: 200, json: { received: { from: '/api/items' }, cookie: null } },
    ]);
    await api.settled();

    const items = api.requestsFor('/api/items', from);
    // One preflight: the second POST reuses its cached answer (Fetch §4.8 CORS-preflight cache; a
    // observed on Chromium 156: the entry made for the credentialed POST serves the one without).
    assert.deepEqual(
      items.map((s) => s.method),
      ['OPTIONS', 'POST', 'POST'],
    );
    const [preflight, post, plain] = items as [SeenRequest, SeenRequest, SeenRequest];
    assert.equal(preflight.headers.origin, page.url);
    assert.equal(preflight.headers['access-control-request-method'], 'POST');
    assert.equal(preflight.headers['access-control-request-headers'], 'content-type');
    assert.equal(preflight.headers.cookie, undefined, 'a preflight never carries credentials');
    assert.equal(preflight.status, 200);
    assert.equal(preflight.responseHeaders['access-control-allow-origin'], page.url);
    assert.equal(preflight.responseHeaders['access-control-allow-credentials'], 'true');

    assert.equal(post.method, 'POST');
    assert.equal(post.headers.cookie, COOKIE, 'the POST carried the cookie the API set');
    assert.equal(post.status, 200);
    assert.equal(post.responseHeaders['access-control-allow-origin'], page.url, 'exact origin, never *');
    assert.equal(post.responseHeaders['access-control-allow-credentials'], 'true');
    assert.equal(plain.method, 'POST');
    assert.equal(plain.headers.cookie, undefined, 'credentials same-origin: no cookie cross-origin');

    const login = api.requestsFor('/api/login', from);
    assert.deepEqual(
      login.map((s) => [s.method, s.status]),
      [
        ['OPTIONS', 200],
        ['POST', 200],
      ],
    );
    assert.match(login[1]!.responseHeaders['set-cookie'] ?? '', /^sid=s3cret-1; /);
  });

  it('origin not listed, credentials include -> TypeError in the page; only a preflight without Allow-*', async () => {
    const from = api.seen.length;
    const results = await postsFrom(evil.url, [{ path: '/api/items', credentials: 'include' }]);
    assert.equal(results.length, 1);
    assert.ok('error' in results[0]!, JSON.stringify(results));
    assert.equal(results[0].error, 'TypeError');
    await api.settled();

    const mine = api.seen.slice(from);
    assert.deepEqual(
      mine.map((s) => [s.method, s.url, s.headers.origin]),
      [['OPTIONS', '/api/items', evil.url]],
      'only the preflight reached the API; the POST was never sent',
    );
    const allow = Object.keys(mine[0]!.responseHeaders).filter((k) => k.startsWith('access-control-allow-'));
    assert.deepEqual(allow, [], 'the preflight answer allowed nothing');
  });
});
