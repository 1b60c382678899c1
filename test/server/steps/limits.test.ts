// Rate limiting against a real Gatehouse. Node's own limits (408, 431, 400, maxConnections) answered by
// handleClientError are the Node listener's: test/server/node/client-errors.test.ts.
// matrix: http1 h2 h1-tls adapters runtimes (the static, policy, proxy and cache suites run on every protocol, adapter and runtime)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bucketKey } from '../../../src/server/steps/limits.js';
import { get, makeSite, type Res, removeSite, startServer, type TestServer } from '../../helpers/http.js';

/** A GET from a chosen loopback source address (Linux routes all of 127/8 to lo). */
const getFrom = get;

async function statuses(n: number, f: () => Promise<Res>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await f()).status);
  return out;
}

// 0.1 tokens/s: nothing refills while a test runs, however slow the machine.
const SLOW = { requestsPerSec: 0.1, burst: 3 };

describe('rate limit (token bucket per client)', () => {
  let dir: string;
  before(() => {
    dir = makeSite({
      'index.html': '<!doctype html><title>x</title>',
      'notes.txt': 'hi\n',
      'api/data.json': '{}',
    });
  });
  after(() => removeSite(dir));

  describe('one limit for every path', () => {
    let s: TestServer;
    before(async () => {
      s = await startServer(dir, { limits: { rateLimit: SLOW } });
    });
    after(() => s.close());

    it('burst requests pass with RateLimit and RateLimit-Policy (draft-11 §3, §4); then 429', async () => {
      const from = { localAddress: '127.0.0.11' };
      const seen: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await getFrom(s.url, '/notes.txt', from);
        assert.equal(r.status, 200);
        assert.equal(r.headers['ratelimit-policy'], '"default";q=3;w=30');
        seen.push(String(r.headers.ratelimit));
        assert.equal(r.headers['retry-after'], undefined);
      }
      assert.deepEqual(
        seen.map((v) => v.replace(/;t=\d+$/, '')),
        ['"default";r=2', '"default";r=1', '"default";r=0'],
      );
      const limited = await getFrom(s.url, '/notes.txt', {
        ...from,
        headers: { accept: 'application/json' },
      });
      assert.equal(limited.status, 429);
      // Retry-After: whole seconds >= 1 (RFC 9110 §10.2.3); one token at 0.1/s is up to 10 s away.
      const retry = Number(limited.headers['retry-after']);
      assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 10, `Retry-After ${retry}`);
      // On a refusal r=0 and t equals Retry-After (draft-11 §6: Retry-After not before the window's end).
      assert.equal(limited.headers.ratelimit, `"default";r=0;t=${retry}`);
      assert.equal(limited.headers['ratelimit-policy'], '"default";q=3;w=30');
      assert.equal(limited.headers['content-type'], 'application/problem+json');
      assert.equal(JSON.parse(limited.text).code, 'too_many_requests');
      assert.equal(limited.headers['cache-control'], 'no-cache');
    });

    it('HEAD over the limit: 429 without a body', async () => {
      const from = { localAddress: '127.0.0.12' };
      await statuses(3, () => getFrom(s.url, '/notes.txt', from));
      const r = await getFrom(s.url, '/notes.txt', { ...from, method: 'HEAD' });
      assert.equal(r.status, 429);
      assert.equal(r.body.length, 0);
    });

    it('each client address has its own bucket', async () => {
      assert.deepEqual(
        await statuses(4, () => getFrom(s.url, '/', { localAddress: '127.0.0.13' })),
        [200, 200, 200, 429],
      );
      assert.equal((await getFrom(s.url, '/', { localAddress: '127.0.0.14' })).status, 200);
    });

    it('without trustProxy, X-Forwarded-For does not make a new client', async () => {
      const from = (i: number) => ({
        localAddress: '127.0.0.15',
        headers: { 'x-forwarded-for': `203.0.113.${i}` },
      });
      const got: number[] = [];
      for (let i = 0; i < 4; i++) got.push((await getFrom(s.url, '/', from(i))).status);
      assert.deepEqual(got, [200, 200, 200, 429]);
    });
  });

  describe('behind a trusted proxy', () => {
    let s: TestServer;
    before(async () => {
      s = await startServer(dir, { trustProxy: ['127.0.0.21'], limits: { rateLimit: SLOW } });
    });
    after(() => s.close());

    it('X-Forwarded-For from a trusted peer separates clients', async () => {
      const via = (client: string) => ({
        localAddress: '127.0.0.21',
        headers: { 'x-forwarded-for': client },
      });
      assert.deepEqual(
        await statuses(4, () => getFrom(s.url, '/', via('6.6.6.6, 203.0.113.1'))),
        [200, 200, 200, 429],
      );
      // Another client behind the same proxy, and the first one with a forged prefix: bucket by the real hop.
      assert.equal((await getFrom(s.url, '/', via('203.0.113.2'))).status, 200);
      assert.equal((await getFrom(s.url, '/', via('7.7.7.7, 203.0.113.1'))).status, 429);
    });

    it('X-Forwarded-For from an untrusted peer is ignored', async () => {
      const got: number[] = [];
      for (let i = 0; i < 4; i++) {
        const r = await getFrom(s.url, '/', {
          localAddress: '127.0.0.22',
          headers: { 'x-forwarded-for': `198.51.100.${i}` },
        });
        got.push(r.status);
      }
      assert.deepEqual(got, [200, 200, 200, 429]);
    });
  });

  describe('paths', () => {
    let s: TestServer;
    before(async () => {
      s = await startServer(dir, { limits: { rateLimit: { ...SLOW, paths: ['/api/**'] } } });
    });
    after(() => s.close());

    it('only matching paths count and carry RateLimit; an encoded path still counts', async () => {
      const from = { localAddress: '127.0.0.31' };
      const other = await getFrom(s.url, '/notes.txt', from);
      assert.equal(other.status, 200);
      assert.equal(other.headers.ratelimit, undefined);
      assert.deepEqual(await statuses(2, () => getFrom(s.url, '/api/data.json', from)), [200, 200]);
      assert.equal((await getFrom(s.url, '/%61pi/data.json', from)).status, 200); // the third token
      assert.equal((await getFrom(s.url, '/api/data.json', from)).status, 429);
      assert.equal((await getFrom(s.url, '/notes.txt', from)).status, 200);
    });
  });

  describe('bucketKey', () => {
    const cases: [string, string, number, string][] = [
      ['IPv4 as is', '192.0.2.1', 64, '192.0.2.1'],
      ['IPv6 by its /64 (one host owns a whole /64)', '2001:db8:1:2:aaaa::1', 64, '2001:db8:1:2::/64'],
      ['IPv6 /128 keeps the address', '2001:db8::1', 128, '2001:db8::1'],
      ['unknown stays unknown', 'unknown', 64, 'unknown'],
    ];
    for (const [name, addr, bits, expected] of cases)
      it(name, () => assert.equal(bucketKey(addr, bits), expected));
  });

  it('config: burst must be an integer >= 1 and requestsPerSec > 0 (names the key)', async () => {
    await assert.rejects(
      startServer(dir, { limits: { rateLimit: { requestsPerSec: 0, burst: 1 } } }),
      /limits\.rateLimit\.requestsPerSec/,
    );
    await assert.rejects(
      startServer(dir, { limits: { rateLimit: { requestsPerSec: 1, burst: 0.5 } } }),
      /limits\.rateLimit\.burst/,
    );
  });
});
