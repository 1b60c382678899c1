// The pure checks behind gatehouse cert, table-style: each case named by its condition.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  buildChain,
  type ChainCert,
  type ChainResult,
  type CheckInput,
  DAY_MS,
  evaluateChecks,
  referenceIdentity,
  timeCheck,
} from '../../src/certs/checks.js';
import { toChainCert } from '../../src/certs/inspect.js';
import { issueCertificate } from '../../src/certs/x509.js';
import { leafFor, selfSigned, testPki, unknownCaPki } from '../helpers/certs.js';

describe('referenceIdentity', () => {
  const cases: [string, string, ReturnType<typeof referenceIdentity>['kind'], string?][] = [
    ['plain name', 'good.example', 'dns', 'good.example'],
    ['upper case is folded', 'GOOD.Example', 'dns', 'good.example'],
    ['one trailing dot is dropped', 'good.example.', 'dns', 'good.example'],
    ['two trailing dots: empty label', 'good.example..', 'invalid'],
    ['leading dot: empty label', '.good.example', 'invalid'],
    ['IPv4 literal', '127.0.0.1', 'ip', '127.0.0.1'],
    ['IPv6 literal', '::1', 'ip', '::1'],
    ['bracketed IPv6 literal', '[::1]', 'ip', '::1'],
    ['brackets around a name', '[good.example]', 'invalid'],
    ['wildcard as a reference', '*.good.example', 'invalid'],
    ['NUL inside', 'good.example\u0000.evil.example', 'invalid'],
    ['space inside', 'good example', 'invalid'],
    ['underscore', 'a_b.example', 'invalid'],
    ['label starting with a hyphen', '-a.example', 'invalid'],
    ['label of 64 characters', `${'a'.repeat(64)}.example`, 'invalid'],
    ['label of 63 characters', `${'a'.repeat(63)}.example`, 'dns', `${'a'.repeat(63)}.example`],
    ['A-label (punycode)', 'xn--bcher-kva.example', 'dns', 'xn--bcher-kva.example'],
    ['U-label is not converted here', 'bücher.example', 'invalid'],
    ['empty', '', 'invalid'],
  ];
  for (const [name, raw, kind, value] of cases) {
    it(name, () => {
      const r = referenceIdentity(raw);
      assert.equal(r.kind, kind);
      if (r.kind === 'dns') assert.equal(r.name, value);
      if (r.kind === 'ip') assert.equal(r.address, value);
    });
  }
});

describe('timeCheck', () => {
  const from = Date.UTC(2030, 0, 1);
  const to = Date.UTC(2030, 3, 1);
  const cases: [string, number, ReturnType<typeof timeCheck>][] = [
    ['in the middle', from + 30 * DAY_MS, { kind: 'valid', daysLeft: 60 }],
    ['at notBefore exactly (inclusive)', from, { kind: 'valid', daysLeft: 90 }],
    ['at notAfter exactly (inclusive)', to, { kind: 'valid', daysLeft: 0 }],
    ['a second after notAfter', to + 1000, { kind: 'expired', daysLeft: -1 }],
    ['ten days after notAfter', to + 10 * DAY_MS, { kind: 'expired', daysLeft: -10 }],
    ['a second before notBefore', from - 1000, { kind: 'not-yet-valid', daysLeft: 90, startsInDays: 1 }],
    ['half a day left rounds down to 0', to - DAY_MS / 2, { kind: 'valid', daysLeft: 0 }],
  ];
  for (const [name, nowMs, want] of cases) it(name, () => assert.deepEqual(timeCheck(from, to, nowMs), want));
});

describe('evaluateChecks', () => {
  const trustedChain: ChainResult = { kind: 'trusted', path: [] };
  const untrusted = { kind: 'untrusted', reason: 'r', issuerMissing: false } as const;
  const missing = { kind: 'untrusted', reason: 'r', issuerMissing: true } as const;
  const valid = { kind: 'valid', daysLeft: 100 } as const;
  const base: CheckInput = {
    nodeAuthorized: true,
    nodeError: undefined,
    chain: trustedChain,
    time: valid,
    hostMatch: { name: 'h', matches: true },
    warnDays: 21,
  };
  const cases: [
    string,
    Partial<CheckInput>,
    { trusted: boolean; timeValid: boolean; hostnameMatches: boolean | null },
    boolean,
    number,
  ][] = [
    ['all good -> ok', {}, { trusted: true, timeValid: true, hostnameMatches: true }, true, 0],
    [
      'Node says no (self-signed) -> not trusted',
      { nodeAuthorized: false, nodeError: 'DEPTH_ZERO_SELF_SIGNED_CERT', chain: untrusted },
      { trusted: false, timeValid: true, hostnameMatches: true },
      false,
      0,
    ],
    [
      'Node says no but our chain builds (not time) -> not trusted: Node is the authority',
      { nodeAuthorized: false, nodeError: 'INVALID_CA' },
      { trusted: false, timeValid: true, hostnameMatches: true },
      false,
      0,
    ],
    [
      'Node objects only to dates and the chain builds -> trusted, not timeValid',
      { nodeAuthorized: false, nodeError: 'CERT_HAS_EXPIRED', time: { kind: 'expired', daysLeft: -3 } },
      { trusted: true, timeValid: false, hostnameMatches: true },
      false,
      0,
    ],
    [
      'Node objects to dates but the chain does not build -> not trusted',
      {
        nodeAuthorized: false,
        nodeError: 'CERT_HAS_EXPIRED',
        chain: untrusted,
        time: { kind: 'expired', daysLeft: -3 },
      },
      { trusted: false, timeValid: false, hostnameMatches: true },
      false,
      0,
    ],
    [
      'file (no handshake): chain decides',
      { nodeAuthorized: undefined, chain: untrusted },
      { trusted: false, timeValid: true, hostnameMatches: true },
      false,
      0,
    ],
    [
      'file without a name -> hostnameMatches null, still ok',
      { nodeAuthorized: undefined, hostMatch: undefined },
      { trusted: true, timeValid: true, hostnameMatches: null },
      true,
      0,
    ],
    [
      'host mismatch -> FAIL',
      { hostMatch: { name: 'h', matches: false } },
      { trusted: true, timeValid: true, hostnameMatches: false },
      false,
      0,
    ],
    [
      'not yet valid -> FAIL',
      { time: { kind: 'not-yet-valid', daysLeft: 50, startsInDays: 2 } },
      { trusted: true, timeValid: false, hostnameMatches: true },
      false,
      0,
    ],
    [
      '20 days left, warn 21 -> warning, ok',
      { time: { kind: 'valid', daysLeft: 20 } },
      { trusted: true, timeValid: true, hostnameMatches: true },
      true,
      1,
    ],
    [
      '21 days left, warn 21 -> no warning',
      { time: { kind: 'valid', daysLeft: 21 } },
      { trusted: true, timeValid: true, hostnameMatches: true },
      true,
      0,
    ],
    [
      'issuer missing -> incomplete-chain warning and FAIL',
      { nodeAuthorized: false, nodeError: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', chain: missing },
      { trusted: false, timeValid: true, hostnameMatches: true },
      false,
      1,
    ],
    [
      'issuer missing but Node trusts it (its store knows it) -> no warning',
      { chain: missing },
      { trusted: true, timeValid: true, hostnameMatches: true },
      true,
      0,
    ],
  ];
  for (const [name, over, checks, ok, warnings] of cases) {
    it(name, () => {
      const r = evaluateChecks({ ...base, ...over });
      assert.deepEqual(r.checks, { ...checks, keyStrength: true });
      assert.equal(r.ok, ok);
      assert.equal(r.warnings.length, warnings);
      assert.equal(r.failures.length, Object.values(checks).filter((v) => v === false).length);
    });
  }
});

describe('buildChain', async () => {
  const pki = await testPki();
  const x = (pem: string) => toChainCert(new X509Certificate(pem));
  const root = x(pki.root.certPem);
  const inter = x(pki.intermediate.certPem);
  const leaf = new X509Certificate(pki.leaf.certPem);
  const now = Date.now();
  // A CA under the pathLen-0 intermediate: a leaf below it breaks the path length.
  const subCa = await issueCertificate({
    commonName: 'Sub CA',
    isCa: true,
    issuer: pki.intermediate,
    notBefore: new Date(now - DAY_MS),
    notAfter: new Date(now + DAY_MS),
  });
  const underSub = await leafFor({ hosts: ['deep.test'], issuer: subCa });
  // A non-CA leaf used as an issuer.
  const notCaIssuer = await leafFor({ hosts: ['issuer.test'] });
  const underLeaf = await leafFor({ hosts: ['victim.test'], issuer: notCaIssuer });
  const self = await selfSigned(['self.test']);
  const other = await unknownCaPki();
  const foreign = await leafFor({ hosts: ['x.test'], issuer: other });
  const expiredInter = await issueCertificate({
    commonName: 'Expired Intermediate',
    isCa: true,
    issuer: pki.root,
    notBefore: new Date(now - 10 * DAY_MS),
    notAfter: new Date(now - DAY_MS),
  });
  const underExpired = await leafFor({ hosts: ['e.test'], issuer: expiredInter });

  const cases: [
    string,
    X509Certificate,
    ChainCert[],
    ChainCert[],
    'trusted' | 'untrusted',
    RegExp | number,
  ][] = [
    ['leaf + intermediate, root anchor -> trusted, path of 3', leaf, [inter], [root], 'trusted', 3],
    ['leaf, intermediate as anchor -> trusted, path of 2', leaf, [], [inter], 'trusted', 2],
    ['leaf + intermediate + root served, root anchor -> trusted', leaf, [inter, root], [root], 'trusted', 3],
    [
      'leaf alone, root anchor -> missing issuer',
      leaf,
      [],
      [root],
      'untrusted',
      /CN=localhost .* neither served nor trusted/,
    ],
    [
      'leaf + intermediate, no anchors -> issuer of the intermediate unknown',
      leaf,
      [inter],
      [],
      'untrusted',
      /issuer of CN=Gatehouse Test Intermediate CA/,
    ],
    [
      'leaf + intermediate + root, other anchor -> ends at an untrusted root',
      leaf,
      [inter, root],
      [x(other.certPem)],
      'untrusted',
      /self-signed CA that is not trusted/,
    ],
    [
      'self-signed leaf, no anchor',
      new X509Certificate(self.certPem),
      [],
      [root],
      'untrusted',
      /^self-signed/,
    ],
    [
      'self-signed leaf pinned as an anchor -> trusted',
      new X509Certificate(self.certPem),
      [],
      [x(self.certPem)],
      'trusted',
      1,
    ],
    [
      'leaf from an unknown CA -> untrusted',
      new X509Certificate(foreign.certPem),
      [],
      [root],
      'untrusted',
      /neither served nor trusted/,
    ],
    [
      'pathLen 0 intermediate over a sub-CA -> untrusted',
      new X509Certificate(underSub.certPem),
      [x(subCa.certPem), inter],
      [root],
      'untrusted',
      /path length|CA rules|not trusted|neither/,
    ],
    [
      'issuer is not a CA -> untrusted',
      new X509Certificate(underLeaf.certPem),
      [x(notCaIssuer.certPem), inter],
      [root],
      'untrusted',
      /is not a CA/,
    ],
    [
      "expired intermediate: dates are not the chain's business -> trusted",
      new X509Certificate(underExpired.certPem),
      [x(expiredInter.certPem)],
      [root],
      'trusted',
      3,
    ],
  ];
  for (const [name, l, mids, anchors, kind, want] of cases) {
    it(name, () => {
      const r = buildChain(l, mids, anchors);
      assert.equal(r.kind, kind, r.kind === 'untrusted' ? r.reason : 'trusted');
      if (r.kind === 'trusted') assert.equal(r.path.length, want);
      else assert.match(r.reason, want as RegExp);
    });
  }
});
