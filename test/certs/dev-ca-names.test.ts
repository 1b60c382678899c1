// Names the user lists for the development certificate (`serve --https --name N`, `tls.names`), as
// `mkcert NAME...`: which names are taken, what the leaf's subjectAltName holds (dNSName and iPAddress
// entries, RFC 5280 §4.2.1.6), that a TLS client verifies them against the dev CA, and that the leaf
// is reissued exactly when the list changes (and not by `gatehouse trust`).
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import tls from 'node:tls';
import * as x509 from '@peculiar/x509';
import { DevCaError, devCaPaths, ensureDevCa, ensureDevCertificate } from '../../src/certs/dev-ca.js';
import { devNameProblem, devNameWarning, normalizeDevName } from '../../src/certs/dev-names.js';
import { parseServeFlags, UsageError } from '../../src/cli/main.js';
import { ConfigError, parseConfig } from '../../src/config/load.js';

const base = mkdtempSync(join(tmpdir(), 'gatehouse-devca-names-'));
after(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
const tempDir = () => join(base, String(++n));

/** The leaf's subjectAltName as [type, value] pairs, parsed from the DER (not Node's summary string). */
function sans(certPem: string): [string, string][] {
  const ext = new x509.X509Certificate(certPem).getExtension(x509.SubjectAlternativeNameExtension);
  return (ext?.names.items ?? []).map((g) => [g.type, g.value]);
}

describe('devNameProblem: which names the certificate may carry', () => {
  const good = [
    'myapp.test',
    'MyApp.Test',
    'single',
    'a-b.example.com',
    '*.myapp.test',
    '*.test',
    '192.168.1.20',
    '10.0.0.1',
    '::1',
    'fe80::1',
    '2001:db8::20',
    '[2001:db8::21]',
    `${'a'.repeat(63)}.test`,
  ];
  for (const name of good) it(`${name} -> ok`, () => assert.equal(devNameProblem(name), undefined));
  const bad: [string, RegExp][] = [
    ['', /empty/],
    ['my_app.test', /not a host name/],
    ['-a.test', /not a host name/],
    ['a-.test', /not a host name/],
    ['a..test', /not a host name/],
    ['ex ample.test', /not a host name/],
    ['münchen.test', /not a host name/],
    [`${'a'.repeat(64)}.test`, /not a host name/],
    [`${'a.'.repeat(127)}test`, /longer than 253/],
    ['myapp.test.', /trailing dot/],
    ['*', /not a host name|wildcard/],
    ['*.', /trailing dot/],
    ['a.*.test', /wildcard is the whole first label/],
    ['x*.test', /wildcard is the whole first label/],
    ['*.*.test', /wildcard is the whole first label/],
    ['192.168.1.300', /not an IPv4 address/],
    ['10.0.0', /not an IPv4 address/],
    ['fe80::1%eth0', /zone/],
    ['[myapp.test]', /not an IPv6 address/],
    ['2001:db8::g', /not a host name/],
  ];
  for (const [name, why] of bad)
    it(`${JSON.stringify(name)} -> refused`, () => assert.match(devNameProblem(name) ?? 'accepted', why));

  it('a wildcard right under a top-level name is taken, with a warning (clients do not match it)', () => {
    assert.match(devNameWarning('*.test') ?? '', /--name \*\.test: .*\*\.myapp\.test/);
    assert.equal(devNameWarning('*.myapp.test'), undefined);
    assert.equal(devNameWarning('myapp.test'), undefined);
  });

  it('normalized: DNS names in lower case, IPv6 compressed without brackets', () => {
    assert.equal(normalizeDevName('MyApp.Test'), 'myapp.test');
    assert.equal(normalizeDevName('[2001:DB8:0:0:0:0:0:21]'), '2001:db8::21');
    assert.equal(normalizeDevName('192.168.1.20'), '192.168.1.20');
  });
});

describe('tls.names and --name', () => {
  it('tls.names with dev: true loads; the default is none', () => {
    const c = parseConfig({ tls: { dev: true, names: ['myapp.test', '192.168.1.20'] } });
    assert.deepEqual(c.tls?.names, ['myapp.test', '192.168.1.20']);
    assert.deepEqual(parseConfig({ tls: { dev: true } }).tls?.names, []);
  });

  it('a bad name is a config error naming the key and the name', () => {
    assert.throws(
      () => parseConfig({ tls: { dev: true, names: ['ok.test', 'my_app.test'] } }),
      (err: Error) => err instanceof ConfigError && /tls\.names\[1\]: .*my_app\.test/.test(err.message),
    );
  });

  it('tls.names without dev: true is a config error naming tls.names', () => {
    assert.throws(
      () => parseConfig({ tls: { cert: 'c.pem', key: 'k.pem', names: ['myapp.test'] } }),
      (err: Error) => err instanceof ConfigError && /tls\.names: only with dev: true/.test(err.message),
    );
  });

  it('--https --name N (repeatable) sets tls.names', () => {
    assert.deepEqual(
      parseServeFlags(['--https', '--name', 'myapp.test', '--name', '192.168.1.20']).overrides.tls,
      { dev: true, names: ['myapp.test', '192.168.1.20'] },
    );
  });

  it('a bad --name, or --name without --https, is a usage error naming the flag', () => {
    assert.throws(
      () => parseServeFlags(['--https', '--name', 'my_app.test']),
      (err: Error) => err instanceof UsageError && /^--name: .*: my_app\.test$/.test(err.message),
    );
    assert.throws(
      () => parseServeFlags(['--name', 'myapp.test']),
      (err: Error) => err instanceof UsageError && /^--name: only with --https/.test(err.message),
    );
  });
});

describe('the development leaf with names', () => {
  const names = ['myapp.test', '*.myapp.test', '192.168.1.20', '2001:db8::20'];

  it('its subjectAltName holds the defaults, then each name as dNSName or iPAddress', async () => {
    const r = await ensureDevCertificate({ dataDir: tempDir(), names });
    assert.deepEqual(sans(r.certPem), [
      ['dns', 'localhost'],
      ['ip', '127.0.0.1'],
      ['ip', '::1'],
      ['dns', 'myapp.test'],
      ['dns', '*.myapp.test'],
      ['ip', '192.168.1.20'],
      ['ip', '2001:db8::20'],
    ]);
  });

  it('a TLS client trusting only the dev CA verifies each name, and refuses one not listed', async () => {
    const dataDir = tempDir();
    const r = await ensureDevCertificate({ dataDir, names });
    const ca = readFileSync(r.caCertPath, 'utf8');
    const server = tls.createServer({ cert: r.certPem, key: r.keyPem }, (s) => s.end());
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      const s = tls.connect({ host: '127.0.0.1', port, ca, servername: 'myapp.test' });
      await once(s, 'secureConnect');
      assert.equal(s.authorized, true, String(s.authorizationError));
      const peer = s.getPeerCertificate();
      s.destroy();
      // RFC 6125 §6.4: DNS names and the wildcard's one label; RFC 5280 §4.2.1.6: iPAddress entries.
      for (const host of ['myapp.test', 'api.myapp.test', '192.168.1.20', '2001:db8::20', 'localhost'])
        assert.equal(tls.checkServerIdentity(host, peer), undefined, host);
      for (const host of ['other.test', 'a.b.myapp.test', '192.168.1.21'])
        assert.ok(tls.checkServerIdentity(host, peer) instanceof Error, host);
    } finally {
      server.close();
    }
  });

  it('reissued when the list changes (a name added, then dropped), kept when only order and case differ', async () => {
    const dataDir = tempDir();
    const first = await ensureDevCertificate({ dataDir, names: ['myapp.test', '192.168.1.20'] });
    assert.equal(first.created.leaf, true);
    const same = await ensureDevCertificate({ dataDir, names: ['192.168.1.20', 'MyApp.Test'] });
    assert.equal(same.created.leaf, false);
    assert.equal(same.certPem, first.certPem);
    const added = await ensureDevCertificate({ dataDir, names: ['myapp.test', '192.168.1.20', 'b.test'] });
    assert.equal(added.created.leaf, true);
    assert.ok(sans(added.certPem).some(([t, v]) => t === 'dns' && v === 'b.test'));
    const dropped = await ensureDevCertificate({ dataDir });
    assert.equal(dropped.created.leaf, true);
    assert.deepEqual(sans(dropped.certPem), [
      ['dns', 'localhost'],
      ['ip', '127.0.0.1'],
      ['ip', '::1'],
    ]);
    assert.equal(dropped.created.ca || added.created.ca || same.created.ca, false, 'one CA throughout');
  });

  it('a bad name given to ensureDevCertificate directly (options built by hand) -> DevCaError, nothing made', async () => {
    const dataDir = tempDir();
    await assert.rejects(
      ensureDevCertificate({ dataDir, names: ['ok.test', 'bad name'] }),
      (err: Error) =>
        err instanceof DevCaError && /tls\.names: not a host name.*: bad name/.test(err.message),
    );
    assert.equal(existsSync(devCaPaths(dataDir).caCert), false);
  });

  it('gatehouse trust (ensureDevCa) leaves a leaf made for more names as it is', async () => {
    const dataDir = tempDir();
    const r = await ensureDevCertificate({ dataDir, names: ['myapp.test'] });
    const ca = await ensureDevCa({ dataDir });
    assert.equal(ca.created, false);
    assert.equal(ca.caCertPath, r.caCertPath);
    assert.equal(readFileSync(devCaPaths(dataDir).leafCert, 'utf8'), r.certPem);
    assert.ok(new X509Certificate(r.certPem).checkHost('myapp.test'));
  });
});
