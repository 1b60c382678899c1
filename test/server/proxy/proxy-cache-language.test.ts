// Selection by Content-Language in the proxy cache (selectsByLanguage, beyond RFC 9111 §4.1): a fresh
// variant stored for `Accept-Language: en, de` whose Content-Language is de answers a request whose
// single most preferred language is de; memory, disk and redis stores. Every test counts what reaches a real origin on 127.0.0.1.
// matrix: http1 h2 h1-tls adapters runtimes (the static, policy, proxy and cache suites run on every protocol, adapter and runtime)
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { preferredLanguage } from '../../../src/cache/vary.js';
import { get, makeSite, removeSite, startServer, type TestServer } from '../../helpers/http.js';
import { type Origin, origin } from '../../helpers/origin.js';
import { startRedis, type TestRedis } from '../../helpers/redis.js';
import { waitUntilStored } from '../../helpers/wait.js';

/** An origin that has de and fr and negotiates by weight (RFC 9110 §12.5.4); de by default. */
function negotiating(cacheControl: string) {
  return (q: IncomingMessage, s: ServerResponse, n: number) => {
    const top = preferredLanguage(q.headers['accept-language']);
    const lang = top === 'fr' ? 'fr' : 'de';
    s.writeHead(200, {
      'content-type': 'text/plain',
      'cache-control': cacheControl,
      etag: `"${lang}"`,
      vary: 'Accept-Language',
      'content-language': lang,
    });
    s.end(`${lang} ${n}`);
  };
}

for (const store of ['memory', 'disk', 'redis'] as const) {
  describe(`proxy cache: a variant selected by Content-Language (${store} store)`, () => {
    let up: Origin;
    let site: string;
    let gh: TestServer;
    let redis: TestRedis | undefined;
    before(async () => {
      up = await origin({ '/lang': negotiating('max-age=3600'), '/lang-stale': negotiating('max-age=0') });
      site = makeSite({ 'index.html': 'static' });
      let extra = {};
      if (store === 'redis') {
        redis = await startRedis();
        extra = { redis: { url: redis.url, keyPrefix: 'gh-lang-test:' } };
      }
      gh = await startServer(site, {
        ...extra,
        proxy: [{ prefix: '/', upstream: up.url, cacheControl: null, cache: { enabled: true, store } }],
      });
    });
    after(async () => {
      await gh.close();
      await up.close();
      await redis?.close();
      removeSite(site);
    });

    it('stored de for "en, de" answers "fr;q=0.5, de;q=1.0"; "fr, de;q=0.5" and a tie go upstream', async () => {
      const first = await get(gh.url, '/lang', { headers: { 'accept-language': 'en, de' } });
      assert.equal(first.text, 'de 1');
      await waitUntilStored(gh.url, '/lang', { 'accept-language': 'en, de' });
      const de = await get(gh.url, '/lang', { headers: { 'accept-language': 'fr;q=0.5, de;q=1.0' } });
      assert.equal(de.text, 'de 1');
      assert.equal(de.headers['content-language'], 'de');
      assert.match(String(de.headers['cache-status']), /^gatehouse; hit/);
      assert.equal(up.count('/lang'), 1);
      const fr = await get(gh.url, '/lang', { headers: { 'accept-language': 'fr, de;q=0.5' } });
      assert.equal(fr.text, 'fr 2');
      const tie = await get(gh.url, '/lang', { headers: { 'accept-language': 'it, de' } });
      assert.match(String(tie.headers['cache-status']), /fwd=vary-miss/);
      assert.equal(up.count('/lang'), 3);
    });

    it('a stale variant is not revalidated for a request it was not selected by', async () => {
      await get(gh.url, '/lang-stale', { headers: { 'accept-language': 'en, de' } });
      await waitUntilStored(gh.url, '/lang-stale', { 'accept-language': 'en, de' });
      const r = await get(gh.url, '/lang-stale', { headers: { 'accept-language': 'de' } });
      assert.equal(r.text, 'de 2');
      assert.match(String(r.headers['cache-status']), /fwd=vary-miss/);
      assert.equal(up.seen.at(-1)?.headers['if-none-match'], undefined);
      assert.equal(up.count('/lang-stale'), 2);
    });
  });
}
