// The verified-credentials cache and the scrypt gate, on the steps in a node:http server of the test's
// own (counting scrypt runs in process): off the runtimes matrix (split from auth.test.ts).
// matrix: http1 h2 h1-tls adapters (the static, policy, proxy and cache suites run on every protocol and adapter)
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { formatBasicAuthorization } from '../../../src/http/basic-auth.js';
import type { RequestFacts } from '../../../src/server/core/context.js';
import { serveSteps } from '../../../src/server/index.js';
import { createLogger } from '../../../src/server/ops/log.js';
import { type AuthRule, createAuth } from '../../../src/server/steps/auth.js';
import { createClientAddress } from '../../../src/server/steps/client-address.js';
import { hashPassword, verifyPassword } from '../../../src/server/steps/password-hash.js';
import { get } from '../../helpers/http.js';
import { waitUntil } from '../../helpers/wait.js';

describe('verified-credentials cache and the scrypt gate', () => {
  let server: Server;
  let url: string;
  let clock = 1_000_000;
  let calls = 0;
  /** While set, every password check waits for it: the test decides when checks finish. */
  let hold: Promise<void> | undefined;
  let arrivals = 0;
  let hash: string;
  const alice = formatBasicAuthorization('alice', 'pw');
  let lastFacts: RequestFacts | undefined;

  before(async () => {
    hash = await hashPassword('pw', { N: 16384, r: 8, p: 1 });
    const ctx = {
      logger: createLogger({ format: 'off', level: 'info' }),
      clientAddress: createClientAddress([]),
    };
    const rules: AuthRule[] = [{ prefix: '/', basic: { users: { alice: hash } } }];
    const step = createAuth(rules, ctx, {
      nowMs: () => clock,
      maxConcurrentHashes: 1,
      maxQueuedHashes: 1,
      verifyPassword: async (password, h) => {
        calls++;
        if (hold) await hold;
        return verifyPassword(password, h);
      },
    })!;
    const pipeline = serveSteps(
      [step],
      (_req, res, cx) => {
        lastFacts = { ...cx.facts };
        res.end('ok');
      },
      (_err, _req, res) => {
        res.statusCode = 500;
        res.end();
      },
    );
    server = createServer(pipeline);
    server.on('request', () => arrivals++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('scrypt runs once; repeated requests within 60 s use the cache; after that it runs again', async () => {
    calls = 0;
    assert.equal((await get(url, '/', { headers: { authorization: alice } })).status, 200);
    assert.equal(calls, 1);
    for (let i = 0; i < 5; i++)
      assert.equal((await get(url, '/', { headers: { authorization: alice } })).status, 200);
    assert.equal(calls, 1);
    clock += 61_000;
    assert.equal((await get(url, '/', { headers: { authorization: alice } })).status, 200);
    assert.equal(calls, 2);
  });

  it('a request let through records the facts: authorized, and the verified user-id', async () => {
    lastFacts = undefined;
    assert.equal((await get(url, '/', { headers: { authorization: alice } })).status, 200);
    assert.deepEqual(lastFacts, { authorized: true, user: 'alice' });
    clock += 61_000; // again through a fresh scrypt run
    lastFacts = undefined;
    assert.equal((await get(url, '/', { headers: { authorization: alice } })).status, 200);
    assert.deepEqual(lastFacts, { authorized: true, user: 'alice' });
  });

  it('failures are not cached, and unknown users cost a scrypt run too (constant-ish time)', async () => {
    calls = 0;
    const bad = formatBasicAuthorization('alice', 'nope');
    const ghost = formatBasicAuthorization('ghost', 'pw');
    assert.equal((await get(url, '/', { headers: { authorization: bad } })).status, 401);
    assert.equal((await get(url, '/', { headers: { authorization: bad } })).status, 401);
    assert.equal((await get(url, '/', { headers: { authorization: ghost } })).status, 401);
    assert.equal(calls, 3);
  });

  it('concurrent requests with the same new credentials share one scrypt run', async () => {
    calls = 0;
    clock += 120_000;
    let release!: () => void;
    hold = new Promise((r) => {
      release = r;
    });
    arrivals = 0;
    const pending = Promise.all(
      Array.from({ length: 5 }, () => get(url, '/', { headers: { authorization: alice } })),
    );
    // All five are in before the one check finishes.
    await waitUntil('five requests arrived', () => arrivals === 5);
    hold = undefined;
    release();
    const rs = await pending;
    assert.deepEqual(
      rs.map((r) => r.status),
      [200, 200, 200, 200, 200],
    );
    assert.equal(calls, 1);
  });

  it('more distinct logins than the gate holds -> 503 with Retry-After', async () => {
    let release!: () => void;
    hold = new Promise((r) => {
      release = r;
    });
    let answered = 0;
    const pending = Promise.all(
      ['a', 'b', 'c', 'd'].map((p) =>
        get(url, '/', { headers: { authorization: formatBasicAuthorization('alice', p) } }).then((r) => {
          answered++;
          return r;
        }),
      ),
    );
    // The two refusals come back while the running and the queued check are held.
    await waitUntil('two refusals answered', () => answered === 2);
    hold = undefined;
    release();
    const rs = await pending;
    const codes = rs.map((r) => r.status).sort();
    assert.deepEqual(codes, [401, 401, 503, 503]); // one running, one queued, two refused
    assert.equal(rs.find((r) => r.status === 503)!.headers['retry-after'], '1');
  });
});
