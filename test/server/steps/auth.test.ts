// Access control against a real Gatehouse: IP allow/deny, Basic auth with scrypt hashes, preflights,
// private caching. The verified-credentials cache and scrypt gate (in process, a fake clock): auth-gate.test.ts.
// matrix: http1 h2 h1-tls adapters runtimes (the static, policy, proxy and cache suites run on every protocol, adapter and runtime)
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { hashPasswordCommand } from '../../../src/cli/hash-password.js';
import { parseConfig } from '../../../src/config/load.js';
import { formatBasicAuthorization } from '../../../src/http/basic-auth.js';
import { createLogger } from '../../../src/server/ops/log.js';
import { createAuth } from '../../../src/server/steps/auth.js';
import { createClientAddress } from '../../../src/server/steps/client-address.js';
import {
  hashPassword,
  parseScryptHash,
  type ScryptHash,
  verifyPassword,
} from '../../../src/server/steps/password-hash.js';
import {
  get,
  makeSite,
  raw,
  rawStatus,
  removeSite,
  startServer,
  type TestServer,
} from '../../helpers/http.js';
import { RAW_TARGET_NORMALIZED } from '../../helpers/runtimes.js';

/** Cheap but accepted parameters (N*r*p = 2^17), so each scrypt run takes milliseconds. */
const FAST = ['--n', '16384', '--r', '8', '--p', '1'];

async function cliHash(
  password: string,
  args: string[] = FAST,
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await hashPasswordCommand(args, {
    stdin: Readable.from([Buffer.from(password)]),
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
  });
  return { code, out, err };
}

const getFrom = get;

describe('gatehouse hash-password', () => {
  it('prints a scrypt hash the config accepts and that verifies the password', async () => {
    const { code, out } = await cliHash('correct horse\n');
    assert.equal(code, 0);
    assert.match(out, /^scrypt\$16384\$8\$1\$[A-Za-z0-9+/]+=*\$[A-Za-z0-9+/]+=*\n$/);
    const h = parseScryptHash(out.trim()) as ScryptHash;
    assert.equal(typeof h, 'object');
    assert.equal(await verifyPassword('correct horse', h), true, 'the trailing newline is not part of it');
    assert.equal(await verifyPassword('correct horse\n', h), false);
  });

  it('two runs give different salts', async () => {
    const [a, b] = await Promise.all([cliHash('x'), cliHash('x')]);
    assert.notEqual(a.out, b.out);
  });

  it('empty input -> exit 2', async () => {
    const r = await cliHash('\n');
    assert.equal(r.code, 2);
    assert.match(r.err, /non-empty password/);
  });

  it('parameters below the floor or not powers of two -> exit 2 before reading', async () => {
    assert.equal((await cliHash('x', ['--n', '1024', '--r', '1', '--p', '1'])).code, 2);
    assert.equal((await cliHash('x', ['--n', '30000'])).code, 2);
    assert.equal((await cliHash('x', ['--n', 'abc'])).code, 2);
    assert.equal((await cliHash('x', ['--bogus'])).code, 2);
  });

  it('CRLF line endings are stripped', async () => {
    const { out } = await cliHash('pw\r\nsecond line ignored');
    assert.equal(await verifyPassword('pw', parseScryptHash(out.trim()) as ScryptHash), true);
  });
});

describe('auth config is checked at load (issues name the key)', () => {
  let hash: string;
  before(async () => {
    hash = await hashPassword('pw', { N: 16384, r: 8, p: 1 });
  });
  const load = (auth: unknown) => () => parseConfig({ auth });
  it('plaintext password -> error naming auth[0].basic.users.alice, without echoing it', () => {
    assert.throws(load([{ prefix: '/a', basic: { users: { alice: 'hunter2' } } }]), (err: Error) => {
      assert.match(err.message, /auth\[0\]\.basic\.users\.alice: not a password hash/);
      assert.doesNotMatch(err.message, /hunter2/);
      return true;
    });
  });
  it('unknown hash format (bcrypt) -> error', () => {
    assert.throws(
      load([{ prefix: '/a', basic: { users: { bob: '$2b$10$abcdefghijklmnopqrstuv' } } }]),
      /auth\[0\]\.basic\.users\.bob/,
    );
  });
  it('scrypt below the work floor -> error', () => {
    const weak = 'scrypt$1024$1$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';
    assert.throws(
      load([{ prefix: '/a', basic: { users: { eve: weak } } }]),
      /users\.eve: scrypt cost too low/,
    );
  });
  it('user-id with ":" -> error (RFC 7617 §2)', () => {
    assert.throws(load([{ prefix: '/a', basic: { users: { 'a:b': hash } } }]), /users\.a:b: user-ids/);
  });
  it('bad CIDR in allow -> error naming auth[0].allow[1]', () => {
    assert.throws(
      load([{ prefix: '/a', allow: ['10.0.0.0/8', '10.0.0.1/8'] }]),
      /auth\[0\]\.allow\[1\]: host bits/,
    );
  });
  it('a rule without basic, allow or deny -> error', () => {
    assert.throws(load([{ prefix: '/a' }]), /auth\[0\]: an auth rule needs basic, allow or deny/);
  });
  it('prefix must be a plain path', () => {
    assert.throws(load([{ prefix: 'admin', deny: ['loopback'] }]), /auth\[0\]\.prefix: must start with \//);
    assert.throws(
      load([{ prefix: '/%61dmin', deny: ['loopback'] }]),
      /auth\[0\]\.prefix: must be a plain decoded path/,
    );
  });
  it('a rule shadowed by an earlier prefix -> error', () => {
    assert.throws(
      load([
        { prefix: '/admin', deny: ['loopback'] },
        { prefix: '/admin/super', deny: ['private'] },
      ]),
      /auth\[1\]\.prefix: never used: auth\[0\]/,
    );
  });
  it('maxFailures and failureWindowSec: whole numbers from 1, named in the error; optional', () => {
    for (const [key, value] of [
      ['maxFailures', 0],
      ['maxFailures', 2.5],
      ['failureWindowSec', -1],
      ['failureWindowSec', 100_000],
    ] as const) {
      assert.throws(
        load([{ prefix: '/a', basic: { users: { alice: hash }, [key]: value } }]),
        new RegExp(`auth\\[0\\]\\.basic\\.${key}`),
        `${key} ${value}`,
      );
    }
    const ok = parseConfig({
      auth: [{ prefix: '/a', basic: { users: { alice: hash }, maxFailures: 5, failureWindowSec: 300 } }],
    });
    assert.equal(ok.auth[0]!.basic!.maxFailures, 5);
    assert.equal(
      parseConfig({ auth: [{ prefix: '/a', basic: { users: { alice: hash } } }] }).auth[0]!.basic!
        .maxFailures,
      undefined,
    );
  });
  it('library callers get the same checks (createAuth throws naming the key)', () => {
    const ctx = {
      logger: createLogger({ format: 'off', level: 'info' }),
      clientAddress: createClientAddress([]),
    };
    assert.throws(
      () => createAuth([{ prefix: '/a', basic: { users: { alice: hash }, maxFailures: 0 } }], ctx),
      /auth\[0\]\.basic\.maxFailures: must be a whole number/,
    );
  });
  it('unknown keys are refused', () => {
    assert.throws(
      load([{ prefix: '/a', deny: ['loopback'], password: 'x' }]),
      /unknown key auth\[0\]\.password/,
    );
  });
});

describe('access control on a real server', () => {
  let dir: string;
  let s: TestServer;
  let aliceHash: string;
  const alice = formatBasicAuthorization('alice', 'open sesame');
  before(async () => {
    dir = makeSite({
      'index.html': '<!doctype html><title>home</title>',
      'administrator.txt': 'not under /admin\n',
      'admin/secret.txt': 'the secret\n',
      'admin/app-3f2a9c1b.js': 'export const x = 1;\n',
      'internal/status.txt': 'ok\n',
      'lan/status.txt': 'ok\n',
      'both/page.txt': 'both\n',
    });
    aliceHash = (await cliHash('open sesame')).out.trim();
    s = await startServer(dir, {
      headers: [{ preset: 'security' }],
      auth: [
        { prefix: '/admin', basic: { realm: 'Admin area', users: { alice: aliceHash, zoë: aliceHash } } },
        { prefix: '/internal/', allow: ['127.0.0.1'] },
        { prefix: '/lan', allow: ['127.0.0.0/8'], deny: ['127.0.0.52'] },
        { prefix: '/both', allow: ['127.0.0.1'], basic: { users: { alice: aliceHash } } },
      ],
    });
  });
  after(async () => {
    await s.close();
    removeSite(dir);
  });

  describe('Basic (RFC 7617)', () => {
    it('no credentials -> 401 with the challenge, problem+json, security headers kept', async () => {
      const r = await get(s.url, '/admin/secret.txt', { headers: { accept: 'application/json' } });
      assert.equal(r.status, 401);
      assert.equal(r.headers['www-authenticate'], 'Basic realm="Admin area", charset="UTF-8"');
      assert.equal(r.headers['content-type'], 'application/problem+json');
      assert.equal(JSON.parse(r.text).code, 'unauthorized');
      assert.equal(r.headers['x-frame-options'], 'SAMEORIGIN');
      assert.doesNotMatch(r.text, /the secret/);
    });

    it('wrong password, unknown user, malformed and other schemes -> the same 401', async () => {
      const bodies = new Set<string>();
      for (const authorization of [
        formatBasicAuthorization('alice', 'wrong'),
        formatBasicAuthorization('mallory', 'open sesame'),
        'Basic !!!',
        'Bearer token',
      ]) {
        const r = await get(s.url, '/admin/secret.txt', {
          headers: { authorization, accept: 'application/json' },
        });
        assert.equal(r.status, 401, authorization);
        assert.ok(r.headers['www-authenticate']);
        bodies.add(r.text);
      }
      assert.equal(bodies.size, 1, 'one message for every failure');
    });

    it('right password -> 200, and the response is private (RFC 9111 §3.5)', async () => {
      const r = await get(s.url, '/admin/secret.txt', { headers: { authorization: alice } });
      assert.equal(r.status, 200);
      assert.equal(r.text, 'the secret\n');
      assert.equal(r.headers['cache-control'], 'private, no-cache');
    });

    it('a public, immutable asset under the prefix turns private', async () => {
      const r = await get(s.url, '/admin/app-3f2a9c1b.js', { headers: { authorization: alice } });
      assert.equal(r.status, 200);
      assert.equal(r.headers['cache-control'], 'private, max-age=31536000, immutable');
    });

    it('304 to an authenticated request is private too', async () => {
      const first = await get(s.url, '/admin/app-3f2a9c1b.js', { headers: { authorization: alice } });
      const r = await get(s.url, '/admin/app-3f2a9c1b.js', {
        headers: { authorization: alice, 'if-none-match': first.headers.etag! },
      });
      assert.equal(r.status, 304);
      assert.equal(r.headers['cache-control'], 'private, max-age=31536000, immutable');
    });

    it('UTF-8 user-id (charset="UTF-8", RFC 7617 §2.1), decomposed form normalised', async () => {
      const r = await get(s.url, '/admin/secret.txt', {
        headers: { authorization: formatBasicAuthorization('zo\u0065\u0308', 'open sesame') },
      });
      assert.equal(r.status, 200);
    });

    it('prefixes match whole segments: /administrator.txt is not under /admin', async () => {
      assert.equal((await get(s.url, '/administrator.txt')).status, 200);
      assert.equal((await get(s.url, '/admin')).status, 401);
    });

    it('encoded and dotted paths cannot slip past the prefix', async () => {
      for (const path of [
        '/%61dmin/secret.txt',
        '//admin/secret.txt',
        '/./admin/secret.txt',
        '/x/../admin/secret.txt',
        '/ADMIN/../admin/secret.txt',
      ]) {
        assert.equal((await get(s.url, path)).status, 401, path);
      }
      assert.equal((await get(s.url, '/%ZZ/admin/secret.txt')).status, 400);
    });

    it('prefixes ignore case: a case-insensitive filesystem cannot serve /ADMIN/ past the rule', async () => {
      for (const path of ['/ADMIN/secret.txt', '/Admin/secret.txt', '/%41dmin/secret.txt']) {
        assert.equal((await get(s.url, path)).status, 401, path);
      }
    });

    it('OPTIONS * (asterisk-form, RFC 9112 §3.2.4) is not refused as an undecodable path', async () => {
      const text = await raw(s.port, 'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      assert.notEqual(rawStatus(text), 401);
      // @hono/node-server makes a Fetch Request, which needs a URL: it answers `*` with 400 itself,
      // before any middleware (docs/embedding.md names this limit).
      // Bun.serve's own parser does the same (RAW_TARGET_NORMALIZED, docs/runtimes.md).
      if (process.env.GATEHOUSE_TEST_ADAPTER === 'hono' || RAW_TARGET_NORMALIZED)
        assert.equal(rawStatus(text), 400);
      else assert.notEqual(rawStatus(text), 400);
    });

    it('without CORS configured, a preflight-shaped OPTIONS is an ordinary OPTIONS -> 401', async () => {
      const pre = await get(s.url, '/admin/secret.txt', {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
      });
      assert.equal(pre.status, 401);
      assert.equal((await get(s.url, '/admin/secret.txt', { method: 'OPTIONS' })).status, 401);
    });
  });

  describe('client address rules', () => {
    it('allow list: listed address -> 200, others -> 403', async () => {
      const ok = await getFrom(s.url, '/internal/status.txt', { localAddress: '127.0.0.1' });
      assert.equal(ok.status, 200);
      assert.equal(ok.headers['cache-control'], 'private, no-cache', 'the answer depends on the address');
      const no = await getFrom(s.url, '/internal/status.txt', { localAddress: '127.0.0.51' });
      assert.equal(no.status, 403);
      assert.equal(no.headers['www-authenticate'], undefined);
    });

    it('deny wins over allow', async () => {
      assert.equal((await getFrom(s.url, '/lan/status.txt', { localAddress: '127.0.0.53' })).status, 200);
      assert.equal((await getFrom(s.url, '/lan/status.txt', { localAddress: '127.0.0.52' })).status, 403);
    });

    it('address and Basic together: 403 before 401, then credentials', async () => {
      assert.equal((await getFrom(s.url, '/both/page.txt', { localAddress: '127.0.0.54' })).status, 403);
      assert.equal(
        (
          await getFrom(s.url, '/both/page.txt', {
            localAddress: '127.0.0.54',
            headers: { authorization: alice },
          })
        ).status,
        403,
      );
      assert.equal((await getFrom(s.url, '/both/page.txt', { localAddress: '127.0.0.1' })).status, 401);
      assert.equal(
        (
          await getFrom(s.url, '/both/page.txt', {
            localAddress: '127.0.0.1',
            headers: { authorization: alice },
          })
        ).status,
        200,
      );
    });
  });

  describe('behind a trusted proxy', () => {
    let p: TestServer;
    before(async () => {
      p = await startServer(dir, {
        trustProxy: ['127.0.0.61'],
        auth: [{ prefix: '/internal', deny: ['203.0.113.0/24'] }],
      });
    });
    after(() => p.close());

    it('the forwarded client address decides, only from a trusted peer', async () => {
      const via = (localAddress: string, xff: string) =>
        getFrom(p.url, '/internal/status.txt', { localAddress, headers: { 'x-forwarded-for': xff } });
      assert.equal((await via('127.0.0.61', '203.0.113.5')).status, 403);
      assert.equal((await via('127.0.0.61', '198.51.100.1')).status, 200);
      assert.equal(
        (await via('127.0.0.61', '203.0.113.5, 198.51.100.1')).status,
        200,
        'the nearest untrusted hop',
      );
      assert.equal((await via('127.0.0.62', '203.0.113.5')).status, 200, 'untrusted peer: header ignored');
    });
  });
});
