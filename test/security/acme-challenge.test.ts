// Attack: the HTTP-01 responder (RFC 8555 §8.3) on the plain-HTTP listener. A request may only ever
// get the key authorization of the exact token it names; anything that is not a base64url token
// (traversal, slashes, dots, percent escapes, prototype names, a query) is a 404 without a lookup,
// other methods get 405, and a path outside the challenge folder is left to the redirect.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { parseConfig, toServerOptions } from '../../src/config/load.js';
import { createRedirectListener } from '../../src/server/app/redirect-listener.js';
import { type AcmeChallenges, answerAcmeChallenge } from '../../src/server/tls/acme-challenge.js';
import { createAcmeChallengeStep } from '../../src/server/tls/acme-step.js';
import { raw, rawStatus } from '../helpers/http.js';
import { type ChallengeResponder, freeTcpPort, startChallengeResponder } from '../helpers/pebble.js';
import { forAll } from '../helpers/random.js';

// Two tokens as a CA makes them (32 random bytes, base64url) and their key authorizations.
const A = 'LoqXcYV8q5ONbJQxbmR7SCTNo3tiAXDfowyjxAjEuX0';
const B = 'fm5FSeK_ib1OVDe5RNhM9MuepwIJDxMJvlnczjVDDgA';
const THUMB = '2cFCt0COB7X8dtL7a09JzrOIfe8cNy2OhgepmXUk8Mo';
const KEYS = new Map([
  [A, `${A}.${THUMB}`],
  [B, `${B}.${THUMB}`],
]);

/** The manager's kind of table (a Map), counting lookups. */
function table(): AcmeChallenges & { lookups: string[] } {
  const lookups: string[] = [];
  return {
    lookups,
    get(t) {
      lookups.push(t);
      return KEYS.get(t);
    },
  };
}

const P = '/.well-known/acme-challenge/';
const ask = (path: string, method = 'GET', t: AcmeChallenges = table()) =>
  answerAcmeChallenge(t, method, path);

describe('acme challenge responder: attacks', () => {
  const refused = (name: string, path: string, lookedUp = false) =>
    it(`attack: ${name} -> 404`, () => {
      const t = table();
      assert.deepEqual(ask(path, 'GET', t), { kind: 'unknown-token', status: 404 });
      if (!lookedUp) assert.deepEqual(t.lookups, [], 'refused before the table');
    });

  refused('path traversal in the challenge token (../)', `${P}../../../etc/passwd`);
  refused('path traversal back into the folder (../acme-challenge/TOKEN)', `${P}../acme-challenge/${A}`);
  refused('dot segment before a known token (./TOKEN)', `${P}./${A}`);
  refused('percent-encoded traversal (%2e%2e%2f)', `${P}%2e%2e%2f%2e%2e%2fetc%2fpasswd`);
  refused('token with a slash (TOKEN/extra)', `${P}${A}/extra`);
  refused('token with a trailing slash', `${P}${A}/`);
  refused('token with a dot (the key authorization itself as the token)', `${P}${A}.${THUMB}`);
  refused('token with a leading dot', `${P}.${A}`);
  refused('token with a percent escape decoding to a known token (%4C = L)', `${P}%4C${A.slice(1)}`);
  refused('token with a backslash', `${P}..\\${A}`);
  refused('token with base64 padding (=)', `${P}${A}=`);
  refused('token in standard base64 (+ and /)', `${P}${A.slice(0, -1)}+`);
  refused('a query after a known token', `${P}${A}?x=1`);
  refused('a fragment after a known token', `${P}${A}#x`);
  refused('NUL, CR or LF in the token', `${P}${A}\u0000`);
  refused('a header injection attempt in the token', `${P}${A}\r\nSet-Cookie: x=1`);
  refused('a space in the token', `${P}${A} x`);
  refused('a non-ASCII look-alike character in the token', `${P}${A.slice(0, -1)}\u0430`);
  refused('an empty token', P);
  refused('an overlong token (10 000 characters)', `${P}${'A'.repeat(10_000)}`);
  refused('an unknown token', `${P}${'x'.repeat(43)}`, true);
  refused("another token's prefix", `${P}${A.slice(0, 20)}`, true);
  refused('a known token plus one character', `${P}${A}x`, true);
  refused('a known token with its case changed', `${P}${A.toLowerCase()}`, true);

  for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'])
    it(`attack: prototype name as the token (${name}) -> 404, even with an object-backed table`, () => {
      const objectTable: AcmeChallenges = {
        get: (t) => (KEYS.has(t) ? KEYS.get(t) : ({} as Record<string, string>)[t]),
      };
      assert.deepEqual(ask(`${P}${name}`, 'GET', objectTable), { kind: 'unknown-token', status: 404 });
      assert.deepEqual(ask(`${P}${name}`), { kind: 'unknown-token', status: 404 });
    });

  it("attack: asking for one token never yields another token's key authorization", () => {
    assert.equal(
      ask(`${P}${A}`)?.status === 200 && (ask(`${P}${A}`) as { body: string }).body,
      `${A}.${THUMB}`,
    );
    assert.equal((ask(`${P}${B}`) as { body: string }).body, `${B}.${THUMB}`);
    forAll(
      8801,
      3000,
      (g) => g.mutate(g.pick([A, B]), ['A', 'a', '_', '-', '.', '/', '%', '0', 'L', 'f', '=', '?'], 3),
      (token) => {
        const r = ask(`${P}${token}`);
        const known = KEYS.get(token);
        if (known === undefined) assert.deepEqual(r, { kind: 'unknown-token', status: 404 });
        else assert.equal(r?.status === 200 && r.body, known, 'only the exact token answers');
      },
    );
  });

  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'get'])
    it(`attack: ${method} to a challenge path -> 405 with Allow: GET, HEAD, no key authorization`, () => {
      const t = table();
      assert.deepEqual(ask(`${P}${A}`, method, t), {
        kind: 'method-not-allowed',
        status: 405,
        allow: 'GET, HEAD',
      });
      assert.deepEqual(t.lookups, []);
    });

  for (const path of [
    `/.WELL-KNOWN/acme-challenge/${A}`,
    `/.well-known/acme-challengeX/${A}`,
    `//.well-known/acme-challenge/${A}`,
    `/x/../.well-known/acme-challenge/${A}`,
    `/%2ewell-known/acme-challenge/${A}`,
    '/.well-known/acme-challenge',
    `http://evil.example${P}${A}`,
  ])
    it(`attack: look-alike of the challenge folder (${path.slice(0, 40)}) -> not answered, left to the redirect`, () => {
      const t = table();
      assert.equal(ask(path, 'GET', t), undefined);
      assert.deepEqual(t.lookups, []);
    });

  it('the exact token: GET and HEAD answer its key authorization', () => {
    for (const m of ['GET', 'HEAD'])
      assert.deepEqual(ask(`${P}${A}`, m), {
        kind: 'answer',
        status: 200,
        body: `${A}.${THUMB}`,
        contentType: 'application/octet-stream',
      });
  });
});

describe('acme challenge responder over a real socket', () => {
  let r: ChallengeResponder;
  before(async () => {
    r = await startChallengeResponder(await freeTcpPort());
    r.tables.add(table());
  });
  after(() => r.close());
  const send = (target: string, method = 'GET') =>
    raw(r.port, `${method} ${target} HTTP/1.1\r\nHost: a.gatehouse.test\r\nConnection: close\r\n\r\n`);

  it('attack: raw dot segments in the request target reach the responder unnormalised -> 404', async () => {
    const res = await send(`${P}./${A}`);
    assert.equal(rawStatus(res), 404);
    assert.doesNotMatch(res, new RegExp(THUMB));
  });
  it('attack: a percent-encoded token over the wire -> 404', async () => {
    const res = await send(`${P}%4C${A.slice(1)}`);
    assert.equal(rawStatus(res), 404);
    assert.doesNotMatch(res, new RegExp(THUMB));
  });
  it('the exact token over the wire -> 200 with its key authorization only', async () => {
    const res = await send(`${P}${A}`);
    assert.equal(rawStatus(res), 200);
    assert.ok(res.includes(`${A}.${THUMB}`), res);
    assert.ok(!res.includes(B), res);
  });
});

describe('acme challenge step on the plain-HTTP listener (listen.httpPort)', () => {
  let server: Server;
  let port: number;
  before(async () => {
    const options = toServerOptions(parseConfig({ root: '.', log: { format: 'off' } }));
    server = createRedirectListener(options, {
      logger: { info() {}, warn() {}, error() {}, isLevelEnabled: () => false },
      httpsPort: 8443,
      before: [createAcmeChallengeStep(table())],
      onError: (_err, _req, res) => res.destroy(),
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));
  const send = (target: string, method = 'GET', host = 'www.gatehouse.test') =>
    raw(port, `${method} ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);

  it('the exact token -> 200, its key authorization, never cached', async () => {
    const res = await send(`${P}${A}`);
    assert.equal(rawStatus(res), 200);
    assert.match(res, /\r\ncache-control: no-store\r\n/i);
    assert.match(res, /\r\ncontent-type: application\/octet-stream\r\n/i);
    assert.ok(res.endsWith(`\r\n\r\n${A}.${THUMB}`), res);
  });
  it('HEAD of the exact token -> 200 without a body', async () => {
    const res = await send(`${P}${A}`, 'HEAD');
    assert.equal(rawStatus(res), 200);
    assert.ok(res.endsWith('\r\n\r\n'), res);
  });
  it('attack: unknown token -> 404 problem, nothing redirected', async () => {
    const res = await send(`${P}${'x'.repeat(43)}`);
    assert.equal(rawStatus(res), 404);
    assert.doesNotMatch(res, /location:/i);
    assert.doesNotMatch(res, new RegExp(THUMB));
  });
  it('attack: POST to a challenge path -> 405 with Allow: GET, HEAD', async () => {
    const res = await send(`${P}${A}`, 'POST');
    assert.equal(rawStatus(res), 405);
    assert.match(res, /\r\nallow: GET, HEAD\r\n/i);
    assert.doesNotMatch(res, new RegExp(THUMB));
  });
  it('attack: path traversal out of the challenge folder -> never a key authorization', async () => {
    for (const t of [`${P}../../${A}`, `${P}%2e%2e/${A}`, `${P}${A}/..`, `/x/..${P}..`]) {
      const res = await send(t);
      assert.notEqual(rawStatus(res), 200, t);
      assert.doesNotMatch(res, new RegExp(THUMB), t);
    }
  });
  it('any other path still gets the https redirect (308)', async () => {
    const res = await send('/index.html');
    assert.equal(rawStatus(res), 308);
    assert.match(res, /\r\nlocation: https:\/\/www\.gatehouse\.test:8443\/index\.html\r\n/i);
  });
});
