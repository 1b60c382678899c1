// Attack: an OPTIONS dressed as a CORS preflight (Origin + Access-Control-Request-Method) on a path
// CORS does not cover, to slip past auth: it used to be let through without credentials, to the
// static handler or to the upstream. Real Gatehouse servers and a real upstream that counts what
// reaches it, all on 127.0.0.1:0.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { formatBasicAuthorization } from '../../src/http/basic-auth.js';
import { hashPassword } from '../../src/server/steps/password-hash.js';
import { get, makeSite, type Res, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { type Origin, origin } from '../helpers/origin.js';

const ORIGIN = 'https://app.example';
const PREFLIGHT = { origin: ORIGIN, 'access-control-request-method': 'DELETE' };

function options(s: TestServer, path: string, headers: Record<string, string> = PREFLIGHT, from?: string) {
  return get(s.url, path, { method: 'OPTIONS', headers, localAddress: from });
}

describe('attack: preflight-shaped OPTIONS to skip auth', () => {
  let dir: string;
  let upstream: Origin;
  let alice: string;
  /** CORS limited to /public/** and /api/open/**. */
  let scoped: TestServer;
  /** No CORS at all. */
  let noCors: TestServer;

  before(async () => {
    dir = makeSite({ 'admin/secret.txt': 'the secret\n', 'public/a.txt': 'a\n' });
    upstream = await origin({
      '/api/users': (_req, res) => res.end('upstream answered'),
      '/api/open/x': (_req, res) => res.end('open'),
    });
    const hash = await hashPassword('pw', { N: 16384, r: 8, p: 1 });
    alice = formatBasicAuthorization('alice', 'pw');
    const common = {
      proxy: [{ prefix: '/api', upstream: upstream.url, stripPrefix: false }],
      auth: [
        { prefix: '/admin', basic: { users: { alice: hash } } },
        { prefix: '/api', basic: { users: { alice: hash } } },
        { prefix: '/lan', allow: ['127.0.0.1'] },
      ],
    };
    scoped = await startServer(dir, {
      ...common,
      cors: { origins: [ORIGIN], paths: ['/public/**', '/api/open/**'] },
    });
    noCors = await startServer(dir, common);
  });
  after(async () => {
    await scoped.close();
    await noCors.close();
    await upstream.close();
    removeSite(dir);
  });

  const servers = () =>
    [
      ['cors.paths elsewhere', scoped],
      ['CORS not configured', noCors],
    ] as const;

  it('attack: preflight-shaped OPTIONS on a protected static path outside CORS -> 401', async () => {
    for (const [name, s] of servers()) {
      const r: Res = await options(s, '/admin/secret.txt');
      assert.equal(r.status, 401, name);
      assert.ok(r.headers['www-authenticate'], name);
      assert.equal(r.headers['access-control-allow-origin'], undefined, name);
    }
  });

  it('attack: preflight-shaped OPTIONS on a protected proxied path outside CORS -> 401, upstream never contacted', async () => {
    const before = upstream.count('/api/users');
    for (const [name, s] of servers()) {
      const r = await options(s, '/api/users');
      assert.equal(r.status, 401, name);
      assert.doesNotMatch(r.text, /upstream answered/, name);
    }
    assert.equal(upstream.count('/api/users'), before, 'nothing reached the upstream');
    // Control: the same OPTIONS with credentials is forwarded, so the count above could have moved.
    const ok = await options(scoped, '/api/users', { ...PREFLIGHT, authorization: alice });
    assert.equal(ok.status, 200);
    assert.equal(upstream.count('/api/users'), before + 1);
  });

  it('attack: preflight-shaped OPTIONS on an address-restricted path outside CORS -> 403', async () => {
    for (const [name, s] of servers()) {
      assert.equal((await options(s, '/lan/x', PREFLIGHT, '127.0.0.9')).status, 403, name);
    }
  });

  it('a real preflight where CORS applies is answered by CORS without credentials, not forwarded', async () => {
    const before = upstream.count('/api/open/x');
    const r = await options(scoped, '/api/open/x');
    assert.equal(r.status, 200);
    assert.equal(r.headers['access-control-allow-origin'], ORIGIN);
    assert.equal(r.headers['www-authenticate'], undefined);
    assert.equal(upstream.count('/api/open/x'), before, 'the CORS step answered it');
  });

  it('dot segments cannot move a protected path into the CORS paths', async () => {
    const r = await options(scoped, '/public/../admin/secret.txt');
    assert.equal(r.status, 401);
  });
});
