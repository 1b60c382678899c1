import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { acceptsCoding, checkCoding, isCompressibleText } from '../../src/inspect/checks/coding.js';
import type { ProbeName, Recording, Severity } from '../../src/inspect/types.js';
import { type FindingCase, findingTableTests } from '../helpers/inspect-cases.js';
import { type ExchangeSpec, NOW_MS, recording } from '../helpers/recording.js';

const DATE = new Date(NOW_MS).toUTCString();
const AE: Record<string, string> = {
  primary: 'gzip, deflate, br',
  'coding-identity': 'identity',
  'coding-gzip': 'gzip',
  'coding-br': 'br',
};

/** One answer: a coding ('identity' sends no Content-Encoding), a size and fields. */
function answer(coding: string, bodyBytes: number, headers: Record<string, string> = {}) {
  return { coding, bodyBytes, headers };
}
type Answer = ReturnType<typeof answer>;

/** A recording whose coding probes got these answers (each request with its own Accept-Encoding). */
function probes(answers: Partial<Record<ProbeName, Answer>>): Recording {
  const specs: Partial<Record<ProbeName, ExchangeSpec>> = {};
  for (const [name, a] of Object.entries(answers) as [ProbeName, Answer][]) {
    specs[name] = {
      requestHeaders: { 'accept-encoding': AE[name] ?? '' },
      bodyBytes: a.bodyBytes,
      headers: {
        date: DATE,
        ...(a.coding === 'identity' ? {} : { 'content-encoding': a.coding }),
        ...a.headers,
      },
    };
  }
  return recording({ probes: specs });
}

const TEXT = {
  'content-type': 'text/css; charset=utf-8',
  vary: 'Accept-Encoding',
  'cache-control': 'no-cache',
};
const VARY = { vary: 'Accept-Encoding', 'cache-control': 'no-cache' };

const SEVERITY: Record<string, Severity> = {
  'coding.unrequested-coding': 'error',
  'coding.saving': 'info',
  'coding.text-uncompressed': 'warning',
  'coding.missing-vary': 'error',
  'coding.same-etag': 'error',
};

const CASES: FindingCase[] = [
  [
    'br to a request that offered only gzip',
    probes({ 'coding-gzip': answer('br', 100, VARY) }),
    'coding.unrequested-coding',
    true,
  ],
  [
    'gzip to Accept-Encoding: identity',
    probes({ 'coding-identity': answer('gzip', 100, VARY) }),
    'coding.unrequested-coding',
    true,
  ],
  ['br to br', probes({ 'coding-br': answer('br', 100, VARY) }), 'coding.unrequested-coding', false],
  ['identity to br', probes({ 'coding-br': answer('identity', 100) }), 'coding.unrequested-coding', false],
  [
    'x-gzip to gzip',
    probes({ 'coding-gzip': answer('x-gzip', 100, VARY) }),
    'coding.unrequested-coding',
    false,
  ],
  [
    'identity 10000 B, gzip 3000 B, br 2500 B',
    probes({
      'coding-identity': answer('identity', 10_000, TEXT),
      'coding-gzip': answer('gzip', 3000, TEXT),
      'coding-br': answer('br', 2500, TEXT),
    }),
    'coding.saving',
    true,
  ],
  [
    'nothing compressed',
    probes({
      'coding-identity': answer('identity', 500, TEXT),
      'coding-gzip': answer('identity', 500, TEXT),
    }),
    'coding.saving',
    false,
  ],
  [
    'no identity probe answered',
    probes({ 'coding-gzip': answer('gzip', 300, TEXT) }),
    'coding.saving',
    false,
  ],
  [
    'text/css of 5000 B, gzip and br both answered identity',
    probes({
      'coding-identity': answer('identity', 5000, TEXT),
      'coding-gzip': answer('identity', 5000, TEXT),
      'coding-br': answer('identity', 5000, TEXT),
    }),
    'coding.text-uncompressed',
    true,
  ],
  [
    'JSON of 2000 B, only the gzip probe answered, identity',
    probes({ 'coding-gzip': answer('identity', 2000, { 'content-type': 'application/json' }) }),
    'coding.text-uncompressed',
    true,
  ],
  [
    'image/svg+xml of 2000 B uncompressed',
    probes({ 'coding-gzip': answer('identity', 2000, { 'content-type': 'image/svg+xml' }) }),
    'coding.text-uncompressed',
    true,
  ],
  [
    'text/css of 1024 B (the threshold) uncompressed',
    probes({ 'coding-gzip': answer('identity', 1024, TEXT), 'coding-br': answer('identity', 1024, TEXT) }),
    'coding.text-uncompressed',
    false,
  ],
  [
    'image/png of 50000 B uncompressed',
    probes({ 'coding-gzip': answer('identity', 50_000, { 'content-type': 'image/png' }) }),
    'coding.text-uncompressed',
    false,
  ],
  [
    'text/css, gzip identity but br compressed',
    probes({ 'coding-gzip': answer('identity', 5000, TEXT), 'coding-br': answer('br', 900, TEXT) }),
    'coding.text-uncompressed',
    false,
  ],
  [
    'gzip without Vary, storable by shared caches (heuristic)',
    probes({ 'coding-gzip': answer('gzip', 300, { 'last-modified': DATE }) }),
    'coding.missing-vary',
    true,
    'error',
  ],
  [
    'br without Vary, public max-age',
    probes({ 'coding-br': answer('br', 300, { 'cache-control': 'public, max-age=600' }) }),
    'coding.missing-vary',
    true,
    'error',
  ],
  [
    'gzip without Vary, private (browser only)',
    probes({ 'coding-gzip': answer('gzip', 300, { 'cache-control': 'private, max-age=60' }) }),
    'coding.missing-vary',
    true,
    'warning',
  ],
  [
    'gzip with Vary: Origin, accept-encoding',
    probes({ 'coding-gzip': answer('gzip', 300, { vary: 'Origin, accept-encoding' }) }),
    'coding.missing-vary',
    false,
  ],
  [
    'gzip with Vary on two field lines',
    recording({
      probes: {
        'coding-gzip': {
          requestHeaders: { 'accept-encoding': 'gzip' },
          headers: { date: DATE, 'content-encoding': 'gzip', vary: ['Origin', 'Accept-Encoding'] },
        },
      },
    }),
    'coding.missing-vary',
    false,
  ],
  [
    'gzip with Vary: *',
    probes({ 'coding-gzip': answer('gzip', 300, { vary: '*' }) }),
    'coding.missing-vary',
    false,
  ],
  [
    'identity without Vary',
    probes({ 'coding-identity': answer('identity', 300, { 'last-modified': DATE }) }),
    'coding.missing-vary',
    false,
  ],
  [
    'one strong ETag on identity and gzip',
    probes({
      'coding-identity': answer('identity', 5000, { ...TEXT, etag: '"abc"' }),
      'coding-gzip': answer('gzip', 1000, { ...TEXT, etag: '"abc"' }),
    }),
    'coding.same-etag',
    true,
  ],
  [
    'one strong ETag on the primary (br) and the gzip probe',
    probes({
      primary: answer('br', 900, { ...TEXT, etag: '"abc"' }),
      'coding-gzip': answer('gzip', 1000, { ...TEXT, etag: '"abc"' }),
    }),
    'coding.same-etag',
    true,
  ],
  [
    'one weak ETag on identity and gzip (nginx weakens it)',
    probes({
      'coding-identity': answer('identity', 5000, { ...TEXT, etag: 'W/"abc"' }),
      'coding-gzip': answer('gzip', 1000, { ...TEXT, etag: 'W/"abc"' }),
    }),
    'coding.same-etag',
    false,
  ],
  [
    'a strong ETag per coding',
    probes({
      'coding-identity': answer('identity', 5000, { ...TEXT, etag: '"abc"' }),
      'coding-gzip': answer('gzip', 1000, { ...TEXT, etag: '"abc-gz"' }),
      'coding-br': answer('br', 900, { ...TEXT, etag: '"abc-br"' }),
    }),
    'coding.same-etag',
    false,
  ],
  [
    'the same tag on the primary and the br probe, both br',
    probes({
      primary: answer('br', 900, { ...TEXT, etag: '"abc-br"' }),
      'coding-br': answer('br', 900, { ...TEXT, etag: '"abc-br"' }),
    }),
    'coding.same-etag',
    false,
  ],
];

describe('coding checks (issue 16 item 5)', () => {
  findingTableTests({ area: 'coding', check: checkCoding, cases: CASES, severity: SEVERITY });

  it('no coding probe answered -> nothing', () => {
    const rec = recording({ probes: { primary: { error: 'ECONNRESET' }, 'coding-gzip': { status: 304 } } });
    assert.deepEqual(checkCoding(rec), []);
  });

  it('the saving is reported per coding', () => {
    const rec = probes({
      'coding-identity': answer('identity', 10_000, TEXT),
      'coding-gzip': answer('gzip', 3000, TEXT),
      'coding-br': answer('br', 2500, TEXT),
    });
    const f = checkCoding(rec).find((x) => x.id === 'coding.saving');
    assert.equal(f?.message, 'identity 10000 B; gzip 3000 B (70% smaller); br 2500 B (75% smaller)');
  });

  it('Gatehouse defaults (own tag per coding, Vary on every coding) raise no warning', () => {
    const rec = probes({
      primary: answer('br', 900, { ...TEXT, etag: '"h-br"' }),
      'coding-identity': answer('identity', 5000, { ...TEXT, etag: '"h"' }),
      'coding-gzip': answer('gzip', 1000, { ...TEXT, etag: '"h-gz"' }),
      'coding-br': answer('br', 900, { ...TEXT, etag: '"h-br"' }),
    });
    assert.deepEqual(
      checkCoding(rec).filter((f) => f.severity !== 'info'),
      [],
    );
  });
});

describe('acceptsCoding (RFC 9110 §12.5.3)', () => {
  const cases: [condition: string, header: string | undefined, coding: string, accepts: boolean][] = [
    ['no Accept-Encoding admits any coding', undefined, 'br', true],
    ['listed', 'gzip, br', 'br', true],
    ['not listed', 'gzip', 'br', false],
    ['listed with q=0', 'gzip, br;q=0', 'br', false],
    ['star covers the unlisted', 'gzip, *;q=0.1', 'br', true],
    ['star;q=0 excludes identity', '*;q=0', 'identity', false],
    ['identity is acceptable by default', 'gzip', 'identity', true],
    ['identity;q=0 excludes it', 'gzip, identity;q=0', 'identity', false],
    ['x-gzip is gzip', 'gzip', 'x-gzip', true],
    ['names are case-insensitive', 'GZIP', 'gzip', true],
  ];
  for (const [condition, header, coding, accepts] of cases) {
    it(`${condition}: ${header ?? '(absent)'} ${accepts ? 'admits' : 'refuses'} ${coding}`, () => {
      assert.equal(acceptsCoding(header, coding), accepts);
    });
  }
});

describe('isCompressibleText', () => {
  const cases: [string, boolean][] = [
    ['text/html', true],
    ['text/javascript', true],
    ['application/javascript', true],
    ['application/json', true],
    ['application/ld+json', true],
    ['image/svg+xml', true],
    ['application/xml', true],
    ['image/png', false],
    ['font/woff2', false],
    ['application/octet-stream', false],
  ];
  for (const [mediaType, text] of cases) {
    it(`${mediaType} -> ${text ? 'text' : 'not text'}`, () =>
      assert.equal(isCompressibleText(mediaType), text));
  }
});
