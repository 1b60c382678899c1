// Attack: field names that are Object.prototype's keys, sent by a server to the caching fetch
// (issue 30 §3). A response field named `__proto__`, `constructor`, `prototype`, `hasOwnProperty`,
// `toString` or `valueOf`, and a Vary naming them, against createCachingFetch and a real origin on
// 127.0.0.1. Node's http server sends every one of them and Node's fetch delivers them (they are
// tokens, RFC 9110 §5.1). What must hold: nothing lands on Object.prototype; the stored headers
// object's own keys are exactly the fields received (a plain `out[name] = value` copy dropped a
// `__proto__` field: assigning a string to `__proto__` is ignored), so a hit carries the same fields
// as the miss; and Vary on such a name keeps variants apart (§4.1). Node's fetch does not put a
// `__proto__` request field on the wire (undici drops it), but the cache matches the request it was
// given: a request with `__proto__: a` and one with `__proto__: b` are different variants.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type CachedVariants, type CacheTier, createCachingFetch } from '../../src/client/index.js';
import { type Origin, origin } from '../helpers/origin.js';

const PROTO_NAMES = ['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', 'valueOf'];
/** Each name with a value of its own, so a value read from the wrong place shows. */
const FIELDS: [string, string][] = PROTO_NAMES.map((n) => [n, `v-${n}`]);

/** A tier that keeps what the caching fetch stores (write-through reaches it after memory). */
function recordingTier(): CacheTier & { map: Map<string, CachedVariants> } {
  const map = new Map<string, CachedVariants>();
  return {
    name: 'recording',
    map,
    get: (k) => map.get(k),
    put: (k, v) => void map.set(k, v),
    delete: (k) => void map.delete(k),
    keys: () => map.keys(),
    clear: () => map.clear(),
  };
}

const protoSnapshot = () => Object.getOwnPropertyNames(Object.prototype).sort().join(',');
const cs = (r: Response) => r.headers.get('cache-status');

describe('attack: Object.prototype keys as field names, against the caching fetch', () => {
  let site: Origin;
  const before0 = protoSnapshot();
  before(async () => {
    site = await origin({
      '/fields': (_req, res) => {
        res.setHeader('cache-control', 'max-age=600');
        for (const [n, v] of FIELDS) res.setHeader(n, v);
        res.end('fields');
      },
      '/revalidated': (req, res) => {
        // Stale at once, with a validator: every use revalidates; the 304 brings new field values.
        const n = site.count('/revalidated');
        res.setHeader('cache-control', 'max-age=0');
        res.setHeader('etag', '"r"');
        for (const [name, v] of FIELDS) res.setHeader(name, `${v}-${n}`);
        if (req.headers['if-none-match'] === '"r"') {
          res.statusCode = 304;
          res.end();
        } else res.end('revalidated');
      },
      '/vary': (req, res) => {
        res.setHeader('cache-control', 'max-age=600');
        res.setHeader('vary', PROTO_NAMES.join(', '));
        res.end(`vary ${req.headers.constructor ?? '-'}`);
      },
    });
  });
  after(async () => {
    await site.close();
    // Nothing any test here did added or replaced a property of Object.prototype.
    assert.equal(protoSnapshot(), before0);
    assert.equal(Object.getPrototypeOf({}), Object.prototype);
  });

  it('attack: response fields named __proto__, constructor, prototype, hasOwnProperty, toString, valueOf -> stored and served as sent', async () => {
    const tier = recordingTier();
    const f = createCachingFetch({ stores: [tier] });
    const miss = await f(`${site.url}/fields`);
    assert.equal(await miss.text(), 'fields');
    // The fields reached the client: the miss carries them all.
    for (const [n, v] of FIELDS) assert.equal(miss.headers.get(n), v, `miss: ${n}`);
    await f.idle();
    const [stored] = tier.map.get(`${site.url}/fields`) ?? [];
    assert.ok(stored, 'stored');
    const h = stored.headers as Record<string, string>;
    // Own keys, values and prototype: the field named __proto__ is an own key holding its value.
    // Names are stored lowercase (Headers), so `toString` is `tostring`: only `__proto__` and
    // `constructor` are Object.prototype's own keys as received.
    for (const [n, v] of FIELDS) {
      assert.ok(Object.hasOwn(h, n.toLowerCase()), `stored headers own ${n.toLowerCase()}`);
      assert.equal(Object.getOwnPropertyDescriptor(h, n.toLowerCase())?.value, v, `stored ${n}`);
    }
    assert.ok([Object.prototype, null].includes(Object.getPrototypeOf(h)), 'prototype unchanged');
    const hit = await f(`${site.url}/fields`);
    assert.equal(cs(hit), 'gatehouse-client; hit');
    assert.equal(await hit.text(), 'fields');
    for (const [n, v] of FIELDS) assert.equal(hit.headers.get(n), v, `hit: ${n}`);
    assert.equal(site.count('/fields'), 1);
    assert.equal(protoSnapshot(), before0);
  });

  it('attack: a 304 updating fields named __proto__, constructor ... -> the stored fields take its values (§4.3.4)', async () => {
    const tier = recordingTier();
    const f = createCachingFetch({ stores: [tier] });
    const url = `${site.url}/revalidated`;
    await (await f(url)).text();
    await f.idle();
    const r = await f(url);
    assert.equal(await r.text(), 'revalidated');
    assert.equal(site.count('/revalidated'), 2, 'the second request revalidated');
    for (const [n, v] of FIELDS) assert.equal(r.headers.get(n), `${v}-2`, `served ${n}`);
    await f.idle();
    const [stored] = tier.map.get(url) ?? [];
    assert.ok(stored, 'stored');
    for (const [n, v] of FIELDS) {
      const d = Object.getOwnPropertyDescriptor(stored.headers, n.toLowerCase());
      assert.equal(d?.value, `${v}-2`, `stored ${n} freshened`);
    }
    assert.equal(protoSnapshot(), before0);
  });

  it('attack: Vary naming __proto__, constructor, prototype, hasOwnProperty, toString, valueOf -> variants kept apart by those fields', async () => {
    const tier = recordingTier();
    const f = createCachingFetch({ stores: [tier] });
    const url = `${site.url}/vary`;
    const ask = async (headers: [string, string][]) => {
      const r = await f(url, { headers });
      const body = await r.text();
      return { status: cs(r), body };
    };
    // None of the fields: stored; asked again, a hit (absent matches absent, not the prototype's value).
    assert.equal((await ask([])).status, 'gatehouse-client; fwd=uri-miss; stored');
    assert.equal((await ask([])).status, 'gatehouse-client; hit');
    assert.equal(site.count('/vary'), 1);
    // Each field present: a variant of its own (a miss that reaches the origin), then a hit.
    let n = 1;
    for (const name of PROTO_NAMES) {
      const a = await ask([[name, 'a']]);
      assert.match(String(a.status), /fwd=vary-miss; stored/, `${name}: a is a miss`);
      assert.equal(site.count('/vary'), ++n, `${name}: a reached the origin`);
      assert.equal((await ask([[name, 'a']])).status, 'gatehouse-client; hit', `${name}: a again`);
      const b = await ask([[name, 'b']]);
      assert.match(String(b.status), /fwd=vary-miss; stored/, `${name}: b is not served a's response`);
      assert.equal(site.count('/vary'), ++n, `${name}: b reached the origin`);
    }
    // The constructor field reached the origin as sent (echoed in the body).
    assert.equal((await ask([['constructor', 'c']])).body, 'vary c');
    await f.idle();
    // Each stored variant keeps the request fields it was selected with as own keys.
    const variants = tier.map.get(url) ?? [];
    for (const name of PROTO_NAMES) {
      const key = name.toLowerCase();
      const own = variants.filter((v) => Object.hasOwn(v.requestHeaders, key));
      assert.deepEqual(
        own.map((v) => Object.getOwnPropertyDescriptor(v.requestHeaders, key)?.value).sort(),
        name === 'constructor' ? ['a', 'b', 'c'] : ['a', 'b'],
        `stored request fields named ${name}`,
      );
    }
    assert.equal(protoSnapshot(), before0);
  });
});
