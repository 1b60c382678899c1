// Attack: password guessing against Basic auth. One address floods distinct wrong passwords (so the
// in-flight dedup cannot merge them) to fill the scrypt queue and lock others out, or guesses on and
// on. Real servers on 127.0.0.1:0; distinct client addresses are distinct loopback source addresses
// (127.0.0.x), or X-Forwarded-For from a trusted proxy for IPv6.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { formatBasicAuthorization } from '../../src/http/basic-auth.js';
import { serveSteps } from '../../src/server/index.js';
import type { Logger } from '../../src/server/ops/log.js';
import { type AuthDeps, type AuthRule, createAuth } from '../../src/server/steps/auth.js';
import { createClientAddress } from '../../src/server/steps/client-address.js';
import { hashPassword, type ScryptHash, verifyPassword } from '../../src/server/steps/password-hash.js';
import { get, makeSite, type Res, removeSite, startServer } from '../helpers/http.js';
import { waitUntil } from '../helpers/wait.js';

const ATTACKER = '127.0.0.2';
const VICTIM = '127.0.0.3';
const RIGHT = 'correct horse';

/** Polls `cond` until it holds (every few ms), failing after a generous deadline. */
/** Waits until `cond` holds; the shared deadline (WAIT_DEADLINE_MS) only turns a hang into a failure. */
async function until(cond: () => boolean, what: string): Promise<void> {
  await waitUntil(what, cond);
}

interface Harness {
  url: string;
  /** Passwords the scrypt stand-in was asked to check, in order. */
  checked: string[];
  /** Client addresses of the requests the server has taken (and run the auth step on). */
  arrivals: string[];
  warnings: { obj: unknown; msg: string | undefined }[];
  clock: { nowMs: number };
  close(): Promise<void>;
}

/** createAuth on a plain node:http server, with the clock, logger and password check injected. */
async function harness(
  rules: AuthRule[],
  deps: Partial<AuthDeps>,
  trustProxy: string[] = [],
): Promise<Harness> {
  const checked: string[] = [];
  const warnings: Harness['warnings'] = [];
  const clock = { nowMs: 1_000_000 };
  const logger: Logger = {
    info() {},
    warn: (obj, msg) => warnings.push({ obj, msg }),
    error() {},
    isLevelEnabled: () => true,
  };
  const step = createAuth(
    rules,
    { logger, clientAddress: createClientAddress(trustProxy) },
    {
      nowMs: () => clock.nowMs,
      ...deps,
      verifyPassword: async (password, h) => {
        checked.push(password);
        return (deps.verifyPassword ?? verifyPassword)(password, h);
      },
    },
  )!;
  const pipeline = serveSteps(
    [step],
    (_req, res) => res.end('ok'),
    (_err, _req, res) => {
      res.statusCode = 500;
      res.end();
    },
  );
  const server: Server = createServer(pipeline);
  const arrivals: string[] = [];
  // After the pipeline's listener: by then the auth step has admitted or refused the request.
  server.on('request', (req) => arrivals.push(req.socket.remoteAddress ?? ''));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    checked,
    arrivals,
    warnings,
    clock,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function login(url: string, from: string, password: string, headers: Record<string, string> = {}) {
  return get(url, '/', {
    localAddress: from,
    headers: { authorization: formatBasicAuthorization('alice', password), ...headers },
  });
}

let hash: string;
before(async () => {
  hash = await hashPassword(RIGHT, { N: 16384, r: 8, p: 1 });
});

describe('attack: one address fills the scrypt queue with distinct wrong passwords', () => {
  it('attack: 400 concurrent wrong passwords from one address -> the right password from another address still gets 200', async () => {
    // Every check of a wrong password waits until released, so the queue stays full while the
    // victim asks: on a plain FIFO (64 places) the victim got 503.
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const h = await harness([{ prefix: '/', basic: { users: { alice: hash } } }], {
      verifyPassword: async (password, stored: ScryptHash) => {
        if (password !== RIGHT) await held;
        return verifyPassword(password, stored);
      },
    });
    try {
      const flood: Promise<Res>[] = [];
      const done: Res[] = [];
      for (let i = 0; i < 400; i++) {
        const p = login(h.url, ATTACKER, `guess-${i}`);
        p.then((r) => done.push(r));
        flood.push(p);
      }
      // 2 checks running, 2 waiting: the other 396 are refused at once, without a check.
      await until(() => h.arrivals.length === 400, 'all 400 taken');
      // Wait for the refusals (or the first wrong answer, to fail fast on a FIFO gate).
      await until(() => done.length === 396 || done.some((r) => r.status !== 429), 'the refusals');
      assert.deepEqual(new Set(done.map((r) => r.status)), new Set([429]));
      assert.equal(done.length, 396);
      assert.equal(h.checked.length, 2);
      assert.ok(done.every((r) => r.headers['retry-after'] === '1'));

      const victim = login(h.url, VICTIM, RIGHT);
      await until(() => h.arrivals.includes(VICTIM), 'the victim admitted to the queue');
      assert.equal(h.checked.length, 2, 'still only the two held checks running');
      release();
      const v = await victim;
      assert.equal(v.status, 200, 'the victim gets through');
      const rest = await Promise.all(flood);
      assert.equal(rest.filter((r) => r.status === 401).length, 4);
      assert.equal(h.checked.length, 5, 'scrypt ran for 4 guesses and the victim, never for the rest');
      // Round robin: the victim's check runs before the attacker's last queued guess.
      assert.ok(h.checked.indexOf(RIGHT) < 4, `order: ${h.checked.join(' ')}`);
    } finally {
      release();
      await h.close();
    }
  });
});

describe('attack: guessing on and on from one address', () => {
  let h: Harness;
  beforeEach(async () => {
    await h?.close();
    h = await harness([{ prefix: '/', basic: { users: { alice: hash } } }], {});
  });
  after(() => h?.close());

  it('attack: 10 wrong passwords within 60 s -> 429 with Retry-After, and scrypt no longer runs', async () => {
    for (let i = 0; i < 10; i++) {
      h.clock.nowMs += 1000;
      assert.equal((await login(h.url, ATTACKER, `guess-${i}`)).status, 401, `guess ${i}`);
    }
    assert.equal(h.checked.length, 10);
    const r = await login(h.url, ATTACKER, 'guess-10', { accept: 'application/json' });
    assert.equal(r.status, 429);
    assert.equal(r.headers['content-type'], 'application/problem+json');
    assert.equal(r.headers['www-authenticate'], undefined);
    // The window started at the first failure (1 s in); 10 s have passed: 51 s left.
    assert.equal(r.headers['retry-after'], '51');
    assert.equal((await login(h.url, ATTACKER, RIGHT)).status, 429, 'even the right password waits');
    assert.equal(h.checked.length, 10, 'no scrypt run while throttled');
  });

  it('attack: a throttled address does not lock out another address', async () => {
    for (let i = 0; i < 10; i++) await login(h.url, ATTACKER, `guess-${i}`);
    assert.equal((await login(h.url, ATTACKER, 'x')).status, 429);
    assert.equal((await login(h.url, VICTIM, RIGHT)).status, 200);
    assert.equal((await login(h.url, VICTIM, 'typo')).status, 401);
  });

  it('the throttle ends with the window', async () => {
    for (let i = 0; i < 10; i++) await login(h.url, ATTACKER, `guess-${i}`);
    assert.equal((await login(h.url, ATTACKER, 'x')).status, 429);
    h.clock.nowMs += 60_000;
    assert.equal((await login(h.url, ATTACKER, 'x')).status, 401);
    assert.equal((await login(h.url, ATTACKER, RIGHT)).status, 200);
  });

  it('a success resets the count', async () => {
    for (let i = 0; i < 9; i++) await login(h.url, ATTACKER, `typo-${i}`);
    assert.equal((await login(h.url, ATTACKER, RIGHT)).status, 200);
    for (let i = 0; i < 9; i++) {
      assert.equal((await login(h.url, ATTACKER, `typo-again-${i}`)).status, 401, `typo ${i}`);
    }
    assert.equal((await login(h.url, ATTACKER, 'tenth')).status, 401);
    assert.equal((await login(h.url, ATTACKER, 'eleventh')).status, 429);
  });

  it('credentials verified before the throttle still pass from that address (no check runs)', async () => {
    assert.equal((await login(h.url, ATTACKER, RIGHT)).status, 200);
    for (let i = 0; i < 10; i++) await login(h.url, ATTACKER, `guess-${i}`);
    const before = h.checked.length;
    assert.equal((await login(h.url, ATTACKER, 'another')).status, 429);
    assert.equal((await login(h.url, ATTACKER, RIGHT)).status, 200, 'from the verified cache');
    assert.equal(h.checked.length, before);
  });

  it('attack: a throttled address is logged once per window, not once per request', async () => {
    for (let i = 0; i < 10; i++) await login(h.url, ATTACKER, `guess-${i}`);
    assert.equal(h.warnings.length, 0);
    for (let i = 0; i < 5; i++) assert.equal((await login(h.url, ATTACKER, `more-${i}`)).status, 429);
    assert.equal(h.warnings.length, 1);
    assert.match(String(h.warnings[0]!.msg), /throttled/);
    assert.equal((h.warnings[0]!.obj as { client: string }).client, ATTACKER);
    h.clock.nowMs += 60_000; // a new window
    for (let i = 0; i < 12; i++) await login(h.url, ATTACKER, `later-${i}`);
    assert.equal(h.warnings.length, 2);
  });
});

describe('attack: guessing from many addresses of one IPv6 /64', () => {
  it('attack: addresses in one /64 share a throttle; another /64 does not', async () => {
    const h = await harness([{ prefix: '/', basic: { users: { alice: hash } } }], {}, ['127.0.0.1']);
    try {
      const via = (xff: string, password: string) =>
        login(h.url, '127.0.0.1', password, { 'x-forwarded-for': xff });
      for (let i = 0; i < 10; i++) {
        assert.equal((await via(`2001:db8:0:1::${(i + 1).toString(16)}`, `g${i}`)).status, 401);
      }
      assert.equal((await via('2001:db8:0:1:ffff::99', 'g')).status, 429, 'same /64');
      assert.equal((await via('2001:db8:0:2::1', RIGHT)).status, 200, 'another /64');
    } finally {
      await h.close();
    }
  });
});

describe('the throttle through the real server and config', () => {
  it('attack: auth[].basic.maxFailures 3 -> the 4th guess is 429 with Retry-After', async () => {
    const dir = makeSite({ 'index.html': 'home' });
    const s = await startServer(dir, {
      auth: [{ prefix: '/', basic: { users: { alice: hash }, maxFailures: 3, failureWindowSec: 30 } }],
    });
    try {
      for (let i = 0; i < 3; i++) assert.equal((await login(s.url, ATTACKER, `g${i}`)).status, 401);
      const r = await login(s.url, ATTACKER, 'g3');
      assert.equal(r.status, 429);
      const sec = Number(r.headers['retry-after']);
      assert.ok(sec >= 1 && sec <= 30, String(sec));
      assert.equal((await login(s.url, VICTIM, RIGHT)).status, 200);
    } finally {
      await s.close();
      removeSite(dir);
    }
  });
});
