// Strict-Transport-Security on a small node:http server of the test's own whose transport is declared
// secure, and createIsSecure: in process by design, so off the runtimes matrix (split from headers.test.ts).
// matrix: http1 h2 h1-tls adapters (the static, policy, proxy and cache suites run on every protocol and adapter)
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ERRORS, sendError } from '../../../src/server/core/errors.js';
import { serveSteps } from '../../../src/server/index.js';
import { createLogger } from '../../../src/server/ops/log.js';
import { createIsSecure } from '../../../src/server/steps/client-address.js';
import { createHeaderRules, type HeaderRule } from '../../../src/server/steps/headers.js';
import { SECURITY_PRESET } from '../../../src/server/steps/headers-options.js';
import { get } from '../../helpers/http.js';

describe('Strict-Transport-Security only over TLS', () => {
  let server: Server;
  let url: string;
  let secure = false;
  before(async () => {
    const ctx = { logger: createLogger({ format: 'off', level: 'info' }), clientAddress: () => '' };
    const rules: HeaderRule[] = [
      { preset: 'security' },
      { glob: '/no-hsts/**', remove: ['Strict-Transport-Security'] },
    ];
    const step = createHeaderRules(rules, ctx, { isSecure: () => secure })!;
    const pipeline = serveSteps(
      [step],
      (req, res) => (req.url === '/err' ? sendError(req, res, ERRORS.notFound) : res.end('ok')),
      () => {},
    );
    server = createServer(pipeline);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('secure request: HSTS one year with subdomains, on errors too', async () => {
    secure = true;
    assert.equal(
      (await get(url, '/')).headers['strict-transport-security'],
      SECURITY_PRESET['Strict-Transport-Security'],
    );
    assert.equal(
      (await get(url, '/err')).headers['strict-transport-security'],
      'max-age=31536000; includeSubDomains',
    );
    assert.equal((await get(url, '/no-hsts/x')).headers['strict-transport-security'], undefined);
  });

  it('plain request: no HSTS', async () => {
    secure = false;
    assert.equal((await get(url, '/')).headers['strict-transport-security'], undefined);
  });
});

describe('createIsSecure', () => {
  const fakeReq = (remoteAddress: string, headers: Record<string, string>, encrypted = false) =>
    ({ socket: { remoteAddress, encrypted }, headers }) as unknown as IncomingMessage;
  const cases: [string, string[], 'x-forwarded-for' | 'forwarded', IncomingMessage, boolean][] = [
    ['TLS socket', [], 'x-forwarded-for', fakeReq('1.2.3.4', {}, true), true],
    [
      'plain socket, no trust',
      [],
      'x-forwarded-for',
      fakeReq('1.2.3.4', { 'x-forwarded-proto': 'https' }),
      false,
    ],
    [
      'trusted peer says https',
      ['10.0.0.1'],
      'x-forwarded-for',
      fakeReq('10.0.0.1', { 'x-forwarded-proto': 'https' }),
      true,
    ],
    [
      'trusted peer, last member counts',
      ['10.0.0.1'],
      'x-forwarded-for',
      fakeReq('10.0.0.1', { 'x-forwarded-proto': 'https, http' }),
      false,
    ],
    [
      'untrusted peer says https',
      ['10.0.0.1'],
      'x-forwarded-for',
      fakeReq('10.0.0.2', { 'x-forwarded-proto': 'https' }),
      false,
    ],
    [
      'Forwarded proto from a trusted peer (RFC 7239 §5.4)',
      ['10.0.0.1'],
      'forwarded',
      fakeReq('10.0.0.1', { forwarded: 'for=1.2.3.4;proto=https' }),
      true,
    ],
    [
      'Forwarded: the last element counts',
      ['10.0.0.1'],
      'forwarded',
      fakeReq('10.0.0.1', { forwarded: 'proto=https, for=1.2.3.4;proto=http' }),
      false,
    ],
  ];
  for (const [name, trust, header, req, expected] of cases) {
    it(name, () => assert.equal(createIsSecure(trust, { header })(req), expected));
  }
});
