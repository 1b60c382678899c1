// Attack: under an auth rule the origin marks a personal answer `public` (or echoes the caller's
// credentials), and the shared cache hands it to the next user. Requests an auth rule lets through
// bypass the shared cache by default; with cache.perUser they are kept per authenticated user.
// Authorization outside any auth rule follows RFC 9111 §3.5 as before.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { formatBasicAuthorization } from '../../src/http/basic-auth.js';
import { hashPassword } from '../../src/server/steps/password-hash.js';
import { get, makeSite, removeSite, startServer, type TestServer } from '../helpers/http.js';
import { type Handler, type Origin, origin, text } from '../helpers/origin.js';
import { waitUntil } from '../helpers/wait.js';

const alice = formatBasicAuthorization('alice', 'alice pw');
const bob = formatBasicAuthorization('bob', 'bob pw');

describe('cache and credentials', () => {
  let up: Origin;
  let site: string;
  let bypass: TestServer;
  let perUser: TestServer;
  before(async () => {
    const echo: Handler = (q, s, n) =>
      text(s, 200, { 'cache-control': 'public, max-age=3600' }, `${q.headers.authorization ?? 'anon'} #${n}`);
    up = await origin({ '/admin/me': echo, '/lan/me': echo, '/open/me': echo, '/admin/other': echo });
    site = makeSite({});
    const fast = { N: 16384, r: 8, p: 1 };
    const users = { alice: await hashPassword('alice pw', fast), bob: await hashPassword('bob pw', fast) };
    const config = (cache: Record<string, unknown>) => ({
      auth: [
        { prefix: '/admin', basic: { users } },
        { prefix: '/lan', allow: ['loopback'] },
      ],
      proxy: [{ prefix: '/', upstream: up.url, cacheControl: null, cache: { enabled: true, ...cache } }],
    });
    bypass = await startServer(site, config({}));
    perUser = await startServer(site, config({ perUser: true }));
  });
  after(async () => {
    await bypass.close();
    await perUser.close();
    await up.close();
    removeSite(site);
  });

  /** GET until the answer comes from the store, or `tries` answers came from the origin. */
  async function untilHit(base: string, path: string, authorization: string): Promise<string> {
    return waitUntil(`${path} is served from the store`, async () => {
      const r = await get(base, path, { headers: { authorization } });
      return /^gatehouse; hit/.test(String(r.headers['cache-status'])) ? r.text : undefined;
    });
  }

  it("attack: alice's `public` answer under an auth rule -> never stored, bob gets his own", async () => {
    const a1 = await get(bypass.url, '/admin/me', { headers: { authorization: alice } });
    assert.equal(a1.status, 200);
    assert.equal(a1.text, `${alice} #1`);
    assert.match(String(a1.headers['cache-status']), /^gatehouse; fwd=bypass; fwd-status=200$/);
    assert.match(String(a1.headers['cache-control']), /private/);
    for (let i = 0; i < 5; i++) {
      const b = await get(bypass.url, '/admin/me', { headers: { authorization: bob } });
      assert.ok(b.text.startsWith(`${bob} #`), b.text);
      assert.ok(!b.text.includes(alice));
      const a = await get(bypass.url, '/admin/me', { headers: { authorization: alice } });
      assert.ok(a.text.startsWith(`${alice} #`));
      assert.doesNotMatch(String(a.headers['cache-status']), /hit|stored/);
    }
    assert.equal(up.count('/admin/me'), 11, 'every request reached the origin');
  });

  it('attack: an address-only auth rule with perUser -> bypassed too (no user id to key by)', async () => {
    const before = up.count('/lan/me');
    for (const server of [bypass, perUser]) {
      for (let i = 0; i < 3; i++) {
        const r = await get(server.url, '/lan/me');
        assert.match(String(r.headers['cache-status']), /fwd=bypass/);
      }
    }
    assert.equal(up.count('/lan/me'), before + 6);
  });

  it("attack: with perUser, bob never gets alice's stored answer; each user hits their own", async () => {
    const aliceText = await untilHit(perUser.url, '/admin/other', alice);
    assert.ok(aliceText.startsWith(`${alice} #`));
    const b = await get(perUser.url, '/admin/other', { headers: { authorization: bob } });
    assert.ok(b.text.startsWith(`${bob} #`), 'bob went to the origin, not to alice’s entry');
    assert.match(String(b.headers['cache-status']), /fwd=uri-miss/);
    const bobText = await untilHit(perUser.url, '/admin/other', bob);
    assert.ok(bobText.startsWith(`${bob} #`));
    assert.equal(await untilHit(perUser.url, '/admin/other', alice), aliceText);
  });

  it('attack: a wrong password with perUser -> 401, nothing served from the store', async () => {
    await untilHit(perUser.url, '/admin/other', alice);
    const wrong = formatBasicAuthorization('alice', 'guess');
    const r = await get(perUser.url, '/admin/other', { headers: { authorization: wrong } });
    assert.equal(r.status, 401);
    assert.equal(r.headers['cache-status'], undefined);
  });

  it('Authorization outside any auth rule: RFC 9111 §3.5 as before (`public` may be stored)', async () => {
    await get(bypass.url, '/open/me', { headers: { authorization: alice } });
    const text = await untilHit(bypass.url, '/open/me', alice);
    assert.equal(text, `${alice} #1`);
  });
});
