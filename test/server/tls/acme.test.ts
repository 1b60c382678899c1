// ACME against Debian's pebble on loopback: first issuance, a stored certificate reused, renewal
// forced by a short lifetime, and the failure paths (directory unreachable, challenge failing), each
// logged and retried with backoff while nothing crashes.
import assert from 'node:assert/strict';
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { STORE_FILES } from '../../../src/server/tls/acme-store.js';
import { handshake, pebbleSuite, tempStorage } from '../../helpers/acme.js';
import { freeTcpPort } from '../../helpers/pebble.js';
import { holdsFor, waitUntil } from '../../helpers/wait.js';

const DOMAINS = ['www.gatehouse.test', 'gatehouse.test'];

describe('acme: issuance against pebble', () => {
  const suite = pebbleSuite();
  const make = suite.make;

  it("first issuance: a certificate for every domain that chains to pebble's root, stored 0600", async () => {
    const storage = tempStorage();
    const m = make({ directory: suite.pebble.directory, storage, domains: DOMAINS });
    await m.manager.start();
    await waitUntil('a certificate is issued', () => m.pairs.length > 0 || m.manager.status().lastError);
    assert.equal(m.pairs.length, 1, m.logger.text());
    const root = await suite.pebble.rootPem();
    for (const d of DOMAINS) await handshake(m.pairs[0]!, d, root);
    await assert.rejects(handshake(m.pairs[0]!, 'other.gatehouse.test', root), /altnames|Hostname/i);
    // The HTTP-01 answers came from our responder (RFC 8555 §8.3 path).
    assert.ok(suite.responder.requests.some((p) => p.startsWith('/.well-known/acme-challenge/')));
    for (const f of [STORE_FILES.accountKey, STORE_FILES.certificateKey, STORE_FILES.certificate])
      assert.equal(statSync(join(storage, f)).mode & 0o777, 0o600, f);
    assert.equal(statSync(storage).mode & 0o777, 0o700);
    const s = m.manager.status();
    const leaf = new X509Certificate(m.pairs[0]!.cert);
    assert.equal(s.notAfterMs, Date.parse(leaf.validTo));
    assert.ok(s.nextRenewalMs! > Date.now() && s.nextRenewalMs! < s.notAfterMs!);
    assert.equal(s.lastError, undefined);
    assert.match(
      m.logger.text('info'),
      /acme: ordering a certificate for www\.gatehouse\.test, gatehouse\.test from https:\/\/127\.0\.0\.1:\d+\/dir \(none stored/,
    );
    assert.match(
      m.logger.text('info'),
      /acme: certificate for www\.gatehouse\.test, gatehouse\.test issued, valid until/,
    );
    m.manager.close();

    // A second start on the same storage serves the stored certificate at once and orders nothing.
    const again = make({ directory: suite.pebble.directory, storage, domains: DOMAINS });
    await again.manager.start();
    assert.equal(again.pairs.length, 1, 'onCertificate before start() resolves');
    assert.equal(again.pairs[0]!.cert, m.pairs[0]!.cert);
    assert.doesNotMatch(again.logger.text(), /ordering/);
  });

  it('a stored certificate is not served when its key was replaced or a domain was added: a new one is ordered', async () => {
    const storage = tempStorage();
    const first = make({ directory: suite.pebble.directory, storage, domains: DOMAINS });
    await first.manager.start();
    await waitUntil('a certificate', () => first.pairs.length > 0 || first.manager.status().lastError);
    first.manager.close();
    assert.equal(first.pairs.length, 1, first.logger.text());

    const added = make({
      directory: suite.pebble.directory,
      storage,
      domains: [...DOMAINS, 'api.gatehouse.test'],
    });
    await added.manager.start();
    assert.equal(added.pairs.length, 0, 'the stored certificate lacks api.gatehouse.test');
    await waitUntil('a certificate with the new name', () => added.pairs.length > 0);
    added.manager.close();
    assert.match(added.logger.text('info'), /\(names changed;/);
    await handshake(added.pairs[0]!, 'api.gatehouse.test', await suite.pebble.rootPem());

    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    writeFileSync(
      join(storage, STORE_FILES.certificateKey),
      privateKey.export({ type: 'pkcs8', format: 'pem' }),
    );
    const rekeyed = make({
      directory: suite.pebble.directory,
      storage,
      domains: [...DOMAINS, 'api.gatehouse.test'],
    });
    await rekeyed.manager.start();
    assert.equal(rekeyed.pairs.length, 0, 'a certificate that does not match its key is never served');
    assert.match(
      rekeyed.logger.text('warn'),
      /stored certificate for .* is unusable: the certificate does not match its key/,
    );
    await waitUntil('a certificate for the new key', () => rekeyed.pairs.length > 0);
    assert.equal(rekeyed.pairs[0]!.key, privateKey.export({ type: 'pkcs8', format: 'pem' }));
  });

  it('unreachable directory: logged with the domain, directory and reason, retried with growing backoff, start() resolves', async () => {
    const port = await freeTcpPort(); // nothing listens there
    const directory = `https://127.0.0.1:${port}/dir`;
    const m = make({ directory, storage: tempStorage(), domains: DOMAINS, random: () => 0 });
    await m.manager.start();
    const errors = () => m.logger.lines.filter((l) => l.level === 'error');
    await waitUntil('three failed attempts', () => errors().length >= 3);
    m.manager.close();
    for (const l of errors().slice(0, 3))
      assert.match(
        l.msg,
        new RegExp(
          `^acme: order for www\\.gatehouse\\.test, gatehouse\\.test failed: directory ${directory.replace(/[.]/g, '\\.')}: unreachable \\(ECONNREFUSED\\)`,
        ),
      );
    // Backoff 40 ms doubling, random 0 -> half of each step: 20, 40, 80 ms.
    assert.deepEqual(
      errors()
        .slice(0, 3)
        .map((l) => [l.obj.attempt, l.obj.retryInMs]),
      [
        [1, 20],
        [2, 40],
        [3, 80],
      ],
    );
    assert.equal(m.pairs.length, 0);
    assert.match(m.manager.status().lastError ?? '', /unreachable/);
  });

  it('close() stops the retries: no attempt after it, none left in flight', async () => {
    const directory = `https://127.0.0.1:${await freeTcpPort()}/dir`;
    const m = make({ directory, storage: tempStorage(), domains: DOMAINS, retry: { baseMs: 10, maxMs: 20 } });
    await m.manager.start();
    await waitUntil(
      'two failed attempts',
      () => m.logger.lines.filter((l) => l.level === 'error').length >= 2,
    );
    m.manager.close();
    const seen = m.logger.lines.length;
    // Ten times the longest backoff: a timer left running would have fired.
    await holdsFor('no log line after close', () => m.logger.lines.length === seen, 200);
    assert.equal(m.pairs.length, 0);
  });

  it('close() during an order: the certificate is never handed over, the lock is released', async () => {
    const storage = tempStorage();
    const m = make({ directory: suite.pebble.directory, storage, domains: DOMAINS });
    await m.manager.start();
    await waitUntil('the order is under way', () => /ordering/.test(m.logger.text('info')));
    m.manager.close();
    await waitUntil('the lock is released', () => !existsSync(join(storage, STORE_FILES.lock)));
    await holdsFor('no certificate after close', () => m.pairs.length === 0, 200);
  });

  it("the directory's certificate is verified: without directoryCa pebble's is refused, and nothing is ordered", async () => {
    const m = make({
      directory: suite.pebble.directory,
      directoryCa: undefined,
      storage: tempStorage(),
      domains: DOMAINS,
    });
    await m.manager.start();
    await waitUntil('a failed attempt', () => m.logger.lines.some((l) => l.level === 'error'));
    m.manager.close();
    assert.match(
      m.logger.lines.find((l) => l.level === 'error')!.msg,
      /failed: directory https:\/\/127\.0\.0\.1:\d+\/dir: unreachable \((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)\)/,
    );
    assert.equal(m.pairs.length, 0);
  });

  for (const [name, answer, detail] of [
    [
      'the HTTP-01 port answers a wrong key authorization',
      { status: 200, body: 'not-the-key-authorization' },
      /challenge invalid for (www\.)?gatehouse\.test: .+/,
    ],
    [
      'the HTTP-01 port serves nothing (404)',
      { status: 404, body: '' },
      /challenge invalid for (www\.)?gatehouse\.test: .*404/,
    ],
  ] as const) {
    it(`challenge fails: ${name} -> logged, retried, and issued once the port answers`, async () => {
      suite.responder.override = () => answer;
      try {
        const m = make({ directory: suite.pebble.directory, storage: tempStorage(), domains: DOMAINS });
        await m.manager.start();
        await waitUntil('a failed order is logged', () => m.logger.lines.some((l) => l.level === 'error'));
        const line = m.logger.lines.find((l) => l.level === 'error')!;
        assert.match(line.msg, /^acme: order for www\.gatehouse\.test, gatehouse\.test failed: /);
        assert.match(line.msg, detail);
        assert.match(line.msg, new RegExp(`directory ${suite.pebble.directory.replace(/[.]/g, '\\.')}`));
        assert.equal(m.pairs.length, 0);
        suite.responder.override = undefined;
        await waitUntil('issued after the port answers', () => m.pairs.length > 0);
        assert.equal(m.manager.status().lastError, undefined);
        await handshake(m.pairs[0]!, DOMAINS[0]!, await suite.pebble.rootPem());
      } finally {
        suite.responder.override = undefined;
      }
    });
  }
});

describe('acme: renewal against pebble (8 s certificates)', () => {
  const suite = pebbleSuite({ certificateValiditySec: 8 });

  it('renewed at the fraction of the lifetime; a failed renewal keeps the old certificate serving', async () => {
    const m = suite.make({ storage: tempStorage(), domains: DOMAINS, renewAtFraction: 0.25 });
    await m.manager.start();
    await waitUntil('the first certificate', () => m.pairs.length > 0 || m.manager.status().lastError);
    assert.equal(m.pairs.length, 1, m.logger.text());
    const first = new X509Certificate(m.pairs[0]!.cert);
    const lifetimeMs = Date.parse(first.validTo) - Date.parse(first.validFrom);
    assert.ok(lifetimeMs <= 10_000, `pebble issued a ${lifetimeMs} ms certificate`);
    const renewAt = m.manager.status().nextRenewalMs!;
    assert.ok(Math.abs(renewAt - (Date.parse(first.validFrom) + lifetimeMs / 4)) <= 1, 'renewal at 1/4');

    // The renewal fails while the HTTP-01 port serves nothing: the old certificate stays.
    suite.responder.override = () => ({ status: 404, body: '' });
    await waitUntil('a failed renewal', () => m.logger.lines.some((l) => l.level === 'error'), {
      deadlineMs: 20_000,
    });
    assert.match(m.logger.text('info'), /\(due for renewal; HTTP-01/);
    assert.equal(m.pairs.length, 1);
    assert.equal(m.manager.status().notAfterMs, Date.parse(first.validTo));
    suite.responder.override = undefined;

    await waitUntil('the renewed certificate', () => m.pairs.length > 1);
    const second = new X509Certificate(m.pairs[1]!.cert);
    assert.notEqual(second.fingerprint256, first.fingerprint256);
    assert.ok(Date.parse(second.validTo) >= Date.parse(first.validTo));
    assert.equal(m.manager.status().lastError, undefined);
    await handshake(m.pairs[1]!, DOMAINS[1]!, await suite.pebble.rootPem());
  });
});
