import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkSecurity, type Hsts, parseHsts } from '../../src/inspect/checks/security.js';
import type { Recording, Severity } from '../../src/inspect/types.js';
import { type FindingCase, findingTableTests } from '../helpers/inspect-cases.js';
import { type ExchangeSpec, recording } from '../helpers/recording.js';

const HTTPS = 'https://site.example/';
const HTTP = 'http://site.example/';
const NOSNIFF = { 'x-content-type-options': 'nosniff' };
const GUARDED = {
  ...NOSNIFF,
  'content-type': 'text/html; charset=utf-8',
  'referrer-policy': 'strict-origin-when-cross-origin',
  'x-frame-options': 'SAMEORIGIN',
};
const HSTS_YEAR = { 'strict-transport-security': 'max-age=31536000; includeSubDomains' };

/** A recording of `url` whose primary response has these fields. */
function at(url: string, headers: Record<string, string | string[]>, more: ExchangeSpec = {}): Recording {
  return recording({ url, probes: { primary: { headers, ...more } } });
}
const page = (headers: Record<string, string | string[]>, more: ExchangeSpec = {}) =>
  at(HTTP, { ...GUARDED, ...headers }, more);

const SEVERITY: Record<string, Severity> = {
  'security.nosniff-missing': 'warning',
  'security.hsts-missing': 'warning',
  'security.hsts-invalid': 'warning',
  'security.hsts-short': 'warning',
  'security.hsts-on-http': 'info',
  'security.referrer-policy-missing': 'warning',
  'security.frame-protection-missing': 'warning',
  'security.version-leak': 'info',
};

const CASES: FindingCase[] = [
  ['no X-Content-Type-Options', at(HTTP, {}), 'security.nosniff-missing', true],
  [
    'X-Content-Type-Options: sniff',
    at(HTTP, { 'x-content-type-options': 'sniff' }),
    'security.nosniff-missing',
    true,
  ],
  [
    'nosniff only as the second member',
    at(HTTP, { 'x-content-type-options': 'foo, nosniff' }),
    'security.nosniff-missing',
    true,
  ],
  ['X-Content-Type-Options: nosniff', at(HTTP, NOSNIFF), 'security.nosniff-missing', false],
  [
    'NoSniff in another case',
    at(HTTP, { 'x-content-type-options': 'NoSniff' }),
    'security.nosniff-missing',
    false,
  ],
  ['HTTPS without HSTS', at(HTTPS, NOSNIFF), 'security.hsts-missing', true],
  ['HTTPS with HSTS', at(HTTPS, { ...NOSNIFF, ...HSTS_YEAR }), 'security.hsts-missing', false],
  ['plain HTTP without HSTS', at(HTTP, NOSNIFF), 'security.hsts-missing', false],
  [
    'HTTPS, HSTS without max-age',
    at(HTTPS, { 'strict-transport-security': 'includeSubDomains' }),
    'security.hsts-invalid',
    true,
  ],
  [
    'HTTPS, HSTS max-age twice',
    at(HTTPS, { 'strict-transport-security': 'max-age=1; max-age=31536000' }),
    'security.hsts-invalid',
    true,
  ],
  ['HTTPS, HSTS valid', at(HTTPS, HSTS_YEAR), 'security.hsts-invalid', false],
  [
    'HTTPS, HSTS max-age=86400',
    at(HTTPS, { 'strict-transport-security': 'max-age=86400' }),
    'security.hsts-short',
    true,
  ],
  [
    'HTTPS, HSTS max-age=0',
    at(HTTPS, { 'strict-transport-security': 'max-age=0' }),
    'security.hsts-short',
    true,
  ],
  [
    'HTTPS, HSTS max-age=15552000 (180 days)',
    at(HTTPS, { 'strict-transport-security': 'max-age="15552000"' }),
    'security.hsts-short',
    false,
  ],
  [
    'HTTPS, first HSTS line a year, second one short (the first counts)',
    at(HTTPS, { 'strict-transport-security': ['max-age=31536000', 'max-age=60'] }),
    'security.hsts-short',
    false,
  ],
  ['plain HTTP with HSTS', at(HTTP, HSTS_YEAR), 'security.hsts-on-http', true],
  ['HTTPS with HSTS', at(HTTPS, HSTS_YEAR), 'security.hsts-on-http', false],
  ['HTML without Referrer-Policy', page({ 'referrer-policy': [] }), 'security.referrer-policy-missing', true],
  [
    'HTML with an unknown Referrer-Policy',
    page({ 'referrer-policy': 'never' }),
    'security.referrer-policy-missing',
    true,
  ],
  ['HTML with Referrer-Policy', page({}), 'security.referrer-policy-missing', false],
  [
    'HTML with an unknown token then a known one',
    page({ 'referrer-policy': 'future-policy, no-referrer' }),
    'security.referrer-policy-missing',
    false,
  ],
  [
    'HTML with <meta name="referrer"> instead',
    page({ 'referrer-policy': [] }, { body: '<head><meta name="referrer" content="no-referrer"></head>' }),
    'security.referrer-policy-missing',
    false,
  ],
  [
    'JSON without Referrer-Policy (not a page)',
    at(HTTP, { ...NOSNIFF, 'content-type': 'application/json' }),
    'security.referrer-policy-missing',
    false,
  ],
  [
    'HTML without frame protection',
    page({ 'x-frame-options': [] }),
    'security.frame-protection-missing',
    true,
  ],
  [
    'HTML with X-Frame-Options: ALLOW-FROM',
    page({ 'x-frame-options': 'ALLOW-FROM https://a.example' }),
    'security.frame-protection-missing',
    true,
  ],
  [
    'HTML with frame-ancestors only in Report-Only CSP',
    page({ 'x-frame-options': [], 'content-security-policy-report-only': "frame-ancestors 'self'" }),
    'security.frame-protection-missing',
    true,
  ],
  [
    'HTML with X-Frame-Options: DENY',
    page({ 'x-frame-options': 'deny' }),
    'security.frame-protection-missing',
    false,
  ],
  [
    'HTML with CSP frame-ancestors',
    page({ 'x-frame-options': [], 'content-security-policy': "default-src 'self'; frame-ancestors 'none'" }),
    'security.frame-protection-missing',
    false,
  ],
  [
    'CSS without frame protection (not a page)',
    at(HTTP, { ...NOSNIFF, 'content-type': 'text/css' }),
    'security.frame-protection-missing',
    false,
  ],
  ['Server: nginx/1.25.3', at(HTTP, { ...NOSNIFF, server: 'nginx/1.25.3' }), 'security.version-leak', true],
  [
    'X-Powered-By: PHP/8.2.1',
    at(HTTP, { ...NOSNIFF, 'x-powered-by': 'PHP/8.2.1' }),
    'security.version-leak',
    true,
  ],
  [
    'Server: Apache 2.4 (Debian)',
    at(HTTP, { ...NOSNIFF, server: 'Apache 2.4 (Debian)' }),
    'security.version-leak',
    true,
  ],
  ['Server: nginx', at(HTTP, { ...NOSNIFF, server: 'nginx' }), 'security.version-leak', false],
  [
    'X-Powered-By: Express',
    at(HTTP, { ...NOSNIFF, 'x-powered-by': 'Express' }),
    'security.version-leak',
    false,
  ],
];

describe('security header checks (issue 16 item 8)', () => {
  findingTableTests({ area: 'security', check: checkSecurity, cases: CASES, severity: SEVERITY, rfc: /./s });

  it('primary failed -> nothing', () => {
    assert.deepEqual(checkSecurity(recording({ probes: { primary: { error: 'ECONNREFUSED' } } })), []);
  });

  it('the Gatehouse security preset over HTTPS raises nothing', () => {
    assert.deepEqual(checkSecurity(at(HTTPS, { ...GUARDED, ...HSTS_YEAR })), []);
  });
});

describe('parseHsts (RFC 6797 §6.1)', () => {
  const cases: [condition: string, value: string, expected: Hsts][] = [
    ['max-age only', 'max-age=300', { ok: true, maxAgeSec: 300, includeSubDomains: false }],
    [
      'quoted max-age, includeSubDomains in any case',
      'max-age="31536000"; INCLUDESUBDOMAINS',
      { ok: true, maxAgeSec: 31536000, includeSubDomains: true },
    ],
    [
      'unknown directives are ignored',
      'max-age=5; preload; x=y',
      { ok: true, maxAgeSec: 5, includeSubDomains: false },
    ],
    ['no max-age', 'includeSubDomains', { ok: false, why: 'max-age is missing' }],
    ['max-age not digits', 'max-age=1y', { ok: false, why: 'max-age is not a number of seconds' }],
    [
      'a directive twice',
      'max-age=5; includeSubDomains; includesubdomains',
      { ok: false, why: 'includesubdomains appears twice' },
    ],
  ];
  for (const [condition, value, expected] of cases) {
    it(`${condition}: ${value}`, () => assert.deepEqual(parseHsts(value), expected));
  }
});
