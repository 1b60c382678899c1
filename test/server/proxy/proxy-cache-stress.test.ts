// The proxy cache under concurrent load: many clients reading a few URLs while others change them
// (POST, which invalidates, RFC 9111 §4.4) and purge them, against an origin that answers after a
// random delay so that misses, coalesced waits, stores and invalidations overlap. A read sent after a
// change has completed must never see an older version than that change made, and every answer
// must be whole. Both stores; fresh, always-revalidated (304) and stale-while-revalidate answers.
// matrix: runtimes (on Bun.serve and Deno.serve too: upstream requests there go through each runtime's fetch path)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { get, makeSite, removeSite, startServer, type TestServer } from '../../helpers/http.js';
import { type Origin, origin } from '../../helpers/origin.js';
import { mulberry32, SEED_OFFSET } from '../../helpers/random.js';

const KEYS = 4;
const CLIENTS = 24;
const OPERATIONS = 60; // per client

/**
 * How the origin marks its answers: fresh for a minute; always stale, so every read revalidates (304
 * when unchanged, §4.3); or stale but servable while revalidating in the background (RFC 5861).
 */
const MODES = {
  fresh: 'max-age=60',
  revalidate: 'max-age=0',
  swr: 'max-age=0, stale-while-revalidate=60',
} as const;

for (const store of ['memory', 'disk'] as const)
  for (const [mode, cacheControl] of Object.entries(MODES)) {
    describe(`proxy cache under concurrent reads, changes and purges (${store} store, ${mode})`, () => {
      let up: Origin;
      let site: string;
      let gh: TestServer;
      /** The origin's current version of each key. */
      const version = new Array<number>(KEYS).fill(1);
      const random = mulberry32(store.length * 7 + mode.length + SEED_OFFSET);
      const delay = () => new Promise((r) => setTimeout(r, Math.floor(random() * 6)));
      before(async () => {
        up = await origin({});
        up.server.removeAllListeners('request');
        up.server.on('request', (req, res) => {
          const k = Number(req.url!.split('/')[2]);
          if (req.method === 'POST') {
            req.resume();
            req.on('end', () => {
              version[k]! += 1;
              res.writeHead(204);
              res.end();
            });
            return;
          }
          // The version is read when the request arrives; the answer leaves a little later.
          const v = version[k]!;
          const body = `key ${k} version ${v} ${'x'.repeat(200)}`;
          const etag = `"${k}-${v}"`;
          void delay().then(() => {
            if (req.headers['if-none-match'] === etag) {
              res.writeHead(304, { 'cache-control': cacheControl, etag });
              res.end();
              return;
            }
            res.writeHead(200, {
              'content-type': 'text/plain',
              'content-length': String(body.length),
              'cache-control': cacheControl,
              etag,
            });
            res.end(body);
          });
        });
        site = makeSite({ 'index.html': 'static' });
        gh = await startServer(site, {
          proxy: [
            {
              prefix: '/r',
              upstream: up.url,
              stripPrefix: false,
              cacheControl: null,
              cache: { enabled: true, store },
            },
          ],
        });
      });
      after(async () => {
        await gh.close();
        await up.close();
        removeSite(site);
      });

      it(`${CLIENTS} clients x ${OPERATIONS} operations`, async () => {
        /** Per key: the version every change completed so far has made at least. */
        const committed = new Array<number>(KEYS).fill(1);
        let reads = 0;
        let hits = 0;
        const client = async () => {
          for (let i = 0; i < OPERATIONS; i++) {
            const k = Math.floor(random() * KEYS);
            const roll = random();
            if (roll < 0.08) {
              const r = await get(gh.url, `/r/${k}`, { method: 'POST', body: 'change' });
              assert.equal(r.status, 204);
              committed[k] = Math.max(committed[k]!, version[k]!);
            } else if (roll < 0.1) {
              const r = await get(gh.url, `/r/${k}`, { method: 'PURGE' });
              assert.equal(r.status, 200);
            } else {
              const floor = committed[k]!;
              const r = await get(gh.url, `/r/${k}`);
              assert.equal(r.status, 200);
              const m = /^key (\d+) version (\d+) x{200}$/.exec(String(r.body));
              assert.ok(m, `whole body: ${String(r.body).slice(0, 40)}`);
              assert.equal(Number(m[1]), k);
              // §4.4: a change that completed before this read was sent invalidated older versions.
              assert.ok(
                Number(m[2]) >= floor,
                `key ${k}: version ${m[2]} read after version ${floor} was made`,
              );
              reads++;
              if (/; hit|fwd-status=304/.test(String(r.headers['cache-status']))) hits++;
            }
          }
        };
        await Promise.all(Array.from({ length: CLIENTS }, client));
        assert.ok(reads > CLIENTS * OPERATIONS * 0.8);
        // Not vacuous: the store answered a good share (a 304-freshened answer counts, it came from it).
        assert.ok(hits > reads / 10, `only ${hits} of ${reads} reads were answered from the store`);
        assert.equal((await get(gh.url, '/index.html')).status, 200);
      });
    });
  }
