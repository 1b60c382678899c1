// Fuzz: the inspector reads whatever a site sends. The caching, coding and security checks must never
// throw (a throw would abort `gatehouse check` and hide every other finding), and each finding must stay
// a well-formed one-line record whatever the field values.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkCaching } from '../../src/inspect/checks/caching.js';
import { checkCoding } from '../../src/inspect/checks/coding.js';
import { checkSecurity } from '../../src/inspect/checks/security.js';
import type { Check, FieldLine, ProbeName, Recording } from '../../src/inspect/types.js';
import { forAll, type Gen, ITERATIONS } from '../helpers/random.js';
import { NOW_MS, recording } from '../helpers/recording.js';

const NAMES = [
  'cache-control',
  'expires',
  'date',
  'age',
  'last-modified',
  'etag',
  'vary',
  'pragma',
  'content-type',
  'content-encoding',
  'set-cookie',
  'strict-transport-security',
  'x-content-type-options',
  'referrer-policy',
  'x-frame-options',
  'content-security-policy',
  'server',
  'x-powered-by',
  '__proto__',
  'constructor',
];

const PIECES = [
  'max-age=',
  's-maxage=',
  'no-cache',
  'no-store',
  'public',
  'private',
  'private="set-cookie"',
  'immutable',
  'must-revalidate',
  'stale-while-revalidate=',
  '0',
  '60',
  '31536000',
  '99999999999999999999',
  '-1',
  ',',
  ';',
  '=',
  '"',
  ' ',
  'W/',
  '"abc"',
  'gzip',
  'br',
  'identity',
  'x-gzip',
  '*',
  'accept-encoding',
  'text/html',
  'application/json',
  '+json',
  'includeSubDomains',
  'frame-ancestors',
  'nosniff',
  'nginx/1.2',
  'Thu, 01 Jan 1970 00:00:00 GMT',
  'Wed, 25 Nov 2026 12:00:00 GMT',
  'Fri, 31 Dec 9999 23:59:59 GMT',
  '\t',
  '\u009b',
  '\u00ff',
  'é',
];

const PROBES: ProbeName[] = ['primary', 'coding-identity', 'coding-gzip', 'coding-br'];
const URLS = [
  'https://site.example/',
  'http://site.example/assets/app-3f2a9c1b.js',
  'https://site.example/a%ZZ/index-B-x9aZ_k.js',
  'not a url',
];
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

function fields(g: Gen): FieldLine[] {
  const out: FieldLine[] = [];
  const n = g.int(10);
  for (let i = 0; i < n; i++) {
    const value = g.chance(0.1) ? g.anyString(40).replace(/[\r\n]/g, '') : g.string(PIECES, 8);
    out.push([g.pick(NAMES), value]);
  }
  return out;
}

function hostileRecording(g: Gen): Recording {
  const probes: Partial<Record<ProbeName, object>> = {};
  for (const name of PROBES) {
    if (!g.chance(0.8)) continue;
    probes[name] = {
      status: g.pick([200, 200, 200, 204, 206, 304, 404, 500, 103]),
      headers: fields(g),
      requestHeaders: g.chance(0.5) ? [['accept-encoding', g.string(PIECES, 4)]] : [],
      bodyBytes: g.int(5000),
      receivedAtMs: NOW_MS - g.int(10_000),
      method: g.pick(['GET', 'GET', 'HEAD', 'POST']),
    };
  }
  return recording({ finalUrl: g.pick(URLS), probes });
}

const CHECKS: [string, Check][] = [
  ['caching', checkCaching],
  ['coding', checkCoding],
  ['security', checkSecurity],
];

describe('inspector checks on hostile recordings', () => {
  for (const [area, check] of CHECKS) {
    it(`attack: random field values -> the ${area} check never throws and every finding is one clean line`, () => {
      forAll(
        0x1a5 + area.length,
        ITERATIONS,
        (g) => hostileRecording(g),
        (rec) => {
          const findings = check(rec);
          for (const f of findings) {
            assert.match(f.id, new RegExp(`^${area}\\.[a-z]+(-[a-z0-9]+)*$`));
            assert.equal(f.area, area);
            assert.ok(['error', 'warning', 'info'].includes(f.severity));
            assert.doesNotMatch(f.message, CONTROL, f.message);
            assert.ok(f.message.length > 0 && f.message.length <= 600, `${f.message.length} chars`);
            assert.ok(f.rfc.length > 0);
          }
          assert.deepEqual(check(rec), findings, 'the same recording gives the same findings');
        },
      );
    });
  }
});
