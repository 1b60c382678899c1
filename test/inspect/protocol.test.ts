// The protocol area of gatehouse check: each finding id made to fire and kept quiet, on recorded
// exchanges (test/helpers/recording.ts), no network.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkProtocol } from '../../src/inspect/checks/protocol.js';
import type { TlsRecord } from '../../src/inspect/types.js';
import { NOW_MS, type RecordingSpec, recording } from '../helpers/recording.js';

const HOUR_MS = 3_600_000;
/** Certificate dates with `leftMs` of a `lifetimeMs` lifetime left at NOW_MS (daysLeft as cert.ts rounds it). */
function dates(leftMs: number, lifetimeMs: number) {
  return {
    validFrom: new Date(NOW_MS + leftMs - lifetimeMs).toISOString(),
    validTo: new Date(NOW_MS + leftMs).toISOString(),
    daysLeft: Math.floor(leftMs / (24 * HOUR_MS)),
  };
}
const DAY = 24 * HOUR_MS;

function tls(
  o: { protocol?: string; alpn?: string | false; cert?: Partial<NonNullable<TlsRecord['certificate']>> } = {},
): TlsRecord {
  return {
    protocol: o.protocol ?? 'TLSv1.3',
    cipher: 'TLS_AES_128_GCM_SHA256',
    alpn: o.alpn ?? 'h2',
    certificate: {
      subject: 'CN=site.example',
      issuer: 'CN=Test CA',
      san: ['DNS:site.example'],
      validFrom: '2026-10-01T00:00:00.000Z',
      validTo: '2027-01-01T00:00:00.000Z',
      daysLeft: 36,
      checks: { trusted: true, timeValid: true, hostnameMatches: true },
      warnings: [],
      ...o.cert,
    },
  };
}

const good: RecordingSpec = { tls: tls(), probes: { primary: { httpVersion: '2' } } };

const cases: [string, RecordingSpec, string, 'fires' | 'quiet'][] = [
  ['HTTP/2 over h2: the version is told', good, 'protocol.http-version', 'fires'],
  [
    'no primary response: no version finding',
    { tls: tls(), probes: { primary: { error: 'reset' } } },
    'protocol.http-version',
    'quiet',
  ],
  ['TLS 1.0 negotiated', { ...good, tls: tls({ protocol: 'TLSv1' }) }, 'protocol.tls-obsolete', 'fires'],
  ['TLS 1.1 negotiated', { ...good, tls: tls({ protocol: 'TLSv1.1' }) }, 'protocol.tls-obsolete', 'fires'],
  [
    'TLS 1.2 negotiated: not obsolete',
    { ...good, tls: tls({ protocol: 'TLSv1.2' }) },
    'protocol.tls-obsolete',
    'quiet',
  ],
  [
    'TLS 1.2 negotiated: told as info',
    { ...good, tls: tls({ protocol: 'TLSv1.2' }) },
    'protocol.tls-version',
    'fires',
  ],
  ['TLS 1.3 negotiated: told as info', good, 'protocol.tls-version', 'fires'],
  ['plain http: no TLS version', { url: 'http://site.example/' }, 'protocol.tls-version', 'quiet'],
  [
    'untrusted certificate',
    { ...good, tls: tls({ cert: { checks: { trusted: false, timeValid: true, hostnameMatches: true } } }) },
    'protocol.certificate-untrusted',
    'fires',
  ],
  ['trusted certificate', good, 'protocol.certificate-untrusted', 'quiet'],
  [
    'expired certificate',
    {
      ...good,
      tls: tls({
        cert: { daysLeft: -3, checks: { trusted: true, timeValid: false, hostnameMatches: true } },
      }),
    },
    'protocol.certificate-expired',
    'fires',
  ],
  [
    'not yet valid certificate',
    {
      ...good,
      tls: tls({
        cert: { daysLeft: 400, checks: { trusted: true, timeValid: false, hostnameMatches: true } },
      }),
    },
    'protocol.certificate-expired',
    'fires',
  ],
  ['certificate in date', good, 'protocol.certificate-expired', 'quiet'],
  [
    'certificate for another host',
    { ...good, tls: tls({ cert: { checks: { trusted: true, timeValid: true, hostnameMatches: false } } }) },
    'protocol.certificate-wrong-host',
    'fires',
  ],
  ['certificate names the host', good, 'protocol.certificate-wrong-host', 'quiet'],
  [
    'RSA 1024 leaf (keyStrength false)',
    {
      ...good,
      tls: tls({
        cert: {
          checks: { trusted: true, timeValid: true, hostnameMatches: true, keyStrength: false },
          weakKeys: ['the certificate has a RSA key of 1024 bits, under 2048'],
        },
      }),
    },
    'protocol.certificate-weak-key',
    'fires',
  ],
  ['strong key (keyStrength true)', good, 'protocol.certificate-weak-key', 'quiet'],
  [
    '20 days left of 90',
    { ...good, tls: tls({ cert: dates(20 * DAY, 90 * DAY) }) },
    'protocol.certificate-expiring',
    'fires',
  ],
  [
    '21 days left of 90',
    { ...good, tls: tls({ cert: dates(21 * DAY, 90 * DAY) }) },
    'protocol.certificate-expiring',
    'quiet',
  ],
  [
    // Issue 26: Caddy's internal certificates live 12 hours; 11 left is a fresh one, not "0 days".
    '11 hours left of a 12-hour certificate',
    { ...good, tls: tls({ cert: dates(11 * HOUR_MS, 12 * HOUR_MS) }) },
    'protocol.certificate-expiring',
    'quiet',
  ],
  [
    '3 hours left of a 12-hour certificate (under a third)',
    { ...good, tls: tls({ cert: dates(3 * HOUR_MS, 12 * HOUR_MS) }) },
    'protocol.certificate-expiring',
    'fires',
  ],
  [
    '15 days left of a 30-day certificate (half its lifetime)',
    { ...good, tls: tls({ cert: dates(15 * DAY, 30 * DAY) }) },
    'protocol.certificate-expiring',
    'quiet',
  ],
  [
    'expired: not also expiring',
    {
      ...good,
      tls: tls({
        cert: { daysLeft: -1, checks: { trusted: true, timeValid: false, hostnameMatches: true } },
      }),
    },
    'protocol.certificate-expiring',
    'quiet',
  ],
  [
    'intermediate not served',
    {
      ...good,
      tls: tls({
        cert: { warnings: ["incomplete chain: the leaf's issuer is not served (missing intermediate?)"] },
      }),
    },
    'protocol.incomplete-chain',
    'fires',
  ],
  ['full chain', good, 'protocol.incomplete-chain', 'quiet'],
  [
    'plain http at the end of the chain',
    { url: 'http://site.example/' },
    'protocol.no-https-redirect',
    'fires',
  ],
  [
    'http redirected to https',
    { url: 'http://site.example/', finalUrl: 'https://site.example/', tls: tls() },
    'protocol.no-https-redirect',
    'quiet',
  ],
  [
    'plain http on loopback (a potentially trustworthy origin)',
    { url: 'http://127.0.0.1:8080/' },
    'protocol.no-https-redirect',
    'quiet',
  ],
  ['plain http on localhost', { url: 'http://localhost:8080/' }, 'protocol.no-https-redirect', 'quiet'],
  [
    'plain http that did not answer',
    { url: 'http://site.example/', probes: { primary: { error: 'refused' } } },
    'protocol.no-https-redirect',
    'quiet',
  ],
];

describe('checkProtocol: each finding fires and stays quiet', () => {
  for (const [name, spec, id, expect] of cases) {
    it(`${name} -> ${id} ${expect}`, () => {
      const ids = checkProtocol(recording(spec)).map((f) => f.id);
      assert.equal(ids.includes(id), expect === 'fires', `findings: ${ids.join(', ')}`);
    });
  }
});

describe('checkProtocol: severities and wording', () => {
  const severityOf = (spec: RecordingSpec, id: string) =>
    checkProtocol(recording(spec)).find((f) => f.id === id)?.severity;
  const table: [string, RecordingSpec, string, string][] = [
    ['TLS 1.0 is an error', { ...good, tls: tls({ protocol: 'TLSv1' }) }, 'protocol.tls-obsolete', 'error'],
    ['TLS 1.3 is info', good, 'protocol.tls-version', 'info'],
    ['HTTP version is info', good, 'protocol.http-version', 'info'],
    [
      'expiring is a warning',
      { ...good, tls: tls({ cert: dates(2 * DAY, 90 * DAY) }) },
      'protocol.certificate-expiring',
      'warning',
    ],
    [
      'incomplete chain is a warning',
      { ...good, tls: tls({ cert: { warnings: ['incomplete chain: x'] } }) },
      'protocol.incomplete-chain',
      'warning',
    ],
    ['plain http is a warning', { url: 'http://site.example/' }, 'protocol.no-https-redirect', 'warning'],
  ];
  for (const [name, spec, id, severity] of table) {
    it(name, () => assert.equal(severityOf(spec, id), severity));
  }

  it('HTTP/1.1 on TLS: says h2 would allow HTTP/2, evidence names version and ALPN', () => {
    const [f] = checkProtocol(
      recording({ tls: tls({ alpn: 'http/1.1' }), probes: { primary: { httpVersion: '1.1' } } }),
    );
    assert.equal(f?.id, 'protocol.http-version');
    assert.match(f?.message ?? '', /HTTP\/1\.1 \(ALPN http\/1\.1\); offering h2/);
    assert.equal(f?.evidence, 'HTTP/1.1, ALPN http/1.1');
    assert.equal(f?.rfc, 'RFC 9112 §2.3');
  });

  it('https without TLS facts: does not claim "no TLS"', () => {
    const [f] = checkProtocol(recording({ url: 'https://site.example/' }));
    assert.equal(f?.evidence, 'HTTP/1.1, TLS, handshake facts not recorded');
  });

  it('every finding: area protocol, one line, an RFC', () => {
    const all = checkProtocol(
      recording({
        url: 'http://site.example/',
        tls: tls({
          protocol: 'TLSv1',
          cert: {
            daysLeft: -2,
            warnings: ['incomplete chain: x'],
            checks: { trusted: false, timeValid: false, hostnameMatches: false },
          },
        }),
      }),
    );
    assert.ok(all.length >= 6);
    for (const f of all) {
      assert.equal(f.area, 'protocol');
      assert.doesNotMatch(f.message, /\n|\.$/);
      assert.match(f.rfc, /^RFC \d+ §/);
    }
  });
});

describe('checkProtocol: certificate lifetime share and the development CA (issue 26)', () => {
  const message = (spec: RecordingSpec, id: string) =>
    checkProtocol(recording(spec)).find((f) => f.id === id)?.message ?? '';
  it('a short-lived certificate is told in hours, 1 hour singular', () => {
    const three = message(
      { ...good, tls: tls({ cert: dates(3 * HOUR_MS, 12 * HOUR_MS) }) },
      'protocol.certificate-expiring',
    );
    assert.match(three, /expires in 3 hours, under a third of its lifetime/);
    const one = message(
      { ...good, tls: tls({ cert: dates(HOUR_MS + 60_000, 12 * HOUR_MS) }) },
      'protocol.certificate-expiring',
    );
    assert.match(one, /expires in 1 hour,/);
  });
  it('a dev-CA certificate suggests --ca with its path, not --insecure', () => {
    const untrusted = { checks: { trusted: false, timeValid: true, hostnameMatches: true } };
    const dev = message(
      {
        ...good,
        tls: tls({ cert: { ...untrusted, devCaPath: '/home/u/.local/share/gatehouse/dev-ca/ca.pem' } }),
      },
      'protocol.certificate-untrusted',
    );
    assert.match(dev, /--ca \/home\/u\/\.local\/share\/gatehouse\/dev-ca\/ca\.pem/);
    assert.doesNotMatch(dev, /--insecure/);
    const other = message({ ...good, tls: tls({ cert: untrusted }) }, 'protocol.certificate-untrusted');
    assert.doesNotMatch(other, /--ca/);
  });
});
