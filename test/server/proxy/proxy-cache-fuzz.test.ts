// The proxy cache against an origin sending random and hostile caching fields (Cache-Control, Age,
// Expires, Date, Vary, validators, statuses). Whatever it receives, the cache must answer every
// request with the origin's status and the body of one of the origin's answers, never reuse a
// response marked no-store or private (RFC 9111 §3, §5.2.2.3, §5.2.2.7), send a well-formed Age with
// every hit and a Cache-Status with every answer, and keep serving.
// matrix: runtimes (on Bun.serve and Deno.serve too: upstream requests there go through each runtime's fetch path)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { get, makeSite, removeSite, startServer, type TestServer } from '../../helpers/http.js';
import { type Origin, origin } from '../../helpers/origin.js';
import { mulberry32, SEED_OFFSET } from '../../helpers/random.js';

const CASES = 150;

const random = mulberry32(20261121 + SEED_OFFSET);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
const httpDate = (offsetSec: number) => new Date(Date.now() + offsetSec * 1000).toUTCString();

const CACHE_CONTROL = [
  undefined,
  'max-age=60',
  'max-age=60',
  'max-age=60',
  'public, max-age=60',
  'public, max-age=60',
  's-maxage=60, max-age=0',
  'no-store',
  'private, max-age=60',
  'max-age=60, no-store',
  'max-age=60, private="x-a"',
  'no-cache',
  'no-cache="set-cookie", max-age=60',
  'max-age=abc',
  'max-age=99999999999999999999999',
  'max-age=-5',
  'max-age="60"',
  ',,, max-age=60 ,,',
  'must-revalidate, max-age=0',
  'max-age=60, stale-while-revalidate=30',
  'immutable',
  '"',
  'max-age=60;x=y',
  'PRIVATE, MAX-AGE=60',
  'No-Store',
];
const AGE = [undefined, '0', '5', 'abc', '-1', '1, 2', '99999999999999999999', '3.5', ''];
const EXPIRES = [undefined, '0', 'garbage', 'FUTURE', 'PAST', ''];
const DATE = [undefined, 'garbage', 'NOW', 'PAST'];
const VARY = [undefined, '*', 'Accept', 'accept, X-Y', ',', 'Accept, *', ''];
const LAST_MODIFIED = [undefined, 'garbage', 'PAST'];
const ETAG = [undefined, '"x"', 'W/"y"', 'garbage'];
const STATUS = [200, 200, 200, 200, 200, 200, 203, 204, 300, 301, 404, 410, 500, 503];

interface Spec {
  status: number;
  headers: Record<string, string>;
}

function date(v: string): string {
  if (v === 'FUTURE') return httpDate(3600);
  if (v === 'PAST') return httpDate(-86_400);
  if (v === 'NOW') return httpDate(0);
  return v;
}

function makeSpec(): Spec {
  const headers: Record<string, string> = {};
  // Each field is left out half the time, so that a good share of the responses can be reused.
  const put = (name: string, v: string | undefined) => {
    if (v !== undefined && (name === 'cache-control' || random() < 0.5)) headers[name] = date(v);
  };
  put('cache-control', pick(CACHE_CONTROL));
  put('age', pick(AGE));
  put('expires', pick(EXPIRES));
  put('date', pick(DATE));
  put('vary', pick(VARY));
  put('last-modified', pick(LAST_MODIFIED));
  put('etag', pick(ETAG));
  if (random() < 0.2) headers['set-cookie'] = 'a=b';
  return { status: pick(STATUS), headers };
}

/**
 * Whether a Cache-Control value forbids a shared cache to reuse the response: no-store, or private
 * without field names (a qualified private="x" only keeps the named fields out, §5.2.2.7).
 */
function forbidsReuse(cc: string | undefined): boolean {
  return cc !== undefined && /(?:^|,)\s*(?:no-store|private)\s*(?:,|$)/i.test(cc);
}

describe('proxy cache fuzz: hostile upstream caching fields', () => {
  const specs: Spec[] = Array.from({ length: CASES }, makeSpec);
  let up: Origin;
  let site: string;
  let gh: TestServer;
  before(async () => {
    up = await origin({});
    // One route per case, answered from its spec; the body names the case and the origin request.
    up.server.removeAllListeners('request');
    const counts = new Map<number, number>();
    up.server.on('request', (req, res) => {
      const i = Number(req.url!.split('/')[2]);
      const n = (counts.get(i) ?? 0) + 1;
      counts.set(i, n);
      const spec = specs[i]!;
      const noBody = spec.status === 204 || spec.status === 304;
      const body = `case ${i} answer ${n}`;
      res.writeHead(spec.status, {
        ...spec.headers,
        ...(noBody ? {} : { 'content-type': 'text/plain', 'content-length': String(body.length) }),
      });
      res.end(noBody ? undefined : body);
    });
    site = makeSite({ 'index.html': 'static' });
    gh = await startServer(site, {
      proxy: [
        { prefix: '/f', upstream: up.url, stripPrefix: false, cacheControl: null, cache: { enabled: true } },
      ],
    });
  });
  after(async () => {
    await gh.close();
    await up.close();
    removeSite(site);
  });

  it(`${CASES} random responses, each asked for three times`, async () => {
    let hits = 0;
    for (const [i, spec] of specs.entries()) {
      for (let k = 0; k < 3; k++) {
        const headers: Record<string, string> = k === 2 ? { accept: 'text/html' } : {};
        const r = await get(gh.url, `/f/${i}`, { headers });
        const what = `case ${i} request ${k + 1} ${JSON.stringify(spec)}`;
        assert.equal(r.status, spec.status, what);
        const body = String(r.body);
        if (spec.status !== 204) assert.match(body, new RegExp(`^case ${i} answer [123]$`), what);
        const status = String(r.headers['cache-status']);
        if (/; hit/.test(status)) hits++;
        assert.match(status, /^gatehouse; /, what);
        // §5.1: a response served from the store carries our Age (forwarded ones keep the origin's).
        if (/; hit/.test(status)) assert.match(String(r.headers.age), /^\d+$/, what);
        if (forbidsReuse(spec.headers['cache-control'])) {
          assert.doesNotMatch(status, /; hit/, what);
          if (spec.status !== 204) assert.equal(body, `case ${i} answer ${k + 1}`, what);
        }
      }
    }
    // Not vacuous: a good share of the repeated requests were answered from the store.
    assert.ok(hits > CASES / 5, `only ${hits} hits`);
    // Still serving, from the proxy and the static handler.
    assert.equal((await get(gh.url, '/index.html')).status, 200);
    assert.equal((await get(gh.url, '/f/0')).status, specs[0]!.status);
  });
});
